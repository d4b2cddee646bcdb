import type { SearchResult } from '../interfaces/memory.js';
import { bestFirst } from './fusion.js';

/**
 * Routes say where code lives: a title, a one-line description ("Tax code: rate lookup, rounding and
 * exemptions.") and paths. Such a description is a few words that name a whole area, so a question about how
 * that area behaves often finds the route as well as the note that answers it, at a full lexical score (BM25
 * favours short texts; coverage counts words, not what is said about them) and a close cosine: "how do we
 * round tax" put the tax route above the decision on VAT rounding. For a question that does not ask where
 * something is, each of a route's points counts `factor` of itself, so a route stays first only when it is the
 * clearly better match. A question asks where when it says "where", asks which file, folder, directory,
 * module, package or path, or names a path or folder (`src/tax/`, `shop/checkout/tax.py`).
 *
 * `factor` was chosen on the coding-memory dev half (bench/coding-memory.ts; 1 / 0.9 / 0.8: R@1 0.851 /
 * 0.860 / 0.860, R@5 0.975 / 0.983 / 0.983); the milder of the two equal settings is kept. LoCoMo has no
 * routes.
 */
export interface RouteAnswers {
  /** What a route's points count for a question that does not ask where, 0–1 (1: as any note). */
  factor: number;
}

export const DEFAULT_ROUTE_ANSWERS: RouteAnswers = { factor: 0.9 };

const WHERE_RE = /\bwhere\b|\b(?:which|what)\s+(?:files?|folders?|dir(?:ector(?:y|ies))?|modules?|packages?|paths?)\b|[\p{L}\p{N}_.-]\/|\/[\p{L}\p{N}_.-]/iu;

/** Whether a question asks where something is (see RouteAnswers). */
export function asksWhere(query: string): boolean {
  return WHERE_RE.test(query);
}

/**
 * The first `window` results (read whole: their kind is looked at) with each route's contributions scaled by
 * `rule.factor` when `query` does not ask where, best first (equal scores toward the newer memory), the rest
 * after them unchanged. The contributions still add up to the relevance. Score-fused results only; the
 * results are changed in place.
 */
export function weighRoutes(results: SearchResult[], query: string, rule: RouteAnswers, window: number): SearchResult[] {
  if (rule.factor >= 1 || asksWhere(query)) return results;
  const head = results.slice(0, window);
  let changed = false;
  for (const r of head) {
    const d = r.scoreDetails;
    if (d.method !== 'score' || r.memory.kind !== 'route') continue;
    for (const signal of [d.signals.vector, d.signals.lexical, d.signals.recency]) signal.contribution *= rule.factor;
    d.relevance = d.signals.vector.contribution + d.signals.lexical.contribution + d.signals.recency.contribution;
    d.fused = d.relevance / 100;
    r.score = d.fused;
    changed = true;
  }
  if (!changed) return results;
  head.sort(bestFirst);
  return [...head, ...results.slice(window)];
}
