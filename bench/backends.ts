/**
 * The embedded SQLite store and PostgreSQL side by side, in one run, through the same engine:
 *
 *   node dist/bench/backends.js [--quick] [--pg <admin url>] [--sizes 10000,100000] [--parts commit,writers,search]
 *                               [--out bench/results/backends.json]
 *
 * 1. Turn commit p50/p95 (event + item + vector + a snapshot every 10th turn once the log grew 5 % since the last, one
 *    transaction), texts embedded
 *    beforehand with the real model, so the figure is the store's.
 * 2. Writes per second from 8 concurrent processes, each with its own connection (its own file handle on
 *    SQLite), then: lost writes (saves acknowledged but not stored) and sequence gaps — both must be 0.
 * 3. Search p50/p95 at 10k and 100k memories of one namespace (plus 10 % in each of three noise namespaces),
 *    with the query vector computed beforehand: the candidate queries, fusion and packing, not the model.
 *
 * PostgreSQL is the server at --pg, else CAIRN_BENCH_PG, else CAIRN_TEST_PG (an admin URL: a fresh database
 * is created for each part and dropped after). Without one the PostgreSQL column says so and SQLite runs
 * alone. Vectors are real USE-lite vectors of a pool of distinct texts, reused with a 1e-6 nudge per copy so
 * every stored vector is distinct; the ingest filter is off in every part (its model passes are model time).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCachingEmbedder } from '../src/adapters/embed-cache/caching-embedder.js';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { findGaps } from '../src/core/replay.js';
import { DEFAULT_SNAPSHOT_GROWTH } from '../src/core/snapshot.js';
import type { Embedder } from '../src/interfaces/embedder.js';
import type { Memory, MemoryInput } from '../src/interfaces/memory.js';
import { indexText } from '../src/core/events.js';
import { ulid } from '../src/core/ids.js';
import { analyse } from '../src/core/lexical.js';
import { dedupeKey } from '../src/core/text.js';
import type { Store } from '../src/interfaces/store.js';
import { openStoreAt } from '../src/surfaces/open-engine.js';
import { freshLocation, withIndexBuiltAfter, type Location } from './bench-stores.js';
import { stats, timeEach } from './measure.js';
import { coreNote, detail, PrecomputedEmbedder, query, rng } from './synthetic-notes.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, HERE.includes(join('dist', 'bench')) ? '../..' : '..');

function log(message: string): void {
  process.stderr.write(`[backends ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

// ------------------------------------------------------------------------------------------ vector pool

/** Real vectors of `n` distinct notes; `vectorFor(i)` is pool vector i mod n nudged by 1e-6 × (i div n + 1). */
async function vectorPool(real: Embedder, n: number): Promise<{ texts: string[]; vectors: Float32Array[] }> {
  const r = rng(7);
  const texts = [...new Set(Array.from({ length: n * 2 }, () => coreNote(r).text))].slice(0, n);
  return { texts, vectors: await real.embed(texts) };
}

function nudged(vectors: Float32Array[], i: number): Float32Array {
  const v = Float32Array.from(vectors[i % vectors.length] as Float32Array);
  const c = i % v.length;
  v[c] = (v[c] as number) + 1e-6 * (1 + Math.floor(i / vectors.length));
  return v;
}

function engineOn(store: Store, embedder: Embedder, namespace: string): Engine {
  return new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: namespace, snapshotEvery: 10, ingestFilter: { enabled: false } });
}

// -------------------------------------------------------------------------------------------- 1. commits

const WORDS = 'cache queue invoice ledger tenant webhook retry schema migration index shard replica token session payment refund checkout tax rounding deploy release rollback flag secret backup latency timeout quota'.split(' ');
function turnText(i: number): string {
  const w = (k: number) => WORDS[(i * 7 + k * 13) % WORDS.length];
  return `Turn ${i}: we decided the ${w(1)} ${w(2)} must not touch the ${w(3)} ${w(4)}; see src/${w(5)}/${w(6)}_${i % 97}.ts (ticket ${1000 + i}).`;
}

async function commits(loc: Location, real: Embedder, turns: number) {
  const cache = createCachingEmbedder(real, turns + 10);
  const texts = Array.from({ length: turns }, (_, i) => turnText(i));
  await cache.embed(texts);
  const store = await openStoreAt(loc.db, { mustExist: false });
  try {
    const engine = engineOn(store, cache, 'bench/commit');
    const all: number[] = [];
    const withSnapshot: number[] = [];
    for (let i = 0; i < turns; i++) {
      const t = performance.now();
      const r = await engine.commitTurn({ session: 'bench', turn: i, text: texts[i] as string, speaker: 'user' });
      const ms = performance.now() - t;
      all.push(ms);
      if (r.snapshot) withSnapshot.push(ms);
    }
    return { turns, snapshotEvery: 10, snapshotGrowth: DEFAULT_SNAPSHOT_GROWTH, all: stats(all.slice(20)), snapshotTurns: stats(withSnapshot) };
  } finally {
    await store.close();
  }
}

// ------------------------------------------------------------------------------------- 2. many writers

interface WriterReport {
  writer: number;
  acknowledged: number;
  errors: number;
  startedAt: number;
  finishedAt: number;
}

/** The child side: open the store, wait for the common start, save `n` notes one by one, report. */
async function writerChild(db: string, poolFile: string, writer: number, n: number, startAt: number): Promise<void> {
  const pool = JSON.parse(readFileSync(poolFile, 'utf8')) as number[][];
  const vectors = pool.map((v) => Float32Array.from(v));
  const model: Embedder = { id: 'use-lite-512', dimensions: vectors[0]?.length ?? 512, loadTimeMs: () => null, embed: async () => { throw new Error('the writers embed nothing'); } };
  const pre = new PrecomputedEmbedder(model);
  const store = await openStoreAt(db, { mustExist: false });
  const engine = engineOn(store, pre, 'bench/writers');
  const inputs: MemoryInput[] = Array.from({ length: n }, (_, i) => {
    const text = `Writer ${writer} note ${i}: the ${WORDS[(writer + i) % WORDS.length]} path keeps its own ${WORDS[(i * 3) % WORDS.length]} (ticket W${writer}-${i}).`;
    pre.vectors.set(text, nudged(vectors, writer * n + i));
    return { text, namespace: 'bench/writers' };
  });
  await store.stats(new Date().toISOString()); // connected and migrated before the clock starts
  while (Date.now() < startAt) await new Promise((r) => setTimeout(r, 5));
  const startedAt = Date.now();
  let acknowledged = 0;
  let errors = 0;
  for (const input of inputs) {
    try {
      const r = await engine.save(input);
      if (!r.duplicate) acknowledged++;
    } catch (err) {
      errors++;
      process.stderr.write(`writer ${writer}: ${(err as Error).message}\n`);
    }
  }
  const report: WriterReport = { writer, acknowledged, errors, startedAt, finishedAt: Date.now() };
  await store.close();
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

async function manyWriters(loc: Location, vectors: Float32Array[], dir: string, writers: number, perWriter: number) {
  const poolFile = join(dir, 'pool.json');
  writeFileSync(poolFile, JSON.stringify(vectors.map((v) => Array.from(v))));
  // The schema exists before the writers race to open the store.
  await (await openStoreAt(loc.db, { mustExist: false })).close();
  const startAt = Date.now() + 4000;
  const script = fileURLToPath(import.meta.url);
  const reports = await Promise.all(
    Array.from({ length: writers }, (_, w) =>
      new Promise<WriterReport>((resolvePromise, reject) => {
        const child = spawn(process.execPath, [script, '--child-writer', loc.db, poolFile, String(w), String(perWriter), String(startAt)], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.on('error', reject);
        child.on('close', (code) => (code === 0 ? resolvePromise(JSON.parse(out.trim()) as WriterReport) : reject(new Error(`writer ${w} exited ${code}`))));
      }),
    ),
  );
  const store = await openStoreAt(loc.db, { mustExist: true });
  try {
    const acknowledged = reports.reduce((n, r) => n + r.acknowledged, 0);
    const stored = (await store.stats(new Date().toISOString())).total;
    const gaps = await findGaps(store);
    const seconds = (Math.max(...reports.map((r) => r.finishedAt)) - Math.min(...reports.map((r) => r.startedAt))) / 1000;
    return {
      writers,
      perWriter,
      acknowledged,
      errors: reports.reduce((n, r) => n + r.errors, 0),
      stored,
      lost: acknowledged - stored,
      sequenceGaps: gaps.reduce((n, g) => n + g.missing.length, 0),
      seconds: Math.round(seconds * 100) / 100,
      writesPerSecond: Math.round(acknowledged / seconds),
    };
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------------------------------------- 3. search

async function searchAt(loc: Location, real: Embedder, pool: { texts: string[]; vectors: Float32Array[] }, sizes: number[], samples: number) {
  const r = rng(11);
  const queries = [...new Set(Array.from({ length: samples * 3 }, () => query(r)))].slice(0, samples + 5);
  const queryVectors = await real.embed(queries);
  const pre = new PrecomputedEmbedder(real);
  queries.forEach((q, i) => pre.vectors.set(q, queryVectors[i] as Float32Array));
  const store = await openStoreAt(loc.db, { mustExist: false });
  const target = 'github.com/acme/shop';
  const noise = ['github.com/acme/service-1', 'github.com/acme/service-2', 'github.com/acme/service-3'];
  const engine = engineOn(store, pre, target);
  const counts = new Map<string, number>();
  let serial = 0;
  const levels = [];
  try {
    for (const size of sizes) {
      const t = performance.now();
      // SQLite: through the engine (saveMany, 500 a transaction). PostgreSQL: the first note through the
      // engine records the embedder; the rest is a bulk load of the projection (StoreTx.insertMemory, one
      // statement per memory, 2,000 a transaction, no log events: this database only serves the search
      // timing) with the HNSW index dropped and built once after it.
      const direct = loc.backend === 'postgres';
      const fill = async () => {
        for (const ns of [target, ...noise]) {
          const want = ns === target ? size : Math.round(size * 0.1);
          while ((counts.get(ns) ?? 0) < want) {
            const n = Math.min(direct ? 2000 : 500, want - (counts.get(ns) ?? 0));
            const batch: MemoryInput[] = Array.from({ length: n }, () => {
              const s = serial++;
              const text = (pool.texts[s % pool.texts.length] as string) + detail(r, s);
              pre.vectors.set(text, nudged(pool.vectors, s));
              return { text, namespace: ns, metadata: { source: 'bench' } };
            });
            if (direct) await bulkInsert(store, batch, pre.vectors);
            else await engine.saveMany(batch);
            for (const m of batch) pre.vectors.delete(m.text);
            counts.set(ns, (counts.get(ns) ?? 0) + n);
          }
        }
      };
      let indexBuildSeconds: number | null = null;
      if (direct) {
        if (serial === 0) await engine.save({ text: 'first note: records the embedder', namespace: noise[0] as string, metadata: { source: 'bench' } });
        ({ indexBuildSeconds } = await withIndexBuiltAfter(loc.db, fill));
      } else await fill();
      const fillSeconds = Math.round((performance.now() - t) / 100) / 10;
      log(`${loc.backend}: filled to ${size} in ${fillSeconds} s${indexBuildSeconds === null ? '' : ` (HNSW build ${indexBuildSeconds} s of it)`}`);
      const times = await timeEach(queries, 5, (q) => engine.search(q, { namespace: target }), 20_000, 30);
      levels.push({ memories: size, totalMemories: [...counts.values()].reduce((a, b) => a + b, 0), fillSeconds, ...(indexBuildSeconds === null ? {} : { indexBuildSeconds }), search: stats(times) });
      log(`${loc.backend}: search at ${size}: p50 ${levels[levels.length - 1]?.search.p50} ms`);
    }
    return { levels };
  } finally {
    await store.close();
  }
}

/** Memories as the engine would project them (kind note, importance 5), written straight into the projection. */
async function bulkInsert(store: Store, inputs: MemoryInput[], vectors: Map<string, Float32Array>): Promise<void> {
  await store.transaction(async (tx) => {
    for (const input of inputs) {
      const now = new Date().toISOString();
      const memory: Memory = {
        id: ulid(),
        namespace: input.namespace as string,
        text: input.text,
        kind: 'note',
        importance: 5,
        tags: [],
        taskId: null,
        metadata: input.metadata ?? {},
        route: null,
        createdAt: now,
        updatedAt: now,
        expiresAt: null,
        supersedes: null,
        supersededBy: null,
        forgottenAt: null,
        forgetReason: null,
        dedupeKey: dedupeKey(input.namespace as string, input.text),
      };
      await tx.insertMemory(memory, vectors.get(input.text) ?? null, analyse(indexText(memory)));
    }
  });
}

// ------------------------------------------------------------------------------------------------- main

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child-writer') {
    await writerChild(argv[1] as string, argv[2] as string, Number(argv[3]), Number(argv[4]), Number(argv[5]));
    return;
  }
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const quick = argv.includes('--quick');
  const out = resolve(value('--out') ?? join(ROOT, 'bench', 'results', quick ? 'quick' : '', 'backends.json'));
  const sizes = (value('--sizes') ?? (quick ? '1000' : '10000,100000')).split(',').map(Number);
  const parts = (value('--parts') ?? 'commit,writers,search').split(',');
  const pgAdmin = value('--pg') ?? process.env['CAIRN_BENCH_PG'] ?? process.env['CAIRN_TEST_PG'] ?? null;
  const started = performance.now();
  const load = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-backends-'));
  const real = createUseEmbedder();
  const pool = await vectorPool(real, quick ? 128 : 512);
  const backends: Location['backend'][] = pgAdmin ? ['sqlite', 'postgres'] : ['sqlite'];
  const results: Record<string, unknown> = {};
  try {
    for (const backend of backends) {
      const part: Record<string, unknown> = {};
      const run = async <T>(label: string, fn: (loc: Location) => Promise<T>): Promise<T> => {
        const loc = await freshLocation(backend, dir, pgAdmin, label);
        try {
          return await fn(loc);
        } finally {
          await loc.drop();
        }
      };
      if (parts.includes('commit')) {
        part['commit'] = await run('commit', (loc) => commits(loc, real, quick ? 300 : 2000));
        log(`${backend}: commit ${JSON.stringify((part['commit'] as { all: unknown }).all)}`);
      }
      if (parts.includes('writers')) {
        part['writers'] = await run('writers', (loc) => manyWriters(loc, pool.vectors, dir, 8, quick ? 50 : 250));
        log(`${backend}: writers ${JSON.stringify(part['writers'])}`);
      }
      if (parts.includes('search')) part['search'] = await run('search', (loc) => searchAt(loc, real, pool, sizes, quick ? 30 : 100));
      results[backend] = part;
    }
    if (!pgAdmin) results['postgres'] = { skipped: 'no PostgreSQL server: give --pg <admin url> or set CAIRN_BENCH_PG / CAIRN_TEST_PG' };
    const result = {
      benchmark: 'backends',
      command: `node dist/bench/backends.js ${argv.join(' ')}`.trim(),
      date: new Date().toISOString(),
      machine: { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, loadAverageAtStart: load.map((x) => Math.round(x * 100) / 100) },
      quick,
      results,
      goals: { commitP50Ms: 5, commitP95Ms: 15, published: { atlasCommitP50Ms: 21.7, atlasCommitP95Ms: 47.2 }, lost: 0, sequenceGaps: 0 },
      notes: [
        'turn texts and notes are embedded beforehand with the real model; the ingest filter is off; timings are the store, engine and fusion',
        'the PostgreSQL server is a local throwaway cluster (fsync off when started by scripts/pg-cluster.sh) on loopback',
        'writers are separate Node processes, each with its own store connection, started together at one instant',
      ],
      durationSeconds: Math.round((performance.now() - started) / 100) / 10,
    };
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
