/**
 * The compaction after an erasure rewrites every cairn table with VACUUM FULL, which needs each table's
 * ACCESS EXCLUSIVE lock. Before, it waited for that lock without a bound: beside a session idle in a
 * transaction that had read a cairn table the erasure hung for as long as that session lived (and every
 * later reader of the table queued behind it), and during a concurrent index build it either killed the
 * build (deadlock) or failed with "tuple concurrently updated". Now each rewrite waits a bounded time and
 * tries again, a running index build is waited for first, and when a lock stays held the erasure fails
 * with STORE_UNAVAILABLE naming the session, keeps what it committed, issues no certificate, and a later
 * run finishes it.
 */
import * as assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import pg from 'pg';
import { createUseEmbedder } from '../../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../../src/adapters/tokenizer/gpt-token-counter.js';
import { compactAfterErasure } from '../../src/adapters/postgres/postgres-erasure.js';
import { hnswIndexSql } from '../../src/adapters/postgres/postgres-schema.js';
import { createPostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { verifyCertificate } from '../../src/core/certificate.js';
import { Engine } from '../../src/core/engine.js';
import { isCairnError } from '../../src/interfaces/errors.js';
import { hnswIndexState, pgSkip, seedVectorsWithoutIndex, testStoreConfig, useTestDatabase } from '../helpers/postgres.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PUBLIC = publicKey.export({ type: 'spki', format: 'pem' }).toString();

/** A promise's outcome, or 'pending' when it has not settled within `ms`. */
async function within<T>(p: Promise<T>, ms: number): Promise<{ value: T } | { error: unknown } | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'pending'>((r) => (timer = setTimeout(() => r('pending'), ms)));
  try {
    return await Promise.race([p.then((value) => ({ value }), (error: unknown) => ({ error })), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('PostgreSQL erasure compaction beside sessions holding its tables', { skip: pgSkip }, () => {
  const t = useTestDatabase();
  const embedder = createUseEmbedder();

  it('an idle reader of memories: the erasure fails within a bound naming it, keeps its committed part, and a re-run finishes it', async () => {
    const engine = new Engine({ store: createPostgresStore(testStoreConfig(t.db.url)), embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: 'acme/keep' });
    const reader = new pg.Client({ connectionString: t.db.url });
    const later = new pg.Client({ connectionString: t.db.url, statement_timeout: 15_000 });
    await reader.connect();
    await later.connect();
    try {
      await engine.save({ text: 'Deploys go out on Tuesdays after the standup', namespace: 'acme/keep' });
      await engine.save({ text: 'Oswin Tarkelby signs off every payroll change', namespace: 'acme/erase' });
      await engine.save({ text: 'Ask Oswin Tarkelby before touching the payroll exports', namespace: 'acme/erase' });
      const pid = (await reader.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      // Another program's session: it read a cairn table and sits idle in its transaction (no snapshot kept,
      // READ COMMITTED), holding that table's ACCESS SHARE lock until it ends.
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM memories');

      const started = Date.now();
      const erasing = engine.erase({ namespace: 'acme/erase' }, PRIVATE);
      // A reader arriving while the erasure waits for its lock queues behind it only until that wait gives up.
      await new Promise((r) => setTimeout(r, 1_500));
      const read = await within(later.query('SELECT count(*)::int AS n FROM memories'), 12_000);
      const outcome = await within(erasing, 90_000);
      assert.notEqual(outcome, 'pending', 'the erasure returned within 90 s beside the idle reader');
      assert.ok(read !== 'pending' && 'value' in read, `a later reader of memories got through while the erasure waited: ${JSON.stringify(read)}`);
      assert.ok(outcome !== 'pending' && 'error' in outcome, 'no certificate while a table could not be compacted');
      const failure = outcome.error;
      assert.ok(isCairnError(failure, 'STORE_UNAVAILABLE'), `a STORE_UNAVAILABLE CairnError, not ${String(failure)}`);
      assert.match(failure.message, /VACUUM FULL memories/u);
      assert.match(failure.message, new RegExp(`pid ${pid} \\(idle in transaction`, 'u'));
      assert.match(failure.message, /no certificate was issued/u);
      assert.match(failure.hint ?? '', /run the same erasure again/u);
      assert.ok(Date.now() - started < 60_000, `it gave up after ${Date.now() - started} ms`);

      // What the erasing transaction committed stays: nothing of the scope is retrievable, the record remains.
      assert.equal((await engine.list({ namespace: 'acme/erase' })).length, 0);
      const pending = await engine.store.pendingErasures();
      assert.equal(pending.length, 1);
      assert.notEqual(pending[0]?.plan, null, 'the plan is kept for the re-run');

      await reader.query('COMMIT');
      const cert = await engine.erase({ namespace: 'acme/erase' }, PRIVATE);
      assert.equal(cert.certificate.id, pending[0]?.id, 'the re-run finishes the same erasure');
      assert.equal(cert.certificate.counts['memories'], 2);
      assert.ok(cert.certificate.checks.every((c) => c.passed), JSON.stringify(cert.certificate.checks));
      assert.equal(verifyCertificate(cert, PUBLIC).valid, true);
      assert.deepEqual(await engine.store.pendingErasures(), []);
    } finally {
      await reader.query('ROLLBACK').catch(() => {});
      await reader.end();
      await later.end();
      await engine.store.close();
    }
  });

  it('a concurrent HNSW build: the compaction waits for it, and both finish', async () => {
    const { db, sql } = t;
    await sql.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    await seedVectorsWithoutIndex(db.url, sql, 64, 6_000);
    const builder = new pg.Client({ connectionString: db.url });
    const pool = new pg.Pool({ connectionString: db.url, max: 3 });
    await builder.connect();
    try {
      const building = within(builder.query(hnswIndexSql(64, { concurrently: true })), 120_000);
      let seen = false;
      for (let i = 0; i < 100 && !seen; i++) {
        seen = ((await sql.query('SELECT 1 FROM pg_stat_progress_create_index')).rowCount ?? 0) > 0;
        if (!seen) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(seen, 'the build is running when the compaction starts');
      const steps = await compactAfterErasure(pool);
      const built = await building;
      assert.ok(built !== 'pending' && 'value' in built, `the index build was not cut short: ${built === 'pending' ? 'pending' : String((built as { error: unknown }).error)}`);
      assert.equal(await hnswIndexState(sql, 64), 'valid');
      assert.ok(steps.some((s) => /^waited \d+ ms for 1 index build/u.test(s)), steps.join('\n'));
      assert.ok(steps.some((s) => /^VACUUM FULL of \d+ tables/u.test(s)), steps.join('\n'));
    } finally {
      await builder.end();
      await pool.end();
    }
  });
});
