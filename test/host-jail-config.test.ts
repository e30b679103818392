// sandbox.host_jail: the file key, its variable, its default and its error.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.ts';

const root = mkdtempSync(join(tmpdir(), 'steward-host-jail-config-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function file(text: string): string {
  const path = join(root, `steward-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, text);
  return path;
}

describe('sandbox.host_jail', () => {
  it.each([
    [{}, 'auto'],
    [{ STEWARD_SANDBOX_HOST_JAIL: 'required' }, 'required'],
    [{ STEWARD_SANDBOX_HOST_JAIL: 'off' }, 'off'],
    [{ STEWARD_CONFIG: 'FILE:sandbox:\n  host_jail: required\n' }, 'required'],
    [{ STEWARD_CONFIG: 'FILE:sandbox:\n  host_jail: required\n', STEWARD_SANDBOX_HOST_JAIL: 'off' }, 'off'],
  ])('%j gives %s', (raw, want) => {
    const env: Record<string, string> = { ...raw };
    if (env.STEWARD_CONFIG?.startsWith('FILE:')) env.STEWARD_CONFIG = file(env.STEWARD_CONFIG.slice(5));
    expect(loadConfig(env, root).hostJail).toBe(want);
  });

  it('an unknown mode names the variable and the choices', () => {
    expect(() => loadConfig({ STEWARD_SANDBOX_HOST_JAIL: 'yes' }, root)).toThrow(
      /STEWARD_SANDBOX_HOST_JAIL: is not an allowed value; use one of auto, required, off/,
    );
  });

  it('an unknown key under sandbox is refused', () => {
    expect(() => loadConfig({ STEWARD_CONFIG: file('sandbox:\n  jail: on\n') }, root)).toThrow(
      /sandbox.jail: unknown key; remove it or use one of host_jail/,
    );
  });
});
