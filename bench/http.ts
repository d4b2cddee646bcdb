/**
 * The team server under load: `cairn serve --auth` (the real bin, its own process) on a store of 10,000
 * memories, driven by autocannon on 127.0.0.1 with 1, 8 and 32 concurrent clients: search (GET /api/search,
 * query embedded by the server) and save (POST /api/memories, every text new, so each one is embedded and
 * screened). Throughput, p50/p95/p99 latency per run from every response time, and the server's resident
 * memory (sampled from /proc) at rest and under load. Each embedding path runs against its own copy of the
 * same store, one after the other: `pool` (the default: worker threads, one per core), `pool-nice`
 * (CAIRN_EMBED_NICE=10: the same threads yield to the event loop when both want a core) and `thread`
 * (CAIRN_EMBED_WORKERS=0: the model on the server's main thread, as before the pool). Each run also splits
 * the server's CPU between its main thread and the others (embedding threads, V8 and libuv helpers).
 *
 *   node dist/bench/http.js [--quick] [--memories 10000] [--duration 10] [--embedders pool,pool-nice,thread]
 *     [--connections 1,8,32] [--operations search,save] [--profile DIR] [--out bench/results/http.json]
 *
 * --profile DIR runs the server under `node --cpu-prof` (profiles of every thread in DIR/<embedding>/,
 * written when the server stops); its CPU figures then include the profiler's own cost.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createGptTokenCounter, createSqliteStore, createUseEmbedder, Engine } from '../src/index.js';
import type { MemoryInput } from '../src/interfaces/memory.js';
import { percentile } from './measure.js';
import { coreNote, detail, PrecomputedEmbedder, query, rng } from './synthetic-notes.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, HERE.includes(join('dist', 'bench')) ? '../..' : '..');
const BIN = join(ROOT, 'bin', 'cairn.js');
const NAMESPACE = 'github.com/acme/shop';

interface Options {
  quick: boolean;
  memories: number;
  durationS: number;
  connections: number[];
  embedders: Embedding[];
  operations: Array<'search' | 'save'>;
  /** When set, the server runs under `node --cpu-prof` and writes its profiles (one per thread) here. */
  profileDir: string | null;
  out: string;
}

type Embedding = 'pool' | 'pool-nice' | 'thread';
/** The server's environment for each embedding path. */
const EMBEDDING_ENV: Record<Embedding, Record<string, string>> = { pool: {}, 'pool-nice': { CAIRN_EMBED_NICE: '10' }, thread: { CAIRN_EMBED_WORKERS: '0' } };

function parseArgs(argv: string[]): Options {
  const quick = argv.includes('--quick');
  const opts: Options = {
    quick,
    memories: quick ? 1000 : 10_000,
    durationS: quick ? 3 : 10,
    connections: [1, 8, 32],
    embedders: ['pool', 'thread'],
    operations: ['search', 'save'],
    profileDir: null,
    out: join(ROOT, 'bench', 'results', 'http.json'),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[i + 1];
    if (a === '--memories' && v) opts.memories = Number(argv[++i]);
    else if (a === '--duration' && v) opts.durationS = Number(argv[++i]);
    else if (a === '--embedders' && v) opts.embedders = (argv[++i] as string).split(',').map((e) => {
      if (!(e in EMBEDDING_ENV)) throw new Error(`--embedders takes pool, pool-nice and/or thread (got ${e})`);
      return e as Embedding;
    });
    else if (a === '--connections' && v) opts.connections = (argv[++i] as string).split(',').map(Number);
    else if (a === '--operations' && v) opts.operations = (argv[++i] as string).split(',').map((o) => {
      if (o !== 'search' && o !== 'save') throw new Error(`--operations takes search and/or save (got ${o})`);
      return o;
    });
    else if (a === '--profile' && v) opts.profileDir = resolve(argv[++i] as string);
    else if (a === '--out' && v) opts.out = resolve(argv[++i] as string);
    else if (a !== '--quick') throw new Error(`unknown argument ${a}; usage: node dist/bench/http.js [--quick] [--memories N] [--duration S] [--embedders pool,pool-nice,thread] [--connections 1,8,32] [--operations search,save] [--profile DIR] [--out F]`);
  }
  return opts;
}

function log(message: string): void {
  process.stderr.write(`[http ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}


const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/** Resident memory of a process in MiB, from /proc (Linux). */
function rssMiB(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/u.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** User + system CPU time in ms from a /proc stat file (a process's, every thread, or one thread's). */
function statCpuMs(path: string): number {
  const fields = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks; USER_HZ is 100 on Linux
}

/** CPU time (user + system, every thread) a process has used, in ms, from /proc (Linux). */
function cpuMs(pid: number): number | null {
  try {
    return statCpuMs(`/proc/${pid}/stat`);
  } catch {
    return null;
  }
}

/** CPU time (user + system) of the process's main thread and of all its other threads, in ms (Linux). */
function threadCpuMs(pid: number): { main: number; others: number } | null {
  try {
    let main = 0;
    let others = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      let ms: number;
      try {
        ms = statCpuMs(`/proc/${pid}/task/${tid}/stat`);
      } catch {
        continue; // the thread ended between the listing and the read
      }
      if (tid === String(pid)) main += ms;
      else others += ms;
    }
    return { main, others };
  } catch {
    return null;
  }
}

/** Fills the store through the engine: a pool of real embeddings, each reused with a distinct trailing detail. */
async function fill(dbPath: string, count: number): Promise<number> {
  const t = performance.now();
  const real = createUseEmbedder();
  const embedder = new PrecomputedEmbedder(real);
  const store = createSqliteStore({ path: dbPath });
  const engine = new Engine({
    store,
    embedder,
    tokenCounter: createGptTokenCounter(),
    defaultNamespace: NAMESPACE,
    ingestFilter: { enabled: false },
    snapshotEvery: 0,
  });
  const r = rng(7_2024);
  const pool = Array.from({ length: Math.min(400, count) }, () => coreNote(r));
  const poolVectors = await real.embed(pool.map((p) => p.text));
  const inputs: MemoryInput[] = [];
  for (let i = 0; i < count; i++) {
    const base = pool[i % pool.length] as { text: string; kind: MemoryInput['kind']; tags: string[] };
    const text = `${base.text}${detail(r, i)}`;
    embedder.vectors.set(text, poolVectors[i % pool.length] as Float32Array);
    inputs.push({ text, kind: base.kind, tags: base.tags, namespace: NAMESPACE, metadata: { source: 'import' } });
  }
  for (let i = 0; i < inputs.length; i += 500) await engine.saveMany(inputs.slice(i, i + 500));
  await store.close();
  return Math.round(performance.now() - t);
}

interface Served {
  child: ChildProcess;
  base: string;
  stderr: () => string;
}

async function startServer(dbPath: string, cwd: string, env: Record<string, string>, profileDir: string | null): Promise<Served> {
  const profile = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const child = spawn(process.execPath, [...profile, BIN, 'serve', '--auth', '--rate-limit', '0', '--quiet', '--port', '0', '--db', dbPath, '--namespace', NAMESPACE], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const base = await new Promise<string>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`cairn serve did not start: ${stderr}`)), 60_000);
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const m = /serving MCP at (http:\/\/\S+)\/mcp /u.exec(stderr);
      if (m?.[1]) {
        clearTimeout(timer);
        resolvePromise(m[1]);
      }
    });
    child.on('exit', (code) => reject(new Error(`cairn serve exited ${code}: ${stderr}`)));
  });
  return { child, base, stderr: () => stderr };
}

interface RunResult {
  embedding: Embedding;
  operation: 'search' | 'save';
  connections: number;
  durationS: number;
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  throughputPerS: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number; mean: number };
  serverRssMiB: { start: number | null; max: number | null; end: number | null };
  /** Server CPU time per answered request: what a request costs whatever the machine's load. */
  serverCpuMsPerRequest: number | null;
  /**
   * The same split by thread: the main thread (HTTP, ranking, SQLite) and every other one (embedding threads,
   * V8's and libuv's helpers). Only the live threads are counted, so a thread that ended during the run is not.
   */
  serverCpuMsPerRequestByThread: { main: number; others: number } | null;
  loadAverage1m: number;
}

async function run(served: Served, embedding: Embedding, token: string, operation: 'search' | 'save', connections: number, durationS: number, seed: number): Promise<RunResult> {
  const r = rng(seed);
  const queries = Array.from({ length: 500 }, () => query(r));
  let serial = 0;
  const latencies: number[] = [];
  const pid = served.child.pid as number;
  const rss: number[] = [];
  const startRss = rssMiB(pid);
  const startCpu = cpuMs(pid);
  const startThreads = threadCpuMs(pid);
  const sampler = setInterval(() => {
    const v = rssMiB(pid);
    if (v !== null) rss.push(v);
  }, 250);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const request =
    operation === 'search'
      ? {
          method: 'GET',
          setupRequest: (req: { method?: string; path?: string }) => ({ ...req, path: `/api/search?limit=10&q=${encodeURIComponent(queries[serial++ % queries.length] as string)}` }),
        }
      : {
          method: 'POST',
          path: '/api/memories',
          setupRequest: (req: { method?: string; path?: string }) => {
            const n = coreNote(r);
            return { ...req, body: JSON.stringify({ text: `${n.text}${detail(r, 1_000_000 + seed * 100_000 + serial++)}`, kind: n.kind, tags: n.tags }) };
          },
        };
  const result = await autocannon({
    url: served.base,
    connections,
    duration: durationS,
    timeout: 60,
    headers,
    requests: [request],
    setupClient: (client) => {
      client.on('response', (_status: number, _bytes: number, ms: number) => latencies.push(ms));
    },
  });
  clearInterval(sampler);
  const endCpu = cpuMs(pid);
  const endThreads = threadCpuMs(pid);
  latencies.sort((a, b) => a - b);
  const ok = result['2xx'];
  return {
    embedding,
    operation,
    connections,
    durationS: round(result.duration, 2),
    requests: result.requests.total,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    throughputPerS: round(ok / result.duration, 1),
    latencyMs: {
      p50: round(percentile(latencies, 50)),
      p95: round(percentile(latencies, 95)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies[latencies.length - 1] ?? NaN),
      mean: round(latencies.reduce((s, x) => s + x, 0) / Math.max(1, latencies.length)),
    },
    serverRssMiB: { start: startRss, max: rss.length ? Math.max(...rss) : null, end: rssMiB(pid) },
    serverCpuMsPerRequest: startCpu !== null && endCpu !== null && ok > 0 ? round((endCpu - startCpu) / ok) : null,
    serverCpuMsPerRequestByThread:
      startThreads && endThreads && ok > 0 ? { main: round((endThreads.main - startThreads.main) / ok), others: round((endThreads.others - startThreads.others) / ok) } : null,
    loadAverage1m: round(loadavg()[0] ?? 0, 2),
  };
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const started = new Date();
  const loadAtStart = loadavg().map((x) => round(x, 2));
  const dir = mkdtempSync(join(tmpdir(), 'cairn-http-bench-'));
  const dbPath = join(dir, 'bench.db');
  let served: Served | null = null;
  try {
    log(`filling ${opts.memories} memories…`);
    const fillMs = await fill(dbPath, opts.memories);
    log(`filled in ${(fillMs / 1000).toFixed(1)} s`);
    const created = spawnSync(process.execPath, [BIN, 'token', 'create', '--namespace', NAMESPACE, '--scope', 'write', '--json', '--db', dbPath], { encoding: 'utf8' });
    if (created.status !== 0) throw new Error(`token create failed: ${created.stderr}`);
    const token = (JSON.parse(created.stdout) as { token: string }).token;

    const runs: RunResult[] = [];
    const rssByEmbedding: Record<string, unknown> = {};
    for (const embedding of opts.embedders) {
      // Each path gets its own copy of the filled store, so the saves of one do not grow the other's.
      const copy = join(dir, `bench-${embedding}.db`);
      copyFileSync(dbPath, copy);
      if (existsSync(`${dbPath}-wal`)) copyFileSync(`${dbPath}-wal`, `${copy}-wal`);
      served = await startServer(copy, dir, EMBEDDING_ENV[embedding], opts.profileDir ? join(opts.profileDir, embedding) : null);
      const pid = served.child.pid as number;
      const rssAtStart = rssMiB(pid);
      // Warm-up: the model loads on the first search; these requests are not measured.
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${served.base}/api/search?q=warm+up+${i}`, { headers: { authorization: `Bearer ${token}` } });
        if (!res.ok) throw new Error(`warm-up search failed: ${res.status} ${await res.text()}`);
      }
      // The first save embeds the ingest filter's anchor catalogue (the filled store has no cache of it yet):
      // about 2.4 s of model time on the 2-core machine, which would otherwise land in the first save run.
      const warmSave = await fetch(`${served.base}/api/memories`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Warm-up note: the benchmark server started and saved its first memory.', kind: 'note' }),
      });
      if (!warmSave.ok) throw new Error(`warm-up save failed: ${warmSave.status} ${await warmSave.text()}`);
      const rssWarm = rssMiB(pid);
      let seed = 1;
      const own: RunResult[] = [];
      for (const operation of opts.operations) {
        for (const connections of opts.connections) {
          log(`${embedding}: ${operation} with ${connections} connection(s) for ${opts.durationS} s…`);
          const r = await run(served, embedding, token, operation, connections, opts.durationS, seed++);
          own.push(r);
          log(
            `${embedding}: ${operation} ×${connections}: ${r.throughputPerS}/s, p50 ${r.latencyMs.p50} ms, p95 ${r.latencyMs.p95} ms, non-2xx ${r.non2xx}, errors ${r.errors}, rss max ${r.serverRssMiB.max} MiB, cpu ${r.serverCpuMsPerRequest} ms/request (main ${r.serverCpuMsPerRequestByThread?.main}, others ${r.serverCpuMsPerRequestByThread?.others}), load ${r.loadAverage1m}`,
          );
        }
      }
      runs.push(...own);
      rssByEmbedding[embedding] = { afterStart: rssAtStart, afterWarmUp: rssWarm, atEnd: rssMiB(pid), maxUnderLoad: Math.max(...own.map((r) => r.serverRssMiB.max ?? 0)) };
      const stopping = served;
      served = null;
      stopping.child.kill('SIGTERM');
      await new Promise((r) => stopping.child.once('exit', r));
    }
    // One path over another, same operation and clients, from this run.
    const ratiosOf = (one: Embedding, other: Embedding) =>
      runs
        .filter((r) => r.embedding === one)
        .flatMap((p) => {
          const t = runs.find((r) => r.embedding === other && r.operation === p.operation && r.connections === p.connections);
          return t ? [{ operation: p.operation, connections: p.connections, throughput: round(p.throughputPerS / t.throughputPerS, 2), p95: round(p.latencyMs.p95 / t.latencyMs.p95, 2) }] : [];
        });
    const ratios = ratiosOf('pool', 'thread');
    const result = {
      benchmark: 'http',
      command: `node dist/bench/http.js ${process.argv.slice(2).join(' ')}`.trim(),
      date: started.toISOString(),
      quick: opts.quick,
      // Under the profiler the server's CPU figures include the profiler's own cost.
      profiled: opts.profileDir !== null,
      environment: { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? null, memoryGiB: round(totalmem() / 2 ** 30), loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadavg().map((x) => round(x, 2)) },
      method: {
        server: '`cairn serve --auth --rate-limit 0` (the real bin, its own process), one write token, store on a temporary SQLite file',
        store: `${opts.memories} memories in one namespace, filled through the engine before the server starts (${(fillMs / 1000).toFixed(1)} s)`,
        loadGenerator: 'autocannon 8 (npm), programmatic, against 127.0.0.1 only; each connection sends its next request when the previous one is answered',
        search: 'GET /api/search?q=<generated question>&limit=10: the server embeds the query (offline model), runs vector + BM25 + recency and fuses',
        save: 'POST /api/memories with a new generated note each time: embedded, screened by the ingest filter, redacted, stored with its event',
        latency: 'every response time of the run, percentiles computed here (nearest rank)',
        memory: 'server VmRSS from /proc/<pid>/status, sampled every 250 ms',
        cpu: 'server user + system time of all its threads from /proc/<pid>/stat over the run, divided by the answered requests; by thread from /proc/<pid>/task/<tid>/stat (the main thread is tid = pid)',
        durationS: opts.durationS,
        embedding: 'pool: CAIRN_EMBED_WORKERS unset (worker threads, one per core); pool-nice: CAIRN_EMBED_NICE=10 (the same threads at nice +10, below the main thread); thread: CAIRN_EMBED_WORKERS=0 (main thread); each on its own copy of the filled store, run one after the other',
      },
      server: { rssMiB: rssByEmbedding },
      ratiosPoolOverThread: ratios,
      ratiosPoolNiceOverPool: ratiosOf('pool-nice', 'pool'),
      runs,
    };
    mkdirSync(dirname(opts.out), { recursive: true });
    writeFileSync(opts.out, `${JSON.stringify(result, null, 2)}\n`);
    log(`wrote ${opts.out}`);
  } finally {
    if (served) {
      served.child.kill('SIGTERM');
      await new Promise((r) => served?.child.once('exit', r));
    }
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
