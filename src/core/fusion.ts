import { CairnError } from '../interfaces/errors.js';
import { SIGNALS, type Memory, type ScoreDetails, type SearchResult, type SignalName, type SignalWeights } from '../interfaces/memory.js';

/** The constant of reciprocal-rank fusion: score = Σ weight_i / (RRF_K + rank_i). */
export const RRF_K = 60;

/**
 * Default weights, chosen on the LoCoMo dev split (conversations 0–4) by `node dist/bench/locomo-sweep.js`
 * (table in bench/results/locomo-sweep.json): the best mean recall@5/10/25/50 among settings where recency
 * is on but only breaks near-ties (vector > 8 × recency: one rank of cosine at the top outweighs the whole
 * recency spread over ten results, so the most similar paraphrase is not overtaken by a newer, less similar
 * note). Lexical leads because the offline embedder (USE-lite) alone finds little more than half of what
 * BM25 finds at k=5 (33% against 57% of the evidence); a quarter weight of vectors still adds about a point
 * and a half at k=25–50 and brings in paraphrases that share no word with the query. More vector weight
 * costs recall at k=5–10. Recency stays on because it also switches on the step that puts a newer note on
 * the same topic above an older one (topics.ts); a larger recency weight cost recall on every k.
 */
export const DEFAULT_WEIGHTS: SignalWeights = { vector: 0.25, lexical: 1, recency: 0.02 };

export function resolveWeights(base: SignalWeights, override: Partial<SignalWeights> | undefined): SignalWeights {
  const out = { ...base };
  if (!override) return out;
  for (const [key, value] of Object.entries(override)) {
    if (!(SIGNALS as readonly string[]).includes(key)) {
      throw new CairnError('INVALID_INPUT', `weights.${key}: unknown signal; signals are ${SIGNALS.join(', ')}`, { field: `weights.${key}` });
    }
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 100) {
      throw new CairnError('INVALID_INPUT', `weights.${key}: must be a number from 0 to 100`, { field: `weights.${key}` });
    }
    out[key as SignalName] = value;
  }
  return out;
}

export interface RankedHit {
  id: string;
  raw: number;
}

export interface FuseInput {
  memories: Map<string, Memory>;
  /** Best first. */
  vector: RankedHit[];
  /** Best first. */
  lexical: RankedHit[];
  ageDays: (m: Memory) => number;
  weights: SignalWeights;
  k: number;
}

/**
 * Weighted reciprocal-rank fusion of the vector and lexical candidate lists plus a recency ranking of their
 * union (newest first). Recency ranks only memories another signal found, so it reorders matches and never
 * brings in an unrelated note. Equal values within a signal share a rank; equal fused scores break toward the
 * newer memory.
 */
export function fuse(input: FuseInput): SearchResult[] {
  const { memories, weights, k } = input;
  const details = new Map<string, ScoreDetails>();
  const detailFor = (id: string): ScoreDetails => {
    let d = details.get(id);
    if (!d) {
      d = {
        signals: {
          vector: { rank: null, contribution: 0, raw: null },
          lexical: { rank: null, contribution: 0, raw: null },
          recency: { rank: null, contribution: 0, raw: null },
        },
        fused: 0,
        rerank: null,
      };
      details.set(id, d);
    }
    return d;
  };
  const apply = (signal: SignalName, hits: RankedHit[]) => {
    let position = 0;
    let rank = 0;
    let previous: number | null = null;
    for (const hit of hits) {
      if (!memories.has(hit.id)) continue; // vanished between candidate query and fetch
      position++;
      // Equal values share a rank (1, 1, 3): a tie must not favour whichever row the backend listed first.
      if (hit.raw !== previous) rank = position;
      previous = hit.raw;
      const d = detailFor(hit.id);
      const contribution = weights[signal] / (k + rank);
      d.signals[signal] = { rank, contribution, raw: hit.raw };
      d.fused += contribution;
    }
  };
  apply('vector', input.vector);
  apply('lexical', input.lexical);
  const byAge = [...details.keys()]
    .map((id) => memories.get(id) as Memory)
    .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1))
    .map((m) => ({ id: m.id, raw: Math.max(0, input.ageDays(m)) }));
  if (weights.recency > 0) apply('recency', byAge);
  return [...details.entries()]
    .map(([id, d]) => ({ memory: memories.get(id) as Memory, score: d.fused, scoreDetails: d }))
    .sort((a, b) => b.score - a.score || (a.memory.createdAt < b.memory.createdAt ? 1 : a.memory.createdAt > b.memory.createdAt ? -1 : 0));
}
