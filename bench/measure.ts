/**
 * Sample statistics and timing shared by the benchmarks: nearest-rank percentiles, a timed series, arms timed
 * alternately, and writing a result file.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

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

/**
 * Times every arm once per item, in an order that rotates from item to item (so no arm always runs first,
 * on a colder or a warmer cache), after running the first `warmup` items through every arm untimed.
 * Returns each arm's wall-clock milliseconds per call.
 */
export async function timeAlternating<A extends string, T>(arms: readonly A[], items: readonly T[], warmup: number, run: (arm: A, item: T) => Promise<unknown>): Promise<Record<A, number[]>> {
  for (const item of items.slice(0, warmup)) for (const arm of arms) await run(arm, item);
  const times = Object.fromEntries(arms.map((a) => [a, [] as number[]])) as Record<A, number[]>;
  for (const [i, item] of items.entries()) {
    for (let j = 0; j < arms.length; j++) {
      const arm = arms[(i + j) % arms.length] as A;
      const t = performance.now();
      await run(arm, item);
      times[arm].push(performance.now() - t);
    }
  }
  return times;
}

/** Writes a benchmark's result as JSON, creating its folder, and says where on stderr. */
export function writeResults(out: string, result: unknown): void {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 1)}\n`);
  process.stderr.write(`wrote ${out}\n`);
}
