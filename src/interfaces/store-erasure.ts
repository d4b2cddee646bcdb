/*
 * Provable erasure: the only operations that change the log (an erased event keeps its scope and sequence
 * number), the record of erasures in progress, and the backend's compaction and file check.
 */

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

/** Erasure outside a transaction. */
export interface ErasureOps {
  /** Erasures started and not finished, oldest first (startedAt, then id). */
  pendingErasures(): Promise<PendingErasure[]>;
  /**
   * Removes the record of a finished erasure so that none of its bytes stay (the plan holds encoded copies
   * of the erased texts until then); idempotent.
   */
  finishErasure(id: string): Promise<void>;
  /**
   * After an erasure: rebuilds indexes that keep deleted entries (full text; vectors when some were removed)
   * and rewrites storage so freed pages and the write-ahead log hold none of the erased bytes. Needs
   * `capabilities.erasureChecks`.
   */
  compactAfterErasure(options: { vectorsRemoved: boolean }): Promise<void>;
  /**
   * How many of `needles` (UTF-8) occur anywhere in the store's files. Needs `capabilities.erasureChecks`;
   * UNSUPPORTED when the files cannot be read.
   */
  rawFilesContain(needles: string[]): Promise<number>;
}

/** Erasure inside a write transaction (StoreTx). */
export interface ErasureTx {
  /** Replaces an event's type and payload (and clears its memory id) in place; its scope and seq stay. */
  rewriteEvent(scope: string, seq: number, type: string, payload: unknown): Promise<void>;
  /**
   * Whether any event still refers to this vector hash (its payload's top-level `vector` member, as the
   * events of core/events.ts carry vectors) or any memory row's indexed vector has it. A backend answers from
   * a reference count or index, not by scanning payloads.
   */
  vectorBlobReferenced(hash: string): Promise<boolean>;
  /** Removes the vector stored under this hash; idempotent. */
  deleteVectorBlob(hash: string): Promise<void>;
  /** Erasures started and not finished (usually none): the scopes no write may enter. */
  pendingErasures(): Promise<PendingErasure[]>;
  /** Records (or replaces, by id) an erasure in progress. */
  putPendingErasure(erasure: PendingErasure): Promise<void>;
}
