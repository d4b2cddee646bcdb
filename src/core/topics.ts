import type { Memory, SearchResult } from '../interfaces/memory.js';
import { analyse } from './lexical.js';
import { indexText } from './events.js';

/**
 * "A newer note on the same topic outranks an older one." Rank fusion cannot guarantee it: recency is one
 * signal among three, and one rank of BM25 or cosine outweighs it. So after fusion, two results are taken
 * to be about the same topic when their vectors are close AND they share much of their wording, and then
 * the newer one moves up to the older one's place.
 *
 * Both conditions are needed (measured on the offline embedder): "Start the dev server with make dev" /
 * "… pnpm dev --turbo" have cosine 0.80 and term overlap 0.5 (same topic), while "Database column names use
 * snake_case" / "Database table names are plural" have cosine 0.78 but overlap 0.22 (two different rules).
 *
 * The overlap weighs each term by its rarity in the store (inverse document frequency) when the store can
 * count documents per term: words every memory shares (a project's name, a speaker's name, "said") say
 * nothing about the topic. Measured on LoCoMo's dev conversations, plain overlap paired chit-chat turns
 * ("Thanks, Melanie! Your kind words mean a lot." / "Thanks, Melanie. It means a lot to share this with
 * you.": 0.67) and cost 0.5 points of recall@5; weighted, those pairs fall below the threshold.
 */
export const SAME_TOPIC_MIN_COSINE = 0.75;
export const SAME_TOPIC_MIN_OVERLAP = 0.4;

/**
 * Words with which a note says it changes an earlier state of things ("deploys are on Tuesdays now", "we
 * moved to Stripe", "no longer", "replaced X with Y"). An agent writing down an update says so; a note that
 * merely sits near another on a topic usually does not.
 */
export const UPDATE_CUE = /\b(now|no longer|anymore|moved|switched|replaced|replacing|instead|changed|since|raised|lowered|upgraded|migrated|dropped|retired|cancell?ed|stopped|cut|bumped|was|were)\b/iu;

/**
 * The second way two results are taken to be one subject, for score fusion, where scores are comparable: the
 * newer note states a change (UPDATE_CUE), its vector is at least `minCosine` close to the older one, and it
 * matches the query nearly as well (its score at least `minScoreRatio` of the older one's), and the two share
 * some wording (`minOverlap`). Updates written in
 * other words share few terms with what they replace, so the overlap test alone misses most of them (measured
 * on the coding-memory dev half: chain pairs had cosine 0.51–0.83 and overlap 0.10–0.54).
 */
export interface StatedUpdateRule {
  minCosine: number;
  /** Plain term overlap (no rarity weights): the two notes must still share a word or two of the subject. */
  minOverlap: number;
  minScoreRatio: number;
}

export const DEFAULT_STATED_UPDATE: StatedUpdateRule = { minCosine: 0.5, minOverlap: 0.1, minScoreRatio: 0.5 };

/**
 * The third way, for score fusion: the newer note names the older in its `likelyReplaces` (recorded when it
 * was written, whatever their cosine) and matches the query at least `minScoreRatio` as well. The ratio keeps
 * a wrong write-time pairing from lifting a note the query is not about (measured on the coding-memory dev
 * half: with no ratio, "INF-198" put the task INF-210, which named the INF-198 note, above it).
 */
export interface RecordedUpdateRule {
  /**
   * Used twice. Among the first results (preferNewerOnSameTopic): the newer's total score is at least this
   * share of the older's. For a newer note further down or no candidate at all (likely-replaces.ts
   * addLikelyReplacing), which matched the query's words poorly if at all: its vector points are at least
   * this share of the older's, and both have vector points (an older found by its words alone lifts nothing).
   */
  minScoreRatio: number;
}

export const DEFAULT_RECORDED_UPDATE: RecordedUpdateRule = { minScoreRatio: 0.45 };

/** Dot product of two unit vectors: their cosine. */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

/**
 * Overlap of two term sets: the shared terms, each counted with its weight in [0, 1] (1 when no weights are
 * given), over the shared weight plus one for every term only one side has. Only shared terms need a weight,
 * so a search looks up few of them; a word one note alone has counts fully against the overlap.
 */
export function weightedOverlap(a: Set<string>, b: Set<string>, weight: (term: string) => number): number {
  let both = 0;
  let shared = 0;
  for (const t of a) {
    if (b.has(t)) {
      both += weight(t);
      shared++;
    }
  }
  const union = both + (a.size - shared) + (b.size - shared);
  return union === 0 ? 0 : both / union;
}

/**
 * Rarity is judged against a store of at least this many memories, so that in a young store, where every
 * word of two similar notes occurs in a good share of the few memories, the overlap stays the plain one.
 */
export const RARITY_MIN_DOCUMENTS = 1000;

/**
 * Term rarity in [0, 1]: BM25's inverse document frequency, ln(1 + (N − df + 0.5) / (df + 0.5)), divided by that
 * of a term found in one memory only.
 */
export function inverseDocumentFrequency(documents: number, frequencies: Map<string, number>): (term: string) => number {
  const n = Math.max(documents, RARITY_MIN_DOCUMENTS);
  const idf = (df: number) => Math.log(1 + (n - df + 0.5) / (df + 0.5));
  const rarest = idf(1);
  return (term) => idf(Math.min(Math.max(frequencies.get(term) ?? 1, 1), n)) / rarest;
}

/** Analysed terms of a result, computed once per memory id in `cache`. */
export function termsOf(r: SearchResult, cache: Map<string, Set<string>>): Set<string> {
  let terms = cache.get(r.memory.id);
  if (!terms) {
    terms = new Set(analyse(indexText(r.memory)));
    cache.set(r.memory.id, terms);
  }
  return terms;
}

/**
 * The terms shared by two results in the first `window` that are close neighbours of the same kind (cosine at
 * or above the threshold): the only ones whose rarity the overlap test needs.
 */
export function termsNeedingWeights(
  results: SearchResult[],
  vectors: Map<string, Float32Array>,
  window: number,
  cache: Map<string, Set<string>> = new Map(),
): string[] {
  const head = results.slice(0, window);
  const terms = new Set<string>();
  for (let i = 0; i < head.length; i++) {
    for (let j = i + 1; j < head.length; j++) {
      const a = head[i] as SearchResult;
      const b = head[j] as SearchResult;
      if (a.memory.kind !== b.memory.kind) continue;
      const va = vectors.get(a.memory.id);
      const vb = vectors.get(b.memory.id);
      if (!va || !vb || dot(va, vb) < SAME_TOPIC_MIN_COSINE) continue;
      const tb = termsOf(b, cache);
      for (const t of termsOf(a, cache)) if (tb.has(t)) terms.add(t);
    }
  }
  return [...terms];
}

/** `fn` of an ordered pair, computed once per pair for the life of the returned function. */
function byPair<T>(fn: (a: SearchResult, b: SearchResult) => T): (a: SearchResult, b: SearchResult) => T {
  const known = new Map<SearchResult, Map<SearchResult, T>>();
  return (a, b) => {
    let row = known.get(a);
    if (!row) known.set(a, (row = new Map()));
    if (row.has(b)) return row.get(b) as T;
    const value = fn(a, b);
    row.set(b, value);
    return value;
  };
}

/** At most this many passes of the same-topic step (it stops as soon as a pass moves nothing). */
export const SAME_TOPIC_PASSES = 3;

/**
 * Reorders the first `window` results in place so that whenever two are about the same topic, the newer
 * comes first (`a` below is the older, `b` the newer). Notes of different kinds are one topic only by the
 * stated-update rule (when given) or, with `recorded`, when the newer names the older in its
 * `likelyReplaces`; a route never is. Only a newer note `mayLead` accepts is lifted (recall: one that is active
 * and not doubted, as the bring-in step of likely-replaces.ts asks), so a search that includes inactive notes
 * never puts a forgotten one above the live note it updated, and a doubted one stays where demotion put it.
 */
export function preferNewerOnSameTopic(
  results: SearchResult[],
  vectors: Map<string, Float32Array>,
  window: number,
  weight: (term: string) => number = () => 1,
  cache: Map<string, Set<string>> = new Map(),
  statedUpdate: StatedUpdateRule | null = null,
  recorded: RecordedUpdateRule | null = null,
  mayLead: (m: Memory) => boolean = () => true,
): SearchResult[] {
  const head = results.slice(0, window);
  // Every answer about a pair below is fixed for the whole call (the passes move results, never change their
  // scores, vectors or texts), and the passes and the stated-update test ask the same pairs again and again:
  // each is worked out once.
  const cosineOf = byPair((a, b): number | null => {
    const va = vectors.get(a.memory.id);
    const vb = vectors.get(b.memory.id);
    return va && vb ? dot(va, vb) : null;
  });
  const sharedWording = byPair((a: SearchResult, b: SearchResult): number => weightedOverlap(termsOf(a, cache), termsOf(b, cache), weight));
  // Which rule takes `b` (newer) to be about the same topic as `a`, the stated-update rule last: it is the loose one.
  const sameTopicBy = byPair((a: SearchResult, b: SearchResult): 'recorded' | 'close' | 'stated' | null => {
    if (!mayLead(b.memory)) return null;
    // Recorded at write time: the newer note probably updates this one (Memory.likelyReplaces).
    if (recorded && b.score >= recorded.minScoreRatio * a.score && b.memory.likelyReplaces?.includes(a.memory.id)) return 'recorded';
    const cosine = cosineOf(a, b);
    if (cosine === null) return null;
    if (a.memory.kind === b.memory.kind && cosine >= SAME_TOPIC_MIN_COSINE && sharedWording(a, b) >= SAME_TOPIC_MIN_OVERLAP) return 'close';
    if (
      statedUpdate &&
      a.memory.kind !== 'route' &&
      b.memory.kind !== 'route' &&
      cosine >= statedUpdate.minCosine &&
      b.score >= statedUpdate.minScoreRatio * a.score &&
      UPDATE_CUE.test(b.memory.text) &&
      weightedOverlap(termsOf(a, cache), termsOf(b, cache), () => 1) >= statedUpdate.minOverlap
    ) {
      return 'stated';
    }
    return null;
  });
  // Two older notes of one chain: one names the other as likely replaced, or they are close neighbours.
  const oneSubject = (a: SearchResult, b: SearchResult): boolean =>
    Boolean(a.memory.likelyReplaces?.includes(b.memory.id) || b.memory.likelyReplaces?.includes(a.memory.id)) || (cosineOf(a, b) ?? -1) >= SAME_TOPIC_MIN_COSINE;
  // A change stated in other words updates one subject: by the stated-update rule alone, a newer note is lifted
  // over an older one only when no other older result of the window that it counts as the same topic is closer
  // to it. "The grace period is 30 days now (was 14)" read as an update of both "Unpaid subscriptions are
  // cancelled after a 14 day grace period" and the dunning schedule of failed renewals (cosine above 0.5, shared
  // words), and went above the schedule on a question about retrying declined cards; the note it replaces is
  // the closer one. (The window's members never change, only their places, so this too is fixed per pair.)
  const lifts = byPair((older: SearchResult, newer: SearchResult): boolean => {
    const by = sameTopicBy(older, newer);
    if (by === null || by === 'close') return by !== null;
    const shared = sharedWording(older, newer);
    return !head.some(
      (c) => c !== older && c !== newer && c.memory.createdAt < newer.memory.createdAt && sharedWording(c, newer) > shared && sameTopicBy(c, newer) !== null && !oneSubject(c, older),
    );
  });
  // Passes until nothing moves (at most SAME_TOPIC_PASSES): in a chain v1, v3, v2 where v3 reads like v2 but
  // not like v1, the first pass lifts v2 over v1 and only the second lifts v3 over v2.
  for (let pass = 0; pass < SAME_TOPIC_PASSES; pass++) {
    let moved = false;
    for (let i = 0; i < head.length; i++) {
      for (let j = i + 1; j < head.length; j++) {
        const older = head[i] as SearchResult;
        const newer = head[j] as SearchResult;
        if (newer.memory.createdAt > older.memory.createdAt && lifts(older, newer)) {
          head.splice(j, 1);
          head.splice(i, 0, newer);
          newer.scoreDetails.newerThan = older.memory.id;
          moved = true;
        }
      }
    }
    if (!moved) break;
  }
  return [...head, ...results.slice(window)];
}

/**
 * When a note just written probably replaces an older live one (reported to the caller, never acted on):
 * vectors at least `minCosine` close with a term overlap of at least `minOverlap`, or the new note states a
 * change (UPDATE_CUE), its vector is at least `statedMinCosine` close and they share some wording
 * (`statedMinOverlap`). Measured on the coding-memory notes, every note taken as written last against the
 * older notes of its namespace (bench/coding-memory-data.ts, both halves): 33 of 35 update-chain pairs flagged
 * and 20 other pairs among 306 notes; without the shared-wording test, 25 of 35 at cosine 0.6 with 125 others.
 */
export const LIKELY_UPDATE = { minCosine: 0.7, minOverlap: 0.3, statedMinCosine: 0.5, statedMinOverlap: 0.1 } as const;

/** At most this many likely replaced notes are reported for one write, closest first. */
export const LIKELY_UPDATE_MAX = 3;

export function isLikelyUpdate(newText: string, newTerms: Set<string>, oldTerms: Set<string>, cosine: number): boolean {
  const overlap = weightedOverlap(newTerms, oldTerms, () => 1);
  if (cosine >= LIKELY_UPDATE.statedMinCosine && overlap >= LIKELY_UPDATE.statedMinOverlap && UPDATE_CUE.test(newText)) return true;
  return cosine >= LIKELY_UPDATE.minCosine && overlap >= LIKELY_UPDATE.minOverlap;
}
