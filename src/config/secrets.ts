// Secrets come from the environment only. Everything that prints (logs, errors, doctor lines)
// runs through these helpers so a token never leaves the process by accident.

export const SECRET_ENV_VARS = [
  'STEWARD_DATABASE_URL',
  'STEWARD_MODEL_API_KEY',
  'STEWARD_TELEGRAM_TOKEN',
  'STEWARD_MATRIX_ACCESS_TOKEN',
] as const;

const REDACTED = '[redacted]';

/** Hides the password of a connection URL, keeping the rest readable for the operator. */
export function maskUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return REDACTED;
  }
}

/** The literal values that must never be printed, including a database URL's password. */
export function secretValues(env: Record<string, string | undefined>): string[] {
  const values: string[] = [];
  for (const name of SECRET_ENV_VARS) {
    const value = env[name];
    if (!value) continue;
    values.push(value);
    if (name === 'STEWARD_DATABASE_URL') {
      try {
        const password = decodeURIComponent(new URL(value).password);
        if (password) values.push(password, encodeURIComponent(password));
      } catch {
        // An unparsable URL is reported elsewhere; its whole text is already listed.
      }
    }
  }
  // Longest first, so a URL is replaced whole before its password is looked for.
  return [...new Set(values.filter((v) => v.length >= 4))].sort((a, b) => b.length - a.length);
}

export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join(REDACTED);
  return out;
}
