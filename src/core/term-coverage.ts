import type { SearchResult, SignalWeights } from '../interfaces/memory.js';
import { bestFirst, recencyOf, type ScoreCalibration } from './fusion.js';

/**
 * Query-term coverage, a second reading of the lexical signal for score fusion. BM25 over the sum of the
 * query terms' idf (fusion.ts) saturates: a short note that holds one query word a couple of times reaches
 * a full lexical score, level with a note that holds every query word. Route notes are a few words long, so
 * "where do tax rates come from" put the route "Tax code: rate lookup, rounding and exemptions." (no
 * "come") level with the note "Tax rates come from the Avalara provider …", and recency then decided.
 * Coverage is the idf-weighted share of the query's terms a note holds at all, whatever its length and
 * however often it repeats them: 1 when it holds every term, the rare ones counting most.
 *
 * The lexical part of a result becomes (1 − share) · its BM25 part + share · coverage, and recency, which
 * counts in proportion to the match (fusion.ts), follows. It runs in core after fusion, on either backend's
 * fused results, on the first `window` results only (the rest were below them before and stay below):
 * coverage analyses each note's text, which costs about 25 µs a note.
 *
 * `share` was chosen on the dev halves (bench/recall-levers.ts on LoCoMo dev, bench/coverage-sweep.ts on the
 * coding-memory dev half; tables in bench/results/).
 */
export interface TermCoverage {
  /** Weight of coverage in the lexical part, 0–1 (0: BM25 alone, as before). */
  share: number;
}

export const DEFAULT_TERM_COVERAGE: TermCoverage = { share: 0.5 };

/** Results re-scored by coverage: max(limit × 3, this). */
export const COVERAGE_MIN_WINDOW = 30;

/**
 * With related terms (related-terms.ts), a query word a note lacks counts this share of its idf when the note
 * holds a term related to it: 1, a related term covers the word it stands for. Chosen on the coding-memory dev
 * half (0.25 / 0.35 / 0.5 / 0.75 / 1: R@1 0.810 / 0.810 / 0.810 / 0.810 / 0.818, R@5 0.950 / 0.950 / 0.959 /
 * 0.967 / 0.967; without it 0.818 / 0.942). With only whole members standing in (recall.ts coverageStandIns)
 * and only as a note's plain words: 0.818 / 0.959, and LoCoMo dev hybrid 60.2 / 77.0 / 85.7 / 89.9 against
 * 60.2 / 76.9 / 85.7 / 89.9 without it. The BM25 half of the lexical part still weighs a related term at the namespace's
 * related-terms weight (0.7 by default), so a note holding the word itself keeps its edge there.
 */
export const RELATED_COVERAGE_CREDIT = 1;

/**
 * The idf-weighted share of `terms` found in `noteTerms` (0 when the terms weigh nothing). With `related`
 * (each query word's related terms), a term the note lacks counts RELATED_COVERAGE_CREDIT of its idf when the
 * note holds one of its related terms as a plain word, `notePlainTerms` (no part of an identifier or path:
 * "db" of scripts/test-db.sh does not cover "database"), as the query's identifiers are never expanded.
 */
export function termCoverage(
  terms: readonly string[],
  idf: ReadonlyMap<string, number>,
  noteTerms: ReadonlySet<string>,
  related: ReadonlyMap<string, readonly string[]> | null = null,
  notePlainTerms: ReadonlySet<string> = noteTerms,
): number {
  let total = 0;
  let found = 0;
  for (const t of terms) {
    const w = idf.get(t) ?? 0;
    total += w;
    if (noteTerms.has(t)) found += w;
    else if (related?.get(t)?.some((x) => notePlainTerms.has(x))) found += RELATED_COVERAGE_CREDIT * w;
  }
  return total > 0 ? found / total : 0;
}

export interface CoverageInput {
  terms: readonly string[];
  /** Inverse document frequency of each query term (fusion.ts fts5Idf). */
  idf: ReadonlyMap<string, number>;
  termsOf: (r: SearchResult) => ReadonlySet<string>;
  weights: SignalWeights;
  calibration: ScoreCalibration;
  coverage: TermCoverage;
  window: number;
  /** Related terms of the query's words, when the search expanded; null or absent: exact terms only. */
  related?: ReadonlyMap<string, readonly string[]> | null;
  /** The note's plain words (lexical.ts plainTerms), the only ones a related term is looked for in. */
  plainTermsOf?: (r: SearchResult) => ReadonlySet<string>;
}

/**
 * Re-scores the first `window` score-fused results (in place) with coverage in the lexical part and returns
 * them best first (equal scores toward the newer memory), the rest after them unchanged. The signals'
 * contributions still add up to the relevance; `scoreDetails.signals.lexical.coverage` records the share.
 * Only results the lexical signal found hold a query term; the others keep their scores.
 */
export function applyTermCoverage(results: SearchResult[], input: CoverageInput): SearchResult[] {
  const { weights, calibration, coverage } = input;
  const matchWeight = weights.vector + weights.lexical;
  const total = matchWeight + weights.recency;
  if (coverage.share <= 0 || weights.lexical <= 0 || total <= 0 || input.terms.length === 0) return results;
  const head = results.slice(0, input.window);
  for (const r of head) {
    const d = r.scoreDetails;
    const lexical = d.signals.lexical;
    if (d.method !== 'score' || lexical.raw === null || lexical.raw <= 0) continue;
    const terms = input.termsOf(r);
    const related = input.related && input.related.size > 0 ? input.related : null;
    const share = termCoverage(input.terms, input.idf, terms, related, related && input.plainTermsOf ? input.plainTermsOf(r) : terms);
    lexical.coverage = share;
    lexical.contribution = (1 - coverage.share) * lexical.contribution + (coverage.share * 100 * weights.lexical * share) / total;
    // Recency counts in proportion to the match (fusion.ts fuseScores): w_r · r · (w_v·v + w_l·l) / (w_v + w_l).
    const r01 = recencyOf(d.signals.recency.raw ?? 0, calibration);
    d.signals.recency.contribution = matchWeight > 0 ? (weights.recency * r01 * (d.signals.vector.contribution + lexical.contribution)) / matchWeight : 0;
    d.relevance = d.signals.vector.contribution + lexical.contribution + d.signals.recency.contribution;
    d.fused = d.relevance / 100;
    r.score = d.fused;
  }
  head.sort(bestFirst);
  return [...head, ...results.slice(input.window)];
}
