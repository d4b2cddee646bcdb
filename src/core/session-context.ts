import type { SearchResult } from '../interfaces/memory.js';
import { sessionIdOf } from './ranked-memory.js';

/**
 * Context from a memory's session (score fusion only). Memories written in one working session or one
 * conversation (the same `metadata.sessionId` in one namespace) explain each other: the answer to "when did
 * Caroline go to the support group" is often the turn after the one that names the group, and a session
 * whose best memory matches well is likely to hold more of the answer. So each result gains points from the
 * best-matching other candidate of its session (`session`) and from its nearest earlier or later candidate
 * in that session (`neighbours`), taken from the headroom left under 100:
 *
 *   relevance' = relevance + (100 − relevance) · min(1, neighbours · n + session · b)
 *
 * with n and b those memories' relevance over 100. It reorders matches only: it runs after the relevance
 * floor, a memory with no session (or alone in its session among the candidates) keeps its relevance, and
 * its points are the result's `context` term, so the contributions still add up. Chosen on the LoCoMo dev
 * split by bench/recall-levers.ts (table in bench/results/recall-levers.json).
 */
export interface SessionContextWeights {
  neighbours: number;
  session: number;
}

export const DEFAULT_SESSION_CONTEXT: SessionContextWeights = { neighbours: 0.3, session: 0.6 };

/** Adds session context to score-fused results (in place) and returns them best first. */
export function addSessionContext(results: SearchResult[], weights: SessionContextWeights): SearchResult[] {
  if (results.length < 2 || (weights.neighbours <= 0 && weights.session <= 0)) return results;
  const sessions = new Map<string, SearchResult[]>();
  for (const r of results) {
    const session = sessionIdOf(r.memory);
    if (session === undefined || r.scoreDetails.relevance === undefined) continue;
    const key = `${r.memory.namespace}\u0000${session}`;
    const list = sessions.get(key);
    if (list) list.push(r);
    else sessions.set(key, [r]);
  }
  const before = new Map(results.map((r) => [r, r.scoreDetails.relevance ?? 0]));
  const at = (r: SearchResult | undefined) => (r ? (before.get(r) as number) : 0);
  for (const members of sessions.values()) {
    if (members.length < 2) continue;
    members.sort((a, b) => (a.memory.createdAt < b.memory.createdAt ? -1 : a.memory.createdAt > b.memory.createdAt ? 1 : a.memory.id < b.memory.id ? -1 : 1));
    // The best and second best of the session, so each member finds the best of the others.
    let best: SearchResult | undefined;
    let second: SearchResult | undefined;
    for (const m of members) {
      if (!best || at(m) > at(best)) {
        second = best;
        best = m;
      } else if (!second || at(m) > at(second)) second = m;
    }
    members.forEach((r, i) => {
      const prev = members[i - 1];
      const next = members[i + 1];
      const neighbour = at(prev) >= at(next) ? prev : next;
      const sessionBest = best === r ? second : best;
      const lift = Math.min(1, (weights.neighbours * at(neighbour) + weights.session * at(sessionBest)) / 100);
      const own = at(r);
      const contribution = (100 - own) * lift;
      if (!(contribution > 0)) return;
      const d = r.scoreDetails;
      d.context = { contribution, neighbour: neighbour?.memory.id ?? null, session: sessionBest?.memory.id ?? null };
      d.relevance = own + contribution;
      d.fused = d.relevance / 100;
      r.score = d.fused;
    });
  }
  return results
    .map((r, i) => ({ r, i }))
    .sort((a, b) => b.r.score - a.r.score || a.i - b.i)
    .map((x) => x.r);
}
