import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type Database from 'better-sqlite3';
import { createSqliteStore, type SqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { makeMemory } from './contract/store-contract.js';

/**
 * A bulk transaction (reindex, recover) runs with SQLite's transient files on disk: a statement updating every row
 * keeps a statement journal as large as the rows it changes, which must not be held in memory. Other transactions
 * keep them in memory. Read on a real file, through the store's own connection.
 */

const root = mkdtempSync(join(tmpdir(), 'cairn-bulk-tx-'));
after(() => rmSync(root, { recursive: true, force: true }));
const MEMORY = 2;
const FILE = 1;

function tempStore(store: SqliteStore): number {
  const db = (store as unknown as { c: { db: Database.Database } }).c.db;
  return db.pragma('temp_store', { simple: true }) as number;
}

describe('SQLite bulk transactions keep their transient files on disk', () => {
  it('bulk: FILE inside, MEMORY again after it commits or throws; an ordinary transaction stays in memory', async () => {
    const store = createSqliteStore({ path: join(root, 'store.db'), vectorIndex: false });
    try {
      assert.equal(tempStore(store), MEMORY);
      const m = makeMemory('acme/shop', 'bulk note');
      assert.equal(await store.transaction(async (tx) => (await tx.insertMemory(m, null, ['bulk', 'note']), tempStore(store))), MEMORY);
      assert.equal(await store.transaction(async () => tempStore(store), { bulk: true }), FILE);
      assert.equal(tempStore(store), MEMORY);
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.deleteMemory(m.id);
          assert.equal(tempStore(store), FILE);
          throw new Error('abandoned');
        }, { bulk: true }),
      );
      assert.equal(tempStore(store), MEMORY);
      assert.ok(await store.getMemory(m.id), 'the thrown bulk transaction rolled back');
    } finally {
      await store.close();
    }
  });
});
