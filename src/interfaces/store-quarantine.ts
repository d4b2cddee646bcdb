import type { QuarantineEntry, QuarantineListOptions } from './quarantine.js';

/*
 * The ingest filter's quarantine: entries (the projection of the store-wide quarantine events), the vault
 * of held texts and requests (outside the log, so erasure can remove them), learned anchors (embeddings of
 * confirmed attacks, shared by every namespace) and the cache of the seed anchors' vectors.
 */

/** Reads of the quarantine, the vault and the anchors. Committed state only. */
export interface QuarantineReads {
  /** The entry with this id, or null. */
  getQuarantine(id: string): Promise<QuarantineEntry | null>;
  /** Entries with `options.status` (default `held`; `all` for every one), newest first (id descending), at most `options.limit` (default 50). */
  listQuarantine(options: QuarantineListOptions): Promise<QuarantineEntry[]>;
  /** Entries whose held text has this hash, oldest first (id ascending). */
  findQuarantineByHash(hash: string): Promise<QuarantineEntry[]>;
  /** The held text and original request (JSON) of an entry, or null once dropped, released or erased. */
  getQuarantineVault(id: string): Promise<{ text: string; request: unknown } | null>;
  /** Every learned anchor of the store (all namespaces, all agents), ordered by id. */
  learnedAnchors(): Promise<{ id: string; vector: Float32Array }[]>;
  /** The cached vectors under `key`, in the order stored, or null when missing or when their checksum does not match (the caller rebuilds). */
  getAnchorCache(key: string): Promise<Float32Array[] | null>;
}

/** Writes of the quarantine, the vault and the anchors, inside a write transaction (StoreTx). */
export interface QuarantineTx {
  /** Inserts or replaces the entry with this id. */
  putQuarantine(entry: QuarantineEntry): Promise<void>;
  /** As `Store.getQuarantine`, seeing this transaction's writes. */
  getQuarantine(id: string): Promise<QuarantineEntry | null>;
  /** As `Store.findQuarantineByHash`, seeing this transaction's writes. */
  findQuarantineByHash(hash: string): Promise<QuarantineEntry[]>;
  /** Removes every entry (recovery rebuilds them from the log); the vault and the anchors stay. */
  clearQuarantine(): Promise<void>;
  /** Removes one entry (erasure); idempotent. */
  deleteQuarantineEntry(id: string): Promise<void>;
  /** Inserts or replaces the held text and the original request (any JSON) of an entry. */
  putQuarantineVault(id: string, text: string, request: unknown): Promise<void>;
  /** As `Store.getQuarantineVault`, seeing this transaction's writes. */
  getQuarantineVault(id: string): Promise<{ text: string; request: unknown } | null>;
  /** Removes an entry's held text; idempotent. */
  deleteQuarantineVault(id: string): Promise<void>;
  /**
   * Inserts or replaces the embedding of a confirmed attack (a dropped quarantine entry, a memory marked
   * poisoned) as an anchor shared by every namespace. An automatic hold never writes one.
   */
  putLearnedAnchor(id: string, vector: Float32Array, at: string): Promise<void>;
  /** The learned anchor with this id, or null. */
  getLearnedAnchor(id: string): Promise<Float32Array | null>;
  /** Removes a learned anchor; idempotent. */
  deleteLearnedAnchor(id: string): Promise<void>;
  /** Inserts or replaces the vectors cached under `key`, with a checksum that `getAnchorCache` verifies. */
  putAnchorCache(key: string, vectors: Float32Array[]): Promise<void>;
}
