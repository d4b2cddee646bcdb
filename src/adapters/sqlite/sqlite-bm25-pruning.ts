// BM25 candidates without scoring every match of a common term: the query split in two FTS5 statements over
// disjoint rows whose scores are the full query's, and bounds that prove the rows neither returned rank lower.
import { fts5Idf } from '../../core/fusion.js';
import { quoteTerm } from './sqlite-rows.js';

/** FTS5's bm25 k1: a phrase weighs at most (k1 + 1) × its idf, however often the row holds it. */
const K1 = 1.2;

/**
 * A term held by more than this share of the full-text rows may be left out of the statement that finds the
 * candidates. FTS5 spends most of a query on scoring matches (at 100k, 48 ms of a 6-term query whose matches it
 * counts in 6.5 ms); a term held by 20k rows brings 20k of them.
 */
export const COMMON_TERM_SHARE = 0.05;

/** Below this many postings of the common terms the whole query is cheap: it runs as it is. */
export const MIN_COMMON_POSTINGS = 4000;

/** Relative margin of the common bound (computed here) against the scores FTS5 computed. */
const MARGIN = 1e-9;

export interface PrunedSplit {
  /** Terms held by many rows: only the statement that also needs a rare term looks at them. */
  common: string[];
  rare: string[];
  /** The most a row can score from the common terms alone (Σ (k1 + 1) × idf). */
  commonBound: number;
}

/**
 * The query split for pruning, or null when it would not pay or could not prove its answer: the common terms
 * are taken most common first while the rare ones, each matched once, still outscore everything the common ones
 * can add — without that, the k-th best score rarely clears the bound and the query would run twice.
 * `frequencies` are the terms' counts among the `documents` memories of the namespace searched (which decide
 * what is common and what each term costs), `rows` the full-text rows of the store, and `storeFrequency` a
 * term's count over the whole store, as FTS5 weighs it, read for the common terms only (the bound).
 */
export function splitForPruning(
  terms: readonly string[],
  frequencies: ReadonlyMap<string, number>,
  documents: number,
  rows: number,
  storeFrequency: (term: string) => number,
): PrunedSplit | null {
  if (new Set(terms).size !== terms.length || rows <= 0) return null;
  const df = (t: string) => frequencies.get(t) ?? 0;
  const idf = (t: string) => fts5Idf(rows, df(t));
  const byFrequency = [...terms].filter((t) => df(t) > COMMON_TERM_SHARE * documents).sort((a, b) => df(b) - df(a));
  if (byFrequency.reduce((sum, t) => sum + df(t), 0) < MIN_COMMON_POSTINGS) return null;
  const common = new Set<string>();
  let bound = 0;
  for (const t of byFrequency) {
    const next = bound + (K1 + 1) * fts5Idf(rows, storeFrequency(t));
    const rareIdf = terms.filter((x) => x !== t && !common.has(x) && df(x) > 0).reduce((sum, x) => sum + idf(x), 0);
    if (!(rareIdf > next)) break;
    common.add(t);
    bound = next;
  }
  const postings = [...common].reduce((sum, t) => sum + df(t), 0);
  if (common.size === 0 || postings < MIN_COMMON_POSTINGS) return null;
  return { common: terms.filter((t) => common.has(t)), rare: terms.filter((t) => !common.has(t)), commonBound: bound };
}

export interface RankedRow {
  rowid: number;
  /** BM25 as FTS5 returns it (negative: lower is better). */
  rank: number;
}

/** FTS5 expressions of the two parts: rows holding a rare term and no common one; rows holding both kinds. */
export function prunedMatches(split: PrunedSplit, scope: string): { rareOnly: string; both: string } {
  const any = (terms: readonly string[]) => `terms:(${terms.map(quoteTerm).join(' OR ')})`;
  return {
    rareOnly: `${scope}(${any(split.rare)} NOT ${any(split.common)})`,
    both: `${scope}${any(split.common)} AND ${any(split.rare)}`,
  };
}

/**
 * The best k passing rows of the full query from its two disjoint parts (prunedMatches), each the best `fetch`
 * rows FTS5 ranked; or why they cannot prove it: too few pass or a part was cut too early (a wider fetch may
 * prove it), or the k-th best does not outscore the common bound (only the full query can rank them).
 * - A row holding rare terms only scores in the full query exactly what `rareOnly` scores (an absent phrase
 *   adds 0), one holding both kinds exactly what `both` scores when the full query lists the common terms
 *   first, as `both` does (in another order the sum can differ in its last bit, enough to swap a tie).
 * - A row neither returned holds common terms only, and scores at most the common bound; or it was left out of
 *   a part that filled its fetch, and ranks after that part's last row (each part is ordered by BM25 then
 *   rowid, so a row left out with the last row's score has a higher rowid).
 * - The whole query, when it runs instead, lists the common terms first too: both answers are the same to the bit.
 * So the k-th best passing row must outscore the common bound and rank no later than the last row of each full
 * part. Ties are ordered by rowid, as FTS5 orders them.
 */
export function mergePruned(
  rareOnly: readonly RankedRow[],
  both: readonly RankedRow[],
  fetch: number,
  commonBound: number,
  k: number,
  passes: (rowid: number) => boolean,
): { best: { rowid: number; score: number }[] } | { failed: 'short' | 'cut' | 'bound' } {
  const ranked = [...rareOnly, ...both]
    .filter((r) => passes(r.rowid))
    .map((r) => ({ rowid: r.rowid, score: -r.rank }))
    .sort((a, b) => b.score - a.score || a.rowid - b.rowid);
  if (ranked.length < k) return { failed: 'short' };
  const kth = ranked[k - 1] as { rowid: number; score: number };
  if (!(kth.score > commonBound * (1 + MARGIN) + MARGIN)) return { failed: 'bound' };
  for (const part of [rareOnly, both]) {
    if (part.length < fetch) continue;
    const last = part[part.length - 1] as RankedRow;
    const lastScore = -last.rank;
    if (!(kth.score > lastScore || (kth.score === lastScore && kth.rowid <= last.rowid))) return { failed: 'cut' };
  }
  return { best: ranked.slice(0, k) };
}
