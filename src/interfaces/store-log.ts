/*
 * The event log (the source of truth), snapshots of its projection, per-namespace settings and the
 * content-addressed vector blobs events refer to. Sequence numbers and global positions are integers;
 * times are ISO-8601 UTC with a fixed width (see store-memories.ts).
 */

export interface EventInput {
  /** The scope: a namespace, or `''` for store-wide events (embedder, quarantine). */
  namespace: string;
  /** `memory.saved`, `memory.updated`, `memory.superseded`, `memory.forgotten`, `memory.restored`, `memory.purged`… */
  type: string;
  memoryId: string | null;
  /** JSON-serialisable event body, stored and returned as JSON. Never holds a secret: redaction runs before. */
  payload: unknown;
  at: string;
}

export interface StoredEvent extends EventInput {
  /** Monotonic, gap-free per namespace (scope), starting at 1, even with writers in many processes. */
  seq: number;
  /** Position in the whole log, increasing in commit order across every scope (gaps allowed). */
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
  /** The serialised state (compressed), returned byte for byte as written. */
  blob: Uint8Array;
  /** SHA-256 of `blob`, hex: detects storage corruption. */
  blobSha256: string;
  /** The engine's canonical checksum of the state inside the blob: detects version or logic mismatch. */
  checksum: string;
  engineVersion: number;
  createdAt: string;
}

/** Reads of the log, snapshots, settings and vector blobs. Committed state only; no write lock. */
export interface LogReads {
  /** Events of one scope with `seq > afterSeq` (default 0), in sequence order, at most `limit` (default 1000). */
  events(namespace: string, afterSeq?: number, limit?: number): Promise<StoredEvent[]>;
  /**
   * The whole log in commit order (`gseq` ascending), in pages of at most `pageSize` (default 1000), starting
   * after global position `afterGseq` (default 0). An event committed later than the one last returned comes
   * after it: a reader resuming from the last `gseq` it saw misses nothing.
   */
  iterateEvents(afterGseq?: number, pageSize?: number): AsyncIterable<StoredEvent[]>;
  /** Every scope of the log with its event count and highest sequence number, ordered by scope. */
  scopes(): Promise<ScopeInfo[]>;
  /** The latest snapshot of a scope, or null. */
  getSnapshot(scope: string): Promise<SnapshotRecord | null>;
  /** The vector stored under this content hash, or null. */
  getVectorBlob(hash: string): Promise<Float32Array | null>;
  /** A namespace's setting (the JSON value as stored), or null when unset. */
  getSetting(namespace: string, key: string): Promise<unknown>;
  /** Every setting of a namespace, ordered by key. */
  listSettings(namespace: string): Promise<{ key: string; value: unknown }[]>;
  /** Events not yet erased (type other than `erased`) that refer to one of these memories or belong to the namespace's scope. */
  countLiveEventsOf(memoryIds: string[], namespace: string | null): Promise<number>;
}

/** Writes of the log, snapshots, settings and vector blobs, inside a write transaction (StoreTx). */
export interface LogTx {
  /**
   * Appends an event with the next sequence number of its scope and returns that number. Writers in other
   * transactions or processes never get the same number nor leave a gap (the scope is serialised).
   */
  appendEvent(event: EventInput): Promise<number>;
  /**
   * Serialises this transaction against every other writer of these scopes now, in one fixed order (sorted),
   * instead of one by one as its operations reach them: two transactions that touch the same scopes in
   * different orders then cannot deadlock. Optional: a backend that serialises whole transactions (one
   * writer at a time) has nothing to order.
   */
  lockScopes?(scopes: Iterable<string>): Promise<void>;
  /** Highest sequence number of the scope, 0 when it has no event. */
  lastSeq(scope: string): Promise<number>;
  /** How many events of `type` the scope holds. */
  countEvents(scope: string, type: string): Promise<number>;
  /** As `Store.getSnapshot`, seeing this transaction's writes. */
  getSnapshot(scope: string): Promise<SnapshotRecord | null>;
  /**
   * The version and sequence number of the scope's snapshot (null: none), without reading its blob; sees this
   * transaction's writes.
   */
  snapshotHead(scope: string): Promise<{ version: number; seq: number } | null>;
  /**
   * Writes a snapshot if the scope's current snapshot version equals `expectedVersion` (null: none yet) and
   * returns the new version (the old one + 1); otherwise throws CONFLICT and writes nothing. Of two writers
   * expecting the same version, exactly one succeeds.
   */
  putSnapshot(snapshot: Omit<SnapshotRecord, 'version'>, expectedVersion: number | null): Promise<number>;
  /** Removes the scope's snapshot; idempotent. */
  deleteSnapshot(scope: string): Promise<void>;
  /** Inserts or replaces a namespace setting (any JSON value). */
  setSetting(namespace: string, key: string, value: unknown): Promise<void>;
  /** As `Store.listSettings`, seeing this transaction's writes. */
  settingsOf(namespace: string): Promise<{ key: string; value: unknown }[]>;
  /** Stores a vector under its content hash; idempotent (the same hash again keeps the first). */
  putVectorBlob(hash: string, vector: Float32Array): Promise<void>;
  /** As `Store.getVectorBlob`, seeing this transaction's writes. */
  getVectorBlob(hash: string): Promise<Float32Array | null>;
}
