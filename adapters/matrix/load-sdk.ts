// The one place that deals with matrix-bot-sdk's native E2EE library. The SDK requires
// @matrix-org/matrix-sdk-crypto-nodejs when it is imported, and that package throws at require time
// when its native binary is missing (its install step downloads it; machines without internet
// never get it). So: try the real library first; if it does not load, put a stand-in into the
// require cache under its resolved path, whose every member throws a clear error, and import the
// SDK after. Only encryption is lost; everything else in the SDK works.
import { createRequire, Module } from 'node:module';

const CRYPTO_PACKAGE = '@matrix-org/matrix-sdk-crypto-nodejs';

export type Sdk = typeof import('matrix-bot-sdk');

export type E2eeStatus = { available: true; storeType: unknown } | { available: false; reason: string };

export interface LoadedSdk {
  sdk: Sdk;
  e2ee: E2eeStatus;
}

export class E2eeUnavailableError extends Error {
  override name = 'E2eeUnavailableError';
}

let loading: Promise<LoadedSdk> | undefined;

/** Imports matrix-bot-sdk once per process, with or without its E2EE library. */
export function loadMatrixSdk(): Promise<LoadedSdk> {
  loading ??= load();
  return loading;
}

async function load(): Promise<LoadedSdk> {
  // Resolve the crypto package exactly as the SDK will, from the SDK's own folder.
  const sdkRequire = createRequire(createRequire(import.meta.url).resolve('matrix-bot-sdk'));
  const path = sdkRequire.resolve(CRYPTO_PACKAGE);
  let e2ee: E2eeStatus;
  try {
    const crypto = sdkRequire(CRYPTO_PACKAGE) as { StoreType: { Sqlite: unknown } };
    e2ee = { available: true, storeType: crypto.StoreType.Sqlite };
  } catch (error) {
    const reason = firstLine(error);
    delete sdkRequire.cache[path];
    sdkRequire.cache[path] = unavailableModule(path, reason);
    e2ee = { available: false, reason };
  }
  const sdk = (await import('matrix-bot-sdk')) as Sdk & { default?: Sdk };
  return { sdk: sdk.default ?? sdk, e2ee };
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
  const stub = new Module(path);
  stub.filename = path;
  stub.loaded = true;
  stub.exports = exports;
  return stub;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}
