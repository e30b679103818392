// Secrets come from the environment only, each either as NAME or as NAME_FILE naming a file that
// holds it (Docker and systemd credentials: the value never sits in the environment, where a child
// process or /proc/PID/environ could read it). Everything that prints (logs, errors, doctor lines)
// runs through these helpers so a token never leaves the process by accident.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../errors.ts';

export const SECRET_ENV_VARS = [
  'STEWARD_DATABASE_URL',
  'STEWARD_MODEL_API_KEY',
  'STEWARD_TELEGRAM_TOKEN',
  'STEWARD_TELEGRAM_WEBHOOK_SECRET',
  'STEWARD_MATRIX_ACCESS_TOKEN',
  'STEWARD_TRANSCRIPTION_API_KEY',
] as const;

/** `NAME_FILE` names a file holding the secret `NAME`. */
export const SECRET_FILE_SUFFIX = '_FILE';

type Env = Record<string, string | undefined>;
export type ReadText = (path: string) => string;
const readText: ReadText = (path) => readFileSync(path, 'utf8');

/** A secret file's content is the secret, less its trailing newline(s). */
function secretFromFile(text: string): string {
  return text.replace(/[\r\n]+$/, '');
}

/**
 * The environment with each `NAME_FILE` read into `NAME` (and `NAME_FILE` removed), for the given
 * secret names. Both set, an unreadable file or an empty one is a one-line ConfigError naming the
 * variable and the path, never the content.
 */
export function withSecretFiles(
  env: Env,
  names: readonly string[],
  cwd: string,
  read: ReadText = readText,
): Env {
  const out: Env = { ...env };
  for (const name of new Set(names)) {
    const fileVar = `${name}${SECRET_FILE_SUFFIX}`;
    const path = env[fileVar];
    if (path === undefined || path === '') continue;
    if (env[name] !== undefined && env[name] !== '') {
      throw new ConfigError(
        `config: both ${name} and ${fileVar} are set; unset one of them (${fileVar} names a file holding the secret, ${name} is the secret itself)`,
      );
    }
    const full = resolve(cwd, path);
    let text: string;
    try {
      text = read(full);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError(
        `config: ${fileVar} names ${full}, which cannot be read (${code}); check the path and that steward's user may read it`,
      );
    }
    const secret = secretFromFile(text);
    if (secret === '') {
      throw new ConfigError(`config: ${fileVar} names ${full}, which is empty; put the secret in it`);
    }
    out[name] = secret;
    delete out[fileVar];
  }
  return out;
}

/** A secret's values from NAME and from NAME_FILE when readable (for redaction only: never throws). */
function valuesOf(env: Env, name: string, read: ReadText): string[] {
  const values: string[] = [];
  const value = env[name];
  if (value) values.push(value);
  const path = env[`${name}${SECRET_FILE_SUFFIX}`];
  if (!path) return values;
  try {
    values.push(secretFromFile(read(resolve(path))));
  } catch {
    // unreadable: loadConfig reports it; nothing to redact
  }
  return values;
}

const REDACTED = '[redacted]';

const MASK = '***';
/** Query parameters that carry a password (libpq accepts `?password=`). */
const PASSWORD_PARAM = /^pass(word)?$/i;

/** Hides the password of a connection URL, keeping the rest readable for the operator. */
export function maskUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return REDACTED;
  }
  // Without an authority (e.g. "user:secret@host/db", its scheme missing) the parser keeps the
  // credentials in an opaque path and reports no password, so nothing of it may be shown.
  if (!url.host && raw.includes('@')) return REDACTED;
  if (url.password) url.password = MASK;
  for (const key of [...url.searchParams.keys()]) {
    if (PASSWORD_PARAM.test(key)) url.searchParams.set(key, MASK);
  }
  return url.toString();
}

/** Every spelling of a connection URL's password that may show up in text: as written, decoded, re-encoded. */
function passwordForms(raw: string): string[] {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // An unparsable URL is reported elsewhere; its whole text is already listed.
    return [];
  }
  const written: string[] = [url.password];
  // The parser may re-encode what it keeps; take the password exactly as written in the text too.
  const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)@/i.exec(raw)?.[1];
  if (userinfo?.includes(':')) written.push(userinfo.slice(userinfo.indexOf(':') + 1));
  for (const [key, value] of url.searchParams) if (PASSWORD_PARAM.test(key)) written.push(value);
  const forms: string[] = [];
  for (const form of written.filter(Boolean)) {
    let decoded = form;
    try {
      decoded = decodeURIComponent(form);
    } catch {
      // A stray "%" is a literal character of the password.
    }
    forms.push(form, decoded, encodeURIComponent(decoded));
  }
  return forms;
}

/** The literal values that must never be printed, including a database URL's password. */
export function secretValues(env: Env, read: ReadText = readText): string[] {
  const values: string[] = [];
  for (const name of SECRET_ENV_VARS) {
    for (const value of valuesOf(env, name, read)) {
      if (!value) continue;
      values.push(value);
      if (name === 'STEWARD_DATABASE_URL') values.push(...passwordForms(value));
    }
  }
  // Longest first, so a URL is replaced whole before its password is looked for.
  return [...new Set(values.filter((v) => v.length >= 4))].sort((a, b) => b.length - a.length);
}

/** Replaces every occurrence of every secret, longest first so no part of a longer one survives. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  const ordered = secrets.filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  for (const secret of ordered) out = out.split(secret).join(REDACTED);
  return out;
}
