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
import { pgSkip, testStoreConfig, useTestDatabase } from '../helpers/postgres.js';

const DIMS = 64;
const ROWS = 20_000;

describe('PostgreSQL store whose HNSW index is missing', { skip: pgSkip }, () => {
  const t = useTestDatabase();

  const indexValid = async () =>
    (await t.sql.query<{ ok: boolean }>(`SELECT coalesce((SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)), false) AS ok`, [hnswIndexName(DIMS)])).rows[0]?.ok;

  it('opens at once under a short statement timeout, scans exactly meanwhile, and builds the index outside it', async () => {
    const { db, sql } = t;
    // A migrated store with an embedder of DIMS dimensions and ROWS vectors, then its index dropped.
    const first = createPostgresStore(testStoreConfig(db.url));
    await first.prepareVectors({ id: 'test-embedder', dimensions: DIMS });
    await first.close();
    await sql.query(`INSERT INTO meta (key, value) VALUES ('embedder', $1)`, [JSON.stringify({ id: 'test-embedder', dimensions: DIMS })]);
    await sql.query(`DROP INDEX ${hnswIndexName(DIMS)}`);
    await sql.query(
      `INSERT INTO memories (id, namespace, text, kind, importance, tags, metadata, created_at, updated_at, dedupe_key, doc_length)
       SELECT 'm' || g, 'acme/shop', 'note ' || g, 'note', 1, '[]', '{}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'm' || g, 2 FROM generate_series(1, ${ROWS}) g`,
    );
    await sql.query(
      `INSERT INTO memory_vectors (memory_pk, namespace, active, kind, embedding)
       SELECT m.pk, m.namespace, true, 'note', ARRAY(SELECT random() FROM generate_series(1, ${DIMS}) WHERE m.pk > 0)::real[]::vector FROM memories m`,
    );
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

    // Nobody else building: opening starts the build in the background; closing waits for it.
    await sql.query(`DROP INDEX ${hnswIndexName(DIMS)}`);
    const again = createPostgresStore(config);
    await again.open();
    await again.close();
    assert.equal(await indexValid(), true, 'built in the background, beyond the statement timeout');
  });
});
