// Recall's use of the write-time "likely replaces" relation: the newer note that probably updates a found
// one is brought in when the candidates missed it (topics.ts then ranks it above the older note).
import type { Memory, SearchResult, SignalWeights } from '../interfaces/memory.js';
import type { CandidateFilter } from '../interfaces/store.js';
import type { EngineContext } from './engine-context.js';
import { fuseScores } from './fusion.js';
import { dot, type RecordedUpdateRule } from './topics.js';

export interface ReplacingQuery {
  filter: CandidateFilter;
  queryVector: Float32Array;
  weights: SignalWeights;
  ageDays: (m: Memory) => number;
  /** Only notes updating one of the first `window` results are brought in. */
  window: number;
  /** And only those whose cosine to the query earns at least minScoreRatio of the older's vector points. */
  rule: RecordedUpdateRule;
}

/**
 * Adds the notes that name one of the first `window` results in their `likelyReplaces` and are not among
 * the results (live and matching the filter: a forgotten update brings nothing and hides nothing), each right
 * above the first result it updates, marked `newerThan` it, as the same-topic step would place it. Each is
 * scored by score fusion on its cosine to the query alone, so its parts still add up to its relevance (its
 * vector rank is null). It was no lexical candidate, so its lexical match is unknown rather than nil: the rule
 * compares the vector points of the two (at least `minScoreRatio` of the older's).
 */
export async function addLikelyReplacing(ctx: EngineContext, results: SearchResult[], q: ReplacingQuery): Promise<SearchResult[]> {
  const head = results.slice(0, q.window);
  const present = new Set(results.map((r) => r.memory.id));
  const found = (await ctx.store.listLikelyReplacing(head.map((r) => r.memory.id), q.filter)).filter((m) => !present.has(m.id));
  const newer = await ctx.code.visible(found, (m) => m);
  if (newer.length === 0) return results;
  const vectors = await ctx.store.getVectors(newer.map((m) => m.id));
  const scored = fuseScores({
    memories: new Map(newer.map((m) => [m.id, m])),
    vector: newer.flatMap((m) => {
      const v = vectors.get(m.id);
      return v ? [{ id: m.id, raw: dot(q.queryVector, v) }] : [];
    }),
    lexical: [],
    lexicalScale: 0,
    ageDays: q.ageDays,
    weights: q.weights,
    calibration: ctx.calibration,
  });
  const vectorPoints = (r: SearchResult) => r.scoreDetails.signals.vector.contribution;
  const above = new Map<string, SearchResult[]>();
  for (const r of scored) {
    r.scoreDetails.signals.vector.rank = null;
    const older = head.find((h) => r.memory.likelyReplaces?.includes(h.memory.id) && vectorPoints(r) >= q.rule.minScoreRatio * vectorPoints(h));
    if (!older) continue;
    r.scoreDetails.newerThan = older.memory.id;
    above.set(older.memory.id, [...(above.get(older.memory.id) ?? []), r]);
  }
  return results.flatMap((r) => [...(above.get(r.memory.id) ?? []), r]);
}
