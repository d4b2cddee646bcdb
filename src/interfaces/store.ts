import type { Memory, MemoryKind, ProvenanceFilter, SearchResult, SignalWeights, StoreStats } from './memory.js';
import type { QuarantineEntry, QuarantineListOptions } from './quarantine.js';
import type { SessionStore } from './sessions.js';

/**
 * What a backend can do. Core asks these flags, never which backend it talks to; a missing capability has a
 * documented fallback that `cairn doctor` reports.
 */
export interface StoreCapabilities {
  /** Native nearest-neighbour search over vectors. Fallback: recall runs on lexical + recency only. */
  vectorSearch: boolean;
  /** Native BM25 full-text search. Fallback: recall runs on vectors + recency only. */
  fullText: boolean;
  /** Several processes may write at once without losing a write. */
  concurrentWriters: boolean;
  /**
   * The backend gathers the vector and lexical candidates and fuses them with recency in one round trip
   * (`Store.fusedRecall`), with the same normalisation as core's score fusion. Fallback: core fetches each
   * signal's candidates and fuses them itself.
   */
  serverSideFusion: boolean;
  /** The backend can compact away freed data and scan its own files for erased text (provable erasure). */
  erasureChecks: boolean;
}

/** The embedder whose vectors a store holds. A store never mixes two. */
export interface EmbedderInfo {
  id: string;
  dimensions: number;
}

/** Restricts candidate generation. `namespace` is mandatory: no candidate query crosses namespaces. */
export interface CandidateFilter {
  namespace: string;
  kinds?: MemoryKind[] | undefined;
  tags?: string[] | undefined;
  /** ISO time used to exclude expired memories. */
  now: string;
  /** Include forgotten, superseded and expired memories. */
  includeInactive?: boolean | undefined;
}

export interface VectorHit {
  id: string;
  /** Cosine similarity in [-1, 1], higher is closer. */
  similarity: number;
}

export interface LexicalHit {
  id: string;
  /** BM25 relevance, higher is better (the sign of SQLite's bm25() is flipped by the adapter). */
  score: number;
}

/**
 * One hybrid recall done by the backend (capabilities.serverSideFusion): the candidates of each signal and
 * their score fusion (core/fusion.ts `fuseScores`: the same bounds, weights and tie order), in one round trip.
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
}

export interface FusedRecall {
  /** Best first, with per-signal details, exactly as `fuseScores` would rank the same candidates. */
  results: SearchResult[];
  /** The best vector candidate's cosine (for the relevance floor), null without vector candidates. */
  bestCosine: number | null;
}

export interface ListFilter {
  namespace?: string | undefined;
  kinds?: MemoryKind[] | undefined;
  tags?: string[] | undefined;
  /** Only memories whose id sorts before this one (paging newest-first). */
  before?: string | undefined;
  /** Only memories created at or after / before these instants (ISO 8601). */
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
  /** Only memories whose provenance has these values (metadata.source, .agent, .sessionId). */
  provenance?: ProvenanceFilter | undefined;
  limit: number;
  now: string;
  includeInactive?: boolean | undefined;
}

export interface EventInput {
  namespace: string;
  /** `memory.saved`, `memory.updated`, `memory.superseded`, `memory.forgotten`, `memory.restored`, `memory.purged`… */
  type: string;
  memoryId: string | null;
  /** JSON-serialisable event body. Never holds a secret: redaction runs before. */
  payload: unknown;
  at: string;
}

export interface StoredEvent extends EventInput {
  /** Monotonic, gap-free per namespace (scope), starting at 1. */
  seq: number;
  /** Position in the whole log, in commit order across every scope. */
  gseq: number;
}

/** One scope of the event log: a namespace, or `''` for store-wide events (embedder changes). */
export interface ScopeInfo {
  scope: string;
  /** Number of events and the highest sequence number; equal when the scope has no gap. */
  events: number;
  lastSeq: number;
}

/** A stored snapshot of one scope's projected state: a disposable fast path for recovery. */
export interface SnapshotRecord {
  scope: string;
  /** Compare-and-swap version, 1 for the first snapshot of a scope. */
  version: number;
  /** Sequence number of the last event the snapshot includes. */
  seq: number;
  /** The serialised state (compressed). */
  blob: Uint8Array;
  /** SHA-256 of `blob`, hex: detects storage corruption. */
  blobSha256: string;
  /** The engine's canonical checksum of the state inside the blob: detects version or logic mismatch. */
  checksum: string;
  engineVersion: number;
  createdAt: string;
}

/**
 * An erasure that has started and not yet issued its certificate. While it exists, no write may enter its
 * scope (core/erasure-lock.ts checks every event against it, inside the writer's transaction, so the rule
 * holds across processes). `plan` is null until the erasing transaction commits; from then on it holds
 * what a re-run needs to finish the erasure after a crash (see core/erasure.ts).
 */
export interface PendingErasure {
  id: string;
  scope: { namespace: string } | { subject: string };
  plan: unknown;
  startedAt: string;
}

/**
 * Operations available inside one write transaction. Everything done through a StoreTx commits together or
 * not at all.
 */
export interface StoreTx {
  getMemory(id: string): Promise<Memory | null>;
  /** The live (not forgotten, not superseded) memory with this dedupe key in the namespace, or null. */
  findLiveByDedupeKey(namespace: string, dedupeKey: string): Promise<Memory | null>;
  /**
   * Inserts the memory row, its full-text row (built from `terms`) and its vector in one step.
   * `vector` may be null only when the store has no vector capability or no embedder is configured.
   */
  insertMemory(memory: Memory, vector: Float32Array | null, terms: string[]): Promise<void>;
  /** Replaces the row. When `index` is given the full-text row and the vector are replaced too. */
  updateMemory(memory: Memory, index?: { vector: Float32Array | null; terms: string[] }): Promise<void>;
  /** Removes the memory row, its full-text row and its vector for good. */
  deleteMemory(id: string): Promise<void>;
  /** Appends an event with the next sequence number of its namespace and returns that number. */
  appendEvent(event: EventInput): Promise<number>;
  /** The embedder record, as `Store.embedder()` but inside the transaction. */
  embedder(): Promise<EmbedderInfo | null>;
  /** Records which embedder produces the vectors; creates the vector index on first call. */
  setEmbedder(info: EmbedderInfo): Promise<void>;
  /** Replaces the vector of one memory (reindex). */
  setVector(id: string, vector: Float32Array): Promise<void>;
  /** Drops every vector and the embedder record (reindex starts here). */
  resetVectors(): Promise<void>;
  setSetting(namespace: string, key: string, value: unknown): Promise<void>;

  /** Stores a vector under its content hash (idempotent). Vectors referenced by events live here. */
  putVectorBlob(hash: string, vector: Float32Array): Promise<void>;
  getVectorBlob(hash: string): Promise<Float32Array | null>;
  /** Every memory of a namespace with the content hash of its indexed vector (null when none), by id. */
  memoriesOf(namespace: string): Promise<{ memory: Memory; vectorHash: string | null }[]>;
  settingsOf(namespace: string): Promise<{ key: string; value: unknown }[]>;
  /** Highest sequence number of the scope, 0 when it has no event. */
  lastSeq(scope: string): Promise<number>;
  /** How many events of `type` the scope holds. */
  countEvents(scope: string, type: string): Promise<number>;
  getSnapshot(scope: string): Promise<SnapshotRecord | null>;
  /**
   * Writes a snapshot if the scope's current snapshot version equals `expectedVersion` (null: none yet) and
   * returns the new version; otherwise throws CONFLICT and writes nothing.
   */
  putSnapshot(snapshot: Omit<SnapshotRecord, 'version'>, expectedVersion: number | null): Promise<number>;
  deleteSnapshot(scope: string): Promise<void>;
  /** Removes the projection (memories, full-text rows, vectors, settings) of a namespace; the log stays. */
  clearProjection(namespace: string): Promise<void>;

  // Erasure. The only operations that change the log: an erased event keeps its scope and sequence number.
  /** Replaces an event's type and payload (and clears its memory id) in place. */
  rewriteEvent(scope: string, seq: number, type: string, payload: unknown): Promise<void>;
  /** Whether any event still refers to this vector hash. */
  vectorBlobReferenced(hash: string): Promise<boolean>;
  deleteVectorBlob(hash: string): Promise<void>;
  deleteQuarantineEntry(id: string): Promise<void>;
  /** Erasures started and not finished (usually none): the scopes no write may enter. */
  pendingErasures(): Promise<PendingErasure[]>;
  /** Records (or replaces, by id) an erasure in progress. */
  putPendingErasure(erasure: PendingErasure): Promise<void>;

  // Quarantine of the ingest filter. `putQuarantine`/`clearQuarantine` are the projection of the store-wide
  // quarantine events; the vault and the learned anchors are not in the log (see events.ts).
  /** Inserts or replaces the quarantine entry with this id. */
  putQuarantine(entry: QuarantineEntry): Promise<void>;
  getQuarantine(id: string): Promise<QuarantineEntry | null>;
  /** Entries whose held text has this hash, oldest first. */
  findQuarantineByHash(hash: string): Promise<QuarantineEntry[]>;
  /** Removes every quarantine entry (recovery rebuilds them from the log); vault and anchors stay. */
  clearQuarantine(): Promise<void>;
  /** Keeps the held text and the original request (JSON) of an entry. */
  putQuarantineVault(id: string, text: string, request: unknown): Promise<void>;
  getQuarantineVault(id: string): Promise<{ text: string; request: unknown } | null>;
  deleteQuarantineVault(id: string): Promise<void>;
  /**
   * Stores the embedding of a confirmed attack (a dropped quarantine entry, a memory marked poisoned) as an
   * anchor shared by every namespace of the store. An automatic hold never writes one.
   */
  putLearnedAnchor(id: string, vector: Float32Array, at: string): Promise<void>;
  getLearnedAnchor(id: string): Promise<Float32Array | null>;
  deleteLearnedAnchor(id: string): Promise<void>;
  /** Caches vectors computed from code constants (the seed anchors) under `key`, with a checksum. */
  putAnchorCache(key: string, vectors: Float32Array[]): Promise<void>;
}

/** What a check of a derived vector index found: consistent, rebuilt (with why), or not in use (exhaustive search). */
export interface VectorIndexCheck {
  status: 'consistent' | 'rebuilt' | 'exhaustive';
  detail: string;
}

/**
 * A memory store. Implementations: the embedded SQLite store (default), PostgreSQL later.
 * Every read is confined to the namespace it names; a method that finds nothing returns null or [].
 */
export interface Store {
  readonly capabilities: StoreCapabilities;
  /** Human-readable location, e.g. the database path. */
  readonly location: string;
  /**
   * Browser sessions and request budgets of the HTTP server, kept in the store when many server processes
   * share it (PostgreSQL); absent on a store one process owns, where the server keeps them itself.
   */
  readonly sessions?: SessionStore | undefined;

  /**
   * Runs `fn` in one write transaction: all of its writes commit together, or none does when it throws.
   * Transactions of one process run one after another; across processes the backend serialises them.
   */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;

  getMemory(id: string): Promise<Memory | null>;
  getMemories(ids: string[]): Promise<Memory[]>;
  listMemories(filter: ListFilter): Promise<Memory[]>;
  /** Every memory of a namespace (or of all namespaces when undefined), oldest first, in pages. */
  iterateMemories(namespace: string | undefined, pageSize?: number): AsyncIterable<Memory[]>;
  /** Memories whose expiry time is before `now` (for purge). */
  listExpired(now: string, namespace?: string): Promise<Memory[]>;

  /** Nearest neighbours by cosine similarity among active memories, best first, at most k. */
  vectorCandidates(vector: Float32Array, k: number, filter: CandidateFilter): Promise<VectorHit[]>;
  /** Best BM25 matches of any of `terms` (OR semantics), best first, at most k. */
  lexicalCandidates(terms: string[], k: number, filter: CandidateFilter): Promise<LexicalHit[]>;
  /** Server-side hybrid recall; present exactly when `capabilities.serverSideFusion` is true. */
  fusedRecall?(request: FusedRecallRequest): Promise<FusedRecall>;

  embedder(): Promise<EmbedderInfo | null>;
  getSetting(namespace: string, key: string): Promise<unknown>;
  events(namespace: string, afterSeq?: number, limit?: number): Promise<StoredEvent[]>;
  /** The whole log in commit order, in pages, starting after global position `afterGseq`. */
  iterateEvents(afterGseq?: number, pageSize?: number): AsyncIterable<StoredEvent[]>;
  /** Every scope of the log with its event count and highest sequence number. */
  scopes(): Promise<ScopeInfo[]>;
  /** The vectors currently in the index for these memory ids (absent ids have none). */
  getVectors(ids: string[]): Promise<Map<string, Float32Array>>;
  getVectorBlob(hash: string): Promise<Float32Array | null>;
  getSnapshot(scope: string): Promise<SnapshotRecord | null>;
  listSettings(namespace: string): Promise<{ key: string; value: unknown }[]>;
  stats(now: string): Promise<StoreStats>;
  getQuarantine(id: string): Promise<QuarantineEntry | null>;
  /** Quarantine entries, newest first; by default only the held ones. */
  listQuarantine(options: QuarantineListOptions): Promise<QuarantineEntry[]>;
  findQuarantineByHash(hash: string): Promise<QuarantineEntry[]>;
  getQuarantineVault(id: string): Promise<{ text: string; request: unknown } | null>;
  /** Every learned anchor of the store (all namespaces, all agents). */
  learnedAnchors(): Promise<{ id: string; vector: Float32Array }[]>;
  /** The cached vectors, or null when missing or when their checksum does not match (the caller rebuilds). */
  getAnchorCache(key: string): Promise<Float32Array[] | null>;
  /** Events not yet erased that refer to one of these memories or belong to this namespace's scope. */
  countLiveEventsOf(memoryIds: string[], namespace: string | null): Promise<number>;
  /**
   * After an erasure: rebuilds indexes that keep deleted entries (full text; vectors when some were removed)
   * and rewrites the files so freed pages and the write-ahead log hold none of the erased bytes.
   */
  compactAfterErasure(options: { vectorsRemoved: boolean }): Promise<void>;
  /** Erasures started and not finished, oldest first. */
  pendingErasures(): Promise<PendingErasure[]>;
  /**
   * Removes the record of a finished erasure so that none of its bytes stay in the files (the plan holds
   * encoded copies of the erased texts until then).
   */
  finishErasure(id: string): Promise<void>;
  /** How many of `needles` (UTF-8) occur anywhere in the store's files. */
  rawFilesContain(needles: string[]): Promise<number>;
  /** Backend facts for `cairn doctor`: versions, schema version, sizes. */
  diagnostics(): Promise<Record<string, unknown>>;
  /**
   * For a backend with a derived approximate vector index kept outside its transactions (the embedded store's
   * usearch file): checks it holds exactly the current vectors, rebuilding it when it does not. Absent when
   * the backend's vector search needs no such check.
   */
  checkVectorIndex?(): Promise<VectorIndexCheck>;

  // Access tokens of the HTTP server (not memory: outside the event log, stored hashed).
  putToken(token: AccessTokenRecord): Promise<void>;
  getTokenByHash(hash: string): Promise<AccessTokenRecord | null>;
  listTokens(): Promise<AccessTokenRecord[]>;
  /** Marks the token revoked; false when no token has this id. */
  revokeToken(id: string, at: string): Promise<boolean>;
  touchToken(id: string, at: string): Promise<void>;

  // Recall counts (usage statistics, outside the event log and the checksum; erased with their memory).
  recordRecalls(namespace: string, ids: string[], at: string): Promise<void>;
  recallStats(namespace: string, now: string, top: number): Promise<RecallStats>;
  /** How many indexed memories there are, and in how many of them each term occurs (every namespace). */
  termDocumentFrequencies(terms: string[]): Promise<{ documents: number; frequencies: Map<string, number> }>;
  /** Memories created per UTC day in a namespace (live or not). */
  createdPerDay(namespace: string): Promise<{ day: string; count: number }[]>;
  close(): Promise<void>;
}

export type AccessScope = 'read' | 'write' | 'admin';

export interface AccessTokenRecord {
  /** Public id (shown in lists and logs; not a secret). */
  id: string;
  /** SHA-256 (hex) of the secret token; the secret itself is never stored. */
  hash: string;
  name: string | null;
  /** Namespaces the token reaches; `['*']` for every namespace. */
  namespaces: string[];
  scope: AccessScope;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export interface RecallStats {
  /** Live memories of the namespace. */
  live: number;
  /** Live memories that no search has returned yet. */
  neverRecalled: number;
  /** The most recalled live memories. */
  top: { id: string; text: string; kind: string; count: number; lastAt: string }[];
  /** How many live memories were recalled n times, bucketed: 0, 1, 2–4, 5–9, 10+. */
  histogram: { bucket: string; memories: number }[];
}
