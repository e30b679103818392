// The stdio transport, ours rather than the SDK's: the SDK adds variables of its own choosing to
// the child's environment, and kills only the child, not what it started (npx starts node). Here
// the server gets exactly the variables the config named plus PATH and HOME, runs in its own
// process group, and the whole group is ended on close.
import { type ChildProcess, spawn } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Only PATH and HOME of steward's own environment, then the variables the config named. Pure. */
export function serverEnvironment(
  named: Readonly<Record<string, string>>,
  own: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'HOME'] as const) {
    const value = own[key];
    if (value !== undefined) env[key] = value;
  }
  return { ...env, ...named };
}

/** The last few hundred characters a server wrote to stderr, for the one report of its failure. */
const STDERR_TAIL = 600;

export class StdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private tail = '';

  private readonly params: { command: string; args: string[]; env: Record<string, string>; cwd: string };
  private readonly killGraceMs: number;

  constructor(
    params: { command: string; args: string[]; env: Record<string, string>; cwd: string },
    killGraceMs: number,
  ) {
    this.params = params;
    this.killGraceMs = killGraceMs;
  }

  /** What the server last wrote to stderr (for reports; the caller redacts). */
  stderrTail(): string {
    return this.tail.trim();
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.params.command, this.params.args, {
        env: this.params.env,
        cwd: this.params.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        shell: false,
      });
      this.child = child;
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => resolve());
      child.once('close', () => {
        this.child = undefined;
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        this.tail = (this.tail + chunk.toString('utf8')).slice(-STDERR_TAIL);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) return Promise.reject(new Error('the server process is not running'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    this.buffer.clear();
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const group = (signal: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };
    child.stdin?.end();
    group('SIGTERM');
    const grace = new Promise<'late'>((resolve) =>
      setTimeout(() => resolve('late'), this.killGraceMs).unref(),
    );
    if ((await Promise.race([closed, grace])) === 'late') {
      group('SIGKILL');
      await closed;
    }
  }
}
