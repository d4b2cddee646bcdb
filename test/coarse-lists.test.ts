import * as assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { coarseListsPath } from '../src/adapters/sqlite/sqlite-coarse-lists-file.js';
import { createSqliteStore, type SqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { CoarseLists } from '../src/adapters/vector-codes/coarse-lists.js';
import { QuantizedVectors, quantize } from '../src/adapters/vector-codes/quantized-vectors.js';
import { loadUsearch, type Usearch } from '../src/adapters/vector-codes/usearch.js';
import { erase } from '../src/core/erasure.js';
import type { Memory } from '../src/interfaces/memory.js';
import type { VectorHit } from '../src/interfaces/store.js';
import { DIMS, exhaustiveHits, forget, insertVectors, storePaths, vectorSource } from './fixtures/vector-index-data.js';

const freshPath = storePaths('cairn-coarse-lists-');
const NS = 'acme/shop';
const OTHER = 'acme/other';
const now = () => new Date().toISOString();
/**
 * The test namespace (3,000 vectors) gets coarse lists; the other one (600) is scanned whole. A search scans
 * the nearest lists holding 16 × its candidates (1,184 rows for k = 10), not the product's 40,000 at least.
 */
const CONFIG = { minVectors: 500, coarseLists: true, coarseMinVectors: 2000, coarseProbeMinRows: 0 };

const search = (store: SqliteStore, q: Float32Array, k = 10, namespace = NS): Promise<VectorHit[]> => store.vectorCandidates(q, k, { namespace, now: now() });
const coarse = (store: SqliteStore) => store.vectorIndex?.status().coarseLists;
const searchesThroughLists = (store: SqliteStore): number => coarse(store)?.namespaces.find((n) => n.namespace === NS)?.searches ?? -1;

/** A note on the subject `base`: its vector plus a little noise from `gauss`, as notes on one topic are. */
function noteOn(base: Float32Array, gauss: () => Float32Array): Float32Array {
  const noise = gauss();
  const v = new Float32Array(DIMS);
  let n = 0;
  for (let j = 0; j < DIMS; j++) {
    v[j] = (base[j] as number) + 0.35 * (noise[j] as number);
    n += (v[j] as number) ** 2;
  }
  for (let j = 0; j < DIMS; j++) v[j] = (v[j] as number) / Math.sqrt(n);
  return v;
}

/** Notes on `count` random subjects: the i-th note is on subject i % count. */
function subjectNotes(seed: number, count: number): (i: number) => Float32Array {
  const gauss = vectorSource(seed);
  const subjects = Array.from({ length: count }, () => gauss());
  return (i) => noteOn(subjects[i % count] as Float32Array, gauss);
}

/** Notes about 60 subjects, one after another. */
function clustered(seed: number): () => Float32Array {
  const note = subjectNotes(seed, 60);
  let i = 0;
  return () => note(i++);
}

/** How many of the exhaustive search's ten each query's search found, summed over the queries. */
async function foundOfExact(store: SqliteStore, path: string, queries: Float32Array[]): Promise<number> {
  let found = 0;
  for (const q of queries) {
    const [got, want] = [await search(store, q), await exact(path, q)];
    found += got.filter((h) => want.some((w) => w.id === h.id)).length;
  }
  return found;
}

const exact = (path: string, q: Float32Array, k = 10, namespace = NS): Promise<VectorHit[]> => exhaustiveHits(path, q, k, namespace);

/** Searches (each bringing the codes, then the lists' build, up to date) until the test namespace's lists are in. */
async function untilInstalled(store: SqliteStore, next: () => Float32Array): Promise<void> {
  for (let i = 0; i < 20 && searchesThroughLists(store) < 0; i++) {
    await search(store, next());
    await store.vectorIndex?.whenIdle();
  }
  await search(store, next());
  assert.ok(searchesThroughLists(store) >= 0, JSON.stringify(coarse(store)));
}

/** usearch, a clustered vector source (seeded) and 24 centroids drawn from it first, as the list tests start. */
function listsOf24(seed: number): { usearch: Usearch; next: () => Float32Array; centroids: Float32Array } {
  const loaded = loadUsearch();
  assert.ok('usearch' in loaded, 'usearch loads on this platform');
  const next = clustered(seed);
  const centroids = new Float32Array(24 * DIMS);
  for (let c = 0; c < 24; c++) centroids.set(next(), c * DIMS);
  return { usearch: loaded.usearch as Usearch, next, centroids };
}

describe('coarse lists for large namespaces (long-lived processes)', () => {
  it('answer with exact similarities, as the exhaustive search ranks them, from the lists only', async () => {
    const path = freshPath();
    const store = createSqliteStore({ path, vectorIndex: CONFIG });
    try {
      const next = clustered(5);
      await insertVectors(store, NS, 3000, next);
      await insertVectors(store, OTHER, 600, next);
      await untilInstalled(store, next);
      assert.equal(coarse(store)?.namespaces.find((n) => n.namespace === NS)?.vectors, 3000);
      assert.equal(coarse(store)?.namespaces.some((n) => n.namespace === OTHER), false, 'a namespace under the minimum has none');
      const before = searchesThroughLists(store);
      let found = 0;
      for (let i = 0; i < 30; i++) {
        const q = next();
        const [got, want] = [await search(store, q), await exact(path, q)];
        const sims = new Map(want.map((h) => [h.id, h.similarity]));
        for (const h of got) if (sims.has(h.id)) assert.ok(Math.abs(h.similarity - (sims.get(h.id) as number)) < 1e-6, 'rescored exactly');
        for (let j = 1; j < got.length; j++) assert.ok((got[j - 1] as VectorHit).similarity >= (got[j] as VectorHit).similarity, 'best first');
        found += got.filter((h) => sims.has(h.id)).length;
      }
      assert.equal(searchesThroughLists(store) - before, 30, 'every search of the large namespace went through its lists');
      assert.ok(found / 300 >= 0.95, `recall@10 against the exhaustive search ${found / 300}`);
    } finally {
      await store.close();
    }
  });

  it('follow saves and forgets after the build, and rows changed while it ran', async () => {
    const path = freshPath();
    const store = createSqliteStore({ path, vectorIndex: CONFIG });
    try {
      const next = clustered(9);
      const first = await insertVectors(store, NS, 3000, next);
      await search(store, next()); // the codes are built
      await store.vectorIndex?.whenIdle();
      await search(store, next()); // the lists' build starts from a snapshot of now
      await store.vectorIndex?.whenIdle(); // built; the next search installs the answer
      assert.ok(searchesThroughLists(store) < 0, 'not installed yet');
      // Written after the build's snapshot, before its answer is installed: placed from the change log.
      const during = await insertVectors(store, NS, 30, next);
      await forget(store, first.slice(0, 30));
      await untilInstalled(store, next);
      const after = await insertVectors(store, NS, 30, next);
      await forget(store, first.slice(30, 60));
      const vectors = await store.getVectors([...during, ...after, ...first.slice(0, 60)].map((m) => m.id));
      for (const m of [...during, ...after]) assert.equal((await search(store, vectors.get(m.id) as Float32Array, 1))[0]?.id, m.id, 'a note saved during or after the build is found by its own vector');
      const gone = new Set(first.slice(0, 60).map((m) => m.id));
      for (const m of first.slice(0, 60)) {
        const hits = await search(store, vectors.get(m.id) as Float32Array, 10);
        assert.equal(hits.length, 10);
        assert.ok(!hits.some((h) => gone.has(h.id)), 'a forgotten note is never returned');
      }
      assert.equal(coarse(store)?.namespaces.find((n) => n.namespace === NS)?.vectors, 3000 + 60 - 60, 'the lists hold the live rows');
      const check = await store.vectorIndex?.check();
      assert.equal(check?.status, 'consistent', check?.detail);
    } finally {
      await store.close();
    }
  });

  it('take over from the scan worker: its copy of the namespace goes once the lists answer', async () => {
    const path = freshPath();
    const store = createSqliteStore({ path, vectorIndex: { ...CONFIG, scanWorker: true, scanWorkerMinVectors: 1000 } });
    try {
      const next = clustered(17);
      await insertVectors(store, NS, 3000, next);
      await search(store, next());
      await store.vectorIndex?.whenIdle(); // the codes are built, and the lists' build started by a search of them
      for (let i = 0; i < 200 && store.vectorIndex?.status().scanWorker.namespaces.length === 0 && searchesThroughLists(store) < 0; i++) {
        await search(store, next());
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.deepEqual(store.vectorIndex?.status().scanWorker.namespaces, [NS], 'until the lists are in, the worker holds a copy');
      await untilInstalled(store, next);
      assert.deepEqual(store.vectorIndex?.status().scanWorker.namespaces, [], 'the worker no longer holds a copy');
      const scans = store.vectorIndex?.status().scanWorker.scans;
      await insertVectors(store, NS, 20, next);
      const q = next();
      const got = await search(store, q);
      assert.equal(got.length, 10);
      assert.equal(store.vectorIndex?.status().scanWorker.scans, scans, 'searches go through the lists, not the worker');
      assert.deepEqual(store.vectorIndex?.status().scanWorker.namespaces, [], 'and no copy is sent again');
    } finally {
      await store.close();
    }
  });

  it('go with the codes (an erasure drops them) and are built again', async () => {
    const path = freshPath();
    const store = createSqliteStore({ path, vectorIndex: CONFIG });
    try {
      const next = clustered(13);
      await insertVectors(store, NS, 3000, next);
      await untilInstalled(store, next);
      store.vectorIndex?.discard();
      assert.deepEqual(coarse(store)?.namespaces, []);
      await untilInstalled(store, next);
      assert.equal(coarse(store)?.namespaces.find((n) => n.namespace === NS)?.vectors, 3000);
    } finally {
      await store.close();
    }
  });

  it('keep notes unlike every centroid in the far list, which every search scans', async () => {
    const path = freshPath();
    const store = createSqliteStore({ path, vectorIndex: CONFIG });
    try {
      const next = clustered(31);
      // Three subjects the 60 common ones say nothing about, ten notes each: 1 % of the namespace.
      const rare = subjectNotes(77, 3);
      await insertVectors(store, NS, 2970, next);
      let r = 0;
      await insertVectors(store, NS, 30, () => rare(r++));
      await untilInstalled(store, next);
      const far = coarse(store)?.namespaces.find((n) => n.namespace === NS)?.far ?? 0;
      assert.ok(far >= 25 && far <= 35, `about 1 % of the rows in the far list: ${far}`);
      const found = await foundOfExact(store, path, Array.from({ length: 12 }, (_, i) => rare(i)));
      assert.ok(found / 120 >= 0.95, `recall@10 of queries on the rare subjects ${found / 120}`);
    } finally {
      await store.close();
    }
  });

  it('are built again when later notes on new subjects have grown the far list, and answer meanwhile', async () => {
    const path = freshPath();
    const store = createSqliteStore({ path, vectorIndex: CONFIG });
    try {
      const next = clustered(37);
      await insertVectors(store, NS, 3000, next);
      await untilInstalled(store, next);
      const lists = () => coarse(store)?.namespaces.find((n) => n.namespace === NS);
      const builtFar = lists()?.far ?? -1;
      assert.ok(builtFar > 0 && builtFar <= 31, `a build leaves about 1 % far: ${builtFar}`);
      // Four subjects the centroids know nothing of, 60 notes each: far from every centroid, so into the far list.
      const fresh = subjectNotes(91, 4);
      let r = 0;
      await insertVectors(store, NS, 240, () => fresh(r++));
      const q = fresh(0);
      assert.equal((await search(store, q)).length, 10, 'the drifted lists still answer');
      // The new notes the lists hold by now went to the far list (at least 95 % of them). Counted against the notes
      // placed, not the 240 written: once in about ten runs under load the count fell short (250 far of 29 + 240 in a
      // CI run; not reproduced alone; one possible cause: the codes follow the log only while no index rebuild runs),
      // and placing is not what this checks. All are placed in the end (3,240 below).
      const placed = (lists()?.vectors ?? 0) - 3000;
      assert.ok(placed >= 120 && (lists()?.far ?? 0) - builtFar >= 0.95 * placed, `the new notes went to the far list: ${lists()?.far} (built with ${builtFar}; ${placed} of 240 placed)`);
      const builds = coarse(store)?.lastBuildMs;
      for (let i = 0; i < 20 && (lists()?.far ?? 0) > 100; i++) {
        await store.vectorIndex?.whenIdle();
        await search(store, next());
      }
      assert.ok((lists()?.far ?? Infinity) <= 40, `built again, the far list is back to about 1 %: ${lists()?.far} (last build ${builds} ms)`);
      assert.equal(lists()?.vectors, 3240);
      const found = await foundOfExact(store, path, Array.from({ length: 8 }, (_, i) => fresh(i)));
      assert.ok(found / 80 >= 0.95, `recall@10 on the new subjects after the rebuild ${found / 80}`);
    } finally {
      await store.close();
    }
  });

  it('place a row in the list its own vector probes first', () => {
    const { usearch, next, centroids } = listsOf24(23);
    // No far list, and a probe of 16 rows: one list, the nearest, is scanned.
    const lists = new CoarseLists(usearch, DIMS, centroids, -2, 0);
    const codes = new Int8Array(DIMS);
    const vectors = new Map<number, Float32Array>();
    for (let rowid = 1; rowid <= 1200; rowid++) {
      const v = next();
      vectors.set(rowid, v);
      quantize(v, codes, 0);
      lists.set(rowid, codes);
    }
    assert.equal(lists.farRows(), 0);
    for (const [rowid, v] of [...vectors].slice(0, 100)) assert.equal(lists.nearest(v, 1)[0], rowid, `row ${rowid} found by its own vector`);
  });

  it('place a row searched for just before (a save\'s likely-update check) where they place it unsearched', () => {
    const { usearch, next, centroids } = listsOf24(29);
    // A far list (rows under cosine 0.45 to their centroid) and a probe of one list's worth: a row in another
    // list than its own vector probes first would go unfound.
    const [searched, plain] = [new CoarseLists(usearch, DIMS, centroids, 0.45, 0), new CoarseLists(usearch, DIMS, centroids, 0.45, 0)];
    const vectors = new Map<number, Float32Array>();
    const codesOf = (v: Float32Array): Int8Array => {
      const codes = new Int8Array(DIMS);
      quantize(v, codes, 0);
      return codes;
    };
    for (let rowid = 1; rowid <= 1500; rowid++) {
      const v = next();
      vectors.set(rowid, v);
      searched.nearest(v, 10, true);
      // Between the search and the row's arrival, the row before it arrives too (a batch, or another writer's).
      if (rowid % 3 === 0) searched.set(rowid - 1, codesOf(vectors.get(rowid - 1) as Float32Array));
      searched.set(rowid, codesOf(v));
      plain.set(rowid, codesOf(v));
    }
    assert.equal(searched.farRows(), plain.farRows());
    assert.ok(plain.farRows() > 0 && plain.farRows() < 1500, `far rows ${plain.farRows()}`);
    for (let i = 0; i < 40; i++) {
      const q = next();
      assert.deepEqual(searched.nearest(q, 20), plain.nearest(q, 20));
    }
    for (const [rowid, v] of [...vectors].slice(0, 200)) assert.equal(searched.nearest(v, 1)[0], rowid, `row ${rowid} found by its own vector`);
  });

  it('find, list by list or copied together, what one scan of all the codes finds', () => {
    const { usearch, next, centroids } = listsOf24(21);
    // Every list probed (the minimum is all rows), so both ways must find the exact int8 nearest; rows under
    // cosine 0.3 to their centroid (a few of these) go to the far list.
    const lists = new CoarseLists(usearch, DIMS, centroids, 0.3, 5000);
    const whole = new QuantizedVectors(DIMS);
    const codes = new Int8Array(DIMS);
    for (let rowid = 1; rowid <= 2400; rowid++) {
      const v = next();
      whole.set(rowid, v);
      quantize(v, codes, 0);
      lists.set(rowid, codes);
    }
    for (const rowid of [5, 77, 1200]) {
      lists.remove(rowid);
      whole.remove(rowid);
    }
    assert.equal(lists.size(), 2397);
    assert.ok(lists.farRows() > 0 && lists.farRows() < 2397, `far rows ${lists.farRows()}`);
    const q8 = new Int8Array(DIMS);
    // The codes' inner product with the query's codes: what both scans rank by (integers, so ties are common).
    const score = (rowid: number) => (whole.codes(rowid) as Int8Array).reduce((s, c, j) => s + c * (q8[j] as number), 0);
    for (let i = 0; i < 12; i++) {
      const q = next();
      quantize(q, q8, 0);
      for (const count of [10, 128, 129, 300]) {
        const [got, want] = [lists.nearest(q, count), whole.nearest(usearch, q, count)];
        assert.equal(got.length, count);
        assert.equal(new Set(got).size, count, 'no row twice');
        // The same scores, best first: the rows may differ only between rows of equal score.
        assert.deepEqual(got.map(score), want.map(score), `count ${count}`);
        assert.deepEqual(got.map(score), got.map(score).sort((a, b) => b - a), `count ${count}: best first`);
      }
    }
  });

  it('are off by default (a short command scans)', async () => {
    const store = createSqliteStore({ path: freshPath(), vectorIndex: { minVectors: 500 } });
    try {
      assert.equal(coarse(store)?.state, 'off');
    } finally {
      await store.close();
    }
  });
});

describe('coarse lists saved beside the database', () => {
  const SUBJECT = 'user-7';
  const PRIVATE = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const source = (store: SqliteStore) => coarse(store)?.lastSource;

  /** A store whose namespace (3,000 notes, one of them the subject's) has built and saved its lists, closed. */
  async function withSavedLists(seed: number): Promise<{ path: string; next: () => Float32Array; far: number; memories: Memory[] }> {
    const path = freshPath();
    const store = createSqliteStore({ path, vectorIndex: CONFIG });
    const next = clustered(seed);
    try {
      const memories = await insertVectors(store, NS, 2999, next);
      await insertVectors(store, NS, 1, next, undefined, { metadata: { subject: SUBJECT } });
      await untilInstalled(store, next);
      assert.deepEqual(source(store), { namespace: NS, from: 'build', detail: null });
      assert.ok(existsSync(coarseListsPath(path, NS)), 'the lists are saved beside the database');
      return { path, next, far: coarse(store)?.namespaces.find((n) => n.namespace === NS)?.far ?? -1, memories };
    } finally {
      await store.close();
    }
  }

  it('the next process takes them, places the rows changed since, and answers as the built ones would', async () => {
    const { path, next, far, memories } = await withSavedLists(41);
    const store = createSqliteStore({ path, vectorIndex: CONFIG });
    try {
      // Changed after the file was written, before this process installs it: placed from the change log.
      const added = await insertVectors(store, NS, 30, next);
      const old = memories.slice(0, 30);
      await forget(store, old);
      await untilInstalled(store, next);
      assert.deepEqual(source(store), { namespace: NS, from: 'file', detail: null });
      const lists = coarse(store)?.namespaces.find((n) => n.namespace === NS);
      assert.equal(lists?.vectors, 3000, 'the lists hold the live rows');
      assert.ok(Math.abs((lists?.far ?? 0) - far) <= 30, `the saved far list (${far} rows, now ${lists?.far})`);
      const vectors = await store.getVectors([...added, ...old].map((m) => m.id));
      for (const m of added) assert.equal((await search(store, vectors.get(m.id) as Float32Array, 1))[0]?.id, m.id, 'a note saved since the file is found by its own vector');
      const gone = new Set(old.map((m) => m.id));
      for (const m of old) assert.ok(!(await search(store, vectors.get(m.id) as Float32Array)).some((h) => gone.has(h.id)), 'a forgotten note is never returned');
      const queries = Array.from({ length: 20 }, next);
      assert.ok((await foundOfExact(store, path, queries)) / 200 >= 0.95, 'recall@10 against the exhaustive search');
      assert.equal((await store.vectorIndex?.check())?.status, 'consistent');
    } finally {
      await store.close();
    }
  });

  it('lists that cannot be read or saved (a folder in the file\'s place) are built, answer, and say why', async () => {
    const path = freshPath();
    mkdirSync(join(coarseListsPath(path, NS), 'in-the-way'), { recursive: true });
    const store = createSqliteStore({ path, vectorIndex: CONFIG });
    try {
      const next = clustered(45);
      await insertVectors(store, NS, 3000, next);
      await untilInstalled(store, next);
      const got = source(store);
      assert.equal(got?.from, 'build');
      assert.match(got?.detail ?? '', /^saved lists not taken: the saved lists cannot be read \(EISDIR.*; not saved: they could not be saved \(/u);
      assert.ok((await foundOfExact(store, path, Array.from({ length: 10 }, next))) / 100 >= 0.95, 'recall@10 against the exhaustive search');
    } finally {
      await store.close();
    }
  });

  it('damaged, of another database, or made before an erasure, they are refused and built again', async () => {
    const { path, next } = await withSavedLists(43);
    const file = coarseListsPath(path, NS);
    const saved = readFileSync(file);
    const opened = async (at: string, want: RegExp | null): Promise<void> => {
      const store = createSqliteStore({ path: at, vectorIndex: CONFIG });
      try {
        await untilInstalled(store, next);
        const got = source(store);
        if (want === null) assert.deepEqual(got, { namespace: NS, from: 'file', detail: null });
        else {
          assert.equal(got?.from, 'build');
          assert.match(got?.detail ?? '', want);
        }
        assert.ok((await foundOfExact(store, at, Array.from({ length: 10 }, next))) / 100 >= 0.95, 'recall@10 against the exhaustive search');
      } finally {
        await store.close();
      }
    };
    const damaged = Buffer.from(saved);
    damaged[damaged.length - 7] = (damaged[damaged.length - 7] as number) ^ 0x5a;
    writeFileSync(file, damaged);
    await opened(path, /saved lists not taken: the saved lists are damaged \(checksum\)/u);
    await opened(path, null); // the build saved whole ones again

    const other = freshPath();
    const second = createSqliteStore({ path: other, vectorIndex: { minVectors: 500 } });
    await insertVectors(second, NS, 3000, clustered(44));
    await second.close();
    writeFileSync(coarseListsPath(other, NS), saved);
    await opened(other, /saved lists not taken: the saved lists belong to another database/u);

    writeFileSync(file, saved);
    const eraser = createSqliteStore({ path, vectorIndex: { minVectors: 500 } });
    try {
      const { certificate } = await erase(eraser, { scope: { subject: SUBJECT }, privateKeyPem: PRIVATE, now: now() });
      assert.equal(certificate.counts['vectors'], 1);
      assert.ok(certificate.proof.compaction.some((s) => s.includes('saved coarse lists discarded')), JSON.stringify(certificate.proof.compaction));
    } finally {
      await eraser.close();
    }
    assert.equal(existsSync(file), false, 'the erasure removed the saved lists');
    // As a build in flight elsewhere, from a snapshot before the erasure, would have written it.
    writeFileSync(file, saved);
    await opened(path, /saved lists not taken: the saved lists were made before an erasure/u);
    await opened(path, null);
  });
});
