/**
 * The relevance floor at scale: do identifier, path, error-code and paraphrase queries still come through it
 * when the namespace holds 10k or 100k notes, and are off-topic questions still rejected? The coding-memory
 * store (bench/coding-memory.ts) is grown in place: one namespace (billing-api) gets generated coding-project
 * notes (bench/synthetic-notes.ts) on top of its own, and that namespace's queries run at each size.
 *
 *   node dist/bench/floor-scale.js [--sizes 0,10000,100000] [--quick] [--out <file>] [--vector-cache <file>]
 *
 * --quick: sizes 0 and 1,000 (a smoke run). --vector-cache keeps the benchmark's and the pool's vectors in a file.
 *
 * Embedding 100k texts with the real model would take hours here, so 512 generated notes are embedded with
 * it and each filler note is the next of them, round robin, plus a unique ticket/author/date suffix (the
 * latency benchmark's method); the benchmark's own notes and queries keep their real vectors. Filler is
 * written with the ingest filter off (it screens nothing the queries depend on). Nothing here was tuned:
 * the floor is the product default. Writes bench/results/floor-scale.json.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import type { MemoryInput } from '../src/interfaces/memory.js';
import { buildCodingFixture, CODING_NOW, codingTexts, runQueries, type QueryOutcome } from './coding-memory.js';
import type { RecordedUpdateRule } from '../src/core/topics.js';
import { CachingEmbedder, loadVectorCache, prefetchEmbeddings, ratioRule, saveVectorCache } from './locomo-data.js';
import { coreNote, fillSynthetic, PrecomputedEmbedder, rng } from './synthetic-notes.js';
import { writeResults } from './measure.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const log = (m: string) => process.stderr.write(`${m}\n`);
const NAMESPACE = 'github.com/acme/billing-api';

interface Row {
  fillerNotes: number;
  split: string;
  type: string;
  queries: number;
  /** Share of queries that got any result at all (for answerable ones: came through the floor). */
  returnedAnything: number;
  r1: number | null;
  r5: number | null;
}

const share = (xs: boolean[]) => (xs.length ? Math.round((xs.filter(Boolean).length / xs.length) * 1000) / 1000 : 0);

function rows(filler: number, outcomes: QueryOutcome[]): Row[] {
  const out: Row[] = [];
  const groups = new Map<string, QueryOutcome[]>();
  for (const o of outcomes) {
    const type = ['identifier', 'path', 'error-code'].includes(o.query.type) ? 'identifier/path/error-code' : o.query.type;
    if (!['identifier/path/error-code', 'paraphrase', 'update', 'off-topic'].includes(type)) continue;
    for (const key of [`${o.query.split}|${type}`]) groups.set(key, [...(groups.get(key) ?? []), o]);
  }
  for (const [key, list] of [...groups].sort()) {
    const [split, type] = key.split('|') as [string, string];
    const answerable = list.filter((o) => o.query.expect !== null);
    out.push({
      fillerNotes: filler,
      split,
      type,
      queries: list.length,
      returnedAnything: share(list.map((o) => o.returned > 0)),
      r1: answerable.length ? share(answerable.map((o) => o.rank === 1)) : null,
      r5: answerable.length ? share(answerable.map((o) => o.rank !== null && o.rank <= 5)) : null,
    });
  }
  return out;
}

async function main(): Promise<void> {
  const started = performance.now();
  let sizes = [0, 10_000, 100_000];
  let out = join(repoRoot, 'bench', 'results', 'floor-scale.json');
  let vectorCache: string | null = null;
  let likelyReplaces: RecordedUpdateRule | null | undefined;
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--sizes') sizes = (argv[++i] ?? '').split(',').map(Number);
    else if (argv[i] === '--out') out = resolve(argv[++i] ?? '');
    else if (argv[i] === '--vector-cache') vectorCache = resolve(argv[++i] ?? '');
    else if (argv[i] === '--quick') sizes = [0, 1000];
    // The recorded-update rule of recall (topics.ts RecordedUpdateRule), or off: figures with and without it, same build.
    else if (argv[i] === '--likely-replaces-ratio') likelyReplaces = ratioRule(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}; usage: node dist/bench/floor-scale.js [--sizes 0,10000,100000] [--quick] [--out <file>] [--vector-cache <file>] [--likely-replaces-ratio <r>|off]`);
  }
  if (!sizes.every((n, i) => Number.isInteger(n) && n >= 0 && (i === 0 || n > (sizes[i - 1] as number)))) throw new Error('--sizes must be increasing whole numbers');
  const real = createUseEmbedder();
  const embedder = new CachingEmbedder(real);
  if (vectorCache) loadVectorCache(embedder, vectorCache);
  await prefetchEmbeddings(embedder, codingTexts(), 2);
  const r = rng(11);
  const pool = Array.from({ length: 512 }, () => coreNote(r));
  await prefetchEmbeddings(embedder, pool.map((p) => p.text), 2);
  if (vectorCache) saveVectorCache(embedder, vectorCache);
  const fixture = await buildCodingFixture(embedder, likelyReplaces === undefined ? {} : { likelyReplaces });
  const filler = new PrecomputedEmbedder(embedder);
  const fillEngine = new Engine({ store: fixture.store, embedder: filler, tokenCounter: createGptTokenCounter(), defaultNamespace: NAMESPACE, countRecalls: false, ingestFilter: { enabled: false }, now: () => CODING_NOW });
  const queries = fixture.queries.filter((q) => q.namespace === NAMESPACE);
  const table: Row[] = [];
  const timings: Record<string, number> = {};
  try {
    let filled = { stored: 0, serial: 0 };
    const fill = { save: (batch: MemoryInput[]) => fillEngine.saveMany(batch), filler, embedder, pool, r, now: CODING_NOW };
    for (const size of sizes) {
      const t0 = performance.now();
      filled = await fillSynthetic(fill, filled.stored, size, filled.serial);
      timings[`fill_to_${size}_ms`] = Math.round(performance.now() - t0);
      const t1 = performance.now();
      const outcomes = await runQueries(fixture, queries);
      timings[`queries_at_${size}_ms`] = Math.round(performance.now() - t1);
      const got = rows(size, outcomes);
      table.push(...got);
      log(`${size} filler notes:`);
      for (const row of got) log(`  ${row.split.padEnd(4)} ${row.type.padEnd(28)} n ${String(row.queries).padStart(3)}  returned ${(100 * row.returnedAnything).toFixed(1).padStart(5)} %  R@1 ${row.r1 === null ? '  –  ' : (100 * row.r1).toFixed(1).padStart(5)}  R@5 ${row.r5 === null ? '  –  ' : (100 * row.r5).toFixed(1).padStart(5)}`);
    }
    const result = {
      benchmark: 'relevance floor at scale (coding-memory billing-api namespace plus generated notes)',
      command: `node dist/bench/floor-scale.js ${argv.join(' ')}`.trim(),
      date: new Date().toISOString(),
      namespace: NAMESPACE,
      ownNotes: fixture.notes,
      method:
        'engine.search(query, { namespace, limit: 10 }) with the product defaults after growing the namespace in place; returnedAnything: the search returned at least one result (for off-topic queries, the share NOT rejected); R@k over queries with an answer',
      rows: table,
      timings,
      durationMs: Math.round(performance.now() - started),
    };
    writeResults(out, result);
  } finally {
    await fixture.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`floor-scale bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
