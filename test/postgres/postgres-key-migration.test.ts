/**
 * Schema step 6 (the postings' key carries the term frequency) against a long reader: a session of another
 * process sits idle in a transaction that has read the postings, so it holds their ACCESS SHARE lock. The
 * key is built beside the table (CREATE UNIQUE INDEX CONCURRENTLY, which reads and writes go on around) and
 * swapped in under a lock the migration waits for only up to its lock timeout, retrying after: searches of
 * other processes must not queue behind it for longer than that, and the migration finishes once the reader
 * is gone. Before, the rebuild waited for the reader without any time limit while every later read of the
 * postings queued behind it.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { SCHEMA_VERSION } from '../../src/adapters/postgres/postgres-schema.js';
import { createPostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { adminQuery, createTestDatabase, insertRawMemory, migrateTestDatabaseTo, pgSkip, testStoreConfig, type TestDatabase } from '../helpers/postgres.js';

describe('PostgreSQL postings key migration beside a long reader', { skip: pgSkip }, () => {
  let db: TestDatabase;
  let sql: pg.Client;
  let reader: pg.Client;
  let searcher: pg.Client;

  before(async () => {
    db = await createTestDatabase();
    sql = new pg.Client({ connectionString: db.url });
    reader = new pg.Client({ connectionString: db.url });
    // Another process's search, with a statement timeout far above the migration's lock timeout.
    searcher = new pg.Client({ connectionString: db.url, statement_timeout: 20_000 });
    await Promise.all([sql.connect(), reader.connect(), searcher.connect()]);
  });
  after(async () => {
    await reader?.end().catch(() => {});
    await searcher?.end().catch(() => {});
    await sql?.end();
    await db?.drop();
  });

  it('builds the key concurrently, never holds the postings for long, and finishes after the reader', async () => {
    // A database at schema 5, as the previous cairn left it, with a few memories and their postings.
    await migrateTestDatabaseTo(sql, 5);
    for (let i = 0; i < 20; i++) await insertRawMemory(sql, `m${i}`, 'alpha beta', 3, { alpha: 1, beta: 2 });

    // The long reader: read committed, idle in its transaction (no snapshot held, its lock held).
    await reader.query('BEGIN');
    await reader.query('SELECT count(*) FROM memory_terms');

    const store = createPostgresStore(testStoreConfig(db.url, { poolSize: 2 }));
    try {
      let opened = false;
      const opening = store.open().then(() => (opened = true));
      // Wait until the migration asks for the postings' exclusive lock (it has built the key by then).
      let asked = false;
      for (let i = 0; i < 400 && !asked; i++) {
        const { rows } = await sql.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE NOT l.granted AND l.mode = 'AccessExclusiveLock' AND c.relname = 'memory_terms'`,
        );
        asked = Number(rows[0]?.n) > 0;
        if (!asked) await new Promise((r) => setTimeout(r, 25));
      }
      assert.ok(asked, 'the migration asks for the exclusive lock to swap the key in');
      const key = await sql.query<{ def: string; valid: boolean }>(
        `SELECT pg_get_indexdef(i.indexrelid) AS def, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'memory_terms_key'`,
      );
      assert.equal(key.rows[0]?.valid, true, 'the new key was built beside the table before the swap');
      assert.match(key.rows[0]?.def ?? '', /INCLUDE \(tf\)/u);

      // Another process's read of the postings gets through within the migration's lock timeout.
      const started = Date.now();
      const { rows } = await searcher.query<{ n: number }>(`SELECT count(*)::int AS n FROM memory_terms WHERE namespace = 'acme/shop' AND term = 'alpha'`);
      assert.equal(rows[0]?.n, 20);
      assert.ok(Date.now() - started < 15_000, `the read waited ${Date.now() - started} ms`);
      assert.equal(opened, false, 'the migration is still waiting for the reader');

      await reader.query('COMMIT');
      await opening;
      assert.equal((await sql.query<{ v: number }>('SELECT max(version) AS v FROM schema_version')).rows[0]?.v, SCHEMA_VERSION);
      const pkey = await sql.query<{ def: string }>(`SELECT pg_get_indexdef('memory_terms_pkey'::regclass) AS def`);
      assert.match(pkey.rows[0]?.def ?? '', /UNIQUE INDEX memory_terms_pkey ON public\.memory_terms USING btree \(namespace, term, memory_pk\) INCLUDE \(tf\)/u);
      const lexical = await sql.query<{ def: string }>(`SELECT pg_get_indexdef('memories_lexical'::regclass) AS def`);
      assert.match(lexical.rows[0]?.def ?? '', /INCLUDE \(doc_length, forgotten_at, superseded_by, expires_at\)/u);
      assert.deepEqual(Object.fromEntries((await store.termDocumentFrequencies(['alpha'], 'acme/shop')).frequencies), { alpha: 20 });
    } finally {
      await reader.query('COMMIT').catch(() => {}); // a failed assertion must not leave the migration waiting
      await store.close();
    }
  });

  it('a build cut short (an invalid index left behind) is dropped and built again on the next open', async () => {
    const other = await createTestDatabase();
    const client = new pg.Client({ connectionString: other.url });
    await client.connect();
    try {
      await migrateTestDatabaseTo(client, 5);
      // What a crash during CREATE INDEX CONCURRENTLY leaves: the index in the catalog, marked invalid.
      await client.query('CREATE UNIQUE INDEX memory_terms_key ON memory_terms (namespace, term, memory_pk) INCLUDE (tf)');
      await adminQuery(other.name, `UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'memory_terms_key'::regclass`);
      const store = createPostgresStore(testStoreConfig(other.url, { poolSize: 2 }));
      try {
        await store.open();
      } finally {
        await store.close();
      }
      assert.equal((await client.query<{ v: number }>('SELECT max(version) AS v FROM schema_version')).rows[0]?.v, SCHEMA_VERSION);
      const key = await client.query<{ valid: boolean; def: string }>(`SELECT indisvalid AS valid, pg_get_indexdef(indexrelid) AS def FROM pg_index WHERE indexrelid = 'memory_terms_pkey'::regclass`);
      assert.equal(key.rows[0]?.valid, true);
      assert.match(key.rows[0]?.def ?? '', /INCLUDE \(tf\)/u);
    } finally {
      await client.end();
      await other.drop();
    }
  });
});
