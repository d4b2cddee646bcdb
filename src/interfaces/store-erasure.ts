/*
 * Provable erasure: the only operations that change the log (an erased event keeps its scope and sequence
 * number), the record of erasures in progress, and the backend's proof (compaction and file check), an
 * optional part: a store without it cannot prove an erasure, and `cairn erase` refuses on it.
 */

/**
 * What a backend's erasure proof did and read, in its own terms (file names, relations, steps); the erasure
 * certificate quotes it, so a reader sees what "no erased byte is left" was checked against.
 */
export interface ErasureProofReport {
  /** The backend: `sqlite`, `postgres`. */
  backend: string;
  /** What compaction did so the erased bytes leave storage, in order (e.g. `VACUUM`, `VACUUM FULL memories`). */
  compaction: string[];
  /** What the scan read: each kind of file, how many of them and their bytes. */
  scanned: { what: string; files: number; bytes: number }[];
  /** How many of the needles (and of the terms, when it searched for them) were found in what was read. */
  found: number;
  /** How many erased terms it searched for (a backend keeping sampled column values); absent otherwise. */
  termsSearched?: number;
  /** What the proof does not reach, said plainly (on PostgreSQL: the write-ahead log, archives, replicas). */
  notCovered: string[];
  /**
   * Why this scan is no evidence that the erased bytes are gone, when compaction could not finish its job
   * (on PostgreSQL: pg_statistic rewritten while an older transaction was open). Any fails `file-bytes`.
   */
  unproven?: string[];
}

/** A backend's proof that erased bytes left its storage; `Store.erasureProof`. */
export interface ErasureProof {
  /** One line for `cairn doctor`: how this backend compacts and what it reads. */
  readonly method: string;
  /**
   * After the erasing transaction: rebuilds what keeps deleted entries (full text; vectors when some were
   * removed) and rewrites storage so freed pages hold none of the erased bytes. Returns the steps done, as
   * `ErasureProofReport.compaction` lists them. Outside any transaction; idempotent.
   */
  compact(options: { vectorsRemoved: boolean }): Promise<string[]>;
  /**
   * Reads the store's files and counts how many of `needles` (UTF-8) occur in their raw bytes. `compaction`
   * is what `compact` returned, quoted in the report. `terms` are the erased memories' analysed terms that
   * no remaining memory holds (lower case, stemmed, as postings keep them): a backend that keeps copies of
   * column values outside the tables (PostgreSQL's planner statistics) looks for them there too, each
   * counted like a needle. UNSUPPORTED when the files cannot be read (a right revoked since the store opened).
   */
  check(needles: string[], compaction: string[], terms?: string[]): Promise<ErasureProofReport>;
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

/** Erasure outside a transaction. */
export interface ErasureOps {
  /** Erasures started and not finished, oldest first (startedAt, then id). */
  pendingErasures(): Promise<PendingErasure[]>;
  /**
   * Removes the record of a finished erasure so that none of its bytes stay (the plan holds encoded copies
   * of the erased texts until then); idempotent.
   */
  finishErasure(id: string): Promise<void>;
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
