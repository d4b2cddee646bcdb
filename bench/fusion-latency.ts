/**
 * Search latency of score fusion against rank fusion on one 10,000-memory store, in one run: the same
 * engine, the same queries, the two methods interleaved call by call so the shared machine's noise falls on
 * both. Rank fusion (`fusion: 'rrf'`) is the path search took before score fusion (candidates, fusion,
 * same-topic step); score fusion adds a term-frequency lookup for the BM25 scale, query-term coverage, the
 * relevance floor and the session context (every stored memory belongs to a session of 20). A third arm,
 * score fusion with `termCoverage: null` on the same store, gives what the coverage step costs.
 *
 *   node dist/bench/fusion-latency.js [--size <n>] [--samples <n>] [--out <file>] [--quick]
 *
 * The store is filled as bench/latency.ts fills it: pool notes embedded by the real model, each stored memory
 * the next pool note plus a unique suffix, its vector the pool note's nudged by 1e-6 × serial. Query vectors
 * are computed beforehand, so the timings leave out the model (the same for both methods).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import type { FusionMethod, MemoryInput } from '../src/interfaces/memory.js';
import { stats, timeAlternating, writeResults } from './measure.js';
import { coreNote, detail, PrecomputedEmbedder, query, rng } from './synthetic-notes.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const NS = 'bench/fusion';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let size = 10_000;
  let samples = 200;
  let out: string | null = join(repoRoot, 'bench', 'results', 'fusion-latency.json');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--size') size = Number(argv[++i]);
    else if (a === '--samples') samples = Number(argv[++i]);
    else if (a === '--out') out = resolve(argv[++i] ?? '');
    else if (a === '--quick') {
      size = 1000;
      samples = 40;
    } else throw new Error(`unknown argument ${a}; usage: node dist/bench/fusion-latency.js [--size <n>] [--samples <n>] [--out <file>] [--quick]`);
  }
  const started = new Date();
  const r = rng(11);
  const pool = Array.from({ length: 256 }, () => coreNote(r));
  const queries = Array.from({ length: 60 }, () => query(r));
  const embedder = new PrecomputedEmbedder(createUseEmbedder());
  await embedder.embed(pool.map((p) => p.text));
  await embedder.embed(queries);

  const dir = mkdtempSync(join(tmpdir(), 'cairn-fusion-latency-'));
  const store = createSqliteStore({ path: join(dir, 'fusion.db') });
  const engine = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, countRecalls: false });
  // The same store searched without query-term coverage (term-coverage.ts): what that step costs.
  const plain = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, countRecalls: false, termCoverage: null });
  try {
    for (let done = 0; done < size; ) {
      const batch: MemoryInput[] = [];
      for (let i = 0; i < 500 && done < size; i++, done++) {
        const p = pool[done % pool.length] as (typeof pool)[number];
        const text = `${p.text}${detail(r, done)}`;
        const v = Float32Array.from(embedder.vectors.get(p.text) as Float32Array);
        v[0] = (v[0] as number) + 1e-6 * done;
        embedder.vectors.set(text, v);
        // Sessions of 20 notes, as captured notes carry the session they were written in: score fusion's
        // session context has groups to work on.
        batch.push({ text, kind: p.kind, tags: p.tags, metadata: { sessionId: `s-${Math.floor(done / 20)}` } });
      }
      await engine.saveMany(batch);
    }
    type Arm = FusionMethod | 'scoreWithoutCoverage';
    const returned: Record<Arm, number> = { score: 0, rrf: 0, scoreWithoutCoverage: 0 };
    const arms: Arm[] = ['rrf', 'score', 'scoreWithoutCoverage'];
    const items = Array.from({ length: samples }, (_, i) => queries[i % queries.length] as string);
    let warming = 10 * arms.length; // the warm-up's results are not counted
    const timed = await timeAlternating(arms, items, 10, async (arm, q) => {
      const found = arm === 'scoreWithoutCoverage' ? await plain.search(q, { fusion: 'score', limit: 10, countRecall: false }) : await engine.search(q, { fusion: arm, limit: 10, countRecall: false });
      if (warming > 0) warming--;
      else returned[arm] += found.length;
    });
    const s = { score: stats(timed.score), rrf: stats(timed.rrf), scoreWithoutCoverage: stats(timed.scoreWithoutCoverage) };
    const result = {
      benchmark: 'search latency, score fusion vs rank fusion, one store, one run',
      command: `node dist/bench/fusion-latency.js ${argv.join(' ')}`.trim(),
      startedAt: started.toISOString(),
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? null, node: process.version, loadAverage: loadavg().map((x) => Math.round(x * 100) / 100) },
      size,
      samplesPerMethod: samples,
      method:
        'Engine.search(query, { fusion, limit: 10 }) with query vectors computed beforehand; the three arms interleaved per query (order rotating); wall-clock ms per call after 10 warm-up pairs; nearest-rank percentiles',
      searchMs: s,
      ratioP50: Math.round((s.score.p50 / s.rrf.p50) * 1000) / 1000,
      ratioP95: Math.round((s.score.p95 / s.rrf.p95) * 1000) / 1000,
      coverageRatioP50: Math.round((s.score.p50 / s.scoreWithoutCoverage.p50) * 1000) / 1000,
      coverageRatioP95: Math.round((s.score.p95 / s.scoreWithoutCoverage.p95) * 1000) / 1000,
      meanResults: { score: returned.score / samples, rrf: returned.rrf / samples, scoreWithoutCoverage: returned.scoreWithoutCoverage / samples },
    };
    console.log(`search at ${size}: score fusion p50 ${s.score.p50} ms / p95 ${s.score.p95} ms; rank fusion p50 ${s.rrf.p50} ms / p95 ${s.rrf.p95} ms; ratio p50 ${result.ratioP50}, p95 ${result.ratioP95}; without coverage p50 ${s.scoreWithoutCoverage.p50} ms, coverage ratio p50 ${result.coverageRatioP50}, p95 ${result.coverageRatioP95}`);
    if (out) writeResults(out, result);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`fusion-latency bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
