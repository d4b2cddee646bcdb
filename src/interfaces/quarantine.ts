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
  /** The score that decided the block (classifier probability, or similarity to a learned anchor), 4 decimals. */
  score: number;
  /** Which filter pass reached the threshold. */
  pass: 'direct' | 'deobfuscated' | 'window';
  /** `seed:<id>` (the nearest seed anchor) or `learned:<quarantine id>` (the lesson that held it). */
  anchor: string | null;
  /** Obfuscation tricks undone before scoring (`leet`, `base64`, `rot13`, `spacing`…). */
  tricks: string[];
  /**
   * Why it was held, in plain words (what the text does: addresses the agent, sends secrets out, runs
   * remote code…, and the classifier's score). Generic phrases: they never quote the text. Absent on entries
   * held before reasons were recorded.
   */
  reasons?: string[];
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
  /** Why it was held, in plain words (see QuarantineEntry.reasons). */
  reasons: string[];
}

export interface QuarantineListOptions {
  /** Default `held`. */
  status?: QuarantineStatus | 'all';
  /** Default 50. */
  limit?: number;
}

/** Which entries a review or a bulk decision covers (every field narrows; none: every entry of the status). */
export interface QuarantineFilter {
  /** Default `held`. */
  status?: QuarantineStatus | 'all';
  namespace?: string;
  /** The write's source (`mcp`, `import`, `cli`, `turn`, `page`, `http`…), exact. */
  source?: string;
  /** Words that one of the entry's reasons contains (case-insensitive), e.g. `exfiltrat` or `remote code`. */
  reason?: string;
  minScore?: number;
  maxScore?: number;
  /** Held at or after / before this ISO-8601 time. */
  since?: string;
  until?: string;
  /** Only these ids. */
  ids?: string[];
}

/** A page of the review queue with the totals an operator needs at scale. */
export interface QuarantineReview {
  /** Entries of the status (in the filter's namespace when it names one), before the other filters. */
  total: number;
  /** Entries matching the whole filter. */
  matched: number;
  /** Matching entries per reason (plain words, the classifier's score line left out). */
  byReason: Record<string, number>;
  /** The newest matching entries, at most `limit`. */
  entries: QuarantineView[];
}

/** What a bulk release or drop did (or, with `dryRun`, would do). */
export interface QuarantineBulkResult {
  action: 'release' | 'drop';
  dryRun: boolean;
  matched: number;
  ids: string[];
  done: string[];
  failed: { id: string; error: string }[];
}

/** Result of releasing a held write. */
export interface QuarantineReleaseResult {
  entry: QuarantineEntry;
  /** Memories the release committed (or found already present as live duplicates). */
  memoryIds: string[];
  duplicate: boolean;
}
