// IndexedDB for the crypto's WASM in Node, which has none: fake-indexeddb's classes as the globals
// the WASM checks its objects against, and a fresh in-memory factory. In memory only; what must
// last is snapshotted into steward's database (idb-snapshot.ts).
import * as fake from 'fake-indexeddb';
import type { IdbFactory } from './idb-snapshot.ts';

/** Installs the IndexedDB globals (once per process: the WASM reads `globalThis.indexedDB`). */
export function installIndexedDb(): IdbFactory {
  const g = globalThis as Record<string, unknown>;
  if (g.indexedDB instanceof fake.IDBFactory) return g.indexedDB as IdbFactory;
  const factory = new fake.IDBFactory();
  const globals: Record<string, unknown> = {
    indexedDB: factory,
    IDBCursor: fake.IDBCursor,
    IDBCursorWithValue: fake.IDBCursorWithValue,
    IDBDatabase: fake.IDBDatabase,
    IDBFactory: fake.IDBFactory,
    IDBIndex: fake.IDBIndex,
    IDBKeyRange: fake.IDBKeyRange,
    IDBObjectStore: fake.IDBObjectStore,
    IDBOpenDBRequest: fake.IDBOpenDBRequest,
    IDBRecord: fake.IDBRecord,
    IDBRequest: fake.IDBRequest,
    IDBTransaction: fake.IDBTransaction,
    IDBVersionChangeEvent: fake.IDBVersionChangeEvent,
  };
  for (const [name, value] of Object.entries(globals))
    Object.defineProperty(globalThis, name, { value, enumerable: false, configurable: true, writable: true });
  return factory as unknown as IdbFactory;
}
