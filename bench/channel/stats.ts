// Small statistics for the channel bench: medians, percentiles, ratios, rounding.

export function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return (sorted[low] ?? 0) + ((sorted[high] ?? 0) - (sorted[low] ?? 0)) * (at - low);
}

export const median = (values: number[]) => quantile(values, 0.5);

export const round = (value: number, digits = 1) => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};

/** Settings and single samples, not figures: they get no ratio. */
const NOT_FIGURES = new Set(['count', 'size', 'fresh', 'existing']);

/** current / baseline for every numeric leaf both share. */
export function ratios(current: unknown, baseline: unknown): unknown {
  if (Array.isArray(current)) return undefined;
  if (typeof current === 'number' && typeof baseline === 'number') {
    return baseline === 0 ? null : round(current / baseline, 3);
  }
  if (current && baseline && typeof current === 'object' && typeof baseline === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(current)) {
      if (NOT_FIGURES.has(key)) continue;
      const r = ratios(value, (baseline as Record<string, unknown>)[key]);
      if (r !== undefined) out[key] = r;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  return undefined;
}
