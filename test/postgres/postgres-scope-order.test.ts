/**
 * Scope locks taken together go in sorted order: a transaction asking for ['acme/b', 'acme/a'] while another
 * holds 'acme/a' waits for 'acme/a' first and so does not yet hold 'acme/b' (taken in the order asked, it
 * would, and a third writer of 'acme/b' would queue behind it: the pattern that lets two multi-namespace
 * transactions, such as two purges of every namespace, deadlock).
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createPostgresStore, type PostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { createTestDatabase, pgSkip, testStoreConfig, type TestDatabase } from '../helpers/postgres.js';

describe('PostgreSQL scope locks taken together', { skip: pgSkip }, () => {
  let db: TestDatabase;
  let store: PostgresStore;

  before(async () => {
    db = await createTestDatabase();
    store = createPostgresStore(testStoreConfig(db.url, { poolSize: 4 }));
    await store.open();
  });
  after(async () => {
    await store?.close();
    await db?.drop();
  });

  it('are taken in sorted order, whatever order they are asked in', { timeout: 20_000 }, async () => {
    let releaseA!: () => void;
    let heldA!: () => void;
    const aHeld = new Promise<void>((r) => (heldA = r));
    const a = store.transaction(async (tx) => {
      await tx.lockScopes?.(['acme/a']);
      heldA();
      await new Promise<void>((r) => (releaseA = r));
    });
    await aHeld;
    const order: string[] = [];
    const b = store.transaction(async (tx) => {
      await tx.lockScopes?.(['acme/b', 'acme/a']);
      order.push('b locked both');
    });
    // b has asked and waits on an advisory lock (seen in pg_locks).
    const sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    let waiting = 0;
    for (let i = 0; i < 200 && waiting === 0; i++) {
      waiting = Number((await sql.query<{ n: string }>(`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rows[0]?.n);
      if (waiting === 0) await new Promise((r) => setTimeout(r, 25));
    }
    await sql.end();
    assert.equal(waiting, 1, 'b waits for acme/a');
    // A writer of 'acme/b' alone is not held up by b: b does not hold 'acme/b' while it waits.
    await store.transaction(async (tx) => {
      await tx.lockScopes?.(['acme/b']);
      order.push('c locked acme/b');
    });
    assert.deepEqual(order, ['c locked acme/b'], 'b still waits, without holding acme/b');
    releaseA();
    await a;
    await b;
    assert.deepEqual(order, ['c locked acme/b', 'b locked both']);
  });
});
