// sandboxd: the only process that talks to Docker. It reads one validated request per connection,
// runs it in a fresh container built from its own configuration, streams the output back as frames
// (pausing the container's stream while the client is slow, so a 100 MB output never piles up in
// memory), and removes the container whatever happens. At start it removes what an earlier run of
// it left behind (a crash, a SIGKILL), found by its label.
import { chmod, lstat, mkdir, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import type Docker from 'dockerode';
import { DEFAULT_SANDBOX_LIMITS } from '../limits.ts';
import type { Logger } from '../log.ts';
import { containerSpec, OWNER_LABEL } from './container-spec.ts';
import {
  encodeFrame,
  FRAME,
  FrameReader,
  type RunResult,
  requestValidator,
  type SandboxRequest,
} from './protocol.ts';
import type { SandboxConfig } from './sandbox-config.ts';
import { checkWorkspace, prepareWorkspace } from './workspace-access.ts';

export interface SandboxdDeps {
  docker: Docker;
  config: SandboxConfig;
  log: Logger;
}

export interface Sandboxd {
  /** Sweeps leftovers, checks the image, listens. Rejects when the socket cannot be taken. */
  start(): Promise<{ swept: number; imageMissing?: string }>;
  /** Stops listening, kills and removes running containers. */
  stop(): Promise<void>;
}

/** Removes every container carrying this sandboxd's label; returns how many. */
export async function sweep(docker: Docker, socket: string): Promise<number> {
  const leftovers = await docker.listContainers({
    all: true,
    filters: { label: [`${OWNER_LABEL}=${socket}`] },
  });
  await Promise.all(
    leftovers.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {}),
    ),
  );
  return leftovers.length;
}

export function imageMissingMessage(image: string): string {
  return `image ${image} is not on this Docker engine and sandboxd never pulls; build it with scripts/build-sandbox-image.sh (or docker load/import your own) and set sandbox.image`;
}

export async function imagePresent(docker: Docker, image: string): Promise<boolean> {
  try {
    await docker.getImage(image).inspect();
    return true;
  } catch {
    return false;
  }
}

/** Takes the socket path: a 0700 folder made if missing, a stale socket file replaced, the socket 0600. */
async function listen(server: Server, socket: string): Promise<void> {
  await mkdir(dirname(socket), { recursive: true, mode: 0o700 });
  const existing = await lstat(socket).catch(() => undefined);
  if (existing) {
    if (!existing.isSocket())
      throw new Error(`${socket} exists and is not a socket; remove it or set sandbox.socket`);
    await rm(socket);
  }
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(socket, () => {
      server.off('error', fail);
      done();
    });
  });
  await chmod(socket, 0o600);
}

export function createSandboxd({ docker, config, log }: SandboxdDeps): Sandboxd {
  const validate = requestValidator();
  const running = new Set<Docker.Container>();
  const server = createServer((client) => void serve(client));

  async function serve(client: Socket): Promise<void> {
    client.on('error', () => {});
    const line = await readLine(client);
    const fail = (error: string) => {
      if (!client.destroyed) client.end(encodeFrame(FRAME.error, JSON.stringify({ error })));
    };
    if (line === undefined)
      return fail(`refused: no request line within ${DEFAULT_SANDBOX_LIMITS.maxRequestBytes} bytes`);
    const parsed = validate(line);
    if (!parsed.ok) {
      log.warn({ error: parsed.error }, 'sandboxd refused a request');
      return fail(parsed.error);
    }
    try {
      const result = await run(parsed.request, client);
      if (!client.destroyed) client.end(encodeFrame(FRAME.result, JSON.stringify(result)));
    } catch (error) {
      fail((error as Error).message);
    }
  }

  async function run(request: SandboxRequest, client: Socket): Promise<RunResult> {
    const checked = await checkWorkspace(config.workspaceRoot, request.workspace);
    if (!checked.ok) throw new Error(checked.error);
    const gid = await prepareWorkspace(checked.path);
    const spec = containerSpec({ config, request, workspace: checked.path, gid });
    const started = performance.now();
    let container: Docker.Container;
    try {
      container = await docker.createContainer(spec);
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404)
        throw new Error(imageMissingMessage(config.image));
      throw new Error(`could not create the container: ${(error as Error).message}`);
    }
    running.add(container);
    let timedOut = false;
    let cancelled = false;
    const kill = () => container.kill().catch(() => {});
    const onClose = () => {
      cancelled = true;
      void kill();
    };
    client.once('close', onClose);
    const timer = setTimeout(() => {
      timedOut = true;
      void kill();
    }, request.timeoutMs);
    try {
      const stream = await container.attach({ stream: true, stdout: true, stderr: true });
      const forwarded = forward(stream, client);
      await container.start();
      const status = (await container.wait()) as { StatusCode: number };
      await forwarded;
      const state = (await container.inspect()).State;
      return {
        exitCode: timedOut || cancelled ? null : status.StatusCode,
        timedOut,
        oomKilled: state.OOMKilled === true,
        cancelled,
        image: config.image,
        network: config.network,
        durationMs: Math.round(performance.now() - started),
      };
    } finally {
      clearTimeout(timer);
      client.off('close', onClose);
      await container.remove({ force: true }).catch((error: Error) => {
        log.warn({ runId: request.runId, error: error.message }, 'sandboxd could not remove a container');
      });
      running.delete(container);
    }
  }

  return {
    async start() {
      const swept = await sweep(docker, config.socket);
      if (swept > 0) log.info({ swept }, 'sandboxd removed containers an earlier run left behind');
      await listen(server, config.socket);
      log.info({ socket: config.socket, image: config.image, network: config.network }, 'sandboxd listening');
      if (!(await imagePresent(docker, config.image))) {
        const message = imageMissingMessage(config.image);
        log.warn(message);
        return { swept, imageMissing: message };
      }
      return { swept };
    },
    async stop() {
      await new Promise<void>((done) => server.close(() => done()));
      await Promise.all([...running].map((c) => c.remove({ force: true }).catch(() => {})));
      await rm(config.socket, { force: true });
    },
  };
}

/** The first line a client sends, or undefined if it is too long or the client leaves first. */
function readLine(client: Socket): Promise<string | undefined> {
  return new Promise((done) => {
    let buffered = Buffer.alloc(0);
    const finish = (value: string | undefined) => {
      client.off('data', onData);
      client.off('end', onEnd);
      client.pause();
      done(value);
    };
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const newline = buffered.indexOf(10);
      if (newline >= 0) return finish(buffered.subarray(0, newline).toString('utf8'));
      if (buffered.length > DEFAULT_SANDBOX_LIMITS.maxRequestBytes) finish(undefined);
    };
    const onEnd = () => finish(buffered.length > 0 ? buffered.toString('utf8') : undefined);
    client.on('data', onData);
    client.once('end', onEnd);
  });
}

/**
 * Docker's attach stream is already framed (type 1 stdout, 2 stderr), in the layout the client
 * reads; frames are re-cut only to check them. The stream pauses while the client's buffer is full.
 */
function forward(stream: NodeJS.ReadWriteStream, client: Socket): Promise<void> {
  const reader = new FrameReader();
  return new Promise((done) => {
    stream.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        if (frame.type !== FRAME.stdout && frame.type !== FRAME.stderr) continue;
        if (client.destroyed) continue;
        if (!client.write(encodeFrame(frame.type as 1 | 2, frame.payload))) {
          stream.pause();
          client.once('drain', () => stream.resume());
        }
      }
    });
    // A client that left gets nothing more, but the stream must flow to reach its end.
    client.once('close', () => stream.resume());
    stream.once('end', () => done());
    stream.once('close', () => done());
    stream.once('error', () => done());
  });
}
