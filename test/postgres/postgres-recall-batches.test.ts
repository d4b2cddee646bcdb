/**
 * The PostgreSQL store writes recall counts in batches (sql/recall-batch.ts, whose own test covers the batch size
 * and the delay), as the embedded store does: a search's counts are in the table only after a batch, the delay or
 * the store's close, while the store's own statistics include them at once; a batch counts each search once per
 * memory, keeps the latest time, and leaves nothing for a memory deleted while its count waited.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { RECALL_BATCH, RECALL_DELAY_MS } from '../../src/adapters/sql/recall-batch.js';
import { createPostgresStore, type PostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { makeMemory } from '../contract/store-contract.js';
import { adminQuery, createTestDatabase, pgSkip, testStoreConfig, type TestDatabase } from '../helpers/postgres.js';

const NS = 'github.com/acme/shop';
const NOW = '2026-11-01T12:00:00.000Z';

describe('PostgreSQL recall counts written in batches', { skip: pgSkip }, () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await db?.drop();
  });

  /** The table as another session reads it: memory id → [count, last_at]. */
  const table = async (): Promise<Map<string, [number, string]>> => {
    const rows = await adminQuery<{ memory_id: string; count: number; last_at: string }>(db.name, 'SELECT memory_id, count, last_at FROM recall_counts ORDER BY memory_id');
    return new Map(rows.map((r) => [r.memory_id, [r.count, r.last_at]]));
  };

  const seeded = async (store: PostgresStore, n: number) => {
    const memories = Array.from({ length: n }, (_, i) => makeMemory(NS, `shop note ${i} ${Math.random()}`));
    await store.transaction(async (tx) => {
      for (const m of memories) await tx.insertMemory(m, null, ['shop', 'note']);
    });
    return memories;
  };

  /** Two new memories, an empty table, and one search's counts of both waiting in the store. */
  const twoCountsWaiting = async (store: PostgresStore) => {
    const [a, b] = await seeded(store, 2);
    assert.ok(a && b);
    await adminQuery(db.name, 'DELETE FROM recall_counts');
    await store.recordRecalls(NS, [a.id, b.id], NOW);
    return [a, b] as const;
  };

  it('counts wait in memory, the store reads its own at once, batches keep the latest time, the delay and close write them', async () => {
    const store = createPostgresStore(testStoreConfig(db.url));
    const [a, b, c] = await seeded(store, 3);
    assert.ok(a && b && c);
    await adminQuery(db.name, 'DELETE FROM recall_counts');
    try {
      // One search listing a twice counts it once; a later search keeps its own time.
      await store.recordRecalls(NS, [a.id, a.id, b.id], NOW);
      assert.equal((await table()).size, 0, 'nothing written yet');
      const own = await store.recallStats(NS, NOW, 10);
      assert.deepEqual(own.top.map((t) => [t.id, t.count]).sort(), [[a.id, 1], [b.id, 1]].sort(), 'the store reads its own counts');
      assert.deepEqual([...(await table())].sort(), [[a.id, [1, NOW]], [b.id, [1, NOW]]].sort(), 'written before it read them');
      // A full batch whose last search is later, then one more search with the earlier time in the next batch: read
      // by the store after its own flush, every count is there once, and the later time stays (the second batch's
      // earlier time does not replace it). Whichever batch the timer cut instead, the end is the same.
      for (let i = 0; i < RECALL_BATCH - 1; i++) await store.recordRecalls(NS, [a.id], NOW);
      await store.recordRecalls(NS, [a.id, b.id], '2026-11-02T00:00:00.000Z');
      await store.recordRecalls(NS, [b.id], NOW);
      await store.recallStats(NS, NOW, 10);
      assert.deepEqual((await table()).get(a.id), [1 + RECALL_BATCH, '2026-11-02T00:00:00.000Z']);
      assert.deepEqual((await table()).get(b.id), [3, '2026-11-02T00:00:00.000Z'], 'an earlier time never replaces a later one');
      // Within the delay (and slack for a loaded machine), a lone count is written without any further call.
      await store.recordRecalls(NS, [c.id], NOW);
      const started = Date.now();
      while (!(await table()).has(c.id) && Date.now() - started < RECALL_DELAY_MS + 10_000) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual((await table()).get(c.id), [1, NOW], 'written after the delay');
      // The last one is written by close.
      await store.recordRecalls(NS, [c.id], NOW);
    } finally {
      await store.close();
    }
    assert.equal((await table()).get(c.id)?.[0], 2, 'close wrote the waiting count');
  });

  it('a count waiting for a memory deleted since leaves nothing; the others are written', async () => {
    const store = createPostgresStore(testStoreConfig(db.url));
    let kept = '';
    try {
      const [a, b] = await twoCountsWaiting(store);
      kept = b.id;
      await store.transaction((tx) => tx.deleteMemory(a.id));
    } finally {
      await store.close();
    }
    assert.deepEqual([...(await table())], [[kept, [1, NOW]]]);
  });

  it('a count written while a delete of its memory is under way waits for it and leaves nothing', async () => {
    const store = createPostgresStore(testStoreConfig(db.url));
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    let kept = '';
    try {
      const [a, b] = await twoCountsWaiting(store);
      kept = b.id;
      // Another session deletes the memory as deleteMemory does (the row, then its count) and has not committed when
      // the batch is written.
      await other.query('BEGIN');
      await other.query('DELETE FROM memories WHERE id = $1', [a.id]);
      await other.query('DELETE FROM recall_counts WHERE memory_id = $1', [a.id]);
      const flushed = store.recallStats(NS, NOW, 10);
      await new Promise((r) => setTimeout(r, 300));
      await other.query('COMMIT');
      await flushed;
    } finally {
      await other.end();
      await store.close();
    }
    assert.deepEqual([...(await table())], [[kept, [1, NOW]]]);
  });
});
