import type { RecallStats } from '../../interfaces/store.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { ACTIVE_SQL } from './sqlite-rows.js';
import { RecallBatch } from '../sql/recall-batch.js';

/** Usage statistics: recall counts (written in batches, sql/recall-batch.ts) and memories created per day. */
export class SqliteUsage {
  private readonly recalls = new RecallBatch((batch) =>
    this.c.smallWrite('counting recalls', () => {
      // One statement per search, in the order the searches ran, counting a memory once per search (as PostgreSQL does),
      // the latest time kept. Only for a memory that still exists when written: counts waiting for a memory deleted (or
      // erased) since leave nothing.
      const upsert = this.c.stmt(
        `INSERT INTO recall_counts (memory_id, namespace, count, last_at)
           SELECT DISTINCT r.value, @namespace, 1, @at FROM json_each(@ids) r WHERE EXISTS (SELECT 1 FROM memories WHERE id = r.value)
         ON CONFLICT(memory_id) DO UPDATE SET count = count + 1, last_at = max(last_at, excluded.last_at)`,
      );
      this.c.db
        .transaction(() => {
          for (const { namespace, ids, at } of batch) upsert.run({ namespace, at, ids: JSON.stringify(ids) });
        })
        .immediate();
    }),
  );

  constructor(private readonly c: SqliteConnection) {}

  async recordRecalls(namespace: string, ids: string[], at: string): Promise<void> {
    // Statistics only: a search of a read-only database still answers, uncounted.
    if (this.c.readOnly) return;
    return this.recalls.record(namespace, ids, at);
  }

  /** Writes the recall counts waiting in memory, in the order their searches recorded them. */
  async flushRecalls(): Promise<void> {
    return this.recalls.flush();
  }

  async recallStats(namespace: string, now: string, top: number): Promise<RecallStats> {
    await this.flushRecalls().catch(() => undefined);
    return this.c.read('counting recalls', () => {
      const live = `m.namespace = @namespace AND ${ACTIVE_SQL}`;
      const rows = this.c.stmt(
        `SELECT CASE WHEN r.count IS NULL THEN '0' WHEN r.count = 1 THEN '1' WHEN r.count < 5 THEN '2-4' WHEN r.count < 10 THEN '5-9' ELSE '10+' END AS bucket,
                COUNT(*) AS memories
           FROM memories m LEFT JOIN recall_counts r ON r.memory_id = m.id WHERE ${live} GROUP BY bucket`,
      ).all({ namespace, now }) as { bucket: string; memories: number }[];
      const byBucket = new Map(rows.map((r) => [r.bucket, r.memories]));
      const histogram = ['0', '1', '2-4', '5-9', '10+'].map((bucket) => ({ bucket, memories: byBucket.get(bucket) ?? 0 }));
      const topRows = this.c.stmt(
        `SELECT m.id, m.text, m.kind, r.count, r.last_at FROM recall_counts r JOIN memories m ON m.id = r.memory_id
          WHERE ${live} ORDER BY r.count DESC, r.last_at DESC LIMIT @top`,
      ).all({ namespace, now, top }) as { id: string; text: string; kind: string; count: number; last_at: string }[];
      return {
        live: histogram.reduce((s, b) => s + b.memories, 0),
        neverRecalled: byBucket.get('0') ?? 0,
        top: topRows.map((r) => ({ id: r.id, text: r.text, kind: r.kind, count: r.count, lastAt: r.last_at })),
        histogram,
      };
    });
  }

  async createdPerDay(namespace: string): Promise<{ day: string; count: number }[]> {
    return this.c.read('counting memories', () =>
      this.c.stmt('SELECT substr(created_at, 1, 10) AS day, COUNT(*) AS count FROM memories WHERE namespace = ? GROUP BY day ORDER BY day').all(namespace) as {
        day: string;
        count: number;
      }[],
    );
  }
}
