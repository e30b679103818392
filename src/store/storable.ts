// What PostgreSQL refuses to store: a NUL character in any text, and in JSON also a lone surrogate
// (JSON.stringify writes it as an escape jsonb rejects). Text from outside (a file, a quoted event,
// a tool's output) may hold either, so every write of such text goes through here and a stranger's
// bytes cannot make the log refuse a message. Both become U+FFFD, the replacement character.

/** Text safe for a `text` column: no NUL. Safe on pieces of a stream (it never looks past one). */
export function storableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/** `JSON.stringify` for a jsonb column: every string without NUL and well formed. */
export function storableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'string' ? storableText(v).toWellFormed() : v,
  );
}
