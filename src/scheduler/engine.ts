// What starts fires. Both engines only tell the runner "look at schedule X now"; the lease in the
// runner is what makes each fire happen once, whichever engine (and however many stewards) asked.

export interface Engine {
  readonly name: 'pg-boss' | 'lease';
  start(): Promise<void>;
  /** A schedule was added, paused, resumed or removed. */
  changed(id: string): Promise<void>;
  /** Resolves when no trigger the engine started is still being handled. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/** Keeps the promises of work in flight so `idle()` and `stop()` can wait for them. */
export function inFlight() {
  const pending = new Set<Promise<unknown>>();
  return {
    add<T>(work: Promise<T>): Promise<T> {
      pending.add(work);
      void work.then(
        () => pending.delete(work),
        () => pending.delete(work),
      );
      return work;
    },
    async idle(): Promise<void> {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}
