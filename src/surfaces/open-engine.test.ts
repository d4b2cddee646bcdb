import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PoolEmbedder } from '../adapters/embed-pool/pool-embedder.js';
import { isCairnError } from '../interfaces/errors.js';
import type { SqliteStore } from '../adapters/sqlite/sqlite-store.js';
import { buildEmbedder, openEngine, resolveConfig, resolvePostgres } from './open-engine.js';

describe('composition root: where the local model runs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-open-engine-'));
  const config = async (env: Record<string, string>) => (await resolveConfig({ db: join(dir, 'c.db'), namespace: 'ns' }, { env: { HOME: dir, XDG_CONFIG_HOME: dir, ...env }, cwd: dir })).embedder;

  it('long-lived processes get a pool of one thread per core; CAIRN_EMBED_WORKERS=0 and every other command keep the main thread', async () => {
    assert.equal((await config({})).workers, availableParallelism());
    assert.equal((await config({ CAIRN_EMBED_WORKERS: 'auto' })).workers, availableParallelism());
    const pooled = buildEmbedder(await config({ CAIRN_EMBED_WORKERS: '3' }), { pool: true });
    assert.ok(pooled.pool instanceof PoolEmbedder);
    assert.equal(pooled.embedder?.id, 'use-lite-512');
    await pooled.pool.close();
    assert.equal(buildEmbedder(await config({ CAIRN_EMBED_WORKERS: '0' }), { pool: true }).pool, null);
    assert.equal(buildEmbedder(await config({}), {}).pool, null, 'short commands never start threads');
    assert.equal(buildEmbedder(await config({ CAIRN_EMBEDDER: 'none' }), { pool: true }).embedder, null);
  });

  it('refuses a CAIRN_EMBED_WORKERS that is not auto or a whole number up to 64', async () => {
    for (const bad of ['-1', 'two', '1.5', '65']) {
      await assert.rejects(config({ CAIRN_EMBED_WORKERS: bad }), (err: unknown) => isCairnError(err, 'INVALID_INPUT') && err.field === 'CAIRN_EMBED_WORKERS', bad);
    }
  });

  it('the embedding threads add CAIRN_EMBED_NICE (default 0) to their nice value; anything but 0 to 19 is refused', async () => {
    assert.equal((await config({})).nice, 0);
    assert.equal((await config({ CAIRN_EMBED_NICE: '10' })).nice, 10);
    assert.equal((await config({ CAIRN_EMBED_NICE: ' 19 ' })).nice, 19);
    for (const bad of ['-1', 'ten', '2.5', '20']) {
      await assert.rejects(config({ CAIRN_EMBED_NICE: bad }), (err: unknown) => isCairnError(err, 'INVALID_INPUT') && err.field === 'CAIRN_EMBED_NICE', bad);
    }
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('composition root: neighbour graphs, the vector scan worker and kept posting lists only in long-lived processes', () => {
  it('serve and mcp open the SQLite store with neighbour graphs, a scan worker and posting lists; every other command opens it without', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-open-engine-graphs-'));
    const environment = { env: { HOME: dir, XDG_CONFIG_HOME: dir, XDG_CACHE_HOME: dir }, cwd: dir };
    try {
      const graphs = async (longLived: boolean) => {
        const opened = await openEngine({ db: join(dir, 'c.db'), namespace: 'ns' }, { withoutEmbedder: true, longLived }, environment);
        try {
          const status = (opened.engine.store as SqliteStore).vectorIndex?.status();
          return status && { ...status.graphs, scanWorker: status.scanWorker.state, coarseLists: status.coarseLists.state };
        } finally {
          await opened.close();
        }
      };
      const short = await graphs(false);
      assert.match(short?.reason ?? '', /^off: this process is short-lived/u);
      assert.equal(short?.scanWorker, 'off', 'a short command scans vectors on its own thread');
      assert.equal(short?.coarseLists, 'off', 'a short command scans every vector of a namespace');
      const long = await graphs(true);
      assert.equal(long?.reason, null);
      assert.equal(long?.scanWorker, 'idle', 'a long-lived process may scan large namespaces in the scan worker');
      assert.equal(long?.coarseLists, 'idle', 'a long-lived process may split large namespaces into coarse lists');
      const postings = async (longLived: boolean) => {
        const opened = await openEngine({ db: join(dir, 'c.db'), namespace: 'ns' }, { withoutEmbedder: true, longLived }, environment);
        try {
          await opened.engine.save({ text: 'the deploy worker retries three times', kind: 'fact' });
          await opened.engine.search('deploy worker');
          return (opened.engine.store as SqliteStore).lexicalPostings();
        } finally {
          await opened.close();
        }
      };
      assert.equal(await postings(false), null);
      assert.ok(((await postings(true))?.scored ?? 0) > 0, 'the search was scored from kept lists');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('composition root: PostgreSQL settings', () => {
  const url = 'postgres://cairn@db.example:5432/team';
  it('CAIRN_PG_PREPARED turns prepared statements on or off over the config file; anything but on/off is refused', () => {
    assert.equal(resolvePostgres(url, {}, undefined).preparedStatements, undefined, 'unset: the store default (on)');
    assert.equal(resolvePostgres(url, {}, { preparedStatements: false }).preparedStatements, false);
    assert.equal(resolvePostgres(url, { CAIRN_PG_PREPARED: 'on' }, { preparedStatements: false }).preparedStatements, true);
    assert.equal(resolvePostgres(url, { CAIRN_PG_PREPARED: 'off' }, undefined).preparedStatements, false);
    assert.throws(
      () => resolvePostgres(url, { CAIRN_PG_PREPARED: 'sometimes' }, undefined),
      (err: unknown) => isCairnError(err) && err.code === 'INVALID_INPUT' && /CAIRN_PG_PREPARED/u.test(err.message),
    );
  });
  it('CAIRN_PG_COPY_MAX_MEMORIES bounds the search copies over the config file (0 = none); anything but a whole number up to 100,000,000 is refused', () => {
    assert.equal(resolvePostgres(url, {}, undefined).copyMaxMemories, undefined, 'unset: the store default');
    assert.equal(resolvePostgres(url, {}, { copyMaxMemories: 250_000 }).copyMaxMemories, 250_000);
    assert.equal(resolvePostgres(url, { CAIRN_PG_COPY_MAX_MEMORIES: '0' }, { copyMaxMemories: 250_000 }).copyMaxMemories, 0);
    for (const bad of ['-1', 'many', '1.5', '100000001']) {
      assert.throws(
        () => resolvePostgres(url, { CAIRN_PG_COPY_MAX_MEMORIES: bad }, undefined),
        (err: unknown) => isCairnError(err) && err.code === 'INVALID_INPUT' && /CAIRN_PG_COPY_MAX_MEMORIES/u.test(err.message),
        bad,
      );
    }
  });
});
