// Where turns run: one at a time per room, in arrival order, all under one stop signal. `stop()`
// aborts every running turn and waits for the queues to drain, so nothing is cut off mid-write.

export interface TurnRunner {
  /** Runs `work` after everything queued for the room; the room's queue survives a failure. */
  inRoom<T>(channel: string, room: string, work: (signal: AbortSignal) => Promise<T>): Promise<T>;
  readonly signal: AbortSignal;
  /** How many rooms have work queued or running. */
  busy(): number;
  /** Resolves when every queue has drained (work queued meanwhile included). */
  idle(): Promise<void>;
  /** Aborts running turns, refuses new ones, and waits up to `graceMs` for the queues to drain. */
  stop(graceMs: number): Promise<boolean>;
}

export class StoppedError extends Error {
  constructor() {
    super('steward is stopping; nothing new is started');
    this.name = 'StoppedError';
  }
}

export function turnRunner(): TurnRunner {
  const stopping = new AbortController();
  const queues = new Map<string, Promise<unknown>>();
  return {
    signal: stopping.signal,
    inRoom(channel, room, work) {
      const key = `${channel}\u0000${room}`;
      const run = () =>
        stopping.signal.aborted ? Promise.reject(new StoppedError()) : work(stopping.signal);
      const next = (queues.get(key) ?? Promise.resolve()).then(run, run);
      const settled = next.catch(() => {});
      queues.set(key, settled);
      void settled.then(() => {
        if (queues.get(key) === settled) queues.delete(key);
      });
      return next;
    },
    busy: () => queues.size,
    async idle() {
      while (queues.size > 0) await Promise.all([...queues.values()]);
    },
    async stop(graceMs) {
      stopping.abort(new StoppedError());
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), graceMs);
      });
      const drained = Promise.all([...queues.values()]).then(() => true as const);
      const done = await Promise.race([drained, late]);
      clearTimeout(timer);
      return done;
    },
  };
}
