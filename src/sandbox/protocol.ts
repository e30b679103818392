// The whole API between steward and sandboxd: one JSON line in, frames out. The request names a
// run, a command, a timeout and a workspace, and nothing else: an image, a mount, a user or a
// privilege flag in it is refused by name, never ignored.
import { createRequire } from 'node:module';
import { DEFAULT_SANDBOX_LIMITS } from '../limits.ts';

export interface SandboxRequest {
  /** Names the container (labels, logs); letters, digits, `_` and `-`. */
  runId: string;
  /** One bash command line, run in the fixed dialect; never rebuilt. */
  command: string;
  timeoutMs: number;
  /** The folder mounted read-write; must be at or under sandboxd's workspace root. */
  workspace: string;
}

export const REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['runId', 'command', 'timeoutMs', 'workspace'],
  properties: {
    runId: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
    command: { type: 'string', minLength: 1, maxLength: 30_000 },
    timeoutMs: { type: 'integer', minimum: 100, maximum: DEFAULT_SANDBOX_LIMITS.maxTimeoutMs },
    workspace: { type: 'string', minLength: 1, maxLength: 4096, pattern: '^/' },
  },
} as const;

export type ParsedRequest = { ok: true; request: SandboxRequest } | { ok: false; error: string };

export type RequestValidator = (text: string) => ParsedRequest;

/**
 * Compiles the schema once; sandboxd keeps the returned function. ajv loads here, not with the
 * module: steward's own side of the protocol (client.ts) never validates requests.
 */
export function requestValidator(): RequestValidator {
  const { Ajv } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
  const validate = new Ajv({ allErrors: true, strict: true }).compile(REQUEST_SCHEMA);
  return (text) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { ok: false, error: 'the request is not JSON' };
    }
    if (validate(value)) {
      const request = value as SandboxRequest;
      if (request.command.includes('\0')) return { ok: false, error: 'command contains a NUL character' };
      return { ok: true, request };
    }
    const errors = validate.errors ?? [];
    const extra = errors
      .filter((e) => e.keyword === 'additionalProperties')
      .map((e) => String((e.params as { additionalProperty: string }).additionalProperty));
    if (extra.length > 0) {
      return {
        ok: false,
        error: `refused: unknown field${extra.length > 1 ? 's' : ''} ${extra.map((f) => JSON.stringify(f)).join(', ')}; a request may carry only runId, command, timeoutMs and workspace (image, mounts, user, limits and network are sandboxd's configuration)`,
      };
    }
    const first = errors[0];
    const where = first?.instancePath ? first.instancePath.slice(1) : 'request';
    return { ok: false, error: `refused: ${where} ${first?.message ?? 'is invalid'}` };
  };
}

/**
 * Frames from sandboxd, in Docker's own stream layout so one parser reads both: a type byte, three
 * zero bytes, a big-endian length, the payload.
 */
export const FRAME = { stdout: 1, stderr: 2, result: 3, error: 4 } as const;
export type FrameType = (typeof FRAME)[keyof typeof FRAME];
const HEADER = 8;

export function encodeFrame(type: FrameType, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const head = Buffer.alloc(HEADER);
  head[0] = type;
  head.writeUInt32BE(body.length, 4);
  return Buffer.concat([head, body]);
}

/** How a run ended, as sandboxd saw it. */
export interface RunResult {
  exitCode: number | null;
  timedOut: boolean;
  oomKilled: boolean;
  /** The client went away or sandboxd stopped; the container was killed. */
  cancelled: boolean;
  image: string;
  network: 'none' | 'bridge';
  durationMs: number;
}

/** Splits a byte stream into frames; keeps only the unfinished tail between pushes. */
export class FrameReader {
  #pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Array<{ type: number; payload: Buffer }> {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const frames: Array<{ type: number; payload: Buffer }> = [];
    while (this.#pending.length >= HEADER) {
      const size = this.#pending.readUInt32BE(4);
      if (this.#pending.length < HEADER + size) break;
      frames.push({
        type: this.#pending[0] as number,
        payload: this.#pending.subarray(HEADER, HEADER + size),
      });
      this.#pending = this.#pending.subarray(HEADER + size);
    }
    return frames;
  }

  get pendingBytes(): number {
    return this.#pending.length;
  }
}
