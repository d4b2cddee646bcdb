/**
 * `cairn verify` on PostgreSQL, through the real bin: the log is replayed into a scratch schema on the same
 * database (the proof runs on PostgreSQL itself, with its own advisory locks), which is dropped afterwards;
 * a tampered row makes it fail; a role that may not create a schema falls back to an in-memory SQLite
 * scratch store and says so.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../../src/adapters/embed-use/use-embedder.js';
import { createPostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { createGptTokenCounter } from '../../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../../src/core/engine.js';
import { BIN, NO_MODEL, useSandbox } from '../e2e/mcp-scenario.js';
import { adminQuery, createTestDatabase, pgSkip, testStoreConfig, type TestDatabase } from '../helpers/postgres.js';

describe('cairn verify on PostgreSQL', { skip: pgSkip }, () => {
  const sandbox = useSandbox('pg-verify', NO_MODEL);
  const embedder = createUseEmbedder();
  const dbs: TestDatabase[] = [];
  before(async () => {
    await embedder.embed(['warm up']);
  });
  after(async () => {
    for (const db of dbs) await db.drop();
  });
  const cairn = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: sandbox.cwd, env: sandbox.env, encoding: 'utf8', timeout: 120_000 });

  /** Memories with vectors, a turn and a supersede, written through the engine with the real model. */
  async function populate(url: string): Promise<void> {
    const engine = new Engine({ store: createPostgresStore(testStoreConfig(url)), embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: 'acme/shop' });
    try {
      const old = await engine.save({ text: 'Prices are stored as floats in the orders table' });
      await engine.supersede(old.id, { text: 'Prices are stored in integer cents in the orders table' });
      await engine.save({ text: 'Deploys go out on Tuesdays after the standup', namespace: 'acme/ops' });
      await engine.commitTurn({ session: 's1', turn: 0, text: 'We agreed to run the migration on Friday night' });
    } finally {
      await engine.store.close();
    }
  }
  const scratchSchemas = async (db: TestDatabase) =>
    (await adminQuery<{ n: string }>(db.name, `SELECT nspname AS n FROM pg_namespace WHERE nspname LIKE 'cairn_scratch_%'`)).map((r) => r.n);

  it('replays into a scratch schema on the same database, proves the state, and drops the schema', async () => {
    const db = await createTestDatabase({ vector: true });
    dbs.push(db);
    await populate(db.url);
    const r = cairn(['verify', '--json', '--db', db.url]);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { ok: boolean; scratch: string; memories: number; events: number; liveChecksum: string; replayedChecksum: string };
    assert.match(report.scratch, /^PostgreSQL schema cairn_scratch_[a-z0-9_]+ on the same database/u);
    assert.equal(report.ok, true);
    assert.equal(report.memories, 4);
    assert.equal(report.liveChecksum, report.replayedChecksum);
    assert.deepEqual(await scratchSchemas(db), [], 'the scratch schema is dropped afterwards');

    // The replay is compared for real: a row changed behind the log's back makes verify fail.
    await adminQuery(db.name, `UPDATE memories SET importance = importance + 1 WHERE namespace = 'acme/ops'`);
    const tampered = cairn(['verify', '--db', db.url]);
    assert.equal(tampered.status, 1, tampered.stdout + tampered.stderr);
    assert.match(tampered.stdout, /^replayed into {5}PostgreSQL schema cairn_scratch_/mu);
    assert.match(tampered.stdout, /NOT verified/u);
    assert.deepEqual(await scratchSchemas(db), [], 'dropped after a failed proof too');
  });

  it('a role that may not create a schema replays into in-memory SQLite and says why', async () => {
    const db = await createTestDatabase({ vector: false });
    dbs.push(db);
    await populate(db.url);
    // The role keeps its tables but loses the right to create schemas in the database.
    await adminQuery('postgres', `ALTER DATABASE ${db.name} OWNER TO postgres`);
    const r = cairn(['verify', '--json', '--db', db.url]);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { ok: boolean; scratch: string; memories: number };
    assert.match(report.scratch, /^in-memory SQLite, because no scratch schema could be made on the server \(.*permission denied/u);
    assert.equal(report.ok, true);
    assert.equal(report.memories, 4);
  });
});
