// Recall's use of the write-time "likely replaces" relation: the newer note that probably updates a found
// one is brought in when the candidates missed it (topics.ts then ranks it above the older note).
import type { Memory, SearchResult, SignalWeights } from '../interfaces/memory.js';
import type { CandidateFilter } from '../interfaces/store.js';
import type { EngineContext } from './engine-context.js';
import { netDoubt } from './feedback.js';
import { bestFirst, fuseScores } from './fusion.js';
import { dot, type RecordedUpdateRule } from './topics.js';

interface ReplacingQuery {
  filter: CandidateFilter;
  queryVector: Float32Array;
  weights: SignalWeights;
  ageDays: (m: Memory) => number;
  /** Only notes updating one of the first `window` results are brought in. */
  window: number;
  /** And only those whose cosine to the query earns vector points, at least minScoreRatio of the older's (which has some). */
  rule: RecordedUpdateRule;
}

/**
 * Moves up the notes that name one of the first `window` results in their `likelyReplaces` and are further
 * down the results or not among them at all (live and matching the filter, even when the search includes
 * inactive notes: a forgotten, superseded or expired update brings nothing and hides nothing), each right
 * above the first result it updates, marked `newerThan` it, as the same-topic step would place it. A doubted
 * one (netDoubt above 0) is never moved up. One that was no candidate is scored by score fusion on its cosine
 * to the query alone, so its parts still add up to its relevance (its vector rank is null). Such a note
 * matched the query's words poorly or not at all, so the rule compares the vector points of the two (at
 * least `minScoreRatio` of the older's, and the older has some: one found by its words alone lifts nothing).
 * Measured at 10k generated notes (bench/floor-scale.ts, dev): the newest version of a chain sat beyond the
 * first 100 results while the version it updates was first.
 */
export async function addLikelyReplacing(ctx: EngineContext, results: SearchResult[], q: ReplacingQuery): Promise<SearchResult[]> {
  const head = results.slice(0, q.window);
  const inHead = new Set(head.map((r) => r.memory.id));
  // A note among the later results keeps its scores; one that was no candidate at all is scored here.
  const later = new Map(results.slice(q.window).map((r) => [r.memory.id, r]));
  const found = (await ctx.store.listLikelyReplacing(head.map((r) => r.memory.id), { ...q.filter, includeInactive: false })).filter((m) => !inHead.has(m.id));
  // A doubted update (more wrong or stale marks than useful ones) leads nothing: it keeps the place its demoted
  // score gave it, or stays out when it was no candidate (it never went through the demotion).
  const newer = (await ctx.code.visible(found, (m) => m)).filter((m) => netDoubt(m.feedback) <= 0);
  if (newer.length === 0) return results;
  const fresh = newer.filter((m) => !later.has(m.id));
  // A later note found by its words beyond the vector candidates' pool has no vector points because it was
  // not fetched, not because its cosine earns none: the rule weighs it by its cosine, as a fresh one.
  const unfetched = newer.filter((m) => later.get(m.id)?.scoreDetails.signals.vector.rank === null);
  const vectors = await ctx.store.getVectors([...fresh, ...unfetched].map((m) => m.id));
  const byCosine = (notes: Memory[]) =>
    fuseScores({
      memories: new Map(notes.map((m) => [m.id, m])),
      vector: notes.flatMap((m) => {
        const v = vectors.get(m.id);
        return v ? [{ id: m.id, raw: dot(q.queryVector, v) }] : [];
      }),
      lexical: [],
      lexicalScale: 0,
      ageDays: q.ageDays,
      weights: q.weights,
      calibration: ctx.calibration,
    });
  const scored = byCosine(fresh);
  for (const r of scored) r.scoreDetails.signals.vector.rank = null;
  const cosinePoints = new Map(byCosine(unfetched).map((r) => [r.memory.id, r.scoreDetails.signals.vector.contribution]));
  const vectorPoints = (r: SearchResult) => cosinePoints.get(r.memory.id) ?? r.scoreDetails.signals.vector.contribution;
  const above = new Map<string, SearchResult[]>();
  const moved = new Set<string>();
  // Best first, ties toward the newer and then by id: the store lists them in no particular order, and each older note's list keeps this one.
  // A later result was maybe read for ranking only (ranked-memory.ts): it takes the whole memory read here.
  const laterHits = newer.flatMap((m) => {
    const r = later.get(m.id);
    if (!r) return [];
    r.memory = m;
    return [r];
  });
  const candidates = [...laterHits, ...scored].sort((a, b) => bestFirst(a, b) || (a.memory.id < b.memory.id ? -1 : a.memory.id > b.memory.id ? 1 : 0));
  for (const r of candidates) {
    const older = head.find(
      (h) => r.memory.likelyReplaces?.includes(h.memory.id) && vectorPoints(h) > 0 && vectorPoints(r) > 0 && vectorPoints(r) >= q.rule.minScoreRatio * vectorPoints(h),
    );
    if (!older) continue;
    r.scoreDetails.newerThan = older.memory.id;
    above.set(older.memory.id, [...(above.get(older.memory.id) ?? []), r]);
    moved.add(r.memory.id);
  }
  return results.flatMap((r) => (inHead.has(r.memory.id) ? [...(above.get(r.memory.id) ?? []), r] : moved.has(r.memory.id) ? [] : [r]));
}
