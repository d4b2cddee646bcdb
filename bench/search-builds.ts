/**
 * Search with a cached query vector, several builds of cairn side by side in one process: each build opens its
 * own copy of one store, and the builds take turns query by query (measure.ts timeAlternating), so a load that
 * comes and goes on a shared machine falls on all of them alike. Reports each build's p50 wall clock and p50
 * process CPU time per search, and both as ratios to the first build.
 *
 *   node dist/bench/search-builds.js --db <store.db> --build old=/tmp/old/dist --build new=dist
 *                                    [--queries 300] [--warmup 10] [--lexical-only] [--out file.json]
 *
 * `--build name=dist:postings` opens that build's store with kept BM25 posting lists (`postingCache`, as `cairn
 * serve` and `cairn mcp` do; builds before 19eb7a0 ignore it); the same dist may run with and without.
 *
 * A build is a compiled `dist` folder (another commit's: `git worktree add --detach /tmp/old <commit>`, link
 * node_modules, `npx tsc -p tsconfig.json` there). The store: one the latency bench kept (`node
 * dist/bench/latency.js --sizes 10000 --keep-db` logs its path); each build migrates its own copy. Queries
 * are the latency bench's kind (synthetic-notes.ts), embedded once with the real model outside the timing;
 * every build is served the same vectors. --lexical-only searches with vector weight 0, as the latency bench's
 * "lexical + recency" series does. Results are counted as recalled, as in the latency bench.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createUseEmbedder } from '../src/index.js';
import { percentile, timeAlternating, writeResults } from './measure.js';
import { PrecomputedEmbedder, query, rng } from './synthetic-notes.js';

const TARGET = 'github.com/acme/shop';

interface Build {
  name: string;
  dist: string;
  postings: boolean;
}

/** What this bench uses of a build's src/index.js (any commit's). */
interface BuildModule {
  createSqliteStore(config: { path: string; vectorIndex: { neighbourGraphs: boolean }; postingCache?: boolean }): BuildStore;
  Engine: new (options: { store: BuildStore; embedder: unknown; defaultNamespace: string }) => { search(q: string, options: object): Promise<unknown[]> };
}

interface BuildStore {
  vectorCandidates(v: Float32Array, k: number, filter: { namespace: string; now: string }): Promise<unknown>;
  vectorIndex?: { status(): { state: string }; whenIdle(): Promise<void> } | null;
  close(): Promise<void>;
}

function parseArgs(argv: string[]) {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const builds: Build[] = argv.flatMap((a, i) => (a === '--build' && argv[i + 1] ? [argv[i + 1] as string] : [])).map((spec) => {
    const [name, where] = spec.split('=');
    const [dist, flag] = (where ?? '').split(':');
    if (!name || !dist || (flag !== undefined && flag !== 'postings')) throw new Error(`--build ${spec}: expected name=dist-folder[:postings]`);
    return { name, dist: resolve(dist), postings: flag === 'postings' };
  });
  const db = value('--db');
  if (!db || builds.length < 1) throw new Error('usage: --db <store.db> --build name=dist [--build name=dist …]');
  return {
    db: resolve(db),
    builds,
    queries: Number(value('--queries') ?? 300),
    warmup: Number(value('--warmup') ?? 10),
    lexicalOnly: argv.includes('--lexical-only'),
    out: value('--out') ? resolve(value('--out') as string) : null,
  };
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const r = rng(20261202);
  const texts = [...new Set(Array.from({ length: opts.queries * 3 }, () => query(r)))].slice(0, opts.queries);
  // Texts other than the queries (the relevance floor's background sentences) are embedded by the first search
  // of the warm-up, and then served to every build.
  const embedder = new PrecomputedEmbedder(createUseEmbedder());
  (await embedder.model.embed(texts)).forEach((v, i) => embedder.vectors.set(texts[i] as string, v));
  const vectors = embedder.vectors;
  const dir = mkdtempSync(join(tmpdir(), 'cairn-search-builds-'));
  const opened: { build: Build; store: BuildStore; search: (q: string) => Promise<unknown>; index: string }[] = [];
  try {
    for (const build of opts.builds) {
      const cairn = (await import(pathToFileURL(join(build.dist, 'src', 'index.js')).href)) as BuildModule;
      const path = join(dir, `${build.name}.db`);
      copyFileSync(opts.db, path);
      if (existsSync(`${opts.db}-wal`)) copyFileSync(`${opts.db}-wal`, `${path}-wal`);
      const store = cairn.createSqliteStore({ path, vectorIndex: { neighbourGraphs: true }, ...(build.postings ? { postingCache: true } : {}) });
      const engine = new cairn.Engine({ store, embedder, defaultNamespace: TARGET });
      // The int8 index brought up (or built in its worker) before anything is timed.
      const probe = () => store.vectorCandidates(vectors.get(texts[0] as string) as Float32Array, 10, { namespace: TARGET, now: new Date().toISOString() });
      await probe();
      for (let i = 0; i < 5 && store.vectorIndex && store.vectorIndex.status().state !== 'ready'; i++) {
        await store.vectorIndex.whenIdle();
        await probe();
      }
      const options = opts.lexicalOnly ? { namespace: TARGET, weights: { vector: 0 } } : { namespace: TARGET };
      opened.push({ build, store, search: (q) => engine.search(q, options), index: store.vectorIndex?.status().state ?? 'off' });
    }
    const cpu = new Map<string, number[]>(opts.builds.map((b) => [b.name, []]));
    const load = [loadavg()[0] ?? 0];
    const wall = await timeAlternating(
      opts.builds.map((b) => b.name),
      texts,
      opts.warmup,
      async (name, q) => {
        const side = opened.find((o) => o.build.name === name) as (typeof opened)[number];
        const before = process.cpuUsage();
        await side.search(q);
        const used = process.cpuUsage(before);
        cpu.get(name)?.push((used.user + used.system) / 1000);
      },
    );
    load.push(loadavg()[0] ?? 0);
    const p50 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);
    const first = opts.builds[0] as Build;
    // The warm-up's CPU samples are left out, as timeAlternating leaves out its wall-clock ones.
    const cpuTimed = (name: string) => (cpu.get(name) ?? []).slice(opts.warmup);
    const rows = opened.map(({ build, index }) => {
      const w = p50(wall[build.name] ?? []);
      const c = p50(cpuTimed(build.name));
      return {
        build: build.name,
        dist: build.dist,
        index,
        wallP50Ms: Math.round(w * 100) / 100,
        cpuP50Ms: Math.round(c * 100) / 100,
        wallRatio: Math.round((w / p50(wall[first.name] ?? [])) * 1000) / 1000,
        cpuRatio: Math.round((c / p50(cpuTimed(first.name))) * 1000) / 1000,
      };
    });
    for (const row of rows) {
      process.stdout.write(
        `${row.build.padEnd(12)} wall p50 ${row.wallP50Ms.toFixed(2)} ms (×${row.wallRatio.toFixed(3)})  cpu p50 ${row.cpuP50Ms.toFixed(2)} ms (×${row.cpuRatio.toFixed(3)})  index ${row.index}\n`,
      );
    }
    process.stdout.write(`${texts.length} queries, ${opts.lexicalOnly ? 'lexical + recency only' : 'all signals'}, load average ${load.map((l) => l.toFixed(2)).join(' → ')}\n`);
    if (opts.out) writeResults(opts.out, { date: new Date().toISOString(), db: opts.db, queries: texts.length, lexicalOnly: opts.lexicalOnly, load, builds: rows });
  } finally {
    for (const o of opened) await o.store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
