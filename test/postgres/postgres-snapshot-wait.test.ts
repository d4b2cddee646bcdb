/**
 * A session of another program sits idle in a REPEATABLE READ transaction (pg_dump, a report, a forgotten
 * psql): it holds a snapshot, and CREATE INDEX CONCURRENTLY waits for every such snapshot of the database,
 * whatever table it read, with nothing but a lock timeout to end the wait. Before, opening a schema-5 store
 * (migration 6 builds its indexes concurrently) hung until the reader ended, and so did closing a store whose
 * HNSW index was being rebuilt in the background: every short command or hook on that database hung with it.
 */
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { isCairnError } from '../../src/interfaces/errors.js';
import { SCHEMA_VERSION } from '../../src/adapters/postgres/postgres-schema.js';
import { createPostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { hnswIndexState, insertRawMemory, migrateTestDatabaseTo, pgSkip, seedVectorsWithoutIndex, testStoreConfig, useTestDatabase } from '../helpers/postgres.js';

/** A REPEATABLE READ transaction on `url` that has read `table` and stays idle; returns its backend pid. */
async function snapshotHolder(url: string, table: string): Promise<{ client: pg.Client; pid: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0;
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  await client.query(`SELECT count(*) FROM ${table}`);
  return { client, pid };
}

/** Whether a CREATE INDEX CONCURRENTLY is seen waiting for an older transaction (virtualxid) within 10 s. */
async function buildWaitsForSnapshot(sql: pg.Client): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await sql.query(`SELECT 1 FROM pg_stat_activity WHERE query LIKE 'CREATE INDEX CONCURRENTLY%' AND wait_event = 'virtualxid'`);
    if (rows.length > 0) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe('PostgreSQL concurrent index builds beside a transaction holding an old snapshot', { skip: pgSkip }, () => {
  const t = useTestDatabase();

  it('migration 6 fails within its lock timeout naming the reader, drops its leftover, and resumes after', async () => {
    const { db, sql } = t;
    await migrateTestDatabaseTo(sql, 5);
    for (let i = 0; i < 5; i++) await insertRawMemory(sql, `m${i}`, 'alpha beta', 3, { alpha: 1 });
    const reader = await snapshotHolder(db.url, 'meta');
    const store = createPostgresStore(testStoreConfig(db.url, { poolSize: 2 }));
    try {
      const started = Date.now();
      const failure = await store.open().then(
        () => null,
        (err: unknown) => err,
      );
      const waited = Date.now() - started;
      assert.ok(isCairnError(failure), `the open fails with a CairnError, not ${String(failure)}`);
      assert.equal(failure.code, 'STORE_UNAVAILABLE');
      assert.match(failure.message, new RegExp(`pid ${reader.pid} \\(idle in transaction`, 'u'));
      assert.match(failure.message, /memory_terms_key/u);
      assert.ok(waited < 30_000, `the open returned after ${waited} ms`);
      const left = await sql.query(`SELECT 1 FROM pg_class WHERE relname = 'memory_terms_key'`);
      assert.equal(left.rowCount, 0, 'the invalid leftover of the cut build is dropped');
      assert.equal((await sql.query<{ v: number }>('SELECT max(version) AS v FROM schema_version')).rows[0]?.v, 5, 'nothing of step 6 applied');
    } finally {
      await reader.client.query('COMMIT').catch(() => {});
      await reader.client.end();
      await store.close();
    }
    const again = createPostgresStore(testStoreConfig(db.url, { poolSize: 2 }));
    try {
      await again.open();
      assert.deepEqual(Object.fromEntries((await again.termDocumentFrequencies(['alpha'], 'acme/shop')).frequencies), { alpha: 5 });
    } finally {
      await again.close();
    }
    assert.equal((await sql.query<{ v: number }>('SELECT max(version) AS v FROM schema_version')).rows[0]?.v, SCHEMA_VERSION);
  });

  it('a background HNSW build is cancelled by close, short commands never start one, verify gives up naming the reader', async () => {
    const { db, sql } = t;
    await sql.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    await seedVectorsWithoutIndex(db.url, sql, 8, 100);
    const reader = await snapshotHolder(db.url, 'meta');
    try {
      // A long-lived process: open returns, the build waits for the reader, close cancels it within a bound.
      const served = createPostgresStore({ ...testStoreConfig(db.url), buildVectorIndexInBackground: true });
      let started = Date.now();
      await served.open();
      assert.ok(Date.now() - started < 10_000, `open took ${Date.now() - started} ms`);
      assert.ok(await buildWaitsForSnapshot(sql), 'the background build waits for the reader');
      started = Date.now();
      await served.close();
      assert.ok(Date.now() - started < 10_000, `close took ${Date.now() - started} ms`);
      assert.equal(await hnswIndexState(sql, 8), 'invalid', 'the cancelled build leaves an invalid index');

      // A short command neither builds nor waits.
      const short = createPostgresStore(testStoreConfig(db.url));
      started = Date.now();
      await short.open();
      assert.match(String((await short.diagnostics()).facts['vectorIndex']), /being built \(or a build was cut short\)/u);
      // verify builds it, but gives up within its bound, naming the reader.
      const check = await short.checkVectorIndex();
      await short.close();
      assert.ok(Date.now() - started < 30_000, `the short command took ${Date.now() - started} ms`);
      assert.equal(check.status, 'exhaustive', JSON.stringify(check));
      assert.match(check.detail, new RegExp(`pid ${reader.pid} \\(idle in transaction`, 'u'));
    } finally {
      await reader.client.query('COMMIT').catch(() => {});
      await reader.client.end();
    }
    // The next long-lived opener drops the leftover and builds the index.
    assert.notEqual(await hnswIndexState(sql, 8), 'valid');
    const next = createPostgresStore({ ...testStoreConfig(db.url), buildVectorIndexInBackground: true });
    try {
      await next.open();
      const deadline = Date.now() + 60_000;
      while ((await hnswIndexState(sql, 8)) !== 'valid' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(await hnswIndexState(sql, 8), 'valid');
    } finally {
      await next.close();
    }
  });

  it('preparing vectors in a long-lived process does not wait for a background build held up by the reader', async () => {
    const { db, sql } = t;
    await sql.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    await seedVectorsWithoutIndex(db.url, sql, 8, 100);
    const reader = await snapshotHolder(db.url, 'meta');
    const served = createPostgresStore({ ...testStoreConfig(db.url), buildVectorIndexInBackground: true });
    try {
      await served.open();
      assert.ok(await buildWaitsForSnapshot(sql), 'the background build waits for the reader');
      // A reindex to another embedder of the same size prepares its vectors while the build still waits.
      const started = Date.now();
      const prepared = await Promise.race([
        served.prepareVectors({ id: 'other-embedder', dimensions: 8 }).then(() => 'prepared'),
        new Promise((r) => setTimeout(() => r('still waiting'), 20_000)),
      ]);
      assert.equal(prepared, 'prepared', `prepareVectors returned within 20 s (after ${Date.now() - started} ms)`);
      assert.equal(await hnswIndexState(sql, 8), 'invalid', 'the build is still running');
      // Vector search answers meanwhile, by the exact scan.
      const probe = new Float32Array(8).fill(0.5);
      assert.equal((await served.vectorCandidates(probe, 5, { namespace: 'acme/shop', now: '2026-06-01T00:00:00.000Z' })).length, 5);
    } finally {
      await reader.client.query('COMMIT').catch(() => {});
      await reader.client.end();
      await served.close();
    }
  });
});
