import { CairnError } from '../interfaces/errors.js';
import { SIGNALS, type FusionMethod, type Memory, type ScoreDetails, type SearchResult, type SignalName, type SignalWeights } from '../interfaces/memory.js';

/** The constant of reciprocal-rank fusion: score = Σ weight_i / (RRF_K + rank_i). */
export const RRF_K = 60;

/**
 * Default weights of rank fusion (`rrf`), chosen on the LoCoMo dev split (conversations 0–4) by `node dist/bench/locomo-sweep.js`
 * (table in bench/results/locomo-sweep.json): the best mean recall@5/10/25/50 among settings where recency
 * is on but only breaks near-ties (vector > 8 × recency: one rank of cosine at the top outweighs the whole
 * recency spread over ten results, so the most similar paraphrase is not overtaken by a newer, less similar
 * note). Lexical leads because the offline embedder (USE-lite) alone finds little more than half of what
 * BM25 finds at k=5 (33% against 57% of the evidence); a quarter weight of vectors still adds about a point
 * and a half at k=25–50 and brings in paraphrases that share no word with the query. More vector weight
 * costs recall at k=5–10. Recency stays on because it also switches on the step that puts a newer note on
 * the same topic above an older one (topics.ts); a larger recency weight cost recall on every k.
 */
export const DEFAULT_RRF_WEIGHTS: SignalWeights = { vector: 0.25, lexical: 1, recency: 0.02 };

/** Default weights of score fusion (the default method), chosen on the dev splits by bench/recall-sweep.ts. */
export const DEFAULT_WEIGHTS: SignalWeights = { vector: 0.5, lexical: 1, recency: 0.1 };

/** The weights a method starts from before configured, stored and per-call weights apply. */
export function defaultWeightsFor(method: FusionMethod): SignalWeights {
  return method === 'rrf' ? DEFAULT_RRF_WEIGHTS : DEFAULT_WEIGHTS;
}

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


/**
 * Bounds that map each signal's raw score onto [0, 1] (Bruch et al., "An Analysis of Fusion Functions for
 * Hybrid Retrieval", 2023: normalising by the scoring function's theoretical range, then a convex
 * combination, beat rank fusion). Cosine: USE-lite gives unrelated texts about 0.1–0.3 and close paraphrases
 * 0.6–0.8, so `vectorZero` maps to 0 and `vectorFull` to 1. BM25: divided by the sum of the query terms'
 * inverse document frequencies, the score of a document of average length holding each query term once —
 * the share of the query's rare words a note contains, whatever the store's size. Recency: halves every
 * `recencyHalfLifeDays`, and counts in proportion to how well the note matches, so it reorders matches and
 * never lifts an unrelated note over the floor. Chosen on the dev splits (bench/recall-sweep.ts).
 */
export interface ScoreCalibration {
  vectorZero: number;
  vectorFull: number;
  recencyHalfLifeDays: number;
}

/** The recency signal of a memory `ageDays` old, 0–1: halves every `recencyHalfLifeDays` (0 when no half-life). */
export function recencyOf(ageDays: number, calibration: ScoreCalibration): number {
  return calibration.recencyHalfLifeDays > 0 ? 0.5 ** (Math.max(0, ageDays) / calibration.recencyHalfLifeDays) : 0;
}

/** Newer memory first (ids and times are fixed-width, so they compare as strings). */
export function newerFirst(a: SearchResult, b: SearchResult): number {
  return a.memory.createdAt < b.memory.createdAt ? 1 : a.memory.createdAt > b.memory.createdAt ? -1 : 0;
}

/** Best score first, equal scores toward the newer memory. */
export function bestFirst(a: SearchResult, b: SearchResult): number {
  return b.score - a.score || newerFirst(a, b);
}

export const DEFAULT_CALIBRATION: ScoreCalibration = { vectorZero: 0.2, vectorFull: 0.8, recencyHalfLifeDays: 30 };

/**
 * The relevance floor of score fusion. Results are returned when the best one reaches `relevance` (0–100: a
 * strong lexical match, such as an identifier, needs nothing more), or when the query is closer to the
 * store's nearest note than to the nearest background sentence (background.ts) by at least `margin` (cosine;
 * negative: a little less close still counts). USE-lite alone cannot tell a weak paraphrase from an
 * off-topic question (both reach notes at cosine 0.25–0.45), but an off-topic question sits much closer
 * to some everyday sentence. Chosen on the dev halves (bench/recall-sweep.ts): on the coding-memory dev half
 * the off-topic questions' margins were −0.59 to −0.15 (one nonsense line at +0.15), every answerable query's
 * −0.11 or more; their best relevance was at most 21.4 against identifiers' 60 or more. The margin sits at the
 * off-topic end of that gap: a weak answer shown costs less than a right one withheld ("what is the traffic
 * limit" in the demo's five-note store is at −0.13).
 */
export interface RelevanceFloor {
  relevance: number;
  margin: number;
  /**
   * Words the namespace has never used: when at least `unknownShare` of the query's weight (idf) is in such
   * words, the query must be at least `unknownMargin` closer to the store than to the background. A query
   * mostly made of words no note holds is more likely about something else, and USE-lite reads nonsense such
   * as "xyzzy nothing matches" as close to notes about empty search results (margin −0.03 on the coding dev
   * half). On that dev half the off-topic questions had 0.75–1 of their weight in unknown words, answerable
   * queries with a margin below 0 at most 0.60 (answerable ones with more unknown words had margins of +0.11
   * or more). A query the lexical signal cannot weigh (no terms, or lexical-only recall) counts as 0.
   */
  unknownShare: number;
  unknownMargin: number;
}

export const DEFAULT_FLOOR: RelevanceFloor = { relevance: 40, margin: -0.14, unknownShare: 0.7, unknownMargin: 0 };

/**
 * Whether anything in `results` is worth returning. `storeCosine`: the best candidate's cosine to the query;
 * `backgroundCosine`: the best background sentence's. Without a query vector (lexical-only recall, e.g. the
 * prompt hook, which never loads the model) there is nothing to judge by: whatever matched a word is kept. In
 * a three-note store, "Fix the VAT rounding bug in the invoice export" finds the VAT note at relevance 22 only,
 * since half its words occur nowhere; a lexical-only floor would drop it.
 */
export function clearsFloor(
  results: readonly SearchResult[],
  floor: RelevanceFloor,
  storeCosine: number | null,
  backgroundCosine: number | null,
  unknownShare = 0,
): boolean {
  if (results.length === 0) return false;
  if (storeCosine === null || backgroundCosine === null) return true;
  if ((results[0]?.score ?? 0) * 100 >= floor.relevance) return true;
  const margin = unknownShare >= floor.unknownShare ? Math.max(floor.margin, floor.unknownMargin) : floor.margin;
  return storeCosine - backgroundCosine >= margin;
}

/**
 * Below this many memories a namespace's vocabulary says little: a genuine question shares no word with a
 * store of a few dozen notes as often as not ("what is the traffic limit" against "The API allows 100
 * requests per minute per client", margin −0.07, in a 35-note store), so unknown words count as 0 there. The
 * coding-memory namespaces hold 72–81 notes each, LoCoMo conversations 370–690 turns.
 */
export const UNKNOWN_WORDS_MIN_DOCUMENTS = 50;

/**
 * The share (0–1) of the query terms' idf in terms no memory of the namespace holds (`idf` from fts5Idf);
 * 0 in a namespace of fewer than UNKNOWN_WORDS_MIN_DOCUMENTS memories. A term of `halfKnown` (one the
 * namespace lacks but holds a related term of) counts half.
 */
export function unknownTermShare(
  idf: ReadonlyMap<string, number>,
  frequencies: ReadonlyMap<string, number>,
  documents: number,
  halfKnown: ReadonlySet<string> = new Set(),
): number {
  if (documents < UNKNOWN_WORDS_MIN_DOCUMENTS) return 0;
  let total = 0;
  let unknown = 0;
  for (const [term, w] of idf) {
    total += w;
    if (!(frequencies.get(term) ?? 0)) unknown += halfKnown.has(term) ? w / 2 : w;
  }
  return total > 0 ? unknown / total : 0;
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
        method: 'rrf',
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
    .sort(bestFirst);
}

export interface ScoreFuseInput {
  memories: Map<string, Memory>;
  /** Cosine similarity per candidate (any order); candidates missing here score 0 on the vector signal. */
  vector: RankedHit[];
  /** BM25 per candidate (higher is better). */
  lexical: RankedHit[];
  /** Σ idf of the query's terms: the BM25 that counts as a full lexical match (≤ 0: lexical scores 0). */
  lexicalScale: number;
  ageDays: (m: Memory) => number;
  weights: SignalWeights;
  calibration: ScoreCalibration;
}

const clamp01 = (x: number) => (x <= 0 || !Number.isFinite(x) ? 0 : x >= 1 ? 1 : x);

/**
 * Score fusion: relevance = (w_v·v + w_l·l + w_r·r·m) / (w_v + w_l + w_r), every signal on [0, 1] (see
 * ScoreCalibration) and m = (w_v·v + w_l·l) / (w_v + w_l) the match alone. Each signal's `contribution` is
 * its term in 0–100 points, so the three add up to the result's `relevance`; its score (= fused) is that over
 * 100. Best first;
 * equal scores break toward the newer memory.
 */
export function fuseScores(input: ScoreFuseInput): SearchResult[] {
  const { memories, weights, calibration } = input;
  const total = weights.vector + weights.lexical + weights.recency;
  const matchWeight = weights.vector + weights.lexical;
  const rankOf = (hits: RankedHit[]) => {
    const sorted = [...hits].sort((a, b) => b.raw - a.raw);
    const ranks = new Map<string, number>();
    let previous: number | null = null;
    let rank = 0;
    sorted.forEach((h, i) => {
      if (h.raw !== previous) rank = i + 1;
      previous = h.raw;
      ranks.set(h.id, rank);
    });
    return { raw: new Map(hits.map((h) => [h.id, h.raw])), ranks };
  };
  const vec = rankOf(input.vector.filter((h) => memories.has(h.id)));
  const lex = rankOf(input.lexical.filter((h) => memories.has(h.id)));
  const ids = [...new Set([...vec.raw.keys(), ...lex.raw.keys()])];
  const span = calibration.vectorFull - calibration.vectorZero;
  const results: SearchResult[] = ids.map((id) => {
    const m = memories.get(id) as Memory;
    const cos = vec.raw.get(id);
    const bm = lex.raw.get(id);
    const age = Math.max(0, input.ageDays(m));
    const v = cos === undefined || span <= 0 ? 0 : clamp01((cos - calibration.vectorZero) / span);
    const l = bm === undefined || input.lexicalScale <= 0 ? 0 : clamp01(bm / input.lexicalScale);
    const match = matchWeight > 0 ? (weights.vector * v + weights.lexical * l) / matchWeight : 0;
    const r = recencyOf(age, calibration);
    const part = (x: number) => (total > 0 ? (100 * x) / total : 0);
    const details: ScoreDetails = {
      signals: {
        vector: { rank: vec.ranks.get(id) ?? null, contribution: part(weights.vector * v), raw: cos ?? null },
        lexical: { rank: lex.ranks.get(id) ?? null, contribution: part(weights.lexical * l), raw: bm ?? null },
        recency: { rank: null, contribution: part(weights.recency * r * match), raw: age },
      },
      fused: 0,
      rerank: null,
      method: 'score',
    };
    details.relevance = details.signals.vector.contribution + details.signals.lexical.contribution + details.signals.recency.contribution;
    details.fused = details.relevance / 100;
    return { memory: m, score: details.fused, scoreDetails: details };
  });
  // Recency rank among the candidates (newest first), for display.
  [...results]
    .sort(newerFirst)
    .forEach((r, i) => (r.scoreDetails.signals.recency.rank = i + 1));
  return results.sort(bestFirst);
}

/** FTS5's BM25 constants (fts5Bm25Function in SQLite's sources), which every backend's BM25 uses. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** FTS5's inverse document frequency of a term found in `df` of `documents` rows (bm25 in FTS5's sources). */
export function fts5Idf(documents: number, df: number): number {
  const idf = Math.log((documents - df + 0.5) / (df + 0.5));
  return idf > 0 ? idf : 1e-6;
}
