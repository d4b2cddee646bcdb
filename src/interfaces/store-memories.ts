import type { Memory, MemoryKind, ProvenanceFilter, SearchResult, SignalWeights, StoreStats } from './memory.js';

/*
 * Memories and their search: the projection's rows, their analysed terms and vectors, and the candidate
 * queries recall fuses. Ordering conventions every backend keeps (core compares these values as strings):
 * - times are ISO-8601 UTC with a fixed width (`2026-12-01T11:20:09.000Z`, as `Date.prototype.toISOString`
 *   writes them), so their string order is their time order;
 * - memory ids are ULIDs (core/ids.ts): 26 Crockford base-32 characters whose string order is the order of
 *   their creation time (then of their random part), so "before this id" means "created earlier".
 * A backend compares both with a plain binary (`C` collation) string comparison, never a locale-aware one.
 */

/** The embedder whose vectors a store holds. A store never mixes two. */
export interface EmbedderInfo {
  id: string;
  dimensions: number;
}

/** Restricts candidate generation. `namespace` is mandatory: no candidate query crosses namespaces. */
export interface CandidateFilter {
  namespace: string;
  /** Only these kinds (any of them); absent or empty: every kind. */
  kinds?: MemoryKind[] | undefined;
  /** Only memories carrying at least one of these tags; absent or empty: no tag condition. */
  tags?: string[] | undefined;
  /** ISO-8601 UTC time (fixed width): a memory whose `expiresAt` is at or before it counts as expired. */
  now: string;
  /** Include forgotten, superseded and expired memories. */
  includeInactive?: boolean | undefined;
  /**
   * The caller accepts an approximate answer (an advisory check, such as a save's likely updates): a store may
   * answer from an approximate neighbour index that can miss a near memory, and score its hits from the index's
   * own compressed vectors instead of reading each one (the embedded store's int8 codes: within about 0.002 of the
   * exact cosine for the bundled model's vectors, more for vectors with outsized components, which the codes clip;
   * hits that close may come in either order). Hits still pass the filter.
   */
  approximate?: boolean | undefined;
}

export interface VectorHit {
  id: string;
  /** Cosine similarity in [-1, 1], higher is closer. */
  similarity: number;
}

export interface LexicalHit {
  id: string;
  /**
   * The lexical relevance of the memory to the query terms: higher is better, and only the order and the
   * ratios between hits of one query are meaningful (core's score fusion divides it by the sum of the query
   * terms' inverse document frequencies). A BM25-like weighting (term frequency saturation, inverse document
   * frequency, length normalisation) keeps recall figures alike across backends; no backend function is
   * promised.
   */
  score: number;
}

/**
 * One hybrid recall done by the backend (capabilities.serverSideFusion): the candidates of each signal and
 * their score fusion (core/fusion.ts `fuseScores`: the same bounds, weights and tie order) or, with `rrf`,
 * their reciprocal rank fusion (`fuse`), in one round trip.
 */
export interface FusedRecallRequest {
  /** The query's vector; null leaves the vector signal out (no embedder, weight 0, nothing embedded yet). */
  vector: Float32Array | null;
  /** Analysed query terms (core/lexical.ts `queryTerms`); empty leaves the lexical signal out. */
  terms: string[];
  /** Candidates fetched per signal. */
  k: number;
  filter: CandidateFilter;
  weights: SignalWeights;
  calibration: { vectorZero: number; vectorFull: number; recencyHalfLifeDays: number };
  /** Reciprocal rank fusion (core/fusion.ts `fuse`, with this k) instead of score fusion. */
  rrf?: { k: number };
  /**
   * Related terms of the query (core/related-terms.ts): their own `k` candidates join the lexical signal as
   * `withRelated` joins them (each memory's larger of its own score and weight × its related score; own
   * candidates first on ties); the term statistics and the lexical scale stay the query's own terms'.
   */
  related?: { terms: string[]; k: number; weight: number } | undefined;
}

/** A fused candidate: what ranking reads of its memory (recall reads whole only the few it keeps), its score and details. */
export interface FusedCandidate extends Omit<SearchResult, 'memory' | 'stale'> {
  fields: RankingFields;
}

export interface FusedRecall {
  /** Best first, with per-signal details, exactly as `fuseScores` would rank the same candidates. */
  results: FusedCandidate[];
  /** The best vector candidate's cosine (for the relevance floor), null without vector candidates. */
  bestCosine: number | null;
  /**
   * When the lexical signal ran and returned rows: what `termDocumentFrequencies(request.terms, namespace)`
   * answers (the statistics the statement scored with), so recall needs no second round trip for them.
   */
  termStatistics?: { documents: number; frequencies: Map<string, number> } | undefined;
}

export interface ListFilter {
  /** One namespace; absent: every namespace. */
  namespace?: string | undefined;
  kinds?: MemoryKind[] | undefined;
  tags?: string[] | undefined;
  /** Only memories whose id sorts before this one (ULIDs sort by creation time: paging newest-first). */
  before?: string | undefined;
  /** Only memories created at or after / strictly before these instants (ISO-8601 UTC, fixed width). */
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
  /** Only memories whose provenance has these values (metadata.source, .agent, .sessionId). */
  provenance?: ProvenanceFilter | undefined;
  /** At most this many memories. */
  limit: number;
  /** ISO-8601 UTC time deciding which memories are expired. */
  now: string;
  /** Include forgotten, superseded and expired memories. */
  includeInactive?: boolean | undefined;
}

/**
 * What recall ranks every candidate of a search by (core/ranked-memory.ts): its time, the feedback that demotes
 * it, the branch that hides it and the session that lends it context. The few candidates that reach the later
 * steps are then read whole.
 */
export interface RankingFields {
  id: string;
  namespace: string;
  createdAt: string;
  /** `metadata.sessionId`, absent when unset. */
  sessionId?: string;
  /** As on Memory: absent when unset. */
  feedback?: Memory['feedback'];
  code?: Memory['code'];
}

/** Reads of the memories projection. Each reads committed state; none takes a write lock. */
export interface MemoryReads {
  /** The memory with this id in any namespace, or null. */
  getMemory(id: string): Promise<Memory | null>;
  /** The memories with these ids that exist, in no particular order; unknown ids are left out. */
  getMemories(ids: string[]): Promise<Memory[]>;
  /**
   * The RankingFields of the memories with these ids that exist, in no particular order; unknown ids are left
   * out. Optional: recall reads whole memories with getMemories from a store without it.
   */
  getRankingFields?(ids: string[]): Promise<RankingFields[]>;
  /**
   * The live (not forgotten, not superseded) memory with this dedupe key in the namespace, or null, read
   * outside any write transaction (no writer lock taken): a pre-check that a transaction must confirm.
   */
  findLiveByDedupeKey(namespace: string, dedupeKey: string): Promise<Memory | null>;
  /** Memories matching the filter, newest first (id descending), at most `filter.limit`. */
  listMemories(filter: ListFilter): Promise<Memory[]>;
  /**
   * Every memory of a namespace (or of all namespaces when undefined), live or not, in id order (oldest
   * first), in pages of at most `pageSize` (default 500). Pages are read as they are consumed: a memory
   * written meanwhile with a later id may appear, one with an earlier id does not.
   */
  iterateMemories(namespace: string | undefined, pageSize?: number): AsyncIterable<Memory[]>;
  /**
   * Memories of `filter.namespace` matching the filter whose `likelyReplaces` names at least one of `ids`
   * (the newer notes that probably update them), in no particular order; none when `ids` is empty.
   */
  listLikelyReplacing(ids: string[], filter: CandidateFilter): Promise<Memory[]>;
  /** Memories whose `expiresAt` is at or before `now` (ISO-8601 UTC), in one namespace or all; for purge. */
  listExpired(now: string, namespace?: string): Promise<Memory[]>;
  /** Per namespace (ordered by name): live, forgotten, superseded and expired counts at `now`; and events. */
  stats(now: string): Promise<StoreStats>;
}

/** Candidate queries of recall and the vector index. Every query stays inside `filter.namespace`. */
export interface MemorySearch {
  /**
   * Nearest neighbours by cosine similarity among the memories passing `filter` (active ones unless
   * `includeInactive`), best first, at most k; ties in any order. Exact or approximate, a backend never lets
   * nearer filtered-out memories hide the k nearest matching ones. [] when the store holds no vectors;
   * EMBEDDER_MISMATCH when `vector` has another dimension than the stored ones.
   */
  vectorCandidates(vector: Float32Array, k: number, filter: CandidateFilter): Promise<VectorHit[]>;
  /**
   * Whether a vector search of the namespace runs off the calling thread (the embedded store's scan worker in a
   * long-lived process), so that a caller wanting both signals gains by starting it before the lexical search,
   * whose work then runs beside it. Absent or false: the order does not matter.
   */
  vectorSearchRunsBeside?(namespace: string): boolean;
  /**
   * Memories whose indexed terms contain any of `terms` (OR semantics), best first by `LexicalHit.score`,
   * at most k. A term matches an indexed term only when equal to it: terms arrive analysed by core
   * (core/lexical.ts) and the backend neither splits, stems nor folds them again, so `shop/checkout/tax.py`
   * or `payments_v2_enabled` match the same memories on every backend.
   */
  lexicalCandidates(terms: string[], k: number, filter: CandidateFilter): Promise<LexicalHit[]>;
  /** Server-side hybrid recall; present exactly when `capabilities.serverSideFusion` is true. */
  fusedRecall?(request: FusedRecallRequest): Promise<FusedRecall>;
  /**
   * How many indexed memories there are, and in how many of them each of `terms` occurs (terms occurring
   * in none are absent from the map). With `namespace`, both counts are of that namespace only (recall
   * passes it, so one namespace's vocabulary never weights another's); without it, of the whole store.
   */
  termDocumentFrequencies(terms: string[], namespace?: string): Promise<{ documents: number; frequencies: Map<string, number> }>;
  /** The vectors currently indexed for these memory ids; ids without one (or unknown) are absent. */
  getVectors(ids: string[]): Promise<Map<string, Float32Array>>;
  /** The embedder whose vectors the store holds, or null before the first vector. */
  embedder(): Promise<EmbedderInfo | null>;
}

/**
 * Schema a vector space needs, made outside any write transaction. A backend whose vector storage depends
 * on the dimension (SQLite's vec0 table, PostgreSQL's HNSW index) creates it here, so no transaction that
 * records or switches an embedder runs DDL (on SQLite DDL inside the write lock rewrites the schema under
 * every reader; on PostgreSQL an index build would hold the write transaction open).
 */
export interface VectorSetup {
  /**
   * Creates what vectors of `info.dimensions` need, committed at once, outside any transaction. Idempotent
   * and safe while other processes read and write: it only adds objects, never drops or empties one a
   * transaction might be using. Core calls it before every transaction that may record an embedder
   * (`StoreTx.setEmbedder`): the first save, a reindex, a replay or recovery. A crash after it and before
   * that transaction commits leaves an unused, empty object and a store that works as before.
   */
  prepareVectors(info: EmbedderInfo): Promise<void>;
}

/** Writes of the memories projection, inside a write transaction (StoreTx). */
export interface MemoryTx {
  /** As `Store.getMemory`, seeing this transaction's writes. */
  getMemory(id: string): Promise<Memory | null>;
  /** The current (not forgotten, not superseded; expired or not) memory with this dedupe key in the namespace, or null. */
  findLiveByDedupeKey(namespace: string, dedupeKey: string): Promise<Memory | null>;
  /**
   * Inserts the memory row, its full-text entry (exactly `terms`, analysed by core; a term is never split
   * again) and its vector in one step. `vector` may be null (no embedder); a vector needs the embedder
   * recorded first (setEmbedder). CONFLICT when the id exists or another current memory of the namespace
   * has the same dedupe key.
   */
  insertMemory(memory: Memory, vector: Float32Array | null, terms: string[]): Promise<void>;
  /**
   * Replaces the row (NOT_FOUND when absent). With `index`, the full-text entry and the vector are replaced
   * too (a null vector removes it); without, they stay and only the row's lifecycle is followed (a
   * forgotten or superseded memory leaves vector recall at once).
   */
  updateMemory(memory: Memory, index?: { vector: Float32Array | null; terms: string[] }): Promise<void>;
  /** Removes the memory row, its full-text entry, its vector and its recall count for good; idempotent. */
  deleteMemory(id: string): Promise<void>;
  /** Every memory of a namespace, by id, with the content hash of its indexed vector (null when none). */
  memoriesOf(namespace: string): Promise<{ memory: Memory; vectorHash: string | null }[]>;
  /** Removes the projection (memories, full-text entries, vectors, settings) of a namespace; the log stays. */
  clearProjection(namespace: string): Promise<void>;
}

/** The embedder record and the vector index, inside a write transaction (StoreTx). */
export interface VectorTx {
  /** The embedder record, as `Store.embedder()` but inside the transaction. */
  embedder(): Promise<EmbedderInfo | null>;
  /**
   * Records which embedder produces the vectors. The same one again is a no-op; another one fails
   * EMBEDDER_MISMATCH (reset first). Rolled back with the transaction like any write. Runs no DDL: a new
   * record needs `Store.prepareVectors(info)` first, and fails INTERNAL (naming it) when that was not done.
   */
  setEmbedder(info: EmbedderInfo): Promise<void>;
  /** Replaces the indexed vector of one memory (reindex); NOT_FOUND for an unknown id. */
  setVector(id: string, vector: Float32Array): Promise<void>;
  /**
   * Removes every indexed vector and the embedder record (reindex starts here); vector blobs of the log stay.
   * Deletes rows, drops nothing: the emptied vector objects stay for a later `prepareVectors`.
   */
  resetVectors(): Promise<void>;
}
