// steward's side of sandboxd: one connection per run, the request as one JSON line, frames back.
// steward never talks to Docker; this socket is all it knows of the sandbox.
import { connect } from 'node:net';
import { FRAME, FrameReader, type RunResult, type SandboxRequest } from './protocol.ts';

export interface RunHandlers {
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
  /** Aborting closes the connection; sandboxd then kills and removes the container. */
  signal?: AbortSignal;
}

export type ClientOutcome =
  | { kind: 'ran'; result: RunResult }
  /** sandboxd answered with a refusal or an error: nothing ran, or the run could not finish. */
  | { kind: 'refused'; error: string }
  /** No sandboxd at the socket (or it went away mid-run). */
  | { kind: 'unreachable'; error: string };

export interface SandboxClient {
  socket: string;
  run(request: SandboxRequest, handlers: RunHandlers): Promise<ClientOutcome>;
}

export function sandboxClient(socket: string): SandboxClient {
  return {
    socket,
    run(request, handlers) {
      return new Promise((done) => {
        const conn = connect(socket);
        const reader = new FrameReader();
        let outcome: ClientOutcome | undefined;
        let connected = false;
        const onAbort = () => conn.destroy();
        handlers.signal?.addEventListener('abort', onAbort, { once: true });
        conn.on('connect', () => {
          connected = true;
          conn.write(`${JSON.stringify(request)}\n`);
        });
        conn.on('data', (chunk: Buffer) => {
          for (const frame of reader.push(chunk)) {
            if (frame.type === FRAME.stdout) handlers.onStdout(frame.payload);
            else if (frame.type === FRAME.stderr) handlers.onStderr(frame.payload);
            else if (frame.type === FRAME.result)
              outcome = { kind: 'ran', result: JSON.parse(frame.payload.toString('utf8')) as RunResult };
            else if (frame.type === FRAME.error)
              outcome = {
                kind: 'refused',
                error: (JSON.parse(frame.payload.toString('utf8')) as { error: string }).error,
              };
          }
        });
        conn.on('error', (error: NodeJS.ErrnoException) => {
          outcome ??= {
            kind: 'unreachable',
            error: connected
              ? `sandboxd at ${socket} went away mid-run (${error.code ?? error.message})`
              : `sandboxd is not reachable at ${socket} (${error.code ?? error.message}); start it with \`steward sandboxd\``,
          };
        });
        conn.on('close', () => {
          handlers.signal?.removeEventListener('abort', onAbort);
          done(
            outcome ?? {
              kind: 'unreachable',
              error: handlers.signal?.aborted
                ? 'cancelled'
                : `sandboxd at ${socket} closed the connection without a result`,
            },
          );
        });
      });
    },
  };
}
