// A pg client that runs its statements one after another by itself. pg-boss queues its session
// set-up on a fresh connection while the pool already issues the first checkout statement; pg
// still queues the second silently but deprecates that (pg 9 refuses it). Here the order is made
// explicit instead, so nothing is ever sent while another statement runs on the same client.
import pg from 'pg';

type Callback = (error: Error | null, result?: unknown) => void;

export class SerialClient extends pg.Client {
  #tail: Promise<unknown> = Promise.resolve();

  // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; all pass through.
  override query(...args: any[]): any {
    const callback: Callback | undefined = typeof args.at(-1) === 'function' ? args.pop() : undefined;
    const first = args[0] as { submit?: unknown } | undefined;
    // A Submittable (cursor, stream) manages itself; pass it through as pg would.
    if (first && typeof first === 'object' && typeof first.submit === 'function') {
      return callback
        ? super.query(...(args as [never]), callback as never)
        : super.query(...(args as [never]));
    }
    const run = this.#tail.then(() => super.query(...(args as [never])) as Promise<unknown>);
    this.#tail = run.catch(() => {});
    if (!callback) return run;
    run.then(
      (result) => callback(null, result),
      (error: Error) => callback(error),
    );
    return undefined;
  }
}
