/**
 * What the UserPromptSubmit hook's search costs on a PostgreSQL store (or, given a file path, a SQLite one such as
 * the latency bench's kept store): a lexical-only search (vector weight 0, as the hook runs it without a remote
 * embedder) for prompts of several lengths, from a store opened as a short command opens it (no search copies, no
 * vector index). The hook's `context()` asks for 5 results and this for 1: both fetch the same
 * 300 candidates a signal (the engine's minCandidates), so the statement is the same. The hook gives recall 300 ms
 * (hooks.promptRecall.deadlineMs).
 *
 *   node dist/bench/pg-prompt-recall.js --db <url | file> [--namespace github.com/acme/shop] [--samples 7] [--out <file>]
 *
 * Prompts are the latency bench's generated notes (bench/synthetic-notes.ts) run together after a short request,
 * cut at each length; every sample is a new prompt. The first search of the process (connection, settings) is
 * not timed. Figures: per length, the query terms and the search's p50, min and max in milliseconds.
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { isPostgresUrl } from '../src/adapters/postgres/postgres-config.js';
import { createPostgresStore } from '../src/adapters/postgres/postgres-store.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { queryTerms } from '../src/core/lexical.js';
import { resolvePostgres } from '../src/surfaces/open-engine.js';
import { stats, writeResults } from './measure.js';
import { coreNote, detail, rng } from './synthetic-notes.js';

const LENGTHS = [80, 300, 1000, 2000];

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const db = arg('db');
  if (!db) throw new Error('usage: node dist/bench/pg-prompt-recall.js --db <url | file> [--namespace <ns>] [--samples <n>] [--out <file>]');
  const namespace = arg('namespace') ?? 'github.com/acme/shop';
  const samples = Number(arg('samples') ?? 7);
  if (!Number.isInteger(samples) || samples < 1) throw new Error('--samples must be a positive integer');
  const out = arg('out');
  const r = rng(20261206);
  let serial = 0;
  const prompt = (length: number) => {
    let text = 'Can you look into this for me? ';
    while (text.length < length) text += `${coreNote(r).text} ${detail(r, serial++)} `;
    return text.slice(0, length);
  };
  const store = isPostgresUrl(db) ? createPostgresStore({ ...resolvePostgres(db, process.env, undefined) }) : createSqliteStore({ path: resolve(db), vectorIndex: false });
  const engine = new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: namespace, ingestFilter: { enabled: false } });
  const search = (q: string) => engine.search(q, { limit: 1, countRecall: false, weights: { vector: 0 } });
  const startedAt = new Date().toISOString();
  const loadAtStart = loadavg()[0];
  try {
    await search(prompt(80));
    const results = [];
    for (const length of LENGTHS) {
      const times: number[] = [];
      const terms: number[] = [];
      for (let i = 0; i < samples; i++) {
        const q = prompt(length);
        terms.push(queryTerms(q).length);
        const t = performance.now();
        await search(q);
        times.push(performance.now() - t);
      }
      const s = stats(times);
      results.push({ promptChars: length, queryTerms: Math.round(terms.reduce((a, b) => a + b, 0) / terms.length), p50: s.p50, min: s.min, max: s.max });
      process.stderr.write(`prompt of ${length} characters (${results.at(-1)?.queryTerms} terms): p50 ${s.p50} ms (min ${s.min}, max ${s.max})\n`);
    }
    const result = {
      benchmark: 'pg-prompt-recall',
      command: `node dist/bench/pg-prompt-recall.js ${process.argv.slice(2).join(' ')}`,
      startedAt,
      machine: { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, loadAverageAtStart: loadAtStart, loadAverageAfter: loadavg()[0] },
      backend: isPostgresUrl(db) ? 'postgres' : 'sqlite',
      namespace,
      memories: (await store.stats(new Date().toISOString())).namespaces.find((n) => n.namespace === namespace)?.live ?? 0,
      samples,
      deadlineMs: 300,
      results,
    };
    if (out) writeResults(resolve(out), result);
    else process.stdout.write(`${JSON.stringify(result, null, 1)}\n`);
  } finally {
    await store.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
