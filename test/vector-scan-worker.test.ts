import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSqliteStore, type SqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import type { VectorHit } from '../src/interfaces/store.js';
import { exhaustiveHits, forget, insertVectors, storePaths, vectorSource } from './fixtures/vector-index-data.js';

const freshPath = storePaths('cairn-scan-worker-');
const NS = 'acme/shop';
const OTHER = 'acme/other';
const now = () => new Date().toISOString();
/** The test namespace (2,000 vectors) is scanned by the worker; the other one (600) on the main thread. */
const CONFIG = { minVectors: 500, scanWorker: true, scanWorkerMinVectors: 1000 };

const search = (store: SqliteStore, q: Float32Array, k = 10, namespace = NS): Promise<VectorHit[]> => store.vectorCandidates(q, k, { namespace, now: now() });
const scans = (store: SqliteStore): number => store.vectorIndex?.status().scanWorker.scans ?? -1;

const exact = (path: string, q: Float32Array, k = 10, namespace = NS): Promise<VectorHit[]> => exhaustiveHits(path, q, k, namespace);

function assertSame(got: VectorHit[], want: VectorHit[], what: string): void {
  assert.deepEqual(
    got.map((h) => h.id),
    want.map((h) => h.id),
    what,
  );
  for (const [j, h] of got.entries()) assert.ok(Math.abs(h.similarity - (want[j]?.similarity ?? NaN)) < 1e-6, what);
}

/** A store whose index is built and whose worker holds a copy of the test namespace's codes. */
async function withCopy(path: string, seed: number): Promise<{ store: SqliteStore; next: () => Float32Array; memories: Awaited<ReturnType<typeof insertVectors>> }> {
  const store = createSqliteStore({ path, vectorIndex: CONFIG });
  const next = vectorSource(seed);
  const memories = await insertVectors(store, NS, 2000, next);
  await insertVectors(store, OTHER, 600, next);
  await search(store, next());
  await store.vectorIndex?.whenIdle();
  await untilCopied(store, next);
  return { store, next, memories };
}

/** Searches until the worker holds a copy of the test namespace's codes (the first indexed search sends it and scans here). */
async function untilCopied(store: SqliteStore, next: () => Float32Array): Promise<void> {
  for (let i = 0; i < 200 && store.vectorIndex?.status().scanWorker.namespaces.length === 0; i++) {
    await search(store, next());
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.deepEqual(store.vectorIndex?.status().scanWorker.namespaces, [NS], JSON.stringify(store.vectorIndex?.status()));
}

describe('vector scans in a worker thread (long-lived processes)', () => {
  it('answer exactly as the exhaustive search does, from the worker, and follow saves and forgets made between scans', async () => {
    const path = freshPath();
    const { store, next, memories } = await withCopy(path, 21);
    try {
      const before = scans(store);
      for (let i = 0; i < 15; i++) {
        const q = next();
        assertSame(await search(store, q), await exact(path, q), `query ${i}`);
      }
      assert.equal(scans(store) - before, 15, 'every search of the large namespace was scanned by the worker');
      // New notes, then the nearest of some queries forgotten: the copy follows both before the next scan.
      const added = await insertVectors(store, NS, 40, next);
      const targets = added.slice(0, 5);
      const vectors = await store.getVectors(targets.map((m) => m.id));
      for (const m of targets) assert.equal((await search(store, vectors.get(m.id) as Float32Array, 1))[0]?.id, m.id, 'a note saved after the copy was made is found');
      await forget(store, [...targets, ...memories.slice(0, 200)]);
      for (let i = 0; i < 15; i++) {
        const q = next();
        assertSame(await search(store, q), await exact(path, q), `after the writes, query ${i}`);
      }
      for (const m of targets) {
        const hits = await search(store, vectors.get(m.id) as Float32Array, 10);
        assert.ok(!hits.some((h) => h.id === m.id), 'a forgotten note is never returned');
      }
      assert.equal(scans(store) - before, 15 + 5 + 15 + 5, 'all of them from the worker');
      // The small namespace scans on this thread, and is exact too.
      const q = next();
      assertSame(await search(store, q, 10, OTHER), await exact(path, q, 10, OTHER), 'small namespace');
      assert.equal(scans(store) - before, 40);
    } finally {
      await store.close();
    }
  });

  it('a note forgotten while its scan is in the worker is not returned (the candidates are rescored after the scan)', async () => {
    const path = freshPath();
    const { store, memories } = await withCopy(path, 22);
    try {
      const target = memories[7];
      assert.ok(target);
      const vector = (await store.getVectors([target.id])).get(target.id) as Float32Array;
      const asked = search(store, vector, 5);
      await forget(store, [target]);
      const hits = await asked;
      assert.equal(hits.length, 5);
      assert.ok(!hits.some((h) => h.id === target.id), JSON.stringify(hits));
      assertSame(hits, await exact(path, vector, 5), 'the answer is the current one');
    } finally {
      await store.close();
    }
  });

  it('drops its copies when the codes go (as after an erasure), sends them again, and is exact throughout', async () => {
    const path = freshPath();
    const { store, next } = await withCopy(path, 23);
    try {
      store.vectorIndex?.discard();
      assert.deepEqual(store.vectorIndex?.status().scanWorker.namespaces, [], 'no copy outlives the codes it copied');
      for (let i = 0; i < 10; i++) {
        const q = next();
        assertSame(await search(store, q), await exact(path, q), `while rebuilt, query ${i}`);
        await store.vectorIndex?.whenIdle();
      }
      await untilCopied(store, next);
      const before = scans(store);
      const q = next();
      assertSame(await search(store, q), await exact(path, q), 'from the new copy');
      assert.equal(scans(store) - before, 1);
    } finally {
      await store.close();
    }
  });

  it('when the worker dies, says why and scans on the main thread, still exact', async () => {
    const path = freshPath();
    const { store, next } = await withCopy(path, 24);
    try {
      // The worker thread is ended from outside, as a crash would end it.
      const worker = (store.vectorIndex as unknown as { scanner: { worker: { terminate(): Promise<number> } } }).scanner.worker;
      await worker.terminate();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const status = store.vectorIndex?.status().scanWorker;
      assert.equal(status?.state, 'failed');
      assert.match(status?.reason ?? '', /scan worker exited/);
      const before = scans(store);
      for (let i = 0; i < 5; i++) {
        const q = next();
        assertSame(await search(store, q), await exact(path, q), `after the worker died, query ${i}`);
      }
      assert.equal(scans(store), before, 'none of them from the worker');
    } finally {
      await store.close();
    }
  });

  it('is off unless asked for (short commands scan on their own thread)', async () => {
    const path = freshPath();
    const store = createSqliteStore({ path, vectorIndex: { minVectors: 500 } });
    try {
      const next = vectorSource(25);
      await insertVectors(store, NS, 1200, next);
      await search(store, next());
      await store.vectorIndex?.whenIdle();
      const q = next();
      assertSame(await search(store, q), await exact(path, q), 'exact');
      const status = store.vectorIndex?.status().scanWorker;
      assert.equal(status?.state, 'off');
      assert.equal(status?.scans, 0);
    } finally {
      await store.close();
    }
  });
});
