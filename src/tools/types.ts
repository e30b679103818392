import type { Logger } from '../log.ts';

/** What a tool may use while it runs. Passed in; tools hold no global state. */
export interface ToolContext {
  /** Aborts when the call times out or the turn is cancelled; long work must honour it. */
  signal: AbortSignal;
  sessionId: string;
  workspace: string;
  log: Logger;
  now: () => Date;
  /**
   * The owner approved this call (or a grant covers it), so it may reach the network; a call the
   * chain let through on its own may not. Tools that run commands open the network only then.
   */
  network?: boolean;
  /** Nobody watches this turn (a scheduled digest): the shell then runs in the sandbox when there is one. */
  unattended?: boolean;
}

/**
 * A typed tool. The description is the model's only manual: what it does, when to use it, the
 * argument shapes, edge cases and one example. The schema is strict (`additionalProperties: false`)
 * and is checked before `execute` ever sees the arguments.
 */
export interface Tool<Args = Record<string, unknown>> {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Output written by the harness or the owner's own workspace. Default false: fenced as data. */
  trusted?: boolean;
  /** Touches private data; pins the session to the sensitive route. Default false. */
  sensitive?: boolean;
  /** Wall-clock limit for one call; the default applies when absent. */
  timeoutMs?: number;
  /** Bounds arguments the schema allows but policy does not (e.g. a timeout over the maximum). */
  clamp?(args: Args): Args;
  /**
   * Returns the result text, or a `ToolOutput` for a result streamed in pieces (a large output is
   * then written to the store as it arrives) or whose trust differs from the tool's. Throwing is fine: a throw becomes an error result the model can read.
   * A message on a thrown `ToolInputError` is shown to the model as a correction.
   */
  execute(args: Args, ctx: ToolContext): Promise<string | ToolOutput>;
  /** This call touches private data (e.g. the account it names is a sensitive connector). */
  sensitiveFor?(args: Args): boolean;
}

export interface ToolOutput {
  text: string | AsyncIterable<string>;
  /** Overrides the tool's flag for this result (retrieve_output keeps the original's trust). */
  trusted?: boolean;
  /**
   * The tool ran and failed, and `text` is its own account (an MCP server's error): logged as an
   * error, but shaped like any result (offloaded when large, fenced unless trusted), since it is
   * not the harness's prose.
   */
  isError?: boolean;
}

/** Thrown by a tool whose arguments passed the schema but still make no sense; the model can fix it. */
export class ToolInputError extends Error {
  override name = 'ToolInputError';
}
