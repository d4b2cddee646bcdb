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
  /** The writes started and not yet ended: a flush waits for them, so what it returns after is in the store. */
  private readonly writing = new Set<Promise<void>>();
  private closed = false;

  /**
   * `write` stores a batch, in the order its searches recorded them, only for memories that still exist; `log` hears
   * of a batch that failed when no caller was waiting for it (a timer's).
   */
  constructor(
    private readonly write: (batch: PendingRecall[]) => Promise<void>,
    private readonly log?: (message: string) => void,
    private readonly limits: { batch: number; delayMs: number } = { batch: RECALL_BATCH, delayMs: RECALL_DELAY_MS },
  ) {}

  async record(namespace: string, ids: string[], at: string): Promise<void> {
    // Counts recorded after the store closed are not kept (nothing would write them).
    if (ids.length === 0 || this.closed) return;
    this.pending.push({ namespace, ids: [...ids], at });
    if (this.pending.length >= this.limits.batch) return this.flush();
    // A failed write loses that batch's counts, as a failed write of one search's lost that search's.
    this.timer ??= setTimeout(
      () => void this.flush().catch((err: unknown) => this.log?.(`recall counts not recorded: ${err instanceof Error ? err.message : String(err)}`)),
      this.limits.delayMs,
    ).unref();
  }

  /** Writes the recall counts waiting in memory, after any write already under way. */
  async flush(): Promise<void> {
    const batch = this.take();
    const earlier = [...this.writing];
    if (batch.length > 0) {
      const write = this.write(batch);
      this.writing.add(write);
      void write.catch(() => undefined).finally(() => this.writing.delete(write));
      await Promise.allSettled(earlier);
      await write;
    } else await Promise.allSettled(earlier);
  }

  /**
   * The recall counts waiting in memory, which are no longer kept here, for a store that writes them itself as it
   * closes; later ones are not kept.
   */
  close(): PendingRecall[] {
    this.closed = true;
    return this.take();
  }

  private take(): PendingRecall[] {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    return batch;
  }
}
