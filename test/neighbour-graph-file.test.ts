import * as assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { graphFileProblem, graphHeaderPath, openNamedGraphFile, publishGraphFile, readGraphHeader, unreadGraphFile } from '../src/adapters/sqlite/sqlite-neighbour-graph-file.js';
import { UNNAMED_FILE_GRACE_MS } from '../src/adapters/sqlite/sqlite-saved-files.js';
import { createSqliteStore, type SqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { quantize } from '../src/adapters/vector-codes/quantized-vectors.js';
import { erase } from '../src/core/erasure.js';
import type { Memory } from '../src/interfaces/memory.js';
import { assertCloseToExact, CODES_TOLERANCE, forget, insertVectors, vectorSource } from './fixtures/vector-index-data.js';

/**
 * The neighbour graph saved beside the database (`<db>.graph.<key>.json` naming `<db>.graph.<key>.<token>.usearch`):
 * a process that opens the store loads it instead of building it, catches it up from the change log, and takes
 * nothing that does not match the database. Real SQLite files, real usearch graphs, seeded vectors.
 */

const root = mkdtempSync(join(tmpdir(), 'cairn-graph-file-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const NS = 'acme/shop';
const now = () => new Date().toISOString();
const GRAPHS = { minVectors: 500, graphMinVectors: 1000, neighbourGraphs: true };

const longLived = (path: string) => createSqliteStore({ path, vectorIndex: GRAPHS });
const approx = (store: SqliteStore, q: Float32Array, k = 10) => store.vectorCandidates(q, k, { namespace: NS, now: now(), approximate: true });

/** The exhaustive answer from a connection without any index. */
async function exact(path: string, queries: Float32Array[], k = 10): Promise<{ id: string; similarity: number }[][]> {
  const store = createSqliteStore({ path, vectorIndex: false });
  try {
    const out = [];
    for (const q of queries) out.push(await store.vectorCandidates(q, k, { namespace: NS, now: now() }));
    return out;
  } finally {
    await store.close();
  }
}

/** Approximate searches until the namespace's graph answers (a build, or a load of its file). */
async function graphReady(store: SqliteStore, probe: Float32Array): Promise<void> {
  for (let i = 0; i < 4 && store.vectorIndex?.status().graphs.namespaces[NS] === undefined; i++) {
    await approx(store, probe);
    await store.vectorIndex?.whenIdle();
  }
  assert.ok(store.vectorIndex?.status().graphs.namespaces[NS] !== undefined, JSON.stringify(store.vectorIndex?.status()));
}

/** Approximate searches until the namespace's graph answers; the reasons the index and the graphs gave on the way. */
async function reasonsUntilGraph(store: SqliteStore, next: () => Float32Array): Promise<string[]> {
  const reasons: string[] = [];
  for (let i = 0; i < 6 && store.vectorIndex?.status().graphs.namespaces[NS] === undefined; i++) {
    await approx(store, next());
    reasons.push(store.vectorIndex?.status().reason ?? '', store.vectorIndex?.status().graphs.reason ?? '');
    await store.vectorIndex?.whenIdle();
  }
  return reasons;
}

/** recall@10 of the graph's answers against the exhaustive ten, every returned similarity close to the exact one. */
async function recall(store: SqliteStore, path: string, queries: Float32Array[]): Promise<number> {
  const want = await exact(path, queries);
  let found = 0;
  for (const [i, q] of queries.entries()) {
    const byId = new Map((want[i] ?? []).map((h) => [h.id, h.similarity]));
    for (const h of await approx(store, q)) {
      if (!byId.has(h.id)) continue;
      found++;
      assert.ok(Math.abs(h.similarity - (byId.get(h.id) as number)) <= CODES_TOLERANCE, 'similarities are close to the exact ones');
    }
  }
  return found / (queries.length * 10);
}

/** A store whose namespace has a saved graph (built by a first long-lived process, which then closed). */
async function withSavedGraph(seed: number): Promise<{ path: string; next: () => Float32Array }> {
  const path = join(root, `store-${++counter}.db`);
  const next = vectorSource(seed);
  const store = longLived(path);
  await insertVectors(store, NS, 1500, next);
  try {
    await graphReady(store, next());
    assert.equal(store.vectorIndex?.status().graphs.lastSource, 'build');
  } finally {
    await store.close();
  }
  return { path, next };
}

/** Sets files' modification time to an hour beyond the grace period ago, as a crash long ago leaves them. */
function ageBeyondGrace(...paths: string[]): void {
  const then = new Date(Date.now() - UNNAMED_FILE_GRACE_MS - 3_600_000);
  for (const p of paths) utimesSync(p, then, then);
}

const graphFiles = (path: string) => readdirSync(root).filter((f) => f.startsWith(`${basename(path)}.graph.`) && f.endsWith('.usearch'));

describe('the neighbour graph saved beside the database', () => {
  it('is built once: the next process loads it, catches up writes made meanwhile, and verify checks it', async () => {
    const { path, next } = await withSavedGraph(21);
    assert.ok(existsSync(graphHeaderPath(path, NS)), 'the header is saved');
    assert.equal(graphFiles(path).length, 1);
    // A short-lived process (no graphs) forgets the nearest notes of a query and writes near copies of it.
    const q = next();
    const short = createSqliteStore({ path, vectorIndex: { minVectors: 500, graphMinVectors: 1000 } });
    const nearest = (await exact(path, [q], 5))[0]?.map((h) => h.id) ?? [];
    await forget(short, await short.getMemories(nearest));
    const copies = await insertVectors(short, NS, 5, () => Float32Array.from(q, (x) => x + 0.001 * (next()[0] as number)));
    await short.close();

    const store = longLived(path);
    try {
      const first = await approx(store, q);
      const graphs = store.vectorIndex?.status().graphs;
      assert.equal(graphs?.builds, 0, 'loaded, not built');
      assert.equal(graphs?.lastSource, 'file');
      assert.equal(graphs?.namespaces[NS], 1500, 'five left, five came, from the change log');
      assert.ok((graphs?.searches ?? 0) >= 1, 'the loaded graph answered the first search');
      assert.ok(first.every((h) => !nearest.includes(h.id)), 'a note forgotten after the file was saved never comes back');
      assert.deepEqual(new Set(first.slice(0, 5).map((h) => h.id)), new Set(copies.map((m) => m.id)), 'notes written after the file was saved are found');
      assert.ok((await recall(store, path, Array.from({ length: 20 }, next))) >= 0.95);
      const check = await store.checkVectorIndex();
      assert.equal(check.status, 'consistent', check.detail);
      assert.match(check.detail, /saved neighbour graphs consistent: "acme\/shop"/u);
    } finally {
      await store.close();
    }
    // Closing saved the caught-up graph again; the older file went.
    const header = JSON.parse(readFileSync(graphHeaderPath(path, NS), 'utf8')) as { seq: number; vectors: number };
    assert.equal(header.vectors, 1500);
    assert.equal(graphFiles(path).length, 1);
  });

  it('a graph saved under another search expansion is still loaded (only the build parameters must match)', async () => {
    const { path, next } = await withSavedGraph(32);
    const header = JSON.parse(readFileSync(graphHeaderPath(path, NS), 'utf8')) as { params: Record<string, number> };
    writeFileSync(graphHeaderPath(path, NS), JSON.stringify({ ...header, params: { ...header.params, expansionSearch: 64 } }));
    const store = longLived(path);
    try {
      await graphReady(store, next());
      assert.equal(store.vectorIndex?.status().graphs.lastSource, 'file');
      assert.equal(store.vectorIndex?.status().graphs.builds, 0);
    } finally {
      await store.close();
    }
  });

  it('a saved graph too far behind the database is built again in the worker, not caught up in a save', async () => {
    const { path, next } = await withSavedGraph(33);
    const writer = withoutGraphs(path);
    await insertVectors(writer, NS, 20_001, next);
    await writer.close();
    const store = longLived(path);
    try {
      const reasons = await reasonsUntilGraph(store, next);
      assert.ok(reasons.some((r) => /the graph file is 20001 changes behind/u.test(r)), JSON.stringify(reasons));
      assert.equal(store.vectorIndex?.status().graphs.lastSource, 'build');
      assert.equal(store.vectorIndex?.status().graphs.namespaces[NS], 21_501);
    } finally {
      await store.close();
    }
  });

  it('a deleted, damaged or foreign graph file, or one from another embedder, is detected and rebuilt', async () => {
    const { path, next } = await withSavedGraph(22);
    const header = JSON.parse(readFileSync(graphHeaderPath(path, NS), 'utf8')) as Record<string, unknown> & { file: string; embedder: { id: string } };
    const graphPath = join(root, header.file);
    const original = readFileSync(graphPath);
    const cases: [string, () => void, RegExp][] = [
      ['deleted', () => rmSync(graphPath), /the graph file named by its header is missing/u],
      ['truncated', () => writeFileSync(graphPath, original.subarray(0, original.length - 4096)), /bytes, its header says/u],
      [
        'damaged',
        () => {
          const bytes = Buffer.from(original);
          bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] as number) ^ 0xff;
          writeFileSync(graphPath, bytes);
        },
        /damaged \(checksum\)/u,
      ],
      ['another embedder', () => writeFileSync(graphHeaderPath(path, NS), JSON.stringify({ ...header, embedder: { id: 'other-model', dimensions: 32 } })), /built from other-model/u],
      ['another database', () => writeFileSync(graphHeaderPath(path, NS), JSON.stringify({ ...header, storeId: 'not-this-one' })), /belongs to another database/u],
      ['ahead of the database', () => writeFileSync(graphHeaderPath(path, NS), JSON.stringify({ ...header, seq: 10_000_000 })), /reflects change 10000000/u],
    ];
    for (const [name, spoil, reason] of cases) {
      writeFileSync(graphHeaderPath(path, NS), JSON.stringify(header));
      writeFileSync(graphPath, original);
      for (const f of graphFiles(path)) if (f !== header.file) rmSync(join(root, f));
      spoil();
      // Spoiled long ago: once the rebuilt graph is named, the old file is past the grace period and goes.
      if (existsSync(graphPath)) ageBeyondGrace(graphPath);
      const store = longLived(path);
      try {
        const q = next();
        assertCloseToExact(await approx(store, q), (await exact(path, [q], 40))[0] ?? [], 10); // the scan answers meanwhile
        assert.match(store.vectorIndex?.status().graphs.reason ?? '', reason, name);
        await graphReady(store, next());
        const graphs = store.vectorIndex?.status().graphs;
        assert.equal(graphs?.builds, 1, `${name}: rebuilt`);
        assert.equal(graphs?.lastSource, 'build');
        assert.ok((await recall(store, path, Array.from({ length: 10 }, next))) >= 0.95, name);
      } finally {
        await store.close();
      }
      const saved = JSON.parse(readFileSync(graphHeaderPath(path, NS), 'utf8')) as { file: string; embedder: { id: string } };
      assert.notEqual(saved.file, header.file, `${name}: the rebuilt graph replaced the file`);
      assert.equal(saved.embedder.id, 'gauss-32');
      assert.deepEqual(graphFiles(path), [saved.file], `${name}: one graph file is left`);
    }
  });

  it('a process killed while it publishes a graph leaves the old graph usable or none, never a wrong answer', async () => {
    const { path, next } = await withSavedGraph(23);
    const header = JSON.parse(readFileSync(graphHeaderPath(path, NS), 'utf8')) as { file: string; seq: number };
    // Killed after the new graph file was renamed into place, before its header: an orphan beside the old pair.
    const orphan = join(root, `${basename(path)}.graph.${header.file.split('.').at(-3) as string}.0123456789ab.usearch`);
    writeFileSync(orphan, 'half a graph');
    // And a header being written (a temporary of a dead process).
    writeFileSync(`${path}.graph-999999999-0badf00d.json`, '{"format":1');
    // Both left longer ago than the grace period (a fresh one may be a live process's publish in flight).
    ageBeyondGrace(orphan, `${path}.graph-999999999-0badf00d.json`);
    const store = longLived(path);
    try {
      await graphReady(store, next());
      assert.equal(store.vectorIndex?.status().graphs.lastSource, 'file', 'the old pair is still taken');
      assert.ok((await recall(store, path, Array.from({ length: 10 }, next))) >= 0.95);
      assert.equal((await store.checkVectorIndex()).status, 'consistent');
      // A later save of the graph removes the orphan.
      await insertVectors(store, NS, 3, next);
      await approx(store, next());
    } finally {
      await store.close();
    }
    assert.equal(graphFiles(path).length, 1, 'the orphan went with the next save');
    assert.equal(existsSync(`${path}.graph-999999999-0badf00d.json`), false, "a dead process's temporary is removed on open");
  });

  it('verify deletes a saved graph that does not hold the namespace, and the next process builds it again', async () => {
    const { path, next } = await withSavedGraph(24);
    const other = await withSavedGraph(25);
    // The graph of another store with the same namespace and parameters, put in place under this store's header.
    const mine = JSON.parse(readFileSync(graphHeaderPath(path, NS), 'utf8')) as { file: string; bytes: number; sha256: string };
    const theirs = JSON.parse(readFileSync(graphHeaderPath(other.path, NS), 'utf8')) as { file: string; bytes: number; sha256: string };
    rmSync(join(root, mine.file));
    renameSync(join(root, theirs.file), join(root, mine.file));
    writeFileSync(graphHeaderPath(path, NS), JSON.stringify({ ...mine, bytes: theirs.bytes, sha256: theirs.sha256 }));
    const verifier = createSqliteStore({ path, vectorIndex: { minVectors: 500, graphMinVectors: 1000 } });
    try {
      const check = await verifier.checkVectorIndex();
      assert.equal(check.status, 'rebuilt', check.detail);
      assert.match(check.detail, /saved neighbour graph of "acme\/shop" was deleted \(memory row \d+ is (missing from the graph|not found by its own vector in the graph)\)/u);
    } finally {
      await verifier.close();
    }
    assert.equal(existsSync(graphHeaderPath(path, NS)), false);
    assert.deepEqual(graphFiles(path), []);
    const store = longLived(path);
    try {
      await graphReady(store, next());
      assert.equal(store.vectorIndex?.status().graphs.builds, 1);
      assert.ok((await recall(store, path, Array.from({ length: 10 }, next))) >= 0.95);
    } finally {
      await store.close();
    }
  });

  it('an erasure in another process: the long-lived process never saves its graph again, no file keeps the erased vector', async () => {
    const { path, next } = await withSavedGraph(26);
    const secret = next();
    // A long-lived process loads the saved graph and catches up the subject's note written meanwhile.
    const victim = await subjectNote(path, secret);
    const a = longLived(path);
    try {
      await graphReady(a, next());
      assert.equal(a.vectorIndex?.status().graphs.namespaces[NS], 1501, 'the note is in the live graph');
      await erasedElsewhere(path);
      assert.deepEqual(graphSideFiles(path), [], 'the erasure removed every graph file and temporary');
      // The long-lived process searches on, then closes (it used to save its graph, the erased bytes kept by usearch's remove).
      const q = next();
      assertCloseToExact(await approx(a, q), (await exact(path, [q], 40))[0] ?? [], 10); // the scan answers while the graph is built again
      assert.ok((await approx(a, secret)).every((h) => h.id !== victim.id));
      await graphReady(a, next());
      assert.equal(a.vectorIndex?.status().graphs.namespaces[NS], 1500);
    } finally {
      await a.close();
    }
    assert.equal(filesHolding(path, secret).length, 0, `no graph file holds the erased vector: ${filesHolding(path, secret).join(', ')}`);
    assert.equal(graphFiles(path).length, 1, 'the graph built after the erasure is saved');
  });

  it("an erasure while another process's build is in flight: the build is not published, its temporary goes", async () => {
    const { path, next, secret, store: a } = await withSubjectNote(27, longLived);
    try {
      // Searches until the codes are built and the graph build starts.
      for (let i = 0; i < 20 && a.vectorIndex?.status().graphs.state !== 'building'; i++) {
        await approx(a, next());
        if (a.vectorIndex?.status().graphs.state !== 'building') await a.vectorIndex?.whenIdle();
      }
      assert.equal(a.vectorIndex?.status().graphs.state, 'building');
      // The worker writes its temporary from a snapshot that holds the note; its reply waits (the loop is held).
      for (const t = Date.now(); Date.now() - t < 1500; );
      await erasedElsewhere(path);
      assert.deepEqual(graphSideFiles(path), [], 'the erasure removed the build temporary');
      await a.vectorIndex?.whenIdle();
      await graphReady(a, next());
      assert.equal(a.vectorIndex?.status().graphs.namespaces[NS], 1500, 'the graph was built again from the database');
    } finally {
      await a.close();
    }
    assert.equal(filesHolding(path, secret).length, 0, `no graph file holds the erased vector: ${filesHolding(path, secret).join(', ')}`);
  });

  it('a saved graph from before an erasure is refused and deleted by the next process', async () => {
    const { path, next } = await withSavedGraph(28);
    const header = readFileSync(graphHeaderPath(path, NS));
    const [file] = graphFiles(path);
    const bytes = readFileSync(join(root, file as string));
    await subjectNote(path, next());
    await erasedElsewhere(path);
    // Put back as a process that missed the erasure would have published it.
    writeFileSync(join(root, file as string), bytes);
    writeFileSync(graphHeaderPath(path, NS), header);
    const store = longLived(path);
    try {
      const reasons = await reasonsUntilGraph(store, next);
      assert.ok(reasons.some((r) => /saved before the latest erasure \(0 of 1\)/u.test(r)), JSON.stringify(reasons));
      assert.equal(existsSync(join(root, file as string)), false, 'the stale file is deleted');
      assert.equal(store.vectorIndex?.status().graphs.lastSource, 'build', 'built again from the database');
    } finally {
      await store.close();
    }
  });

  it('a graph file that cannot be read falls back to the scan, and the graph is built again', async () => {
    const { path, next } = await withSavedGraph(29);
    const header = JSON.parse(readFileSync(graphHeaderPath(path, NS), 'utf8')) as { file: string };
    // Something that stats but cannot be read in place of the file: a folder, its size in the header.
    rmSync(join(root, header.file));
    mkdirSync(join(root, header.file));
    writeFileSync(graphHeaderPath(path, NS), JSON.stringify({ ...header, bytes: statSync(join(root, header.file)).size }));
    const store = longLived(path);
    try {
      const q = next();
      assertCloseToExact(await approx(store, q), (await exact(path, [q], 40))[0] ?? [], 10);
      assert.match(store.vectorIndex?.status().graphs.reason ?? '', /the graph file cannot be read \(EISDIR/u);
      await graphReady(store, next());
      assert.equal(store.vectorIndex?.status().graphs.lastSource, 'build');
    } finally {
      await store.close();
      rmSync(join(root, header.file), { recursive: true, force: true });
    }
  });

  it('an index file written from a snapshot before an erasure (a build in flight elsewhere) is refused and rebuilt', async () => {
    const { path, next, secret, store: a } = await withSubjectNote(30, withoutGraphs);
    try {
      for (let i = 0; i < 4 && a.vectorIndex?.status().state !== 'ready'; i++) {
        await a.vectorCandidates(next(), 10, { namespace: NS, now: now() });
        await a.vectorIndex?.whenIdle();
      }
      assert.equal(a.vectorIndex?.status().state, 'ready');
    } finally {
      await a.close();
    }
    const index = `${path}.usearch`;
    const before = readFileSync(index);
    assert.ok(holds(index, int8Codes(secret)), 'the index file holds the note as int8 codes');
    await erasedElsewhere(path);
    assert.equal(existsSync(index), false, 'the erasure discarded the index file');
    // As another process's build, reading a snapshot from before the erasure, would have written it.
    writeFileSync(index, before);
    const b = withoutGraphs(path);
    try {
      const q = next();
      assert.deepEqual(await b.vectorCandidates(q, 10, { namespace: NS, now: now() }), (await exact(path, [q]))[0]);
      assert.match(b.vectorIndex?.status().reason ?? '', /the index file was saved before the latest erasure \(0 of 1\)/u);
      await b.vectorIndex?.whenIdle();
      await b.vectorCandidates(next(), 10, { namespace: NS, now: now() });
      assert.equal(b.vectorIndex?.status().state, 'ready');
      assert.equal(b.vectorIndex?.status().vectors, 1500);
    } finally {
      await b.close();
    }
    assert.equal(holds(index, int8Codes(secret)), false, 'the rebuilt index file does not hold the erased vector');
  });

  it('a database restored from an older copy that took other writes since: the newer graph and index files are refused', async () => {
    const path = join(root, `store-${++counter}.db`);
    const next = vectorSource(31);
    const short = withoutGraphs(path);
    await insertVectors(short, NS, 1500, next);
    await short.close();
    const backup = readFileSync(path);
    assert.equal(existsSync(`${path}-wal`) && statSync(`${path}-wal`).size > 0, false, 'the copy is the whole database');
    const first = longLived(path);
    try {
      await insertVectors(first, NS, 300, next);
      await graphReady(first, next());
    } finally {
      await first.close();
    }
    assert.equal(graphFiles(path).length, 1);
    // The operator puts the older copy back and leaves the files beside it; short-lived writes pass their change.
    for (const f of ['-wal', '-shm']) rmSync(`${path}${f}`, { force: true });
    writeFileSync(path, backup);
    const fresh: Float32Array[] = [];
    const writer = withoutGraphs(path);
    const notes = await insertVectors(writer, NS, 301, () => {
      const v = next();
      fresh.push(v);
      return v;
    });
    await writer.close();
    const store = longLived(path);
    try {
      const said = (await reasonsUntilGraph(store, next)).join(' | ');
      assert.match(said, /the index file is from another history of this database: its change 1800 is not the database's/u);
      assert.match(said, /the graph file is from another history of this database/u);
      assert.equal(store.vectorIndex?.status().graphs.lastSource, 'build');
      let missed = 0;
      for (let i = 0; i < 300; i += 10) if ((await approx(store, fresh[i] as Float32Array))[0]?.id !== notes[i]?.id) missed++;
      assert.equal(missed, 0, 'every note written after the restore is found by its own vector');
      assert.equal((await store.checkVectorIndex()).status, 'consistent');
    } finally {
      await store.close();
    }
  });
});

const SUBJECT = 'user-42';
const PRIVATE = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/** A short-lived store (no graphs): another process's open of the database file. */
function withoutGraphs(path: string): SqliteStore {
  return createSqliteStore({ path, vectorIndex: { minVectors: 500, graphMinVectors: 1000 } });
}

/** A new store opened by `open`, with 1,500 notes and then the subject's (vector `secret`). */
async function withSubjectNote(seed: number, open: (path: string) => SqliteStore): Promise<{ path: string; next: () => Float32Array; secret: Float32Array; store: SqliteStore }> {
  const path = join(root, `store-${++counter}.db`);
  const next = vectorSource(seed);
  const secret = next();
  const store = open(path);
  await insertVectors(store, NS, 1500, next);
  await insertVectors(store, NS, 1, () => secret, undefined, { metadata: { subject: SUBJECT } });
  return { path, next, secret, store };
}

/** The subject's note, written by a short-lived process. */
async function subjectNote(path: string, vector: Float32Array): Promise<Memory> {
  const store = withoutGraphs(path);
  try {
    return (await insertVectors(store, NS, 1, () => vector, undefined, { metadata: { subject: SUBJECT } }))[0] as Memory;
  } finally {
    await store.close();
  }
}

/** Another process erases the subject (the core erasure over a second open of the database file), and closes. */
async function erasedElsewhere(path: string): Promise<void> {
  const store = withoutGraphs(path);
  try {
    const { certificate: c } = await erase(store, { scope: { subject: SUBJECT }, privateKeyPem: PRIVATE, now: now() });
    assert.equal(c.counts['vectors'], 1, JSON.stringify(c.counts));
    assert.ok(c.checks.every((x) => x.passed), JSON.stringify(c.checks));
    assert.ok(c.proof.compaction.some((s) => s.startsWith('erasure recorded')), JSON.stringify(c.proof.compaction));
  } finally {
    await store.close();
  }
}

/** Every graph file and graph temporary beside the database. */
const graphSideFiles = (path: string) => readdirSync(root).filter((f) => f.startsWith(`${basename(path)}.graph.`) || f.startsWith(`${basename(path)}.graph-`));

/** The int8 codes of `vector` as the quantised index holds it. */
function int8Codes(vector: Float32Array): number[] {
  const codes = new Int8Array(vector.length);
  quantize(vector, codes, 0);
  return Array.from(codes);
}

/** Whether the file holds `codes` at some offset, each within ±1. */
function holds(file: string, codes: number[]): boolean {
  const b = readFileSync(file);
  for (let at = 0; at + codes.length <= b.length; at++) {
    let same = true;
    for (let i = 0; i < codes.length && same; i++) same = Math.abs((codes[i] as number) - b.readInt8(at + i)) <= 1;
    if (same) return true;
  }
  return false;
}

/**
 * The graph files (and temporaries) holding `vector` as a usearch int8 cosine graph stores it: the index's int8
 * codes, normalised again to int8 by usearch (read from its vector rows).
 */
function filesHolding(path: string, vector: Float32Array): string[] {
  const codes = int8Codes(vector).map((c) => c / 127);
  const norm = Math.sqrt(codes.reduce((s, x) => s + x * x, 0));
  const want = codes.map((x) => Math.round((x / norm) * 127));
  return graphSideFiles(path).filter((f) => !f.endsWith('.json') && holds(join(root, f), want));
}

describe('graph files published by several processes', () => {
  it('two processes publishing one namespace\'s graph never delete the file the header names', async () => {
    const path = join(root, `publishers-${++counter}.db`);
    const script = join(fileURLToPath(new URL('.', import.meta.url)), 'fixtures', 'graph-publisher.js');
    const start = (): Promise<ChildProcess> =>
      new Promise((resolve, reject) => {
        const child = fork(script, [path, NS], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
        child.once('message', () => resolve(child));
        child.once('error', reject);
      });
    const publishers = [await start(), await start()];
    const broken: string[] = [];
    const publish = (child: ChildProcess, round: number) =>
      new Promise<void>((resolve, reject) => {
        const died = (code: number | null) => reject(new Error(`a publisher died in round ${round} (exit ${code}): ${broken.join('; ')}`));
        child.once('exit', died);
        child.once('message', () => {
          child.off('exit', died);
          resolve();
        });
        child.send({ round });
      });
    try {
      for (let round = 1; round <= 60; round++) {
        await Promise.all(publishers.map((p) => publish(p, round)));
        // Both publishes are done: the header names a graph file that is there, whole.
        const saved = readGraphHeader(path, NS);
        const problem = 'problem' in saved ? saved.problem : graphFileProblem(saved);
        if (problem !== null) broken.push(`round ${round}: ${problem}`);
      }
    } finally {
      for (const p of publishers) if (p.connected) p.send('exit');
    }
    assert.deepEqual(broken, [], 'no publish deleted the other process\'s graph while the header named it');
    const files = readdirSync(root).filter((f) => f.startsWith(`${basename(path)}.graph.`) && f.endsWith('.usearch'));
    assert.ok(files.length <= 2, `at most one graph file per live publisher is kept: ${files.join(', ')}`);
  });

  it('a reader whose file a publisher replaced after it read the header reads the header again, not building the graph', () => {
    const path = join(root, `reread-${++counter}.db`);
    const publish = (seq: number) => {
      const tmp = `${path}.graph-${process.pid}-${seq.toString(16).padStart(8, '0')}`;
      writeFileSync(tmp, `graph ${seq}`);
      publishGraphFile(path, tmp, { storeId: 'store', embedder: { id: 'test-embedder', dimensions: 8 }, params: { connectivity: 16, expansionAdd: 64, expansionSearch: 128 }, namespace: NS, seq, erasures: 0, at: null, vectors: 1 });
    };
    // The file is checked as a reader checks it (its checksum): gone, it cannot be read.
    const check = (file: { header: { seq: number }; path: string }) => {
      const problem = graphFileProblem(file as Parameters<typeof graphFileProblem>[0]);
      return problem === null ? { seq: file.header.seq, text: readFileSync(file.path, 'utf8') } : unreadGraphFile(file, problem);
    };
    publish(1);
    const seen: number[] = [];
    const opened = openNamedGraphFile(path, NS, (file) => {
      seen.push(file.header.seq);
      // Between this reader's header and its file, this process publishes again: its own older file goes at once.
      if (seen.length === 1) publish(2);
      return check(file);
    });
    assert.deepEqual(seen, [1, 2], 'the header is read a second time');
    assert.deepEqual(opened, { seq: 2, text: 'graph 2' });

    // Gone for good (header and file removed under the reader): one more look, then the reason, no loop.
    const tries: number[] = [];
    const missing = openNamedGraphFile(path, NS, (file) => {
      tries.push(file.header.seq);
      rmSync(file.path);
      return check(file);
    });
    assert.deepEqual(tries, [2], 'the second look finds the header naming a file that is missing');
    assert.match((missing as { problem?: string }).problem ?? '', /missing/, JSON.stringify(missing));
  });

  it("a publisher removes unnamed graph files by their age, not by the pid their name carries", async () => {
    const path = join(root, `ages-${++counter}.db`);
    const key = (basename(graphHeaderPath(path, NS)).split('.').at(-2)) as string;
    const file = (owner: string) => join(root, `${basename(path)}.graph.${key}.${owner}.usearch`);
    const dead = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.on('exit', () => resolve(child.pid as number));
    });
    const publish = (seq: number) => {
      const tmp = `${path}.graph-${process.pid}-${seq.toString(16).padStart(8, '0')}`;
      writeFileSync(tmp, `graph ${seq}`);
      publishGraphFile(path, tmp, { storeId: 'store', embedder: { id: 'test-embedder', dimensions: 8 }, params: { connectivity: 16, expansionAdd: 64, expansionSearch: 128 }, namespace: NS, seq, erasures: 0, at: null, vectors: 1 });
      return (readGraphHeader(path, NS) as { header: { file: string } }).header.file;
    };
    // Fresh, not named, of writers this process cannot see or takes for itself: a live publisher in another PID
    // namespace (its pid not visible here: "dead"), and another namespace's process with this process's pid.
    writeFileSync(file(`${dead}-aaaaaaaaaaaa`), 'renamed, its header not yet written');
    writeFileSync(file(`${process.pid}-bbbbbbbbbbbb`), 'renamed, its header not yet written');
    // Left long ago by writers that died, whose pids live processes hold now (this one's parent, this one).
    writeFileSync(file(`${process.ppid}-cccccccccccc`), 'left by a crash');
    writeFileSync(file(`${process.pid}-dddddddddddd`), 'left by a crash');
    ageBeyondGrace(file(`${process.ppid}-cccccccccccc`), file(`${process.pid}-dddddddddddd`));
    const first = publish(1);
    assert.deepEqual(graphFiles(path).sort(), [first, basename(file(`${dead}-aaaaaaaaaaaa`)), basename(file(`${process.pid}-bbbbbbbbbbbb`))].sort(), 'the fresh ones stay, the old ones go');
    // This process's own older file goes with its next publish; the others' stay until they are old.
    const second = publish(2);
    assert.deepEqual(graphFiles(path).sort(), [second, basename(file(`${dead}-aaaaaaaaaaaa`)), basename(file(`${process.pid}-bbbbbbbbbbbb`))].sort());
    ageBeyondGrace(file(`${dead}-aaaaaaaaaaaa`), file(`${process.pid}-bbbbbbbbbbbb`));
    const third = publish(3);
    assert.deepEqual(graphFiles(path), [third], 'unnamed files past the grace period go, whoever wrote them');
  });
});
