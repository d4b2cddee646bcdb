/**
 * Sample statistics and timing shared by the benchmarks: nearest-rank percentiles and a timed series.
 */

export interface Stats {
  n: number;
  p50: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile of an ascending sample; NaN when it is empty. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

/** Nearest-rank percentiles of a sample, in the sample's unit, rounded to 0.01. */
export function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 100) / 100;
  return {
    n: s.length,
    p50: r(percentile(s, 50)),
    p95: r(percentile(s, 95)),
    mean: r(s.reduce((a, b) => a + b, 0) / (s.length || 1)),
    min: r(s[0] ?? NaN),
    max: r(s[s.length - 1] ?? NaN),
  };
}

/**
 * Times `fn` on each item after `warmup` untimed calls. Stops early once `minSamples` are taken and the series
 * has run for `budgetMs` (default: no budget), so slow paths at large sizes do not stretch a run. A call may
 * return a number of milliseconds spent in a part the series leaves out (the model); it is subtracted.
 */
export async function timeEach<T>(
  items: T[],
  warmup: number,
  fn: (item: T) => Promise<unknown>,
  budgetMs = Number.POSITIVE_INFINITY,
  minSamples = 30,
): Promise<number[]> {
  for (const item of items.slice(0, warmup)) await fn(item);
  const out: number[] = [];
  const started = performance.now();
  for (const item of items.slice(warmup)) {
    const t = performance.now();
    const exclude = await fn(item);
    out.push(performance.now() - t - (typeof exclude === 'number' ? exclude : 0));
    if (out.length >= minSamples && performance.now() - started > budgetMs) break;
  }
  return out;
}
