// The one place that deals with matrix-bot-sdk's E2EE library. The SDK requires
// @matrix-org/matrix-sdk-crypto-nodejs when it is imported, and that package's installer downloads
// a native binary (machines without internet never get it; many self-hosters would rather not run
// it). The same Rust crypto ships compiled to WASM in @matrix-org/matrix-sdk-crypto-wasm, with no
// install step: it goes into the require cache under the native package's resolved path,
// presented under its API (crypto-wasm-adapter.ts), and the SDK is imported after. When the WASM
// package does not load either, a stand-in whose every member throws a clear error goes there
// instead: only encryption is lost; everything else in the SDK works.
import { createRequire, Module } from 'node:module';
import { type CryptoWasm, cryptoNodejsApi, type StoreHooks } from './crypto-wasm-adapter.ts';
import type { IdbFactory } from './idb-snapshot.ts';
import { installIndexedDb } from './indexeddb-globals.ts';

const CRYPTO_PACKAGE = '@matrix-org/matrix-sdk-crypto-nodejs';
const WASM_PACKAGE = '@matrix-org/matrix-sdk-crypto-wasm';

export type Sdk = typeof import('matrix-bot-sdk');

/** The crypto stores in use in this process, each with the hooks that keep it (by store name). */
export interface CryptoStores {
  /** Where the crypto's IndexedDB lives (in memory). */
  indexedDb: IdbFactory;
  /** Registers the hooks of store `name`; the returned function unregisters them. */
  register(name: string, hooks: StoreHooks): () => void;
}

export type E2eeStatus =
  | { available: true; engine: string; stores: CryptoStores }
  | { available: false; reason: string };

export interface LoadedSdk {
  sdk: Sdk;
  e2ee: E2eeStatus;
}

export class E2eeUnavailableError extends Error {
  override name = 'E2eeUnavailableError';
}

let loading: Promise<LoadedSdk> | undefined;

/** Imports matrix-bot-sdk once per process, with or without E2EE. */
export function loadMatrixSdk(): Promise<LoadedSdk> {
  loading ??= load();
  return loading;
}

async function load(): Promise<LoadedSdk> {
  // Resolve the crypto package exactly as the SDK will, from the SDK's own folder.
  const sdkRequire = createRequire(createRequire(import.meta.url).resolve('matrix-bot-sdk'));
  const path = sdkRequire.resolve(CRYPTO_PACKAGE);
  let e2ee: E2eeStatus;
  delete sdkRequire.cache[path];
  try {
    const wasm = createRequire(import.meta.url)(WASM_PACKAGE) as CryptoWasm;
    const version = wasm.getVersions();
    const indexedDb = installIndexedDb();
    const registered = new Map<string, StoreHooks>();
    const hooksOf = (name: string): StoreHooks => {
      const hooks = registered.get(name);
      // Never run the crypto on a store nothing keeps: its keys would be lost at the next stop.
      if (!hooks) throw new E2eeUnavailableError(`E2EE store ${name} has no persistence registered`);
      return hooks;
    };
    const api = cryptoNodejsApi(wasm, {
      restore: (name) => hooksOf(name).restore(name),
      changed: (name) => hooksOf(name).changed(name),
    });
    sdkRequire.cache[path] = moduleWith(path, api);
    const stores: CryptoStores = {
      indexedDb,
      register(name, hooks) {
        if (registered.has(name)) throw new E2eeUnavailableError(`E2EE store ${name} is in use already`);
        registered.set(name, hooks);
        return () => registered.delete(name);
      },
    };
    e2ee = {
      available: true,
      engine: `${WASM_PACKAGE} (matrix-sdk-crypto ${version.matrix_sdk_crypto})`,
      stores,
    };
  } catch (error) {
    const reason = firstLine(error);
    sdkRequire.cache[path] = unavailableModule(path, reason);
    e2ee = { available: false, reason };
  }
  const sdk = (await import('matrix-bot-sdk')) as Sdk & { default?: Sdk };
  return { sdk: sdk.default ?? sdk, e2ee };
}

function moduleWith(path: string, exports: unknown): NodeJS.Module {
  const module = new Module(path);
  module.filename = path;
  module.loaded = true;
  module.exports = exports;
  return module;
}

/** A module whose members are callables and classes that throw, so nothing fails until E2EE is used. */
function unavailableModule(path: string, reason: string): NodeJS.Module {
  const fail = (member: string) => {
    throw new E2eeUnavailableError(
      `E2EE unavailable: ${CRYPTO_PACKAGE} did not load (${reason}); ${member} cannot be used`,
    );
  };
  const exports = new Proxy(
    {},
    {
      get(_target, member) {
        if (typeof member !== 'string' || member === 'then' || member === '__esModule') return undefined;
        return new Proxy(function unavailable() {}, {
          apply: () => fail(member),
          construct: () => fail(member),
          get: (_fn, inner) => (typeof inner === 'string' ? fail(`${member}.${inner}`) : undefined),
        });
      },
    },
  );
  return moduleWith(path, exports);
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}
