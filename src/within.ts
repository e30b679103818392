/**
 * Whether `work` settles within `ms`, and before `signal` aborts. The timeout keeps no process up,
 * and `work` goes on either way: this only stops waiting for it.
 */
export async function within(work: Promise<unknown>, ms: number, signal: AbortSignal): Promise<boolean> {
  const limit = AbortSignal.any([signal, AbortSignal.timeout(ms)]);
  if (limit.aborted) return false;
  const gaveUp = new Promise<false>((done) =>
    limit.addEventListener('abort', () => done(false), { once: true }),
  );
  return Promise.race([work.then(() => true as const), gaveUp]);
}
