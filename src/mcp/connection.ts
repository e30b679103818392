// One MCP server's connection: started with steward, reported once when it fails to start, crashes
// or hangs, restarted with backoff, and never a reason for anything else to stop. Its last known
// tool list stays offered while it restarts, so a call then gets a plain "not connected" result.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpLimits } from '../limits.ts';
import type { Logger } from '../log.ts';
import { neutralizeMarkers } from '../trust/fence.ts';
import type { McpServerConfig } from './config.ts';
import { resultText } from './result-text.ts';
import { loadMcpSdk, type McpSdk } from './sdk.ts';

export type ServerState = 'connecting' | 'connected' | 'restarting' | 'stopped';

/** A tool as the server listed it (its own name and words). */
export interface ServerToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Hints the server claims (readOnlyHint, destructiveHint, …): shown, never trusted. */
  annotations: Record<string, unknown>;
}

/** The server's answer: its words (content or its own error message), never steward's. */
export interface CallResult {
  text: string;
  isError: boolean;
}

/** Failures of our own making or seeing (not the server's words): shown as steward's error results. */
export class McpCallError extends Error {
  override name = 'McpCallError';
}

export interface ConnectionDeps {
  limits: McpLimits;
  log: Logger;
  /** Said once per failure (not once per retry): to the log and the owner. Already redacted. */
  report(line: string): void;
  /** The tool list changed (connected, or reconnected with other tools). */
  toolsChanged(): void;
  /** PATH and HOME come from here; nothing else of it reaches a server. */
  ownEnv: Readonly<Record<string, string | undefined>>;
  /** Where a stdio server runs. */
  cwd: string;
  version: string;
  redact(text: string): string;
}

export interface Connection {
  readonly config: McpServerConfig;
  state(): ServerState;
  tools(): readonly ServerToolInfo[];
  lastError(): string | undefined;
  /** Resolves once the first attempt ended (connected or failed). */
  settled(): Promise<void>;
  start(): void;
  call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<CallResult>;
  stop(): Promise<void>;
}

const oneLine = (text: string, max = 300) => text.replace(/\s+/g, ' ').trim().slice(0, max);

export function serverConnection(config: McpServerConfig, deps: ConnectionDeps): Connection {
  let state: ServerState = 'connecting';
  let tools: ServerToolInfo[] = [];
  let client: Client | undefined;
  /** Loaded by the first attempt; a call needs a connected client, so it is there by then. */
  let sdk: McpSdk | undefined;
  let closeTransport: (() => Promise<void>) | undefined;
  let lastError: string | undefined;
  let failures = 0;
  let reported = false;
  let retry: NodeJS.Timeout | undefined;
  let markSettled: () => void = () => {};
  const firstAttempt = new Promise<void>((resolve) => {
    markSettled = resolve;
  });

  // Read through a call: a stop can land during any await of an attempt.
  const isStopped = () => state === 'stopped';

  async function open(): Promise<{ transport: Transport; close: () => Promise<void>; tail: () => string }> {
    const t = config.transport;
    if (t.kind === 'stdio') {
      const { StdioServerTransport, serverEnvironment } = await import('./stdio-transport.ts');
      const transport = new StdioServerTransport(
        { command: t.command, args: t.args, env: serverEnvironment(t.env, deps.ownEnv), cwd: deps.cwd },
        deps.limits.killGraceMs,
      );
      return { transport, close: () => transport.close(), tail: () => transport.stderrTail() };
    }
    const { httpServerTransport } = await import('./http-transport.ts');
    const { transport, agent } = await httpServerTransport(t.url, t.allowHosts, deps.limits.connectMs);
    return {
      transport,
      close: async () => {
        await transport.close().catch(() => {});
        await agent.close().catch(() => {});
      },
      tail: () => '',
    };
  }

  async function attempt(): Promise<void> {
    state = failures === 0 ? 'connecting' : 'restarting';
    let opened: Awaited<ReturnType<typeof open>> | undefined;
    let next: Client | undefined;
    try {
      sdk ??= await loadMcpSdk();
      const current = new sdk.Client({ name: 'steward', version: deps.version }, { capabilities: {} });
      next = current;
      opened = await open();
      closeTransport = opened.close;
      const connectMs = deps.limits.connectMs;
      await withDeadline(current.connect(opened.transport, { timeout: connectMs }), connectMs, 'initialize');
      const listed = await withDeadline(listAll(current, connectMs), connectMs, 'tools/list');
      if (isStopped()) return void (await opened.close());
      client = current;
      tools = listed;
      state = 'connected';
      failures = 0;
      reported = false;
      lastError = undefined;
      // Set after connecting: a close from now on is a crash, and restarts.
      current.onclose = () => {
        if (client === current && state !== 'stopped')
          failed(`the server closed the connection${tail(opened)}`, 'crashed');
      };
      deps.log.info({ server: config.name, tools: tools.length }, 'mcp server connected');
      deps.toolsChanged();
    } catch (error) {
      if (next) next.onclose = undefined;
      await opened?.close().catch(() => {});
      if (isStopped()) return;
      failed(
        `${describe(error, sdk)}${tail(opened)}`,
        failures === 0 && tools.length === 0 ? 'did not start' : 'failed',
      );
    } finally {
      markSettled();
    }
  }

  function tail(opened: { tail: () => string } | undefined): string {
    const text = opened?.tail() ?? '';
    return text ? `; its last words on stderr: ${oneLine(text, 200)}` : '';
  }

  function failed(why: string, what: 'did not start' | 'crashed' | 'failed'): void {
    client = undefined;
    const closing = closeTransport;
    closeTransport = undefined;
    void closing?.().catch(() => {});
    failures += 1;
    state = 'restarting';
    lastError = deps.redact(oneLine(why));
    const delay = Math.min(deps.limits.restartBaseMs * 2 ** (failures - 1), deps.limits.restartMaxMs);
    if (!reported) {
      reported = true;
      deps.report(
        `mcp: server ${config.name} ${what}: ${lastError}; restarting it with backoff (other servers and channels keep running)`,
      );
    } else {
      deps.log.debug({ server: config.name, failures, delayMs: delay }, 'mcp server still failing');
    }
    retry = setTimeout(() => void attempt(), delay);
    retry.unref();
  }

  return {
    config,
    state: () => state,
    tools: () => tools,
    lastError: () => lastError,
    settled: () => firstAttempt,
    start: () => void attempt(),
    async call(tool, args, signal, timeoutMs) {
      const current = client;
      if (!current || state !== 'connected') {
        throw new McpCallError(
          `the MCP server ${config.name} is not connected (${state}); steward is restarting it, so try again later`,
        );
      }
      try {
        // Our own timeout (runTool's) decides; the SDK's is set past it so it never fires first.
        const result = await current.callTool({ name: tool, arguments: args }, undefined, {
          signal,
          timeout: timeoutMs + 5_000,
        });
        return resultText(result);
      } catch (error) {
        if (sdk && error instanceof sdk.McpError && !isLocal(error, sdk)) {
          // The server's own error message: its words, shown to the model as data.
          return { text: `The server answered with an error: ${error.message}`, isError: true };
        }
        if (signal.aborted) throw new McpCallError(`the call to ${config.name} was stopped`);
        throw new McpCallError(
          `the MCP server ${config.name} failed during the call (${describe(error, sdk)})`,
        );
      }
    },
    async stop() {
      state = 'stopped';
      clearTimeout(retry);
      const current = client;
      client = undefined;
      if (current) current.onclose = undefined;
      await current?.close().catch(() => {});
      await closeTransport?.().catch(() => {});
      closeTransport = undefined;
    },
  };
}

/** Errors the SDK raised on our side rather than the server's error messages. */
function isLocal(error: InstanceType<McpSdk['McpError']>, { ErrorCode }: McpSdk): boolean {
  return error.code === ErrorCode.ConnectionClosed || error.code === ErrorCode.RequestTimeout;
}

function describe(error: unknown, sdk: McpSdk | undefined): string {
  if (sdk && error instanceof sdk.McpError && isLocal(error, sdk)) {
    return error.code === sdk.ErrorCode.RequestTimeout
      ? 'it did not answer in time'
      : 'the connection closed';
  }
  const e = error as { code?: unknown; message?: unknown };
  if (e?.code === 'ENOENT') return 'the command (or the folder it runs in) was not found';
  // A transport error can quote what the server sent: never a forged marker in steward's own words.
  return neutralizeMarkers(oneLine(typeof e?.message === 'string' ? e.message : String(error)));
}

async function listAll(client: Client, timeoutMs: number): Promise<ServerToolInfo[]> {
  const out: ServerToolInfo[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page += 1) {
    const listed = await client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs });
    for (const t of listed.tools) {
      out.push({
        name: t.name,
        description: t.description ?? t.title ?? '',
        inputSchema: (t.inputSchema ?? { type: 'object' }) as Record<string, unknown>,
        annotations: (t.annotations ?? {}) as Record<string, unknown>,
      });
    }
    cursor = listed.nextCursor;
    if (!cursor) break;
  }
  return out;
}

function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not finish within ${ms / 1000} s (the server hangs)`)),
      ms,
    );
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
