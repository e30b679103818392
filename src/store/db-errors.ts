import { StoreError } from '../errors.ts';

/** A driver's failure as a StoreError carrying the SQLSTATE code; both drivers report alike. */
export async function wrapErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof StoreError) throw error;
    const pgError = error as { message?: string; code?: string };
    const wrapped = new StoreError(`database: ${pgError.message ?? String(error)}`);
    Object.assign(wrapped, { code: pgError.code });
    throw wrapped;
  }
}
