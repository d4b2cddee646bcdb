/** Types of the ingest filter's quarantine. Pure data. */

export const QUARANTINE_STATUSES = ['held', 'released', 'dropped'] as const;
export type QuarantineStatus = (typeof QUARANTINE_STATUSES)[number];

/** The write that was held, so a release can commit it as the original call would have. */
export type QuarantineOp = 'save' | 'turn' | 'update';

/**
 * The content-free record of a held write: what the store-wide quarantine events carry and what the review
 * queue lists. It never holds the text, a preview of it or its embedding — those live in the vault and the
 * learned-anchor table, outside the immutable log, so they can be erased.
 */
export interface QuarantineEntry {
  /** Sortable unique id (ULID). */
  id: string;
  /** SHA-256 (hex) of the held text, as it would have been stored (after redaction). */
  hash: string;
  /** Similarity that decided the block, rounded to 4 decimals. */
  score: number;
  /** Which filter pass reached the threshold. */
  pass: 'direct' | 'deobfuscated' | 'window';
  /** `seed:<id>` or `learned:<quarantine id>`: the anchor the text was closest to. */
  anchor: string | null;
  /** Obfuscation tricks undone before scoring (`leet`, `confusables`, `spacing`…). */
  tricks: string[];
  op: QuarantineOp;
  namespace: string;
  /** Provenance of the write: `cli`, `mcp`, `import`, `turn`… and the agent when known. */
  source: string | null;
  agent: string | null;
  status: QuarantineStatus;
  /** How many times this exact text was sent while held. */
  attempts: number;
  createdAt: string;
  lastAttemptAt: string;
  /** When it was released or dropped, and the operator's reason. */
  decidedAt: string | null;
  reason: string | null;
  /** Memories a release committed (empty otherwise). */
  memoryIds: string[];
  /** On a drop: whether it taught the filter (a learned anchor shared by the store). Absent otherwise. */
  taught?: boolean;
}

/** An entry as the review queue shows it: plus a 16-character preview, null once the text is gone. */
export interface QuarantineView extends QuarantineEntry {
  preview: string | null;
}

/** `show` with `reveal`: the full held text too (null once released, dropped or erased). */
export interface QuarantineDetail extends QuarantineView {
  text: string | null;
}

/** What a caller learns about a held write: enough to follow it up, nothing of the text. */
export interface QuarantineReceipt {
  id: string;
  score: number;
  hash: string;
  /** True when the same text was already held and this attempt was counted on that entry. */
  repeat: boolean;
}

export interface QuarantineListOptions {
  /** Default `held`. */
  status?: QuarantineStatus | 'all';
  /** Default 50. */
  limit?: number;
}

/** Result of releasing a held write. */
export interface QuarantineReleaseResult {
  entry: QuarantineEntry;
  /** Memories the release committed (or found already present as live duplicates). */
  memoryIds: string[];
  duplicate: boolean;
}
