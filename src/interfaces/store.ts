import type { SessionStore } from './sessions.js';
import type { MemoryReads, MemorySearch, MemoryTx, VectorSetup, VectorTx } from './store-memories.js';
import type { LogReads, LogTx } from './store-log.js';
import type { QuarantineReads, QuarantineTx } from './store-quarantine.js';
import type { AccessTokens } from './store-access.js';
import type { UsageStats } from './store-usage.js';
import type { ErasureOps, ErasureProof, ErasureTx } from './store-erasure.js';

export type {
  CandidateFilter,
  EmbedderInfo,
  FusedCandidate,
  FusedRecall,
  FusedRecallRequest,
  LexicalHit,
  ListFilter,
  MemoryReads,
  MemorySearch,
  MemoryTx,
  RankingFields,
  VectorHit,
  VectorSetup,
  VectorTx,
} from './store-memories.js';
export type { EventInput, LogReads, LogTx, ScopeInfo, SnapshotRecord, StoredEvent } from './store-log.js';
export type { QuarantineReads, QuarantineTx } from './store-quarantine.js';
export type { AccessScope, AccessTokenRecord, AccessTokens } from './store-access.js';
export type { RecallStats, UsageStats } from './store-usage.js';
export type { ErasureOps, ErasureProof, ErasureProofReport, ErasureTx, PendingErasure } from './store-erasure.js';

/*
 * The Store contract, composed of focused parts, one file each:
 *   store-memories.ts   memories, their search (vector, lexical, fused) and the vector index
 *   store-log.ts        the event log, snapshots (compare-and-swap), settings, vector blobs
 *   store-quarantine.ts the quarantine, its vault, learned anchors, the anchor cache
 *   store-access.ts     access tokens of the HTTP server
 *   store-usage.ts      recall counts and memories per day
 *   store-erasure.ts    erasures in progress, log rewriting, and the optional erasure proof
 * Reads are on the Store; writes that belong to the log's projection go through one StoreTx. Every backend
 * passes the one contract suite (test/contract/store-contract.ts).
 */

/**
 * What a backend can do. Core asks these flags, never which backend it talks to; a missing capability has a
 * documented fallback that `cairn doctor` reports.
 */
/** How a write transaction is run (Store.transaction). */
export interface TransactionOptions {
  /** The transaction touches most rows (every memory's vector reset, a projection rebuilt). */
  bulk?: boolean;
}

export interface StoreCapabilities {
  /** Native nearest-neighbour search over vectors. Fallback: recall runs on lexical + recency only. */
  vectorSearch: boolean;
  /** Native BM25 full-text search. Fallback: recall runs on vectors + recency only. */
  fullText: boolean;
  /**
   * The backend gathers the vector and lexical candidates and fuses them with recency in one round trip
   * (`Store.fusedRecall`), with the same normalisation as core's score fusion. Fallback: core fetches each
   * signal's candidates and fuses them itself.
   */
  serverSideFusion: boolean;
}

/**
 * The backend's part of `cairn doctor`. `facts` are the backend's own (JSON values, in display order: e.g.
 * SQLite's version and journal mode; PostgreSQL's server and pgvector versions, vector index, whether fusion
 * runs server-side); `notes` name fallbacks in use (nothing is broken); `failures` mean the database is
 * broken (doctor exits 1).
 */
export interface StoreReport {
  backend: 'sqlite' | 'postgres';
  /** The file path, or the URL without its password. */
  location: string;
  schemaVersion: number;
  /** Size of the database on disk, when the backend can tell. */
  bytes: number | null;
  facts: Record<string, unknown>;
  notes: string[];
  failures: string[];
}

/** What a check of a derived vector index found: consistent, rebuilt (with why), or not in use (exhaustive search). */
export interface VectorIndexCheck {
  status: 'consistent' | 'rebuilt' | 'exhaustive';
  detail: string;
}

/**
 * Operations available inside one write transaction (Store.transaction). Everything done through a StoreTx
 * commits together or not at all, and sees the transaction's own earlier writes.
 *
 * A read through a StoreTx runs under the writer's lock (on SQLite the whole database's; on PostgreSQL the
 * scope's advisory lock once taken), so core reads here only what decides the write and must not change
 * before the commit: the row a change is built from, a dedupe or id re-check, the embedder record, pending
 * erasures, the quarantine entry being decided, a vector blob's references, the projection a snapshot
 * serialises. Reads that only prepare a write (dedupe pre-checks, what to embed or screen) go through the
 * Store, before the transaction.
 */
export interface StoreTx extends MemoryTx, VectorTx, LogTx, QuarantineTx, ErasureTx {}

/**
 * A memory store: the embedded SQLite store (adapters/sqlite) or PostgreSQL (adapters/postgres).
 * Every read is confined to the namespace it names unless it says otherwise; a lookup that finds nothing
 * returns null or [].
 */
export interface Store extends MemoryReads, MemorySearch, VectorSetup, LogReads, QuarantineReads, AccessTokens, UsageStats, ErasureOps {
  readonly capabilities: StoreCapabilities;
  /** Human-readable location, e.g. the database path or the URL without its password. */
  readonly location: string;
  /**
   * Browser sessions and request budgets of the HTTP server, kept in the store when many server processes
   * share it (PostgreSQL); absent on a store one process owns, where the server keeps them itself.
   */
  readonly sessions?: SessionStore | undefined;
  /**
   * The backend's proof that erased bytes left its storage (compaction, then a scan of its files), present
   * when this store can give one: absent on a PostgreSQL role that may not read the server's files. Read it
   * after the store's first call (a PostgreSQL store learns its role's rights when it connects). Without it
   * `cairn erase` refuses, naming why.
   */
  readonly erasureProof?: ErasureProof | undefined;
  /** Why `erasureProof` is absent, in a sentence (quoted by `cairn erase`'s refusal and by doctor). */
  readonly noErasureProof?: string | undefined;

  /**
   * Runs `fn` in one write transaction: all of its writes commit together, or none does when it throws (the
   * error is rethrown, driver errors translated into CairnError). Transactions of one process run one after
   * another; across processes the backend serialises conflicting ones, so no write is lost.
   * `bulk`: the transaction rewrites much of the store (reindex, recover); the backend then keeps its working
   * space where it can grow with the store rather than in memory.
   */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>, options?: TransactionOptions): Promise<T>;

  /** What `cairn doctor` shows about the backend: versions, schema, size, which paths are in use, problems. */
  diagnostics(): Promise<StoreReport>;
  /**
   * For a backend with a derived approximate vector index kept outside its transactions (the embedded store's
   * usearch file): checks it holds exactly the current vectors, rebuilding it when it does not. Absent when
   * the backend's vector search needs no such check.
   */
  checkVectorIndex?(): Promise<VectorIndexCheck>;
  /** Closes the store; idempotent. Later calls fail STORE_UNAVAILABLE. */
  close(): Promise<void>;
}
