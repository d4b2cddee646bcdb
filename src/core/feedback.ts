import type { FeedbackCounts, FeedbackVerdict, Memory, SearchResult } from '../interfaces/memory.js';

/**
 * Usefulness feedback on recalled memories. Agents and people mark a memory useful, wrong or stale; the
 * counts live on the memory (a `memory.rated` event carries it whole, so replay rebuilds them). A memory
 * whose wrong and stale marks outnumber its useful ones is demoted in recall and listed for review.
 */

/** Each wrong or stale mark beyond the useful ones halves the memory's fused score (at most 3 times: ×⅛), shown as a negative contribution. */
export const DEMOTION_FACTOR = 0.5;
export const MAX_DEMOTION_STEPS = 3;

/** Wrong and stale marks minus useful ones; above 0 the memory is demoted and needs review. */
export function netDoubt(f: FeedbackCounts | undefined): number {
  return f ? f.wrong + f.stale - f.useful : 0;
}

/** The memory with one more mark of `verdict` at `now` (its other fields unchanged: a mark is not an edit). */
export function rated(memory: Memory, verdict: FeedbackVerdict, now: string): Memory {
  const f = memory.feedback ?? { useful: 0, wrong: 0, stale: 0, lastAt: now };
  return { ...memory, feedback: { ...f, [verdict]: f[verdict] + 1, lastAt: now } };
}

/**
 * Demotes doubted memories and re-sorts (stable: equal scores keep their order). The demotion is shown as its
 * own negative contribution (`scoreDetails.feedback`), so the signals' contributions plus it still add up to
 * the relevance and score shown. Returns the same array when nothing is doubted.
 */
export function demoteDoubted(results: SearchResult[]): SearchResult[] {
  if (!results.some((r) => netDoubt(r.memory.feedback) > 0)) return results;
  const scored = results.map((r, i) => {
    const steps = Math.min(MAX_DEMOTION_STEPS, Math.max(0, netDoubt(r.memory.feedback)));
    if (steps > 0) demote(r, steps);
    return { r, i };
  });
  return scored.sort((a, b) => b.r.score - a.r.score || a.i - b.i).map((x) => x.r);
}

function demote(r: SearchResult, steps: number): void {
  const d = r.scoreDetails;
  const kept = DEMOTION_FACTOR ** steps;
  if (d.relevance !== undefined) {
    const contribution = d.relevance * (kept - 1);
    d.feedback = { steps, contribution };
    d.relevance += contribution;
    d.fused = d.relevance / 100;
  } else {
    const contribution = r.score * (kept - 1);
    d.feedback = { steps, contribution };
    d.fused = r.score + contribution;
  }
  r.score = d.fused;
}

export interface FeedbackTotals {
  useful: number;
  wrong: number;
  stale: number;
  /** Live memories marked at least once. */
  rated: number;
  /** Live memories whose wrong and stale marks outnumber the useful ones (the review list). */
  toReview: number;
}

export function addToTotals(t: FeedbackTotals, m: Memory): void {
  if (!m.feedback) return;
  t.useful += m.feedback.useful;
  t.wrong += m.feedback.wrong;
  t.stale += m.feedback.stale;
  t.rated++;
  if (netDoubt(m.feedback) > 0) t.toReview++;
}
