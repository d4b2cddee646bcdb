import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore, type SqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { RECALL_BATCH, RECALL_DELAY_MS } from '../src/adapters/sql/recall-batch.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { makeMemory } from './contract/store-contract.js';

/**
 * The embedded store writes recall counts in batches (sqlite-usage.ts): on a real file, a search's counts are read
 * back by the same connection at once, by another connection within the delay, after a full batch without waiting,
 * and when the store closes; a count waiting for a memory deleted since leaves nothing.
 */

const NS = 'github.com/acme/shop';
const NOW = '2026-11-01T12:00:00.000Z';
const root = mkdtempSync(join(tmpdir(), 'cairn-recall-batches-'));
after(() => rmSync(root, { recursive: true, force: true }));

let files = 0;
function open(file = join(root, `store-${files++}.db`)): { file: string; store: SqliteStore } {
  return { file, store: createSqliteStore({ path: file, vectorIndex: false }) };
}

/** Each memory's recall count as another connection to the file reads it. */
async function countsElsewhere(file: string): Promise<Map<string, number>> {
  const other = createSqliteStore({ path: file, vectorIndex: false });
  try {
    return new Map((await other.recallStats(NS, NOW, 100)).top.map((t) => [t.id, t.count]));
  } finally {
    await other.close();
  }
}

async function seeded(store: SqliteStore, n: number) {
  const memories = Array.from({ length: n }, (_, i) => makeMemory(NS, `shop note ${i}`));
  await store.transaction(async (tx) => {
    for (const m of memories) await tx.insertMemory(m, null, ['shop', 'note']);
  });
  return memories;
}

describe('recall counts written in batches', () => {
  it('engine searches: the same connection reads its counts at once, another within the delay, and close writes the rest', async () => {
    const { file, store } = open();
    const engine = new Engine({ store, embedder: createUseEmbedder(), tokenCounter: createGptTokenCounter(), defaultNamespace: NS });
    let firstId = '';
    try {
      await engine.save({ text: 'The payment webhook retries three times with exponential backoff.', kind: 'fact' });
      await engine.save({ text: 'Invoices are rendered to PDF by the billing worker.', kind: 'fact' });
      const [first] = await engine.search('payment webhook retries');
      assert.ok(first, 'the search finds the note');
      firstId = first.memory.id;
      const started = Date.now();
      // Not yet in the file (the write waits for the batch), but this connection's statistics include it.
      const own = await store.recallStats(NS, new Date().toISOString(), 10);
      assert.equal(own.top.find((t) => t.id === first.memory.id)?.count, 1);
      // A second search's count: another connection sees it within the delay (and some slack for a loaded machine).
      await engine.search('payment webhook retries');
      let seen = 0;
      while (Date.now() - started < RECALL_DELAY_MS + 10_000) {
        seen = (await countsElsewhere(file)).get(first.memory.id) ?? 0;
        if (seen === 2) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(seen, 2);
      await engine.search('payment webhook retries');
    } finally {
      await store.close();
    }
    assert.equal((await countsElsewhere(file)).get(firstId), 3, 'close wrote the third search count');
  });

  it('a full batch is written before recordRecalls returns, in order, an id listed twice in one search counting once', async () => {
    const { file, store } = open();
    try {
      const [a, b] = await seeded(store, 2);
      assert.ok(a && b);
      for (let i = 0; i < RECALL_BATCH - 1; i++) await store.recordRecalls(NS, i === 0 ? [a.id, a.id, b.id] : [a.id], NOW);
      await store.recordRecalls(NS, [b.id], '2026-11-02T00:00:00.000Z');
      const counts = await countsElsewhere(file);
      assert.deepEqual(
        [...counts],
        [
          [a.id, RECALL_BATCH - 1],
          [b.id, 2],
        ],
      );
      const other = createSqliteStore({ path: file, vectorIndex: false });
      try {
        assert.equal((await other.recallStats(NS, NOW, 10)).top.find((t) => t.id === b.id)?.lastAt, '2026-11-02T00:00:00.000Z');
      } finally {
        await other.close();
      }
    } finally {
      await store.close();
    }
  });

  it('a count waiting for a memory deleted since leaves nothing; the others are written', async () => {
    const { file, store } = open();
    try {
      const [a, b] = await seeded(store, 2);
      assert.ok(a && b);
      await store.recordRecalls(NS, [a.id, b.id], NOW);
      await store.transaction((tx) => tx.deleteMemory(a.id));
      const stats = await store.recallStats(NS, NOW, 10);
      assert.deepEqual(stats.top.map((t) => [t.id, t.count]), [[b.id, 1]]);
      // Checked on the table itself: recallStats joins memories, so a row left for the deleted id would not show there.
      await store.close();
      const db = new Database(file, { readonly: true });
      try {
        assert.deepEqual(db.prepare('SELECT memory_id AS id, count FROM recall_counts ORDER BY memory_id').all(), [{ id: b.id, count: 1 }]);
        assert.equal(db.prepare('SELECT count(*) FROM recall_counts WHERE memory_id = ?').pluck().get(a.id), 0);
      } finally {
        db.close();
      }
    } finally {
      await store.close();
    }
    assert.equal((await countsElsewhere(file)).size, 1);
  });
});
