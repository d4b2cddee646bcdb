// Recall reads its several hundred candidates in part (what ranking needs) and only the few it keeps in full.
import { CairnError } from '../interfaces/errors.js';
import type { Memory, SearchResult } from '../interfaces/memory.js';
import type { FusedCandidate, RankingFields, Store } from '../interfaces/store.js';

/** The Memory fields read for ranking: RankingFields' own (its `sessionId` is `metadata.sessionId` of a Memory). */
type RankedField = Exclude<keyof RankingFields, 'sessionId'>;

/**
 * Every field of a Memory, once, marked by whether ranking reads it. Its type is derived from RankingFields, so
 * it fails to compile when Memory gains a field not listed here, lists one Memory lacks, or marks a field other
 * than RankingFields' `true` (or one of them `false`): a candidate read for ranking only never answers
 * `undefined` for a field that was simply not read, nor throws for one that was.
 */
const MEMORY_FIELDS: { [K in keyof Memory]-?: K extends RankedField ? true : false } = {
  id: true,
  namespace: true,
  createdAt: true,
  feedback: true,
  code: true,
  text: false,
  kind: false,
  importance: false,
  tags: false,
  taskId: false,
  metadata: false,
  route: false,
  updatedAt: false,
  expiresAt: false,
  supersedes: false,
  supersededBy: false,
  forgottenAt: false,
  forgetReason: false,
  dedupeKey: false,
  likelyReplaces: false,
  instructionCheck: false,
};

/** Every RankedField is a Memory field (else MEMORY_FIELDS could not mark it). */
const RANKED_ARE_MEMORY_FIELDS: RankedField extends keyof Memory ? true : never = true;

/** The Memory fields a candidate read for ranking only has, copied from its RankingFields. */
export const RANKED_FIELDS: readonly RankedField[] = RANKED_ARE_MEMORY_FIELDS && (Object.keys(MEMORY_FIELDS) as (keyof Memory)[]).filter((f): f is RankedField => MEMORY_FIELDS[f]);

/** The Memory fields a candidate read for ranking only does not have. */
export const UNREAD_FIELDS: readonly (keyof Memory)[] = (Object.keys(MEMORY_FIELDS) as (keyof Memory)[]).filter((f) => !MEMORY_FIELDS[f]);

const SESSION = Symbol('sessionId');

/**
 * The prototype of a candidate of which only its RankingFields were read: score fusion, branch visibility,
 * session context and demotion need nothing more. Reading any other field throws, so a step that looks at
 * text, kind or tags before `readWhole` fails loudly instead of ranking by a missing value.
 *
 * Measured at 10k generated notes: reading the 540 candidates of a search whole took a third of a search with
 * a cached query vector (their text, tags and metadata copied and parsed), their ranking fields 0.9 ms.
 */
const RANKED_ONLY: object = Object.defineProperties(
  {},
  Object.fromEntries(
    UNREAD_FIELDS.map((field) => [
      field,
      {
        get(this: Memory): never {
          throw new CairnError('INTERNAL', `recall read ${field} of candidate ${this.id} before reading it whole`);
        },
      },
    ]),
  ),
);

function rankedOnly(f: RankingFields): Memory {
  const m = Object.create(RANKED_ONLY) as Record<string | symbol, unknown>;
  // Absent, as on a Memory, when unset.
  for (const field of RANKED_FIELDS) if (f[field]) m[field] = f[field];
  m[SESSION] = f.sessionId;
  return m as unknown as Memory;
}

function isRankedOnly(m: Memory): boolean {
  return Object.getPrototypeOf(m) === RANKED_ONLY;
}

/** Fused candidates (Store.fusedRecall) as results whose memories were read for ranking only. */
export function fusedResults(candidates: readonly FusedCandidate[]): SearchResult[] {
  // Named, not spread: a rest and a spread of ~580 candidates took 0.4 ms a search.
  return candidates.map((c) => ({ score: c.score, scoreDetails: c.scoreDetails, memory: rankedOnly(c.fields) }));
}

/** The candidates by id: their ranking fields when the store reads those, else whole. */
export async function readCandidates(store: Store, ids: string[]): Promise<Map<string, Memory>> {
  const read: Memory[] = store.getRankingFields ? (await store.getRankingFields(ids)).map(rankedOnly) : await store.getMemories(ids);
  return new Map(read.map((m) => [m.id, m]));
}

/** The memory's `metadata.sessionId`, whether it was read whole or for ranking only. */
export function sessionIdOf(m: Memory): string | undefined {
  return isRankedOnly(m) ? ((m as unknown as Record<symbol, string | undefined>)[SESSION]) : m.metadata.sessionId;
}

/**
 * Makes the first `n` results whole (in place): the candidates among them read for ranking only are read in
 * full in one call. One that is gone meanwhile (removed by another process since its candidates were read)
 * leaves the results, and the next one moves up.
 */
export async function readWhole(store: Store, results: SearchResult[], n: number): Promise<SearchResult[]> {
  let out = results;
  for (;;) {
    const partial = out.slice(0, n).filter((r) => isRankedOnly(r.memory));
    if (partial.length === 0) return out;
    const whole = new Map((await store.getMemories(partial.map((r) => r.memory.id))).map((m) => [m.id, m]));
    const gone = new Set<SearchResult>();
    for (const r of partial) {
      const m = whole.get(r.memory.id);
      if (m) r.memory = m;
      else gone.add(r);
    }
    if (gone.size === 0) return out;
    out = out.filter((r) => !gone.has(r));
  }
}
