// Bash brace expansion for the policy guard, so `cat .{e,}nv` is judged as `cat .env nv`.

const RANGE = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])$/;

/** Bash brace expansion, bounded: `{a,b}c` → ac bc, `{1..3}` → 1 2 3. */
export function expandBraces(word: string, limit = 64, depth = 0): string[] {
  const open = depth < 16 ? findBrace(word) : undefined;
  if (!open) return [word];
  const { start, end, options } = open;
  const head = word.slice(0, start);
  const tail = word.slice(end + 1);
  const out: string[] = [];
  for (const option of options) {
    for (const rest of expandBraces(head + option + tail, limit, depth + 1)) {
      out.push(rest);
      if (out.length >= limit) return out;
    }
  }
  return out;
}

function findBrace(word: string): { start: number; end: number; options: string[] } | undefined {
  for (let start = word.indexOf('{'); start >= 0; start = word.indexOf('{', start + 1)) {
    let depth = 0;
    const commas: number[] = [];
    for (let k = start + 1; k < word.length; k++) {
      const c = word[k];
      if (c === '{') depth++;
      else if (c === ',' && depth === 0) commas.push(k);
      else if (c === '}') {
        if (depth > 0) {
          depth--;
          continue;
        }
        const body = word.slice(start + 1, k);
        if (commas.length > 0) {
          const bounds = [start, ...commas, k];
          const options = bounds.slice(1).map((b, i) => word.slice((bounds[i] as number) + 1, b));
          return { start, end: k, options };
        }
        const range = RANGE.exec(body);
        if (range) return { start, end: k, options: rangeOf(range[1] as string, range[2] as string) };
        break;
      }
    }
  }
  return undefined;
}

function rangeOf(from: string, to: string): string[] {
  const numeric = /\d/.test(from);
  const a = numeric ? Number(from) : from.charCodeAt(0);
  const b = numeric ? Number(to) : to.charCodeAt(0);
  const step = a <= b ? 1 : -1;
  const out: string[] = [];
  for (let v = a; out.length < 64; v += step) {
    out.push(numeric ? String(v) : String.fromCharCode(v));
    if (v === b) break;
  }
  return out;
}
