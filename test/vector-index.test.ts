import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { UNNAMED_FILE_GRACE_MS } from '../src/adapters/sqlite/sqlite-saved-files.js';
import { INDEX_FORMAT } from '../src/adapters/sqlite/sqlite-vector-index-file.js';
import { createSqliteStore, type SqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import type { Memory } from '../src/interfaces/memory.js';
import type { VectorHit } from '../src/interfaces/store.js';
import { assertCloseToExact, CODES_TOLERANCE, DIMS, expire, forget, insertVectors, vectorSource } from './fixtures/vector-index-data.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'cairn-vector-index-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const freshPath = () => join(root, `store-${++counter}.db`);
const NS = 'acme/shop';
const OTHER = 'acme/other';
const now = () => new Date().toISOString();
/** Small enough that the test namespaces use the index. */
const CONFIG = { minVectors: 500 };

function open(path: string): SqliteStore {
  return createSqliteStore({ path, vectorIndex: CONFIG });
}

/** The exhaustive answer (sqlite-vec only), from a second connection to the same file. */
async function exact(path: string, queries: Float32Array[], k: number, namespace = NS): Promise<{ id: string; similarity: number }[][]> {
  const store = createSqliteStore({ path, vectorIndex: false });
  try {
    const out = [];
    for (const q of queries) out.push(await store.vectorCandidates(q, k, { namespace, now: now() }));
    return out;
  } finally {
    await store.close();
  }
}

/** Searches until the index is in use (the first search of a store without one starts a build). */
async function ready(store: SqliteStore, probe: Float32Array): Promise<void> {
  await store.vectorCandidates(probe, 10, { namespace: NS, now: now() });
  await store.vectorIndex?.whenIdle();
  await store.vectorCandidates(probe, 10, { namespace: NS, now: now() });
  assert.equal(store.vectorIndex?.status().state, 'ready', JSON.stringify(store.vectorIndex?.status()));
}

/** Every query answers with the same ids, in the same order, with the same similarities as the exhaustive search. */
async function assertSameAsExact(store: SqliteStore, path: string, queries: Float32Array[], k = 10): Promise<void> {
  const want = await exact(path, queries, k);
  for (const [i, q] of queries.entries()) {
    const got = await store.vectorCandidates(q, k, { namespace: NS, now: now() });
    assert.deepEqual(got.map((h) => h.id), (want[i] ?? []).map((h) => h.id), `query ${i}`);
    for (const [j, h] of got.entries()) assert.ok(Math.abs(h.similarity - (want[i]?.[j]?.similarity ?? NaN)) < 1e-6);
  }
  assert.equal(store.vectorIndex?.status().state, 'ready', 'the answers came from the index');
}

/** An approximate answer against the exhaustive one (fixtures: assertCloseToExact). */
async function assertApproximate(got: VectorHit[], path: string, query: Float32Array, k: number, namespace = NS): Promise<void> {
  assertCloseToExact(got, (await exact(path, [query], 4 * k, namespace))[0] ?? [], k);
}

async function populated(path: string, seed: number): Promise<{ store: SqliteStore; memories: Memory[]; next: () => Float32Array }> {
  const store = open(path);
  const next = vectorSource(seed);
  const memories = await insertVectors(store, NS, 3000, next);
  await insertVectors(store, OTHER, 600, next);
  return { store, memories, next };
}

describe('approximate vector index (usearch) of the SQLite store', () => {
  it('answers as the exhaustive search does, follows writes and forgets, and never returns another namespace or a forgotten memory', async () => {
    const path = freshPath();
    const { store, memories, next } = await populated(path, 1);
    try {
      const probe = next();
      // The first search answers exhaustively and starts a build; the index is used once built.
      const first = await store.vectorCandidates(probe, 10, { namespace: NS, now: now() });
      assert.equal(store.vectorIndex?.status().state, 'building');
      assert.deepEqual(first, (await exact(path, [probe], 10))[0]);
      await ready(store, probe);
      assert.ok(existsSync(`${path}.usearch`), 'the built index is saved beside the database');
      const queries = Array.from({ length: 20 }, next);
      await assertSameAsExact(store, path, queries);
      // Nearest memories forgotten and new ones written: the index catches up from the change log, no rebuild.
      const nearest = new Set((await store.vectorCandidates(queries[0] as Float32Array, 5, { namespace: NS, now: now() })).map((h) => h.id));
      await forget(store, memories.filter((m) => nearest.has(m.id)));
      await insertVectors(store, NS, 50, () => Float32Array.from(queries[1] as Float32Array, (x) => x + 0.01 * (next()[0] as number)));
      const seqBefore = store.vectorIndex?.status().seq ?? 0;
      await assertSameAsExact(store, path, queries);
      const status = store.vectorIndex?.status();
      assert.equal(status?.builds, 1, 'patched, not rebuilt');
      assert.ok((status?.seq ?? 0) > seqBefore);
      const hits = await store.vectorCandidates(queries[0] as Float32Array, 50, { namespace: NS, now: now() });
      assert.ok(hits.every((h) => !nearest.has(h.id)), 'a forgotten memory never comes back');
      const own = new Set(memories.map((m) => m.id));
      const others = await store.vectorCandidates(queries[2] as Float32Array, 50, { namespace: OTHER, now: now() });
      assert.ok(others.length === 50 && others.every((h) => !own.has(h.id)), 'namespaces stay apart');
      assert.equal((await store.checkVectorIndex()).status, 'consistent');
    } finally {
      await store.close();
    }
  });

  it('answers a namespace smaller than its minimum from the codes once they are built: as the exhaustive search does, and close to it when approximate', async () => {
    const path = freshPath();
    const { store, next } = await populated(path, 41);
    try {
      const tiny = 'acme/tiny';
      const small = 'acme/small';
      await insertVectors(store, tiny, 40, next);
      await insertVectors(store, small, 300, next);
      await ready(store, next());
      const searches = store.vectorIndex?.status().searches ?? 0;
      for (const namespace of [tiny, small]) {
        const queries = Array.from({ length: 10 }, next);
        const want = await exact(path, queries, 10, namespace);
        for (const [i, q] of queries.entries()) {
          const got = await store.vectorCandidates(q, 10, { namespace, now: now() });
          assert.deepEqual(got.map((h) => h.id), (want[i] ?? []).map((h) => h.id), `${namespace} query ${i}`);
          for (const [j, h] of got.entries()) assert.ok(Math.abs(h.similarity - (want[i]?.[j]?.similarity ?? NaN)) < 1e-6);
          await assertApproximate(await store.vectorCandidates(q, 10, { namespace, now: now(), approximate: true }), path, q, 10, namespace);
        }
      }
      assert.equal((store.vectorIndex?.status().searches ?? 0) - searches, 40, 'the codes answered every search');
      // One kind is left to sqlite-vec, which filters it inside its KNN.
      const routes = await store.vectorCandidates(next(), 10, { namespace: small, now: now(), kinds: ['route'] });
      assert.deepEqual(routes, []);
      assert.equal((store.vectorIndex?.status().searches ?? 0) - searches, 40, 'a search of one kind went to sqlite-vec');
      // Expired memories stay in the codes: the approximate answer's filter (the memory rows it reads) drops them.
      const q = next();
      const nearest = (await exact(path, [q], 3, small))[0] ?? [];
      const byId = new Map((await store.getMemories(nearest.map((h) => h.id))).map((m) => [m.id, m]));
      await expire(store, nearest.map((h) => byId.get(h.id) as Memory));
      const approximate = await store.vectorCandidates(q, 10, { namespace: small, now: now(), approximate: true });
      assert.ok(approximate.every((h) => !nearest.some((e) => e.id === h.id)), 'no expired memory');
      await assertApproximate(approximate, path, q, 10, small);
      assert.equal((await store.checkVectorIndex()).status, 'consistent');
    } finally {
      await store.close();
    }
  });

  it('a neighbour graph whose build finishes after the codes were dropped is not taken; the next one is', async () => {
    const path = freshPath();
    const store = createSqliteStore({ path, vectorIndex: { ...CONFIG, graphMinVectors: 1000, neighbourGraphs: true } });
    const next = vectorSource(13);
    await insertVectors(store, NS, 1500, next);
    const approx = (q: Float32Array) => store.vectorCandidates(q, 10, { namespace: NS, now: now(), approximate: true });
    try {
      const probe = next();
      await ready(store, probe);
      await approx(probe);
      assert.equal(store.vectorIndex?.status().graphs.state, 'building');
      // The codes go (as after an erasure) while the graph is built from the snapshot before.
      store.vectorIndex?.discard();
      await store.vectorIndex?.whenIdle();
      await approx(probe);
      await store.vectorIndex?.whenIdle();
      let graphs = store.vectorIndex?.status().graphs;
      assert.deepEqual(graphs?.namespaces, {}, 'the graph built before the drop was not installed');
      // The rebuilt codes want a graph again; that build is taken.
      await approx(probe);
      await store.vectorIndex?.whenIdle();
      await approx(probe);
      graphs = store.vectorIndex?.status().graphs;
      assert.equal(graphs?.builds, 2, JSON.stringify(graphs));
      assert.equal(graphs?.namespaces[NS], 1500, JSON.stringify(graphs));
    } finally {
      await store.close();
    }
  });

  it('opening a store removes graph temporaries left longer ago than the grace period, whatever pid they carry, and keeps fresh ones', async () => {
    const path = freshPath();
    const dead = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.on('exit', () => resolve(child.pid as number));
    });
    const then = new Date(Date.now() - UNNAMED_FILE_GRACE_MS - 3_600_000);
    // Old: left by crashes, one of a pid now held by a live process (this one's parent).
    const old = [`${path}.graph-${dead}-0badf00d`, `${path}.graph-${process.ppid}-0badf00d`];
    // Fresh: a build's output being loaded here, and one of a process whose pid is not visible from here (another
    // PID namespace sharing the folder), which looks dead.
    const fresh = [`${path}.graph-${process.pid}-0badf00d`, `${path}.graph-${dead}-feedf00d`];
    for (const p of [...old, ...fresh]) writeFileSync(p, 'a graph');
    for (const p of old) utimesSync(p, then, then);
    const store = open(path);
    try {
      assert.deepEqual(old.filter(existsSync), [], 'the old ones go');
      assert.deepEqual(fresh.filter(existsSync), fresh, 'the fresh ones stay');
    } finally {
      await store.close();
      for (const p of fresh) rmSync(p, { force: true });
    }
  });

  it('without neighbour graphs (a short-lived process) an approximate search starts no build and scans the codes', async () => {
    const path = freshPath();
    const store = createSqliteStore({ path, vectorIndex: { ...CONFIG, graphMinVectors: 1000 } });
    const next = vectorSource(12);
    await insertVectors(store, NS, 1500, next);
    try {
      const probe = next();
      await ready(store, probe);
      const queries = Array.from({ length: 5 }, next);
      const searches = store.vectorIndex?.status().searches ?? 0;
      for (const q of queries) await assertApproximate(await store.vectorCandidates(q, 10, { namespace: NS, now: now(), approximate: true }), path, q, 10);
      assert.equal((store.vectorIndex?.status().searches ?? 0) - searches, queries.length, 'the codes answered');
      await store.vectorIndex?.whenIdle();
      const graphs = store.vectorIndex?.status().graphs;
      assert.equal(graphs?.state, 'none', JSON.stringify(graphs));
      assert.equal(graphs?.builds, 0, 'no graph build was started');
      assert.equal(graphs?.searches, 0);
    } finally {
      await store.close();
    }
  });

  it('an approximate search is answered by a neighbour graph that follows writes and forgets, with similarities close to the exact ones', async () => {
    const path = freshPath();
    const store = createSqliteStore({ path, vectorIndex: { ...CONFIG, graphMinVectors: 1000, neighbourGraphs: true } });
    const next = vectorSource(11);
    const memories = await insertVectors(store, NS, 3000, next);
    await insertVectors(store, OTHER, 600, next);
    const approx = (q: Float32Array, k = 10, namespace = NS) => store.vectorCandidates(q, k, { namespace, now: now(), approximate: true });
    try {
      const probe = next();
      await ready(store, probe);
      // The first approximate search is answered by the scan and starts the graph's build.
      await assertApproximate(await approx(probe), path, probe, 10);
      assert.equal(store.vectorIndex?.status().graphs.state, 'building');
      await store.vectorIndex?.whenIdle();
      const queries = Array.from({ length: 20 }, next);
      const want = await exact(path, queries, 10);
      let found = 0;
      for (const [i, q] of queries.entries()) {
        const got = await approx(q);
        const exactById = new Map((want[i] ?? []).map((h) => [h.id, h.similarity]));
        found += got.filter((h) => exactById.has(h.id)).length;
        for (const h of got) if (exactById.has(h.id)) assert.ok(Math.abs(h.similarity - (exactById.get(h.id) as number)) <= CODES_TOLERANCE, 'similarities are close to the exact ones');
      }
      let graphs = store.vectorIndex?.status().graphs;
      assert.equal(graphs?.namespaces[NS], 3000, JSON.stringify(graphs));
      assert.equal(graphs?.namespaces[OTHER], undefined, 'a namespace below graphMinVectors has no graph');
      assert.ok((graphs?.searches ?? 0) >= 20, 'the graph answered');
      assert.ok(found / 200 >= 0.95, `recall@10 of the graph ${found / 200}`);
      // Nearest memories forgotten, near copies written: the graph follows the change log with the codes.
      const nearest = new Set((await approx(queries[0] as Float32Array, 5)).map((h) => h.id));
      await forget(store, memories.filter((m) => nearest.has(m.id)));
      const copies = await insertVectors(store, NS, 5, () => Float32Array.from(queries[0] as Float32Array, (x) => x + 0.001 * (next()[0] as number)));
      const after = await approx(queries[0] as Float32Array, 10);
      assert.ok(after.every((h) => !nearest.has(h.id)), 'a forgotten memory never comes back');
      assert.deepEqual(new Set(after.slice(0, 5).map((h) => h.id)), new Set(copies.map((m) => m.id)), 'new memories are found at once');
      graphs = store.vectorIndex?.status().graphs;
      assert.equal(graphs?.namespaces[NS], 3000, 'five left, five came');
      assert.equal(graphs?.builds, 1, 'followed, not rebuilt');
    } finally {
      await store.close();
    }
  });

  it('a caller that never yields to the event loop still gets the built index (a long import or fill)', async () => {
    const path = freshPath();
    const { store, next } = await populated(path, 12);
    const pause = new Int32Array(new SharedArrayBuffer(4));
    try {
      // Only awaits of synchronous SQLite reads, and the thread blocked between them: no macrotask ever runs, so a
      // worker's message could never be delivered; the reply is polled from its port instead.
      for (let i = 0; i < 400 && store.vectorIndex?.status().state !== 'ready'; i++) {
        await store.vectorCandidates(next(), 10, { namespace: NS, now: now() });
        Atomics.wait(pause, 0, 0, 25);
      }
      assert.equal(store.vectorIndex?.status().state, 'ready', JSON.stringify(store.vectorIndex?.status()));
      await assertSameAsExact(store, path, Array.from({ length: 5 }, next));
    } finally {
      await store.close();
    }
  });

  it('an index far behind the database is rebuilt once, not patched, and then answers exactly', async () => {
    const path = freshPath();
    const { store, next } = await populated(path, 6);
    try {
      await ready(store, next());
      await insertVectors(store, NS, 21_000, next);
      await store.vectorCandidates(next(), 10, { namespace: NS, now: now() });
      assert.equal(store.vectorIndex?.status().state, 'building');
      assert.match(store.vectorIndex?.status().reason ?? '', /too many changes/);
      await store.vectorIndex?.whenIdle();
      await assertSameAsExact(store, path, Array.from({ length: 5 }, next));
      const status = store.vectorIndex?.status();
      assert.equal(status?.builds, 2, JSON.stringify(status));
      assert.equal(status?.vectors, 3000 + 600 + 21_000);
    } finally {
      await store.close();
    }
  });

  it('a deleted index file is detected and rebuilt, by search and by verify', async () => {
    const path = freshPath();
    const { store, next } = await populated(path, 2);
    const probe = next();
    await ready(store, probe);
    await store.close();
    rmSync(`${path}.usearch`);
    const reopened = open(path);
    try {
      const queries = Array.from({ length: 10 }, next);
      assert.deepEqual(await reopened.vectorCandidates(probe, 10, { namespace: NS, now: now() }), (await exact(path, [probe], 10))[0]);
      assert.equal(reopened.vectorIndex?.status().reason, 'no index file');
      await reopened.vectorIndex?.whenIdle();
      assert.ok(existsSync(`${path}.usearch`));
      await assertSameAsExact(reopened, path, queries);
    } finally {
      await reopened.close();
    }
    rmSync(`${path}.usearch`);
    const verifying = open(path);
    try {
      const check = await verifying.checkVectorIndex();
      assert.equal(check.status, 'rebuilt');
      assert.match(check.detail, /no index file/);
      assert.ok(existsSync(`${path}.usearch`));
    } finally {
      await verifying.close();
    }
  });

  it('an index built from another embedder is detected and rebuilt from the stored vectors', async () => {
    const path = freshPath();
    const { store, memories, next } = await populated(path, 3);
    await ready(store, next());
    await store.close();
    const indexBefore = readFileSync(`${path}.usearch`);
    // Re-embedded by another model while the index file stayed behind (as `cairn reindex` from a process without it).
    const plain = createSqliteStore({ path, vectorIndex: false });
    const other = { id: 'other-model', dimensions: DIMS };
    const fresh = vectorSource(33);
    await plain.prepareVectors(other);
    await plain.transaction(async (tx) => {
      await tx.resetVectors();
      await tx.setEmbedder(other);
      for (const m of memories) await tx.setVector(m.id, fresh());
    });
    await plain.close();
    assert.deepEqual(readFileSync(`${path}.usearch`), indexBefore, 'the old index file is still there');
    const reopened = open(path);
    try {
      const queries = Array.from({ length: 10 }, fresh);
      assert.deepEqual(await reopened.vectorCandidates(queries[0] as Float32Array, 10, { namespace: NS, now: now() }), (await exact(path, [queries[0] as Float32Array], 10))[0]);
      assert.match(reopened.vectorIndex?.status().reason ?? '', /built from gauss-32 .*the store holds other-model/);
      await reopened.vectorIndex?.whenIdle();
      await assertSameAsExact(reopened, path, queries);
      assert.equal((await reopened.checkVectorIndex()).status, 'consistent');
    } finally {
      await reopened.close();
    }
  });

  it('an index file of an earlier format (codes of another form) is never read, and is rebuilt', async () => {
    const path = freshPath();
    const { store, next } = await populated(path, 6);
    await ready(store, next());
    await store.close();
    const bytes = readFileSync(`${path}.usearch`);
    const header = `"format":${INDEX_FORMAT}`;
    const at = bytes.indexOf(header);
    assert.ok(at > 0, 'the header names its format');
    bytes.write(`"format":${INDEX_FORMAT - 1}`, at);
    writeFileSync(`${path}.usearch`, bytes);
    const reopened = open(path);
    try {
      const q = next();
      assert.deepEqual(await reopened.vectorCandidates(q, 10, { namespace: NS, now: now() }), (await exact(path, [q], 10))[0]);
      assert.equal(reopened.vectorIndex?.status().reason, `the index file has format ${INDEX_FORMAT - 1}, not ${INDEX_FORMAT}`);
      await reopened.vectorIndex?.whenIdle();
      await assertSameAsExact(reopened, path, Array.from({ length: 5 }, next));
      assert.equal((await reopened.checkVectorIndex()).status, 'consistent');
    } finally {
      await reopened.close();
    }
  });

  it('an index file from another database, or damaged, is never read', async () => {
    const path = freshPath();
    const { store, next } = await populated(path, 4);
    await ready(store, next());
    await store.close();
    const otherPath = freshPath();
    const { store: second, next: otherNext } = await populated(otherPath, 5);
    await second.close();
    writeFileSync(`${otherPath}.usearch`, readFileSync(`${path}.usearch`));
    const copied = open(otherPath);
    try {
      const q = otherNext();
      assert.deepEqual(await copied.vectorCandidates(q, 10, { namespace: NS, now: now() }), (await exact(otherPath, [q], 10))[0]);
      assert.equal(copied.vectorIndex?.status().reason, 'the index file belongs to another database');
      await copied.vectorIndex?.whenIdle();
      await assertSameAsExact(copied, otherPath, Array.from({ length: 5 }, otherNext));
    } finally {
      await copied.close();
    }
    const bytes = readFileSync(`${path}.usearch`);
    bytes[bytes.length - 100] = (bytes[bytes.length - 100] as number) ^ 0xff;
    writeFileSync(`${path}.usearch`, bytes);
    const damaged = open(path);
    try {
      await damaged.vectorCandidates(next(), 10, { namespace: NS, now: now() });
      assert.match(damaged.vectorIndex?.status().reason ?? '', /damaged \(checksum\)/);
      await damaged.vectorIndex?.whenIdle();
      await assertSameAsExact(damaged, path, Array.from({ length: 5 }, next));
    } finally {
      await damaged.close();
    }
  });

  it('a process killed while it updates the index leaves an index that is caught up or rebuilt, never a wrong answer', async () => {
    const path = freshPath();
    const script = join(here, 'fixtures', 'vector-index-writer.js');
    for (const [round, killAfter] of [8, 13, 21].entries()) {
      const child = spawn(process.execPath, [script, path, NS, String(100 + round)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      await new Promise<void>((resolve, reject) => {
        let lines = 0;
        child.stdout.on('data', (d: Buffer) => {
          lines += d.toString().split('\n').filter(Boolean).length;
          // Killed in the middle of its loop, with saves of the index file going on all the time.
          if (lines >= killAfter) setTimeout(() => child.kill('SIGKILL'), 3 + round * 7);
        });
        child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`writer exited ${code}: ${stderr}`))));
      });
    }
    // The killed writers' temporaries, as a later process finds them once the grace period is over.
    const then = new Date(Date.now() - UNNAMED_FILE_GRACE_MS - 3_600_000);
    const temporaries = () => readdirSync(root).filter((f) => f.startsWith(`${path.split('/').pop()}.usearch.tmp-`));
    writeFileSync(`${path}.usearch.tmp-999999-1`, 'a killed writer\'s half-written index'); // at least one, whatever the kills left
    for (const f of temporaries()) utimesSync(join(root, f), then, then);
    assert.ok(temporaries().length >= 1);
    // Opening and closing the store, with no search and so no save of the index, sweeps them.
    await open(path).close();
    assert.deepEqual(temporaries(), [], 'temporary files of killed writers are removed when the next process opens the store');
    const store = open(path);
    try {
      const next = vectorSource(999);
      const probe = next();
      await store.vectorCandidates(probe, 10, { namespace: NS, now: now() });
      await store.vectorIndex?.whenIdle();
      await assertSameAsExact(store, path, Array.from({ length: 15 }, next));
      assert.notEqual((await store.checkVectorIndex()).status, 'exhaustive');
    } finally {
      await store.close();
    }
    const leftovers = readdirSync(root).filter((f) => f.startsWith(`${path.split('/').pop()}.usearch.tmp-`));
    assert.deepEqual(leftovers, [], 'temporary files of killed writers are removed by the next process to open the store');
  });

  it('a stale temporary that cannot be removed is left alone, and the store still opens', async () => {
    const path = freshPath();
    await open(path).close();
    // rmSync without `recursive` refuses a directory, as it refuses another user's file (EPERM) in a shared folder.
    const stuck = `${path}.usearch.tmp-424242-1`;
    mkdirSync(stuck);
    const then = new Date(Date.now() - UNNAMED_FILE_GRACE_MS - 3_600_000);
    utimesSync(stuck, then, then);
    const store = open(path);
    try {
      assert.deepEqual(await store.vectorCandidates(vectorSource(7)(), 5, { namespace: NS, now: now() }), []);
    } finally {
      await store.close();
    }
    assert.ok(existsSync(stuck));
  });
});
