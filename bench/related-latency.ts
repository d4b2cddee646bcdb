/**
 * What related terms (core/related-terms.ts) cost a search: one SQLite store of generated coding notes
 * (bench/synthetic-notes.ts, one namespace, the real offline embedder's vectors), searched end to end by two
 * engines that differ only in `relatedTerms` (off, and the default), query by query in alternating order, so
 * both see the same caches and the same machine load.
 *
 *   node dist/bench/related-latency.js [--size 10000] [--queries 200] [--out bench/results/related-latency.json]
 *
 * Queries: generated engineering questions (synthetic-notes.ts `query`); the share the vocabulary expands is
 * reported. Figures: median and p95 of each engine's search time, and the ratio of the medians.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { queryTerms } from '../src/core/lexical.js';
import { defaultVocabulary } from '../src/core/related-terms.js';
import type { MemoryInput } from '../src/interfaces/memory.js';
import { coreNote, fillSynthetic, PrecomputedEmbedder, query, rng } from './synthetic-notes.js';
import { timeAlternating, writeResults } from './measure.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const log = (m: string) => process.stderr.write(`${m}\n`);
const NOW = new Date('2026-11-01T12:00:00.000Z');
const NS = 'github.com/acme/generated';

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
}
const round2 = (x: number) => Math.round(x * 100) / 100;

async function main(): Promise<void> {
  let size = 10_000;
  let count = 200;
  let out = join(repoRoot, 'bench', 'results', 'related-latency.json');
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--size') size = Number(argv[++i]);
    else if (argv[i] === '--queries') count = Number(argv[++i]);
    else if (argv[i] === '--out') out = resolve(argv[++i] ?? '');
    else throw new Error(`unknown argument ${argv[i]}; usage: node dist/bench/related-latency.js [--size 10000] [--queries 200] [--out <file>]`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'cairn-related-latency-'));
  const store = createSqliteStore({ path: join(dir, 'related.db') });
  try {
    const real = createUseEmbedder();
    const r = rng(7);
    const pool = Array.from({ length: 512 }, () => coreNote(r));
    const filler = new PrecomputedEmbedder(real);
    const base = { store, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, countRecalls: false, now: () => NOW } as const;
    const fillEngine = new Engine({ ...base, embedder: filler, ingestFilter: { enabled: false } });
    const t0 = performance.now();
    await fillSynthetic({ save: (batch: MemoryInput[]) => fillEngine.saveMany(batch), filler, embedder: new PrecomputedEmbedder(real), pool, r, now: NOW }, 0, size, 0);
    log(`filled ${size} notes in ${Math.round(performance.now() - t0)} ms`);
    const queries = [...new Set(Array.from({ length: count * 3 }, () => query(r)))].slice(0, count);
    const expanded = queries.filter((q) => defaultVocabulary().related(q, queryTerms(q)).length > 0).length;
    // Query vectors embedded once, so the timings are the engine's work, not the model's.
    const qv = new PrecomputedEmbedder(real);
    await qv.embed(queries);
    const engines = { off: new Engine({ ...base, embedder: qv, relatedTerms: null }), on: new Engine({ ...base, embedder: qv }) };
    const times = await timeAlternating(['off', 'on'] as const, queries, 10, (k, q) => engines[k].search(q));
    const fig = (xs: number[]) => ({ medianMs: round2(quantile(xs, 0.5)), p95Ms: round2(quantile(xs, 0.95)) });
    const result = {
      benchmark: 'related terms: search latency with and without (same store, same queries, alternating)',
      command: `node dist/bench/related-latency.js ${argv.join(' ')}`.trim(),
      date: new Date().toISOString(),
      notes: size,
      queries: queries.length,
      queriesExpanded: expanded,
      off: fig(times.off),
      on: fig(times.on),
      medianRatio: round2(quantile(times.on, 0.5) / quantile(times.off, 0.5)),
    };
    log(JSON.stringify(result, null, 1));
    writeResults(out, result);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`related-latency bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
