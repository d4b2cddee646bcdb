/**
 * Query-term coverage (src/core/term-coverage.ts) on the coding-memory dev half only: the benchmark's store
 * built with each coverage share, the dev queries run through Engine.search with the product defaults
 * otherwise. The LoCoMo dev figures for the same shares come from bench/recall-levers.ts.
 *
 *   node dist/bench/coverage-sweep.js [--vector-cache <file>] [--shares 0,0.25,…] [--vector 0.5,…] [--out <file>]
 *
 * --vector: vector weights to cross with the shares (lexical stays 1, recency 0.1).
 *
 * Writes bench/results/coverage-sweep.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { buildCodingFixture, codingTexts, figuresByType, runQueries, type Figures } from './coding-memory.js';
import { DEFAULT_WEIGHTS } from '../src/core/fusion.js';
import { CachingEmbedder, loadVectorCache, prefetchEmbeddings, saveVectorCache } from './locomo-data.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let vectorCache: string | null = null;
  let shares = [0, 0.25, 0.5, 0.75, 1];
  let vectorWeights = [DEFAULT_WEIGHTS.vector];
  let out = join(repoRoot, 'bench', 'results', 'coverage-sweep.json');
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--vector-cache') vectorCache = resolve(argv[++i] ?? '');
    else if (argv[i] === '--shares') shares = (argv[++i] ?? '').split(',').map(Number);
    else if (argv[i] === '--vector') vectorWeights = (argv[++i] ?? '').split(',').map(Number);
    else if (argv[i] === '--out') out = resolve(argv[++i] ?? '');
    else throw new Error(`unknown argument ${argv[i]}; usage: node dist/bench/coverage-sweep.js [--vector-cache <file>] [--shares a,b,…] [--vector a,b,…] [--out <file>]`);
  }
  const embedder = new CachingEmbedder(createUseEmbedder());
  if (vectorCache) loadVectorCache(embedder, vectorCache);
  await prefetchEmbeddings(embedder, codingTexts(), 2);
  if (vectorCache) saveVectorCache(embedder, vectorCache);
  const rows: { share: number; vector: number; dev: Record<string, Figures> }[] = [];
  for (const share of shares) for (const vector of vectorWeights) {
    const fixture = await buildCodingFixture(embedder, { termCoverage: { share }, weights: { vector } });
    try {
      const dev = figuresByType(await runQueries(fixture, fixture.queries.filter((q) => q.split === 'dev')));
      rows.push({ share, vector, dev });
      const all = dev['all'] as Figures;
      const para = dev['paraphrase'] as Figures;
      process.stderr.write(`share ${share} vector ${vector}: R@1 ${all.r1} R@5 ${all.r5} MRR ${all.mrr} update ${all.updateCorrect} rejected ${all.offTopicRejected} leaks ${all.leaks} (paraphrase R@1 ${para.r1})\n`);
    } finally {
      await fixture.close();
    }
  }
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify({ benchmark: 'term coverage on the coding-memory dev half', command: `node dist/bench/coverage-sweep.js ${argv.join(' ')}`.trim(), date: new Date().toISOString(), rows }, null, 1)}\n`);
  process.stderr.write(`wrote ${out}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`coverage sweep failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
