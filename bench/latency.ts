/**
 * Latency and size benchmark: the real engine on a real temporary SQLite file (WAL, FTS5, sqlite-vec) with
 * the real offline embedder, at growing sizes of one namespace plus noise namespaces.
 *
 *   node dist/bench/latency.js [--quick] [--sizes 1000,10000,100000] [--fill-budget-s N] [--out bench/results/latency.json]
 *                              [--keep-db | --reuse-db <dir>] [--no-graph] [--no-posting-cache] [--no-scan-worker] [--no-coarse]
 *
 * --keep-db leaves the filled store in its temp dir (the path is logged); --reuse-db <dir> measures such a store
 * again: the namespaces' live memories are counted, a size is filled only up to what it lacks (nothing when the
 * store already holds it), and the store is kept. Each run's measured saves stay in it (a few hundred memories).
 * --no-coarse opens the store without coarse lists for its large namespaces (as a short command does).
 * --no-graph leaves the neighbour graph out (a short command's store): its build at 1M takes ten minutes or more,
 * and the saves then measure the exact scan of the likely-update check. --no-posting-cache and --no-scan-worker
 * leave out, likewise, what only long-lived processes keep: BM25 posting lists and the vector scan worker.
 *
 * Writes one JSON file (see `LatencyResults`), again after every size, so a run stopped early keeps the sizes it
 * measured; `bench/report.ts` turns it into tables. With --fill-budget-s, a size whose fill takes longer is
 * measured at the size reached (`fill.complete: false`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, freemem, hostname, loadavg, totalmem, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { createGptTokenCounter, createSqliteStore, createUseEmbedder, Engine, isCairnError } from '../src/index.js';
import type { Embedder } from '../src/index.js';
import { queryTerms } from '../src/core/lexical.js';
import type { MemoryInput } from '../src/interfaces/memory.js';
import { stats, timeEach as timeSeries, type Stats } from './measure.js';
import { coreNote, detail, gaussian, noisyCopy, PrecomputedEmbedder, query, rng } from './synthetic-notes.js';

/** Norm of the Gaussian noise added to a pool note's unit vector for each stored memory (see nextMemory). */
const NOISE_NORM = 0.5;

/** Wall-time budget of one timed series (see timeEach). */
let SERIES_BUDGET_MS = 15_000;

const HERE = dirname(fileURLToPath(import.meta.url));
/** Repository root, whether this runs from bench/ (ts) or dist/bench/ (js). */
const ROOT = resolve(HERE, HERE.includes(`${join('dist', 'bench')}`) ? '../..' : '..');

// ------------------------------------------------------------------------------------------------ options

interface Options {
  quick: boolean;
  sizes: number[];
  out: string;
  /** Fraction of the target size put in each noise namespace. */
  noiseFraction: number;
  noiseNamespaces: number;
  /** Distinct texts embedded with the real model for the bulk fill. */
  poolSize: number;
  fillBatch: number;
  samples: { searchEndToEnd: number; searchFast: number; saveEndToEnd: number; saveStoreOnly: number; embedSingle: number; loadRuns: number };
  keepDb: boolean;
  /** A store filled by an earlier run (--keep-db) to measure again, or null for a new one. */
  reuseDir: string | null;
  /** Open the store without neighbour graphs (as a short command does). */
  noGraph: boolean;
  /** Open the store without kept BM25 posting lists (as a short command does). */
  noPostingCache: boolean;
  /** Open the store without the vector scan worker (as a short command does). */
  noScanWorker: boolean;
  /** Open the store without coarse lists (as a short command does). */
  noCoarse: boolean;
  /** Page size of the new database (default: the store's). */
  pageSize: number | null;
  /** A timed series stops after this long once it has 30 samples. */
  seriesBudgetMs: number;
  /** A size's fill stops after this long and the size is measured as reached (null: no limit). */
  fillBudgetMs: number | null;
}

function parseArgs(argv: string[]): Options {
  const quick = argv.includes('--quick');
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const sizes = value('--sizes')
    ?.split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0) ?? (quick ? [300, 1000] : [1_000, 10_000, 100_000]);
  const out = resolve(value('--out') ?? join(ROOT, 'bench', 'results', quick ? 'quick' : '', 'latency.json'));
  return {
    quick,
    sizes: [...sizes].sort((a, b) => a - b),
    out,
    noiseFraction: 0.1,
    noiseNamespaces: 3,
    poolSize: Number(value('--pool') ?? (quick ? 128 : 512)),
    fillBatch: 2_000,
    samples: quick
      ? { searchEndToEnd: 20, searchFast: 50, saveEndToEnd: 15, saveStoreOnly: 50, embedSingle: 10, loadRuns: 1 }
      : { searchEndToEnd: 100, searchFast: 300, saveEndToEnd: 60, saveStoreOnly: 300, embedSingle: 50, loadRuns: 3 },
    keepDb: argv.includes('--keep-db') || value('--reuse-db') !== undefined,
    reuseDir: value('--reuse-db') ? resolve(value('--reuse-db') as string) : null,
    noGraph: argv.includes('--no-graph'),
    noPostingCache: argv.includes('--no-posting-cache'),
    noScanWorker: argv.includes('--no-scan-worker'),
    noCoarse: argv.includes('--no-coarse'),
    pageSize: value('--page-size') ? Number(value('--page-size')) : null,
    seriesBudgetMs: quick ? 5_000 : 15_000,
    fillBudgetMs: value('--fill-budget-s') ? Number(value('--fill-budget-s')) * 1000 : null,
  };
}

// ----------------------------------------------------------------------------------------------- statistics

/** A timed series with this benchmark's budget per series. */
function timeEach<T>(items: T[], warmup: number, fn: (item: T) => Promise<unknown>): Promise<number[]> {
  return timeSeries(items, warmup, fn, SERIES_BUDGET_MS);
}

function log(message: string): void {
  process.stderr.write(`[latency ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

// ------------------------------------------------------------------------------------------------ embedders

/**
 * The real embedder with the time spent in the model added up, so it can be split out of an end-to-end time
 * (the write path may embed more than the memory text, e.g. the ingest filter's extra passes).
 */
class TimedEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  /** Milliseconds and texts spent in the model since the last `reset()`. */
  ms = 0;
  texts = 0;
  constructor(private readonly real: Embedder) {
    this.id = real.id;
    this.dimensions = real.dimensions;
  }
  reset(): void {
    this.ms = 0;
    this.texts = 0;
  }
  async embed(texts: string[]): Promise<Float32Array[]> {
    const t = performance.now();
    try {
      return await this.real.embed(texts);
    } finally {
      this.ms += performance.now() - t;
      this.texts += texts.length;
    }
  }
  loadTimeMs(): number | null {
    return this.real.loadTimeMs();
  }
}

// -------------------------------------------------------------------------------------------------- results

export interface StorageFacts {
  memories: number;
  fileBytes: number;
  walBytesAfterCheckpoint: number;
  pageSize: number;
  pageCount: number;
  freelistPages: number;
  bytesPerMemory: number;
  pageBytesPerMemory: number;
  /** Bytes per memory by structure (dbstat), e.g. memories table, full-text index, vector index, events. */
  breakdownPerMemory: Record<string, number>;
}

export interface VectorIndexFacts {
  state: string;
  engine: string;
  reason: string | null;
  /** Wall time from the first search at this size until the index answered (rebuild in a worker, or catch-up). */
  readyMs: number;
  builds: number;
  lastBuildMs: number | null;
  vectors: number;
  fileBytes: number;
  fileBytesPerMemory: number;
  /** Queries, recall@10 and recall@50 of store.vectorCandidates against the exhaustive search, same file. */
  recall: { queries: number; at10: number; at50: number; worstAt10: number };
  /** process.memoryUsage().rss of the bench process with the index loaded (holds the pool and engine too). */
  residentMiB: number;
  /**
   * The measured namespace's neighbour graph (the write-time likely-update check's approximate search), when the
   * namespace is large enough for one: wall time until it answered, its build in the worker, and recall@10 of
   * approximate searches against the exhaustive search (same queries as `recall`).
   */
  graph: {
    state: string;
    readyMs: number;
    buildMs: number | null;
    /** Where the graph came from: its file saved beside the store by an earlier process (loaded in loadMs), or a build. */
    source: 'file' | 'build' | null;
    loadMs: number | null;
    vectors: number;
    /** Queries as the check asks them: the vector of a memory about to be saved (a new noisy copy of a pool note). */
    recallAt10: number;
    worstAt10: number;
    /** The search queries of `recall` (text queries, which the graph never serves; between note clusters). */
    searchQueryRecallAt10: number;
    residentMiB: number;
  } | null;
  /**
   * The measured namespace's coarse lists (sqlite-coarse-lists.ts), when it is large enough for them: wall time
   * until installed, the worker's build time (or its read of the saved lists), where they came from (`file`: saved
   * beside the database by an earlier run; `build`), the rows they hold. Recall and the searches run with them.
   */
  coarse: { state: string; readyMs: number; buildMs: number | null; source: string | null; vectors: number; reason: string | null } | null;
}

export interface LevelResult {
  size: number;
  /** Live memories in the measured namespace when searches ran. */
  targetMemories: number;
  totalMemories: number;
  namespaces: number;
  /** `complete` false: the fill budget ran out, and the size was measured at `targetMemories`. */
  fill: { rows: number; ms: number; perRowMs: number; complete: boolean };
  storage: StorageFacts;
  /** The approximate vector index at this size: build, file, recall against exhaustive search, resident memory. */
  vectorIndex: VectorIndexFacts;
  search: {
    endToEnd: Stats;
    endToEndEmbedPart: Stats;
    precomputedQueryVector: Stats;
    lexicalRecencyOnly: Stats;
    vectorKnnOnly: Stats;
    /** The same KNN through sqlite-vec's exhaustive search (the fallback), for the ratio. */
    vectorKnnExhaustive: Stats;
    lexicalCandidatesOnly: Stats;
  };
  save: {
    endToEnd: Stats;
    endToEndEmbedPart: Stats;
    endToEndMinusEmbed: Stats;
    excludingEmbedding: Stats;
    /** Texts the write path sent to the model beyond the memory text (their time is subtracted). */
    extraModelTextsExcludingEmbedding: number;
  };
  ms: number;
}

export interface LatencyResults {
  benchmark: 'latency';
  quick: boolean;
  command: string;
  invokedBy: string | null;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  machine: Record<string, string | number>;
  source: { commit: string; uncommittedSourceFiles: string[] };
  config: Omit<Options, 'out' | 'keepDb' | 'reuseDir' | 'pageSize' | 'fillBudgetMs'> & {
    pageSize: number | null;
    fillBudgetMs: number | null;
    /** The store was filled by an earlier run and measured again (--reuse-db): its live memories when opened. */
    reused: { memories: number; byNamespace: Record<string, number> } | null;
  };
  method: string[];
  embedder: {
    id: string;
    dimensions: number;
    loadMsInProcess: number | null;
    loadMsFreshProcess: Stats;
    singleTextMs: Stats;
    batch32PerTextMs: Stats;
    pool: { texts: number; ms: number; perTextMs: number };
  };
  levels: LevelResult[];
  /** Generated texts the ingest filter held (left out of the pool, the fill, or a measured save). */
  heldByIngestFilter: { pool: number; poolByKind: Record<string, number>; fill: number; measured: number };
  goals: { goal: string; target: string; measured: string; met: boolean }[];
  phases: { name: string; ms: number }[];
  /** Written by hand on a run that did not finish: what happened, and where the rest was measured. */
  note?: string;
}

// ---------------------------------------------------------------------------------------------------- main

function measureStorage(path: string, memories: number): StorageFacts {
  const db = new Database(path);
  try {
    sqliteVec.load(db);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const pageCount = db.pragma('page_count', { simple: true }) as number;
    const freelistPages = db.pragma('freelist_count', { simple: true }) as number;
    const rows = db.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name').all() as { name: string; bytes: number }[];
    const groups: Record<string, number> = {};
    for (const { name, bytes } of rows) {
      const group =
        name.startsWith('memories_vec') || name.startsWith('sqlite_autoindex_memories_vec')
          ? 'vector index (vec0)'
          : name.startsWith('memories_fts')
            ? 'full-text index (FTS5)'
            : name === 'memories'
              ? 'memories table'
              : name.startsWith('memories_') || name.startsWith('sqlite_autoindex_memories')
                ? 'memories indexes'
                : name === 'events' || name.startsWith('events_') || name.startsWith('sqlite_autoindex_events')
                  ? 'event log'
                  : name === 'vector_blobs' || name.startsWith('sqlite_autoindex_vector_blobs')
                    ? 'vector blobs (event log)'
                    : 'other';
      groups[group] = (groups[group] ?? 0) + bytes;
    }
    const walPath = `${path}-wal`;
    let wal = 0;
    try {
      wal = statSync(walPath).size;
    } catch {
      wal = 0;
    }
    const fileBytes = statSync(path).size;
    const per = (b: number) => Math.round(b / memories);
    return {
      memories,
      fileBytes,
      walBytesAfterCheckpoint: wal,
      pageSize,
      pageCount,
      freelistPages,
      bytesPerMemory: per(fileBytes + wal),
      pageBytesPerMemory: per(pageCount * pageSize),
      breakdownPerMemory: Object.fromEntries(Object.entries(groups).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, per(v)])),
    };
  } finally {
    db.close();
  }
}

function machineFacts(): Record<string, string | number> {
  const db = new Database(':memory:');
  sqliteVec.load(db);
  const v = db.prepare('SELECT sqlite_version() AS sqlite, vec_version() AS vec').get() as { sqlite: string; vec: string };
  db.close();
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeMemoryGiBAtStart: Math.round((freemem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    sqlite: v.sqlite,
    sqliteVec: v.vec,
    host: hostname(),
  };
}

/** The commit measured, and the source files that differed from it at the time. */
function sourceFacts(): { commit: string; uncommittedSourceFiles: string[] } {
  const git = (args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  const commit = git(['rev-parse', '--short', 'HEAD']).stdout.trim() || 'unknown';
  const changed = git(['status', '--porcelain', '--', 'src']).stdout.split('\n').filter(Boolean).map((l) => l.slice(3));
  return { commit, uncommittedSourceFiles: changed };
}

/** Load time of the model in a fresh Node process (module import + weights + first embed). */
function freshProcessLoadMs(): number {
  const index = join(ROOT, 'dist', 'src', 'index.js');
  const script =
    `const { createUseEmbedder } = await import(${JSON.stringify(pathToFileURL(index).href)});` +
    `const e = createUseEmbedder(); const t = performance.now(); await e.embed(['warm up the model']);` +
    `process.stdout.write(JSON.stringify({ total: performance.now() - t, load: e.loadTimeMs() }));`;
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`fresh-process load failed: ${res.stderr}`);
  return (JSON.parse(res.stdout) as { load: number }).load;
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  SERIES_BUDGET_MS = opts.seriesBudgetMs;
  const started = new Date();
  const t0 = performance.now();
  // The load average, sampled at every phase boundary (timers would not fire: the synchronous driver keeps the
  // event loop busy). On a shared machine it tells how much the figures are inflated.
  const loads: number[] = [loadavg()[0] ?? 0];
  const phases: { name: string; ms: number }[] = [];
  const phase = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    log(`${name}…`);
    const out = await fn();
    const ms = Math.round(performance.now() - t);
    phases.push({ name, ms });
    loads.push(loadavg()[0] ?? 0);
    log(`${name}: ${(ms / 1000).toFixed(1)} s (load average ${(loadavg()[0] ?? 0).toFixed(2)})`);
    return out;
  };

  const source = sourceFacts();
  const dir = opts.reuseDir ?? mkdtempSync(join(tmpdir(), 'cairn-latency-'));
  if (opts.reuseDir && !existsSync(join(dir, 'bench.db'))) throw new Error(`--reuse-db: no bench.db in ${dir}`);
  const dbPath = join(dir, 'bench.db');
  const real = createUseEmbedder();
  const r = rng(20240601);

  try {
    // --- embedder: load and per-text cost
    const embedderFacts = await phase('embedder load and single-text cost', async () => {
      const t = performance.now();
      await real.embed(['warm up the model']);
      const firstCallMs = performance.now() - t;
      const loadMsInProcess = real.loadTimeMs() ?? firstCallMs;
      const fresh: number[] = [];
      for (let i = 0; i < opts.samples.loadRuns; i++) fresh.push(freshProcessLoadMs());
      const singles = Array.from({ length: opts.samples.embedSingle + 3 }, () => coreNote(r).text);
      const singleMs = await timeEach(singles, 3, (text) => real.embed([text]));
      return {
        loadMsInProcess: Math.round(loadMsInProcess),
        loadMsFreshProcess: stats(fresh),
        singleTextMs: stats(singleMs),
      };
    });

    // --- the pool of distinct notes embedded with the real model (in batches of 32)
    const pool = Array.from({ length: opts.poolSize }, () => coreNote(r));
    // Embedded 32 at a time (the embedder's own batch size); each batch is timed for the per-text batch cost.
    const batchMs: number[] = [];
    const poolVectors = await phase(`embed pool of ${opts.poolSize} texts`, async () => {
      const vectors: Float32Array[] = [];
      for (let i = 0; i < pool.length; i += 32) {
        const batch = pool.slice(i, i + 32).map((p) => p.text);
        const t = performance.now();
        vectors.push(...(await real.embed(batch)));
        if (batch.length === 32) batchMs.push((performance.now() - t) / 32);
      }
      return vectors;
    });
    const poolMs = phases[phases.length - 1]?.ms ?? 0;
    const poolFacts = { texts: pool.length, ms: poolMs, perTextMs: Math.round((poolMs / pool.length) * 100) / 100 };

    // Queries, embedded once for the paths that leave query embedding out.
    const queryCount = Math.max(opts.samples.searchEndToEnd, opts.samples.searchFast) + 10;
    const queries = [...new Set(Array.from({ length: queryCount * 2 }, () => query(r)))].slice(0, queryCount);
    const queryVectors = await phase(`embed ${queries.length} queries`, async () => real.embed(queries));

    const store = createSqliteStore({ path: dbPath, vectorIndex: { neighbourGraphs: !opts.noGraph, scanWorker: !opts.noScanWorker, coarseLists: !opts.noCoarse }, postingCache: !opts.noPostingCache, ...(opts.pageSize ? { pageSize: opts.pageSize } : {}) });
    // The same file through sqlite-vec's exhaustive search only: the ground truth for recall, and the fallback's cost.
    const exhaustive = createSqliteStore({ path: dbPath, vectorIndex: false });
    const timed = new TimedEmbedder(real);
    // Not remembering what the model embeds: every such call is timed and subtracted.
    const pre = new PrecomputedEmbedder(new TimedEmbedder(real), { remember: false });
    queries.forEach((q, i) => pre.vectors.set(q, queryVectors[i] as Float32Array));
    const tokenCounter = createGptTokenCounter();
    const target = 'github.com/acme/shop';
    const noise = Array.from({ length: opts.noiseNamespaces }, (_, i) => `github.com/acme/service-${i + 1}`);
    // Engine with the real (timed) model, and engine whose embedder serves precomputed vectors. Same store,
    // default configuration (ingest filter on).
    const realEngine = new Engine({ store, embedder: timed, tokenCounter, defaultNamespace: target });
    const preEngine = new Engine({ store, embedder: pre, tokenCounter, defaultNamespace: target });
    // The fill's engine: the same store and vectors with the ingest filter off. Every pool note was screened with
    // the filter already (below), and screening each of a million stored copies again would only cost time.
    const fillEngine = new Engine({ store, embedder: pre, tokenCounter, defaultNamespace: target, ingestFilter: { enabled: false } });
    const isHeld = (err: unknown) => isCairnError(err) && err.code === 'QUARANTINED';
    const held = { pool: 0, fill: 0, measured: 0 };

    // The ingest filter holds texts that read like instructions to a model, and a held text becomes a learned
    // anchor that holds its near neighbours too. Each text is screened first on a scratch store (same filter,
    // same vector, seed anchors only: the scratch store is replaced after every hold so nothing is learned), and
    // one it would hold is left out. The measured store then never holds anything, and learns nothing, and the
    // timings are of the normal write path.
    let scratch = createSqliteStore({ path: ':memory:' });
    let screenEngine = new Engine({ store: scratch, embedder: pre, tokenCounter, defaultNamespace: 'scratch' });
    const passes = async (m: MemoryInput, vector: Float32Array): Promise<boolean> => {
      pre.vectors.set(m.text, vector);
      try {
        await screenEngine.save({ ...m, namespace: 'scratch' });
        return true;
      } catch (err) {
        if (!isHeld(err)) throw err;
        await scratch.close();
        scratch = createSqliteStore({ path: ':memory:' });
        screenEngine = new Engine({ store: scratch, embedder: pre, tokenCounter, defaultNamespace: 'scratch' });
        return false;
      } finally {
        pre.vectors.delete(m.text);
      }
    };
    const heldPoolByKind: Record<string, number> = {};
    const screened = await phase('screen the pool with the ingest filter', async () => {
      const keep: number[] = [];
      for (const [i, p] of pool.entries()) {
        if (await passes({ text: p.text, kind: p.kind, tags: p.tags }, poolVectors[i] as Float32Array)) keep.push(i);
        else {
          held.pool++;
          heldPoolByKind[p.kind] = (heldPoolByKind[p.kind] ?? 0) + 1;
        }
      }
      return { notes: keep.map((i) => pool[i] as (typeof pool)[number]), vectors: keep.map((i) => poolVectors[i] as Float32Array) };
    });

    const counts = new Map<string, number>([target, ...noise].map((ns) => [ns, 0]));
    // A reused store: its live memories per namespace, and serial numbers past any an earlier run gave a text
    // (the fill's run from 0; each run after it from its own start time in ms), so every new text is new.
    let serial = 0;
    let reused: LatencyResults['config']['reused'] = null;
    if (opts.reuseDir) {
      const db = new Database(dbPath, { readonly: true });
      const live = db.prepare('SELECT namespace, COUNT(*) AS n FROM memories WHERE forgotten_at IS NULL AND superseded_by IS NULL GROUP BY namespace').all() as { namespace: string; n: number }[];
      db.close();
      for (const { namespace, n } of live) counts.set(namespace, n);
      reused = { memories: live.reduce((a, r) => a + r.n, 0), byNamespace: Object.fromEntries(live.map((r) => [r.namespace, r.n])) };
      serial = Date.now();
      log(`reusing ${dbPath}: ${reused.memories} live memories (${counts.get(target) ?? 0} in ${target})`);
    }
    const nowMs = Date.now();
    const noiseRng = rng(777);
    const gauss = gaussian(noiseRng);
    /**
     * A new distinct memory: the next pool note (round robin) plus a unique detail, with the pool note's real
     * vector plus Gaussian noise of norm about NOISE_NORM, renormalised. The noise makes every stored vector
     * distinct (the store keeps vectors content-addressed, and the nearest ten of a query must be well defined
     * for recall against exact search): copies of one note keep a cosine of about 0.9 to it, as paraphrases do.
     */
    const nextMemory = (namespace: string): MemoryInput => {
      const s = serial++;
      const i = s % screened.notes.length;
      const base = screened.notes[i] as (typeof pool)[number];
      const text = base.text + detail(r, s);
      const vector = noisyCopy(screened.vectors[i] as Float32Array, NOISE_NORM, gauss);
      pre.vectors.set(text, vector);
      const ageMs = Math.floor(r() * 365 * 86_400_000);
      return {
        namespace,
        text,
        kind: base.kind,
        tags: base.tags,
        importance: 1 + Math.floor(r() * 9),
        createdAt: new Date(nowMs - ageMs).toISOString(),
        metadata: { source: 'bench' },
      };
    };
    /** Saves one memory; returns false when the ingest filter held it. */
    const saveOne = async (engine: Engine, m: MemoryInput): Promise<boolean> => {
      try {
        const res = await engine.save(m);
        if (res.duplicate) throw new Error(`save: unexpected duplicate of ${JSON.stringify(m.text.slice(0, 60))}`);
        counts.set(m.namespace as string, (counts.get(m.namespace as string) ?? 0) + 1);
        return true;
      } catch (err) {
        if (!isHeld(err)) throw err;
        return false;
      } finally {
        pre.vectors.delete(m.text);
      }
    };

    const levels: LevelResult[] = [];
    /** Writes the results measured so far (after every size, so a run stopped early keeps what it measured). */
    const writeResults = (): void => {
      const goals: LatencyResults['goals'] = [];
      const targets: [number, string, number, number][] = [
        [10_000, '10k', 30, 10],
        [100_000, '100k', 50, 25],
        [1_000_000, '1M', 150, 100],
      ];
      for (const [n, label, e2eMs, cachedMs] of targets) {
        const l = levels.find((x) => x.size === n);
        if (!l) continue;
        // A size whose fill stopped early was measured at what it reached: the figure is shown, never counted as met.
        const reached = l.fill.complete ? '' : ` at ${l.targetMemories} memories (fill budget spent)`;
        const goal = (name: string, target: string, measured: string, ok: boolean) => goals.push({ goal: name, target, measured: `${measured}${reached}`, met: ok && l.fill.complete });
        goal(`search p50 at ${label}, end to end`, `≤ ${e2eMs} ms`, `${l.search.endToEnd.p50} ms`, l.search.endToEnd.p50 <= e2eMs);
        goal(`search p50 at ${label}, cached query vector`, `≤ ${cachedMs} ms`, `${l.search.precomputedQueryVector.p50} ms`, l.search.precomputedQueryVector.p50 <= cachedMs);
        if (n >= 100_000) goal(`vector recall@10 against exact search at ${label}`, '≥ 0.99', String(l.vectorIndex.recall.at10), l.vectorIndex.recall.at10 >= 0.99);
        if (n === 10_000) goal('save p50 at 10k, excluding embedding', '≤ 10 ms', `${l.save.excludingEmbedding.p50} ms`, l.save.excludingEmbedding.p50 <= 10);
        if (n === 1_000_000) goal('save p50 at 1M, excluding embedding', '≤ 2 ms', `${l.save.excludingEmbedding.p50} ms`, l.save.excludingEmbedding.p50 <= 2);
      }

      const finished = new Date();
      const results: LatencyResults = {
        benchmark: 'latency',
        quick: opts.quick,
        command: ['node', 'dist/bench/latency.js', ...process.argv.slice(2)].join(' '),
        invokedBy: process.env['CAIRN_BENCH_INVOCATION'] ?? null,
        startedAt: started.toISOString(),
        finishedAt: finished.toISOString(),
        durationMs: Math.round(performance.now() - t0),
        machine: { ...machineFacts(), loadAverage1mMedian: stats(loads).p50, loadAverage1mMax: stats(loads).max },
        source,
        config: {
          quick: opts.quick,
          sizes: opts.sizes,
          noiseFraction: opts.noiseFraction,
          noiseNamespaces: opts.noiseNamespaces,
          poolSize: opts.poolSize,
          fillBatch: opts.fillBatch,
          samples: opts.samples,
          seriesBudgetMs: opts.seriesBudgetMs,
          pageSize: opts.pageSize,
          fillBudgetMs: opts.fillBudgetMs,
          reused,
          noGraph: opts.noGraph,
          noPostingCache: opts.noPostingCache,
          noScanWorker: opts.noScanWorker,
          noCoarse: opts.noCoarse,
        },
        method: [
          'One SQLite file in a temp dir (WAL, synchronous=NORMAL), the real Engine, FTS5 and sqlite-vec; grown in place from the smallest size to the largest.',
          ...(reused ? [`The store was filled by an earlier run (--keep-db) and measured again (--reuse-db): it held ${reused.memories} live memories when opened, and a size is filled only up to what it lacked. Its earlier runs' measured saves are part of it.`] : []),
          `Target namespace holds the stated size; ${opts.noiseNamespaces} other namespaces hold ${opts.noiseFraction * 100}% of it each, so namespace filtering runs on every query.`,
          `Texts are generated coding-project notes (decisions, constraints, conventions, gotchas, config facts, command notes with file paths and identifiers). Embedding every stored text with the real model would take hours at the measured per-text cost, so ${opts.poolSize} distinct notes were embedded with it (in batches of 32, timed: the batch row of the embedder table) and each stored memory is the next of them, round robin, plus a unique ticket/author/date suffix, with that note's real vector plus Gaussian noise of norm ${NOISE_NORM} (renormalised; a copy keeps a cosine of about 0.9 to its note, about 0.8 to another copy). Texts stay distinct (no dedupe collapse) and vectors are distinct, so the nearest ten of a query are well defined for recall against exact search; each note has about size/${opts.poolSize} close copies, a harder case for an approximate search than distinct texts.`,
          `The fill: Engine.saveMany in rounds of a batch of ${opts.fillBatch} memories of the measured namespace and ${Math.round(opts.fillBatch * opts.noiseFraction)} of each other one (one transaction a batch: redaction, dedupe, event log, full-text and vector rows, exactly as a save writes them) through an engine on the same store with the ingest filter off, since every pool note was screened with it beforehand; the measured saves and searches use the default configuration (filter on).${opts.fillBudgetMs === null ? '' : ` A size's fill stops after ${opts.fillBudgetMs / 1000} s and that size is measured at what it reached (fill.complete false; its goals are shown, not counted as met).`}`,
          'Vector index: the first search at each size brings the store\'s quantised vector index (int8 codes, usearch\'s SIMD scan, exact rescoring) up to date (a rebuild in a worker thread when far behind, during which searches are exhaustive), and the time until it answers is reported. Recall@k: the ids of store.vectorCandidates(q, k) (index, rescored exactly) that are among the exhaustive search\'s k nearest on the same file (a second store with vectorIndex: false), averaged over real embedded queries. Resident memory: process.memoryUsage().rss of the bench process after that (it also holds the model, the pool and the engine).',
          'Neighbour graph: in a namespace of the store\'s graphMinVectors or more, the write-time likely-update check of every save asks a usearch HNSW graph over the same int8 codes (sqlite-neighbour-graph.ts) instead of scanning the namespace. At each such size the bench starts its build with an approximate search, waits for the worker, and reports the wall time until the graph answered, the worker\'s build time, its vectors, recall@10 of approximate searches (graph candidates scored from the codes) against the exhaustive ten, for queries as the check asks them (the vector of a new memory: a fresh noisy copy of a pool note, as many as the recall queries) and for the recall\'s text queries, and process RSS with the graph loaded (vectorIndex.residentMiB is before it). The save series run after it, so they measure the graph\'s path.' +
            (opts.noGraph ? ' This run left the graph out (--no-graph): the saves measure the exact scan of the check, as a short command does.' : ''),
          opts.noPostingCache
            ? 'BM25 candidates: FTS5 scores every match (--no-posting-cache, as a short command does).'
            : 'BM25 candidates: as in `cairn serve` and `cairn mcp`, the store keeps the posting lists of the terms searched in memory and sums FTS5\'s bm25 from them (sqlite-postings.ts: the same scores to the last bit); the first search of a term reads its list, the warm-up calls included.',
          opts.noScanWorker
            ? 'Vector scans: on the main thread (--no-scan-worker, as a short command does).'
            : 'Vector scans: as in `cairn serve` and `cairn mcp`, a namespace of 50,000 vectors or more is scanned in the store\'s scan worker (vector-codes/scan-worker.ts) from its copy of the codes, while the main thread sums the BM25 side; the first scan of a namespace sends the copy and scans on the main thread.',
          `The ingest filter is on (the default). Each pool note, and each text of an end-to-end save, was first screened on a scratch store with seed anchors only; ${held.pool} of ${opts.poolSize} generated notes were held there and left out, so the measured store never quarantines anything and learns no anchors (a held text becomes a learned anchor that holds its neighbours too).`,
          'Save end to end: Engine.save with the real model embedding the text (one text per call), default engine configuration (redaction, dedupe, ingest filter, event log). Save excluding embedding: Engine.save of a new text through the same engine code with an Embedder that returns the text\'s vector computed beforehand by the real model (a map lookup); any other text the write path sends to the model (the ingest filter\'s extra passes) goes to the real model and its time is subtracted. No engine change. The end-to-end run also records the time spent inside the model and reports end-to-end minus that as a cross-check.',
          'Search end to end: Engine.search (limit 10, default weights) with the real model embedding the query. Without query embedding: the same search with the query vector computed beforehand; lexical+recency only: weights { vector: 0 }; vector KNN alone: store.vectorCandidates with a precomputed query vector and k = 50 (the engine itself asks for 300 per signal), through the index and through the exhaustive search.',
          'Bytes per memory: main file + WAL after PRAGMA wal_checkpoint(TRUNCATE), divided by all memories in the file (every namespace); the breakdown comes from the dbstat table.',
          `Timings are wall-clock per call, sequential, after a few warm-up calls; nearest-rank percentiles from a single run on a shared 2-core machine. A series stops after ${opts.seriesBudgetMs / 1000} s once it holds 30 samples, so slow paths at 100k have fewer samples (n is in the JSON).`,
        ],
        embedder: { id: real.id, dimensions: real.dimensions, ...embedderFacts, batch32PerTextMs: stats(batchMs), pool: poolFacts },
        levels,
        heldByIngestFilter: { ...held, poolByKind: heldPoolByKind },
        goals,
        phases,
      };
      mkdirSync(dirname(opts.out), { recursive: true });
      writeFileSync(opts.out, `${JSON.stringify(results, null, 2)}\n`);
      log(`wrote ${opts.out} in ${(results.durationMs / 1000).toFixed(1)} s`);
    };

    for (const size of opts.sizes) {
      const levelStart = performance.now();
      // --- fill: target namespace to `size` live memories, each noise namespace to size × noiseFraction, in
      // rounds (a batch of the target, a proportional one of each noise namespace), so a fill stopped by the
      // budget keeps the proportions
      const fill = await phase(`fill to ${size}`, async () => {
        const t = performance.now();
        let rows = 0;
        const want = (ns: string) => (ns === target ? size : Math.round(size * opts.noiseFraction));
        const share = (ns: string) => (ns === target ? opts.fillBatch : Math.max(1, Math.round(opts.fillBatch * opts.noiseFraction)));
        const left = () => [target, ...noise].some((ns) => (counts.get(ns) ?? 0) < want(ns));
        const inBudget = () => opts.fillBudgetMs === null || performance.now() - t < opts.fillBudgetMs;
        while (left() && inBudget()) {
          for (const ns of [target, ...noise]) {
            const n = Math.min(share(ns), want(ns) - (counts.get(ns) ?? 0));
            if (n <= 0) continue;
            const batch = Array.from({ length: n }, () => nextMemory(ns));
            try {
              const res = await fillEngine.saveMany(batch);
              const added = res.filter((x) => !x.duplicate).length;
              if (added !== n) throw new Error(`fill: ${n - added} of ${n} texts were treated as duplicates`);
              counts.set(ns, (counts.get(ns) ?? 0) + added);
              rows += added;
            } catch (err) {
              if (!isHeld(err)) throw err;
              // The batch is all or nothing: store it one by one, leaving out what the filter holds.
              for (const m of batch) (await saveOne(fillEngine, m)) ? rows++ : held.fill++;
            }
            for (const m of batch) pre.vectors.delete(m.text); // keep the map small
          }
        }
        const ms = performance.now() - t;
        return { rows, ms: Math.round(ms), perRowMs: rows ? Math.round((ms / rows) * 1000) / 1000 : 0, complete: !left() };
      });
      if (!fill.complete) log(`fill to ${size}: budget spent at ${counts.get(target)} memories in the measured namespace`);
      const totalMemories = [...counts.values()].reduce((a, b) => a + b, 0);
      const storage = await phase(`storage at ${size}`, async () => measureStorage(dbPath, totalMemories));
      const targetMemories = counts.get(target) ?? 0;
      const filterNow = () => ({ namespace: target, now: new Date().toISOString() });

      // --- the approximate index: brought up to date (a rebuild in a worker when far behind), then recall
      const vectorIndex = await phase(`vector index at ${size}`, async (): Promise<VectorIndexFacts> => {
        const t = performance.now();
        const probe = queryVectors[0] as Float32Array;
        // The first search brings the index up to date, or starts a rebuild when it is far behind.
        await store.vectorCandidates(probe, 10, filterNow());
        for (let i = 0; i < 3 && store.vectorIndex?.status().state !== 'ready'; i++) {
          await store.vectorIndex?.whenIdle();
          await store.vectorCandidates(probe, 10, filterNow());
        }
        const readyMs = Math.round(performance.now() - t);
        // Coarse lists: the first search of a large enough namespace starts their build, a later one installs them.
        let coarse: VectorIndexFacts['coarse'] = null;
        const lists = () => store.vectorIndex?.status().coarseLists;
        if (lists() && lists()?.state !== 'off' && targetMemories >= (lists()?.minVectors ?? Infinity)) {
          const tc = performance.now();
          const installed = () => lists()?.namespaces.find((n) => n.namespace === target);
          for (let i = 0; i < 3 && !installed(); i++) {
            await store.vectorCandidates(probe, 10, filterNow());
            await store.vectorIndex?.whenIdle();
            await store.vectorCandidates(probe, 10, filterNow());
          }
          const s = lists();
          coarse = { state: installed() ? 'ready' : (s?.state ?? 'off'), readyMs: Math.round(performance.now() - tc), buildMs: s?.lastBuildMs ?? null, source: s?.lastSource?.from ?? null, vectors: installed()?.vectors ?? 0, reason: s?.reason ?? null };
          log(`size ${size}: coarse lists ${coarse.state} (${coarse.vectors} vectors, from ${coarse.source} in ${coarse.buildMs} ms) in ${coarse.readyMs} ms`);
        }
        const recallQueries = queryVectors.slice(0, size >= 1_000_000 ? 30 : size >= 100_000 ? 60 : 100);
        let at10 = 0;
        let at50 = 0;
        let worstAt10 = 1;
        for (const q of recallQueries) {
          const [ann10, ann50, ex50] = [
            await store.vectorCandidates(q, 10, filterNow()),
            await store.vectorCandidates(q, 50, filterNow()),
            await exhaustive.vectorCandidates(q, 50, filterNow()),
          ];
          const ex10 = new Set(ex50.slice(0, 10).map((h) => h.id));
          const r10 = ann10.filter((h) => ex10.has(h.id)).length / Math.max(1, ex10.size);
          const ex50ids = new Set(ex50.map((h) => h.id));
          at10 += r10;
          at50 += ann50.filter((h) => ex50ids.has(h.id)).length / Math.max(1, ex50ids.size);
          worstAt10 = Math.min(worstAt10, r10);
        }
        const residentMiB = Math.round(process.memoryUsage().rss / 2 ** 20);
        // The write-time check's graph: the first approximate search starts its build, the next installs it.
        let graph: VectorIndexFacts['graph'] = null;
        const graphMin = store.vectorIndex?.status().graphs.minVectors ?? Infinity;
        if (!opts.noGraph && targetMemories >= graphMin) {
          const tg = performance.now();
          const approx = (q: Float32Array) => store.vectorCandidates(q, 10, { ...filterNow(), approximate: true });
          for (let i = 0; i < 4 && store.vectorIndex?.status().graphs.namespaces[target] === undefined; i++) {
            await approx(probe);
            await store.vectorIndex?.whenIdle();
          }
          const readyMs = Math.round(performance.now() - tg);
          const recallOf = async (qs: Float32Array[]) => {
            let sum = 0;
            let worst = 1;
            for (const q of qs) {
              const [got, want] = [await approx(q), await exhaustive.vectorCandidates(q, 10, filterNow())];
              const ids = new Set(want.map((h) => h.id));
              const r10 = got.filter((h) => ids.has(h.id)).length / Math.max(1, ids.size);
              sum += r10;
              worst = Math.min(worst, r10);
            }
            return { at10: Math.round((sum / qs.length) * 1000) / 1000, worst: Math.round(worst * 1000) / 1000 };
          };
          // What the check asks: the vector of a memory about to be saved (a new noisy copy of a pool note).
          const saveLike = recallQueries.map(() => {
            const m = nextMemory(target);
            const v = pre.vectors.get(m.text) as Float32Array;
            pre.vectors.delete(m.text);
            return v;
          });
          const [saves, searches] = [await recallOf(saveLike), await recallOf(recallQueries)];
          const g = store.vectorIndex?.status().graphs;
          graph = {
            state: g?.state ?? 'none',
            readyMs,
            buildMs: g?.lastBuildMs ?? null,
            source: g?.lastSource ?? null,
            loadMs: g?.lastLoadMs ?? null,
            vectors: g?.namespaces[target] ?? 0,
            recallAt10: saves.at10,
            worstAt10: saves.worst,
            searchQueryRecallAt10: searches.at10,
            residentMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
          };
          log(`size ${size}: graph ${graph.state} (${graph.vectors} vectors, ${graph.source === 'file' ? `loaded from its file in ${graph.loadMs} ms` : `built in ${graph.buildMs} ms`}) in ${readyMs} ms, recall@10 ${graph.recallAt10} (search queries ${graph.searchQueryRecallAt10})`);
        }
        const status = store.vectorIndex?.status();
        let fileBytes = 0;
        try {
          fileBytes = statSync(`${dbPath}.usearch`).size;
        } catch {
          fileBytes = 0;
        }
        const round3 = (x: number) => Math.round(x * 1000) / 1000;
        return {
          state: status?.state ?? 'off',
          engine: status?.engine ?? 'exhaustive',
          reason: status?.reason ?? null,
          readyMs,
          builds: status?.builds ?? 0,
          lastBuildMs: status?.lastBuildMs ?? null,
          vectors: status?.vectors ?? 0,
          fileBytes,
          fileBytesPerMemory: Math.round(fileBytes / Math.max(1, totalMemories)),
          recall: { queries: recallQueries.length, at10: round3(at10 / recallQueries.length), at50: round3(at50 / recallQueries.length), worstAt10: round3(worstAt10) },
          residentMiB,
          graph,
          coarse,
        };
      });
      log(`size ${size}: index ${vectorIndex.state} in ${vectorIndex.readyMs} ms, recall@10 ${vectorIndex.recall.at10}, rss ${vectorIndex.residentMiB} MiB`);

      // --- search
      const search = await phase(`search at ${size}`, async () => {
        const filter = filterNow;
        const pool50 = 50; // fifty candidates (the engine itself asks for max(limit × 5, 300) per signal)
        const e2eEmbed: number[] = [];
        const e2e = await timeEach(queries.slice(0, opts.samples.searchEndToEnd + 5), 5, async (q) => {
          timed.reset();
          await realEngine.search(q, { namespace: target });
          e2eEmbed.push(timed.ms);
        });
        const fast = queries.slice(0, opts.samples.searchFast + 5);
        const withoutModel = (run: (q: string) => Promise<unknown>) => async (q: string) => {
          pre.model.reset();
          await run(q);
          return pre.model.ms; // nothing is expected here; subtracted if the engine embedded anything else
        };
        const precomputed = await timeEach(fast, 5, withoutModel((q) => preEngine.search(q, { namespace: target })));
        const lexRec = await timeEach(fast, 5, withoutModel((q) => preEngine.search(q, { namespace: target, weights: { vector: 0 } })));
        const vec = await timeEach(
          fast.map((q) => pre.vectors.get(q) as Float32Array),
          5,
          (v) => store.vectorCandidates(v, pool50, filter()),
        );
        const vecExhaustive = await timeEach(
          fast.map((q) => pre.vectors.get(q) as Float32Array),
          5,
          (v) => exhaustive.vectorCandidates(v, pool50, filter()),
        );
        const lex = await timeEach(fast, 5, (q) => store.lexicalCandidates(queryTerms(q), pool50, filter()));
        return {
          endToEnd: stats(e2e),
          endToEndEmbedPart: stats(e2eEmbed.slice(5)),
          precomputedQueryVector: stats(precomputed),
          lexicalRecencyOnly: stats(lexRec),
          vectorKnnOnly: stats(vec),
          vectorKnnExhaustive: stats(vecExhaustive),
          lexicalCandidatesOnly: stats(lex),
        };
      });

      // --- save
      const save = await phase(`save at ${size}`, async () => {
        const embedPart: number[] = [];
        // Texts for the end-to-end saves, screened with their real vectors (computed here, outside the timing;
        // the measured save embeds them again).
        const inputs: MemoryInput[] = [];
        while (inputs.length < opts.samples.saveEndToEnd + 3) {
          const candidates = Array.from({ length: 32 }, () => nextMemory(target));
          const vectors = await real.embed(candidates.map((m) => m.text));
          for (const [i, m] of candidates.entries()) {
            pre.vectors.delete(m.text); // the real model embeds these
            if (inputs.length < opts.samples.saveEndToEnd + 3 && (await passes(m, vectors[i] as Float32Array))) inputs.push(m);
          }
        }
        const e2e = await timeEach(inputs, 3, async (m) => {
          timed.reset();
          if (!(await saveOne(realEngine, m))) held.measured++;
          embedPart.push(timed.ms);
        });
        const embedMeasured = embedPart.slice(3);
        let extraTexts = 0;
        const storeOnly = await timeEach(
          Array.from({ length: opts.samples.saveStoreOnly + 5 }, () => nextMemory(target)),
          5,
          async (m) => {
            pre.model.reset();
            if (!(await saveOne(preEngine, m))) held.measured++;
            extraTexts += pre.model.texts;
            return pre.model.ms; // extra passes of the write path (e.g. the ingest filter) that used the model
          },
        );
        return {
          endToEnd: stats(e2e),
          endToEndEmbedPart: stats(embedMeasured),
          endToEndMinusEmbed: stats(e2e.map((ms, i) => ms - (embedMeasured[i] ?? 0))),
          excludingEmbedding: stats(storeOnly),
          extraModelTextsExcludingEmbedding: extraTexts,
        };
      });

      const level: LevelResult = {
        size,
        targetMemories,
        totalMemories,
        namespaces: 1 + noise.length,
        fill,
        storage,
        vectorIndex,
        search,
        save,
        ms: Math.round(performance.now() - levelStart),
      };
      levels.push(level);
      writeResults();
      log(
        `size ${size}: search e2e p50 ${search.endToEnd.p50} ms (no query embedding ${search.precomputedQueryVector.p50} ms), ` +
          `save excl. embedding p50 ${save.excludingEmbedding.p50} ms, ${storage.bytesPerMemory} B/memory`,
      );
    }
    await store.close();
    await exhaustive.close();
    await scratch.close();

    writeResults();
  } finally {
    if (!opts.keepDb) rmSync(dir, { recursive: true, force: true });
    else log(`kept ${dbPath}`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
