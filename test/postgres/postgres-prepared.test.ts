/**
 * Prepared statements of the PostgreSQL store (postgres-store.ts `keptRows`), against a real server: the
 * lookups by key answer as the same statements unprepared do; a statement the server can no longer run as
 * prepared (here a schema change that alters its result's type, as a pooler in transaction mode or DISCARD ALL
 * would lose it) is run again unprepared, the call answers, and the store stops preparing (its diagnostics say
 * so); and `preparedStatements: false` prepares nothing from the start.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { isPreparedStatementFault, statementName } from '../../src/adapters/postgres/postgres-driver.js';
import { createPostgresStore, type PostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { analyse } from '../../src/core/lexical.js';
import { makeMemory } from '../contract/store-contract.js';
import { adminQuery, createTestDatabase, pgSkip, testStoreConfig, type TestDatabase } from '../helpers/postgres.js';

const NS = 'github.com/acme/shop';

describe('PostgreSQL prepared statements', { skip: pgSkip }, () => {
  let db: TestDatabase;
  const stores: PostgresStore[] = [];
  const open = (over: Parameters<typeof testStoreConfig>[1] = {}) => {
    // One connection, so the statement a call prepared is the one the next call finds.
    const store = createPostgresStore(testStoreConfig(db.url, { poolSize: 1, ...over }));
    stores.push(store);
    return store;
  };
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    for (const s of stores) await s.close();
    await db?.drop();
  });

  const preparedFact = async (store: PostgresStore) => (await store.diagnostics()).facts['preparedStatements'];

  it('lookups by key answer as unprepared ones, and a statement the server can no longer run prepared runs again unprepared', async () => {
    const kept = open();
    const plain = open({ preparedStatements: false });
    const memories = [makeMemory(NS, 'Deploys go out on Thursdays'), makeMemory(NS, 'Money is kept in integer cents')];
    await kept.transaction(async (tx) => {
      for (const m of memories) await tx.insertMemory(m, null, analyse(m.text));
      await tx.setSetting(NS, 'weights', { vector: 0.7, lexical: 1, recency: 0.1 });
    });
    const ids = memories.map((m) => m.id);
    for (let run = 0; run < 7; run++) {
      // Seven runs, past the five after which PostgreSQL would weigh a generic plan (cairn's connections plan each one).
      assert.deepEqual(await kept.getMemories(ids), await plain.getMemories(ids), `run ${run}: the same memories`);
      assert.deepEqual(await kept.getSetting(NS, 'weights'), { vector: 0.7, lexical: 1, recency: 0.1 });
    }
    assert.equal(await preparedFact(kept), 'on');
    assert.equal(await preparedFact(plain), 'off');

    // The settings' value column changes type: the statement prepared on the kept store's connection no longer
    // matches its result (SQLSTATE 0A000). The call still answers, and the store prepares nothing more.
    await adminQuery(db.name, 'ALTER TABLE settings ALTER COLUMN value TYPE varchar');
    assert.deepEqual(await kept.getSetting(NS, 'weights'), { vector: 0.7, lexical: 1, recency: 0.1 }, 'answered unprepared');
    assert.equal(await preparedFact(kept), 'off (the server lost one)');
    assert.deepEqual(await kept.getMemories(ids), await plain.getMemories(ids), 'later calls answer unprepared');
    assert.deepEqual(await plain.getSetting(NS, 'weights'), { vector: 0.7, lexical: 1, recency: 0.1 }, 'the unprepared store never noticed');
  });

  it('names one statement per text, and tells a lost or refused prepared statement from other errors', async () => {
    assert.equal(statementName('SELECT 1'), statementName('SELECT 1'));
    assert.notEqual(statementName('SELECT 1'), statementName('SELECT 2'));
    assert.match(statementName('SELECT 1'), /^cairn_[0-9a-f]{24}$/u);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const statement = { name: statementName('SELECT $1::int AS n'), text: 'SELECT $1::int AS n', values: [1] };
      assert.equal((await client.query(statement)).rows[0].n, 1);
      // What a pooler in transaction mode does to a client: the server connection behind it no longer has it.
      await client.query('DEALLOCATE ALL');
      const lost = await client.query({ ...statement, values: [2] }).then(
        () => null,
        (err: unknown) => err,
      );
      assert.ok(lost && isPreparedStatementFault(lost), `a deallocated statement is a prepared-statement fault: ${String(lost)}`);
      const other = await client.query('SELECT 1/0').then(
        () => null,
        (err: unknown) => err,
      );
      assert.ok(other && !isPreparedStatementFault(other), 'a division by zero is not');
    } finally {
      await client.end();
    }
  });
});
