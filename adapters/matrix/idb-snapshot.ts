// The crypto's IndexedDB (fake-indexeddb, in memory) as one buffer and back. The Olm account and
// its sessions live only there (a room-key export does not carry them), so the whole store is what
// must survive a restart. Read and written through the IndexedDB API itself, with the values in
// V8's structured-clone format (what IndexedDB itself promises to keep: typed arrays, Maps, …).
import { deserialize, serialize } from 'node:v8';

// The part of the IndexedDB API used here (the project's TypeScript has no DOM library).
type Handler = (() => void) | null;
export interface IdbRequest<T> {
  readonly result: T;
  readonly error: unknown;
  onsuccess: Handler;
  onerror: Handler;
}
interface IdbOpenRequest extends IdbRequest<IdbDatabase> {
  onupgradeneeded: Handler;
}
type KeyPath = string | string[] | null;
interface IdbIndex {
  readonly keyPath: string | string[];
  readonly unique: boolean;
  readonly multiEntry: boolean;
}
interface IdbObjectStore {
  readonly keyPath: KeyPath;
  readonly autoIncrement: boolean;
  readonly indexNames: Iterable<string>;
  index(name: string): IdbIndex;
  getAll(): IdbRequest<unknown[]>;
  getAllKeys(): IdbRequest<unknown[]>;
  put(value: unknown, key?: unknown): unknown;
  createIndex(
    name: string,
    keyPath: string | string[],
    options: { unique: boolean; multiEntry: boolean },
  ): unknown;
}
interface IdbTransaction {
  readonly error: unknown;
  objectStore(name: string): IdbObjectStore;
  oncomplete: Handler;
  onerror: Handler;
  onabort: Handler;
}
interface IdbDatabase {
  readonly version: number;
  readonly objectStoreNames: Iterable<string>;
  transaction(names: string[], mode: 'readonly' | 'readwrite'): IdbTransaction;
  createObjectStore(name: string, options: { keyPath: KeyPath; autoIncrement: boolean }): IdbObjectStore;
  close(): void;
}
export interface IdbFactory {
  open(name: string, version?: number): IdbOpenRequest;
  deleteDatabase(name: string): IdbRequest<unknown>;
  databases(): Promise<Array<{ name?: string; version?: number }>>;
}

interface StoreDump {
  name: string;
  keyPath: KeyPath;
  autoIncrement: boolean;
  indexes: Array<{ name: string; keyPath: string | string[]; unique: boolean; multiEntry: boolean }>;
  keys: unknown[];
  values: unknown[];
}
interface DatabaseDump {
  name: string;
  version: number;
  stores: StoreDump[];
}

export const done = <T>(request: IdbRequest<T>): Promise<T> =>
  new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error as Error);
  });
const finished = (tx: IdbTransaction): Promise<void> =>
  new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error as Error);
    tx.onabort = () => reject((tx.error as Error | null) ?? new Error('transaction aborted'));
  });

/** Every database whose name starts with `prefix` (the crypto keeps a data and a meta database). */
export async function snapshotIndexedDb(factory: IdbFactory, prefix: string): Promise<Buffer> {
  const names = (await factory.databases())
    .map((d) => d.name)
    .filter((n): n is string => typeof n === 'string' && n.startsWith(prefix))
    .sort();
  const dumps: DatabaseDump[] = [];
  for (const name of names) {
    const db = await done(factory.open(name));
    try {
      const storeNames = [...db.objectStoreNames];
      const stores: StoreDump[] = [];
      if (storeNames.length > 0) {
        const tx = db.transaction(storeNames, 'readonly');
        for (const storeName of storeNames) {
          const store = tx.objectStore(storeName);
          const indexes = [...store.indexNames].map((i) => {
            const index = store.index(i);
            return { name: i, keyPath: index.keyPath, unique: index.unique, multiEntry: index.multiEntry };
          });
          const [keys, values] = await Promise.all([done(store.getAllKeys()), done(store.getAll())]);
          stores.push({
            name: storeName,
            keyPath: store.keyPath,
            autoIncrement: store.autoIncrement,
            indexes,
            keys,
            values,
          });
        }
        await finished(tx);
      }
      dumps.push({ name, version: db.version, stores });
    } finally {
      db.close();
    }
  }
  return serialize(dumps);
}

/** Puts a snapshot back: each database recreated at its version, with its stores, indexes and records. */
export async function restoreIndexedDb(factory: IdbFactory, snapshot: Buffer): Promise<void> {
  const dumps = deserialize(snapshot) as DatabaseDump[];
  for (const dump of dumps) {
    await done(factory.deleteDatabase(dump.name));
    const opening = factory.open(dump.name, dump.version);
    opening.onupgradeneeded = () => {
      const db = opening.result;
      for (const s of dump.stores) {
        const store = db.createObjectStore(s.name, {
          keyPath: s.keyPath,
          autoIncrement: s.autoIncrement,
        });
        for (const i of s.indexes)
          store.createIndex(i.name, i.keyPath, { unique: i.unique, multiEntry: i.multiEntry });
      }
    };
    const db = await done(opening);
    try {
      if (dump.stores.length === 0) continue;
      const tx = db.transaction(
        dump.stores.map((s) => s.name),
        'readwrite',
      );
      for (const s of dump.stores) {
        const store = tx.objectStore(s.name);
        s.values.forEach((value, i) => {
          if (s.keyPath === null) store.put(value, s.keys[i]);
          else store.put(value);
        });
      }
      await finished(tx);
    } finally {
      db.close();
    }
  }
}
