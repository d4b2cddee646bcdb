/**
 * A store holding vectors whose HNSW index is missing (dropped by hand, lost in a restore): building it at
 * open, under the statement timeout meant for queries, failed every open once the build took longer than
 * that timeout, so a large store could never open again. Now the store opens at once, vector search scans
 * exactly meanwhile, the index is built CONCURRENTLY in the background without that timeout, doctor says
 * so, and `cairn verify` (checkVectorIndex) builds it when it is still missing.
 */
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { hnswIndexName, VECTOR_INDEX_LOCK } from '../../src/adapters/postgres/postgres-schema.js';
import { createPostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { hnswIndexState, pgSkip, seedVectorsWithoutIndex, testStoreConfig, useTestDatabase } from '../helpers/postgres.js';

const DIMS = 64;
/** Enough that one build takes seconds (about 1.8 s on a 2-core machine), far beyond the 300 ms timeout below. */
const ROWS = 5_000;

describe('PostgreSQL store whose HNSW index is missing', { skip: pgSkip }, () => {
  const t = useTestDatabase();

  const indexValid = async () => (await indexState()) === 'valid';
  const indexState = () => hnswIndexState(t.sql, DIMS);

  it('opens at once under a short statement timeout, scans exactly meanwhile, and builds the index outside it', async () => {
    const { db, sql } = t;
    await seedVectorsWithoutIndex(db.url, sql, DIMS, ROWS);
    const config = testStoreConfig(db.url, { statementTimeoutMs: 300 });

    // Another session is building it (its lock is held): the store opens, doctor says the index is missing.
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1, $2)', [VECTOR_INDEX_LOCK, DIMS]);
    const store = createPostgresStore(config);
    try {
      await store.open();
      const report = await store.diagnostics();
      assert.match(String(report.facts['vectorIndex']), /missing: vector search scans exactly/u);
      assert.ok(report.notes.some((n) => /missing/u.test(n)), JSON.stringify(report.notes));
      const probe = new Float32Array(DIMS).fill(0.5);
      const hits = await store.vectorCandidates(probe, 5, { namespace: 'acme/shop', now: '2026-06-01T00:00:00.000Z' });
      assert.equal(hits.length, 5, 'vector search answers by an exact scan meanwhile');
      assert.equal((await store.checkVectorIndex()).status, 'exhaustive', 'verify says another session is building it');
      await holder.end();
      const check = await store.checkVectorIndex();
      assert.equal(check.status, 'rebuilt', JSON.stringify(check));
      assert.equal(await indexValid(), true);
      assert.match(String((await store.diagnostics()).facts['vectorIndex']), /^hnsw \(vector_cosine_ops, 64 dimensions/u);
      assert.equal((await store.checkVectorIndex()).status, 'consistent');
    } finally {
      await holder.end().catch(() => {});
      await store.close();
    }

    // A short command (the default) does not start the build: it would have to wait for it on close.
    await sql.query(`DROP INDEX ${hnswIndexName(DIMS)}`);
    const short = createPostgresStore(config);
    await short.open();
    await short.close();
    assert.equal(await indexState(), 'missing', 'a short command only reports the index missing');

    // A long-lived process builds it in the background: open returns before the index is valid.
    const served = createPostgresStore({ ...config, buildVectorIndexInBackground: true });
    try {
      await served.open();
      assert.notEqual(await indexState(), 'valid', 'the build is not synchronous at open');
      const deadline = Date.now() + 120_000;
      while ((await indexState()) !== 'valid' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.equal(await indexState(), 'valid', 'built in the background, beyond the statement timeout');
    } finally {
      await served.close();
    }
  });
});
