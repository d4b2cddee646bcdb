/**
 * The statistics' fills (schema steps 3 and 5) against a writer that is already running: a writer of an older
 * cairn has inserted a memory and its postings in a transaction that is still open when a new cairn opens the
 * store and migrates. The migration must wait for that commit (its table locks conflict with the writer's), so
 * the counts it fills include the writer's rows; without the locks it counted before the commit and the
 * triggers, created after, never saw the rows, so the counts stayed wrong for good.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { SCHEMA_VERSION } from '../../src/adapters/postgres/postgres-schema.js';
import { createPostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { createTestDatabase, insertRawMemory, migrateTestDatabaseTo, pgSkip, testStoreConfig, type TestDatabase } from '../helpers/postgres.js';

describe('PostgreSQL statistics migration against a running writer', { skip: pgSkip }, () => {
  let db: TestDatabase;
  let sql: pg.Client;
  let writer: pg.Client;

  before(async () => {
    db = await createTestDatabase();
    sql = new pg.Client({ connectionString: db.url });
    writer = new pg.Client({ connectionString: db.url });
    await sql.connect();
    await writer.connect();
  });
  after(async () => {
    await writer?.end().catch(() => {});
    await sql?.end();
    await db?.drop();
  });

  /** Inserts a memory and one posting per word, as the schema-2 writer did (no trigger-kept counts yet). */
  function insert(client: pg.Client, id: string, words: string[]): Promise<void> {
    return insertRawMemory(client, id, words.join(' '), words.length + 1, Object.fromEntries(words.map((t) => [t, 1])));
  }

  it('waits for the writer, then fills counts that include its rows and stay exact', async () => {
    // A database at schema 2, as an older cairn left it, with one memory.
    await migrateTestDatabaseTo(sql, 2);
    await insert(sql, 'm1', ['alpha', 'beta']);

    // The older writer is mid-transaction when the new cairn opens the store.
    await writer.query('BEGIN');
    await insert(writer, 'm2', ['alpha', 'gamma']);
    const store = createPostgresStore(testStoreConfig(db.url, { poolSize: 2 }));
    try {
      const opening = store.open();
      // The migration is waiting on a table lock the writer's open transaction holds (seen in pg_locks), and
      // has not migrated anything yet.
      const writerPid = (await writer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      let waiting = 0;
      for (let i = 0; i < 200 && waiting === 0; i++) {
        const { rows } = await sql.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
           WHERE NOT l.granted AND l.mode = 'ShareRowExclusiveLock' AND c.relname IN ('memories', 'memory_terms') AND $1::int = ANY (pg_blocking_pids(l.pid))`,
          [writerPid],
        );
        waiting = Number(rows[0]?.n);
        if (waiting === 0) await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal(waiting, 1, 'the migration waits for the open writer before filling the counts');
      const version = (await sql.query<{ v: number }>('SELECT max(version) AS v FROM schema_version')).rows[0]?.v;
      assert.equal(version, 2, 'nothing is migrated while it waits');

      await writer.query('COMMIT');
      await opening;
      assert.equal((await sql.query<{ v: number }>('SELECT max(version) AS v FROM schema_version')).rows[0]?.v, SCHEMA_VERSION);

      const exact = async (label: string) => {
        const ns = (await sql.query('SELECT namespace, documents::int, total_length::int FROM namespace_stats ORDER BY namespace')).rows;
        const nsActual = (await sql.query('SELECT namespace, count(*)::int AS documents, sum(doc_length)::int AS total_length FROM memories GROUP BY namespace ORDER BY namespace')).rows;
        assert.deepEqual(ns, nsActual, `${label}: namespace_stats`);
        const terms = (await sql.query('SELECT term, documents::int FROM term_stats ORDER BY term')).rows;
        const postings = (await sql.query('SELECT term, count(*)::int AS documents FROM memory_terms GROUP BY term ORDER BY term')).rows;
        assert.deepEqual(terms, postings, `${label}: term_stats`);
      };
      await exact('after the migration');
      const { documents, frequencies } = await store.termDocumentFrequencies(['alpha', 'gamma'], 'acme/shop');
      assert.equal(documents, 2, 'both memories counted');
      assert.deepEqual(Object.fromEntries(frequencies), { alpha: 2, gamma: 1 }, "the writer's postings counted");

      // The counts stay exact as the triggers take over: deleting m1 leaves alpha with m2's posting.
      await sql.query(`DELETE FROM memories WHERE id = 'm1'`);
      await exact('after deleting the first memory');
      assert.deepEqual((await sql.query(`SELECT documents::int FROM term_stats WHERE term = 'alpha'`)).rows, [{ documents: 1 }]);
    } finally {
      await store.close();
    }
  });
});
