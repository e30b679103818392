// What PostgreSQL refuses to store: a NUL character in any text, and in JSON also a lone surrogate
// (JSON.stringify writes it as an escape jsonb rejects). Text from outside (a file, a quoted event,
// a tool's output, a model's call id) may hold either, so a stranger's bytes must not make a row be
// refused. Both drivers pass every query's parameters through `storableParams`, so no text
// parameter carries a NUL; a jsonb value is written with `storableJson`. Both become U+FFFD.

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

/** A query's parameters with every string made storable (the array itself when none needs it). */
export function storableParams(params: unknown[] | undefined): unknown[] | undefined {
  if (!params?.some((p) => typeof p === 'string' && p.includes('\u0000'))) return params;
  return params.map((p) => (typeof p === 'string' ? storableText(p) : p));
}
