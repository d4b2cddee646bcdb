/**
 * A search's recall counts wait in memory until RECALL_BATCH searches' worth or RECALL_DELAY_MS have gathered,
 * then all of them are written at once (both SQL backends). A write per search was about 6 % of a cached search's
 * CPU at 10k memories on the embedded store (BEGIN IMMEDIATE, the upsert, COMMIT of two 16 KB pages) and a round
 * trip and a commit of 0.8 ms a search on PostgreSQL at 100k (pg-scale's store calls), on the search's path. The
 * store writes them before it reads them itself (recallStats) and when it closes. What a crash loses: the recall
 * counts of at most the last RECALL_DELAY_MS (and RECALL_BATCH searches), statistics only (`cairn stats`); nothing
 * ranks by them. Another process sees them up to RECALL_DELAY_MS late.
 */
export const RECALL_BATCH = 32;
export const RECALL_DELAY_MS = 1000;

/** One search's recall: the ids it returned from its namespace, in order, and when. */
export interface PendingRecall {
  namespace: string;
  ids: string[];
  at: string;
}

export class RecallBatch {
  private pending: PendingRecall[] = [];
  private timer: NodeJS.Timeout | null = null;

  /** `write` stores a batch, in the order its searches recorded them, only for memories that still exist. */
  constructor(private readonly write: (batch: PendingRecall[]) => Promise<void>) {}

  async record(namespace: string, ids: string[], at: string): Promise<void> {
    if (ids.length === 0) return;
    this.pending.push({ namespace, ids: [...ids], at });
    if (this.pending.length >= RECALL_BATCH) return this.flush();
    // A failed write loses that batch's counts, as a failed write of one search's lost that search's.
    this.timer ??= setTimeout(() => void this.flush().catch(() => undefined), RECALL_DELAY_MS).unref();
  }

  /** Writes the recall counts waiting in memory. */
  async flush(): Promise<void> {
    const batch = this.take();
    if (batch.length > 0) await this.write(batch);
  }

  /** The recall counts waiting in memory, which are no longer kept here (for a store that writes them itself as it closes). */
  take(): PendingRecall[] {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    return batch;
  }
}
