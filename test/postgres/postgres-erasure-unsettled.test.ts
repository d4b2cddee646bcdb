/**
 * The compaction after an erasure waits for older snapshots a second time before it rewrites pg_statistic:
 * the statistics tuples ANALYZE replaced are dead only to transactions that began after it. When that wait
 * gave up (after its bound) the certificate still passed, although VACUUM FULL kept those tuples and the byte
 * scan cannot see their values (pg_statistic stores them compressed). Now the compaction says so and the
 * proof reports the erasure unproven, which fails the `file-bytes` check.
 */
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { compactAfterErasure, STATISTICS_UNSETTLED } from '../../src/adapters/postgres/postgres-erasure.js';
import { TABLES } from '../../src/adapters/postgres/postgres-schema.js';
import { createPostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { pgSkip, testStoreConfig, useTestDatabase } from '../helpers/postgres.js';

describe('PostgreSQL erasure compaction beside a transaction older than its statistics refresh', { skip: pgSkip }, () => {
  const t = useTestDatabase();

  it('reports pg_statistic unproven when the second snapshot wait gives up, and proven once it completes', async () => {
    const store = createPostgresStore(testStoreConfig(t.db.url));
    const pool = new pg.Pool({ connectionString: t.db.url, max: 3 });
    const reader = new pg.Client({ connectionString: t.db.url });
    await reader.connect();
    try {
      await store.open();
      const proof = store.erasureProof;
      assert.ok(proof, 'the superuser test role may read the files');
      await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await reader.query('SELECT 1'); // its snapshot, and no lock of a table the compaction rewrites
      const held = await compactAfterErasure(pool, TABLES, { snapshotWaitMs: 300 });
      assert.ok(held.includes(STATISTICS_UNSETTLED), held.join('\n'));
      const unsettled = await proof.check(['Quintessa Vorbrugge owns the tax rules'], held, ['vorbrugg']);
      assert.equal(unsettled.found, 0, 'nothing is found in the files');
      assert.deepEqual(unsettled.unproven, [STATISTICS_UNSETTLED], 'yet the scan is no evidence for pg_statistic');

      await reader.query('COMMIT');
      const settled = await compactAfterErasure(pool, TABLES);
      assert.ok(!settled.includes(STATISTICS_UNSETTLED), settled.join('\n'));
      assert.deepEqual((await proof.check(['Quintessa Vorbrugge owns the tax rules'], settled, ['vorbrugg'])).unproven, []);
    } finally {
      await reader.query('ROLLBACK').catch(() => {});
      await reader.end();
      await pool.end();
      await store.close();
    }
  });
});
