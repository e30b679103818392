// Secrets come from the environment only. Everything that prints (logs, errors, doctor lines)
// runs through these helpers so a token never leaves the process by accident.

export const SECRET_ENV_VARS = [
  'STEWARD_DATABASE_URL',
  'STEWARD_MODEL_API_KEY',
  'STEWARD_TELEGRAM_TOKEN',
  'STEWARD_TELEGRAM_WEBHOOK_SECRET',
  'STEWARD_MATRIX_ACCESS_TOKEN',
] as const;

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
export function secretValues(env: Record<string, string | undefined>): string[] {
  const values: string[] = [];
  for (const name of SECRET_ENV_VARS) {
    const value = env[name];
    if (!value) continue;
    values.push(value);
    if (name === 'STEWARD_DATABASE_URL') values.push(...passwordForms(value));
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
