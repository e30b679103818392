import { DEFAULT_LIMITS } from '../limits.ts';
import type { Tool, ToolContext } from './types.ts';
import { ToolInputError } from './types.ts';

export type ToolOutcome =
  /** `isError`: the tool's own account of a failure, shaped like a result but logged as an error. */
  | { ok: true; content: string | AsyncIterable<string>; trusted?: boolean; isError?: boolean }
  | { ok: false; content: string };

function isAsyncIterable(value: unknown): value is AsyncIterable<string> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

export const DEFAULT_TOOL_TIMEOUT_MS = DEFAULT_LIMITS.toolTimeoutMs;

// setTimeout fires at once for delays past this; a longer limit is no limit in practice.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A limit as a person reads it: "50 ms", "1.5 s", "60 s". */
function formatLimit(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${Math.round(ms / 100) / 10} s`;
}

/**
 * Runs one prepared call. Whatever the tool does (throws, hangs past its limit, returns something
 * that is not text, ignores a cancelled turn), the turn gets a result it can show the model;
 * nothing escapes as a throw.
 */
export async function runTool(
  tool: Tool,
  args: Record<string, unknown>,
  ctx: ToolContext,
  timeoutMs = tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
): Promise<ToolOutcome> {
  const cancelled: ToolOutcome = { ok: false, content: `${tool.name} was cancelled.` };
  if (ctx.signal.aborted) return cancelled;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let cancel: (() => void) | undefined;
  // The turn was cancelled: the tool is told, and the turn does not wait for it to listen.
  const stopped = new Promise<ToolOutcome>((resolve) => {
    cancel = () => {
      controller.abort(ctx.signal.reason);
      resolve(cancelled);
    };
    ctx.signal.addEventListener('abort', cancel, { once: true });
  });
  const timedOut = new Promise<ToolOutcome>((resolve) => {
    if (!(timeoutMs < MAX_TIMER_MS)) return;
    timer = setTimeout(
      () => {
        controller.abort(new Error('timeout'));
        resolve({
          ok: false,
          content: `${tool.name} did not finish within ${formatLimit(timeoutMs)} and was stopped.`,
        });
      },
      Math.max(0, timeoutMs),
    );
  });
  const ran = (async (): Promise<ToolOutcome> => {
    try {
      const output: unknown = await tool.execute(args, { ...ctx, signal: controller.signal });
      if (typeof output === 'object' && output !== null && 'text' in output) {
        const { text, trusted, isError } = output as { text: unknown; trusted?: unknown; isError?: unknown };
        if (typeof text === 'string' || isAsyncIterable(text)) {
          return {
            ok: true,
            content: text,
            ...(typeof trusted === 'boolean' ? { trusted } : {}),
            ...(isError === true ? { isError: true } : {}),
          };
        }
      }
      if (typeof output !== 'string') {
        return {
          ok: false,
          content: `${tool.name} returned no text (got ${output === null ? 'null' : typeof output}); this is a bug in the tool.`,
        };
      }
      return { ok: true, content: output };
    } catch (error) {
      if (error instanceof ToolInputError) return { ok: false, content: error.message };
      if (ctx.signal.aborted) return cancelled;
      const message = error instanceof Error ? error.message : String(error);
      return { ok: false, content: `${tool.name} failed: ${message}` };
    }
  })();
  try {
    return await Promise.race([ran, timedOut, stopped]);
  } finally {
    clearTimeout(timer);
    if (cancel) ctx.signal.removeEventListener('abort', cancel);
  }
}
