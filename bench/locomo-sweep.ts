/**
 * Reproducible tuning of the recall defaults on the LoCoMo **dev split only** (conversations 0–4; the test
 * split 5–9 is never loaded here). For every setting — lexical analyser variant × fusion weights × candidate
 * pool — it computes fractional evidence recall@k (k = 5, 10, 25, 50) exactly as bench/locomo.ts does, but
 * from candidate lists fetched once per question and analyser: the store's own BM25 (FTS5) and KNN
 * (sqlite-vec) candidates, fused by the engine's own `fuse()`, with the engine's pool rule
 * max(limit × candidateFactor, minCandidates). A check re-runs the product defaults through `Engine.search`
 * and reports any difference from the harness.
 *
 *   node dist/bench/locomo-sweep.js [--vector-cache <file>] [--out <file>]
 *
 * Writes bench/results/locomo-sweep.json (one row per setting, dev figures) and prints the best rows.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stemmer } from 'stemmer';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { DEFAULT_CANDIDATE_FACTOR, DEFAULT_MIN_CANDIDATES, Engine } from '../src/core/engine.js';
import { DEFAULT_WEIGHTS, fuse, RRF_K, type RankedHit } from '../src/core/fusion.js';
import { createAnalyser, STOP_WORDS, type Analyser } from '../src/core/lexical.js';
import { indexText } from '../src/core/events.js';
import { inverseDocumentFrequency, SAME_TOPIC_MIN_COSINE, SAME_TOPIC_MIN_OVERLAP, weightedOverlap } from '../src/core/topics.js';
import { analyse } from '../src/core/lexical.js';
import type { Memory, SearchResult, SignalWeights } from '../src/interfaces/memory.js';
import type { CandidateFilter } from '../src/interfaces/store.js';
import {
  CachingEmbedder,
  CATEGORIES,
  KS,
  SPLITS,
  loadLocomo,
  ingestConversation,
  loadVectorCache,
  pct,
  prefetchEmbeddings,
  recallOf,
  saveVectorCache,
  summarise,
  type Conversation,
} from './locomo-data.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');

// ------------------------------------------------------------------------------------- the settings

/** Stop-word lists compared. `product` is whatever src/core/lexical.ts ships. */
const BASE_FUNCTION_WORDS = [...STOP_WORDS];
const CONVERSATIONAL = (
  'yeah yes oh wow hey hi hello ok okay thanks thank really just like get got gonna wanna lot lots thing things stuff ' +
  'kind sort much many well still even actually pretty sure definitely totally always never'
).split(/\s+/u);
const STOP_VARIANTS: Record<string, ReadonlySet<string>> = {
  product: STOP_WORDS,
  none: new Set<string>(),
  'product+conversational': new Set([...BASE_FUNCTION_WORDS, ...CONVERSATIONAL]),
};
const STEM_VARIANTS: Record<string, (w: string) => string> = {
  porter: stemmer,
  none: (w) => w,
  // Plural/possessive "s" only (a light stemmer): keeps running/run apart, books/book together.
  's-stemmer': (w) => (w.length > 3 && w.endsWith('ies') ? `${w.slice(0, -3)}y` : w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w),
};

interface Variant {
  name: string;
  analyser: Analyser;
}

const VARIANTS: Variant[] = [];
for (const [stopName, stopWords] of Object.entries(STOP_VARIANTS)) {
  for (const [stemName, stem] of Object.entries(STEM_VARIANTS)) {
    VARIANTS.push({ name: `stop=${stopName} stem=${stemName}`, analyser: createAnalyser({ stopWords, stem }) });
  }
}

const VECTOR_WEIGHTS = [0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 1];
const RECENCY_WEIGHTS = [0, 0.02, 0.05, 0.1, 0.15];
const POOLS: { factor: number; min: number }[] = [
  { factor: 5, min: 50 },
  { factor: 5, min: 100 },
  { factor: 5, min: 200 },
  { factor: 5, min: 300 },
  { factor: 5, min: 500 },
  { factor: 10, min: 50 },
];
/** Stage A (every analyser) uses a coarse grid; stage B the full grid for the best analysers. */
const STAGE_A = { vector: [0.2, 0.3, 0.5], recency: [0, 0.05], pools: [{ factor: 5, min: 200 }] };
const STAGE_B_VARIANTS = 1;
/** The analyser src/core/lexical.ts ships (its stop words, Porter stemming). */
const PRODUCT_VARIANT = 'stop=product stem=porter';
const SELECTION =
  'highest mean of overall recall@5/10/25/50 on the dev split among settings with recency > 0 (it also switches on ' +
  'the newer-on-same-topic step) and vector > 8 × recency (recency only breaks near-ties: one rank of cosine at the top ' +
  'outweighs the recency spread over ten results, since 1/61 − 1/62 ≈ (1/61 − 1/70) / 8)';
const MAX_POOL = Math.max(...POOLS.map((p) => Math.max(50 * p.factor, p.min)));

// ----------------------------------------------------------------------------------------- harness

interface QuestionCandidates {
  vector: RankedHit[];
  /** variant name → lexical candidates (best first, MAX_POOL at most). */
  lexical: Map<string, RankedHit[]>;
}

/** Figures in the JSON file keep four decimals (a hundredth of a point). */
function round4All(row: Record<string, number> | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Math.round(v * 10000) / 10000]));
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

function parseArgs(argv: string[]): { vectorCache: string | null; out: string } {
  let vectorCache: string | null = null;
  let out = join(repoRoot, 'bench', 'results', 'locomo-sweep.json');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--vector-cache') vectorCache = resolve(argv[++i] ?? '');
    else if (a === '--out') out = resolve(argv[++i] ?? '');
    else throw new Error(`unknown argument ${a}; usage: node dist/bench/locomo-sweep.js [--vector-cache <file>] [--out <file>]`);
  }
  return { vectorCache, out };
}

async function main(): Promise<void> {
  const started = performance.now();
  const args = parseArgs(process.argv.slice(2));
  const all = loadLocomo();
  const dev = SPLITS.dev.map((i) => all[i] as Conversation);
  if (dev.some((c) => c.index >= 5)) throw new Error('the sweep must only see the dev split');

  const dir = mkdtempSync(join(tmpdir(), 'cairn-locomo-sweep-'));
  const store = createSqliteStore({ path: join(dir, 'sweep.db') });
  const embedder = new CachingEmbedder(createUseEmbedder());
  const fixedNow = new Date('2024-01-01T00:00:00.000Z');
  const engine = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: 'locomo', now: () => fixedNow });
  try {
    if (args.vectorCache) loadVectorCache(embedder, args.vectorCache);
    const questionsText = dev.flatMap((c) => c.questions.map((q) => q.question));
    await prefetchEmbeddings(embedder, [...dev.flatMap((c) => c.turns.map((t) => t.text)), ...questionsText], Math.min(2, cpus().length));
    if (args.vectorCache) saveVectorCache(embedder, args.vectorCache);
    for (const conv of dev) {
      const r = await ingestConversation(engine, conv);
      if (r.quarantined.length) log(`${conv.sampleId}: the ingest filter held ${r.quarantined.length} turns`);
    }
    log(`ingested ${dev.reduce((s, c) => s + c.turns.length, 0)} dev turns`);

    // Memories per namespace (fuse needs them) and candidate lists per question.
    const memories = new Map<string, Memory>();
    for (const conv of dev) for await (const page of store.iterateMemories(conv.namespace, 1000)) for (const m of page) memories.set(m.id, m);
    const filterOf = (conv: Conversation): CandidateFilter => ({ namespace: conv.namespace, now: fixedNow.toISOString() });
    const cands: QuestionCandidates[] = [];
    for (const conv of dev) {
      for (const q of conv.questions) {
        const [qv] = await embedder.embed([q.question]);
        const vec = await store.vectorCandidates(qv as Float32Array, MAX_POOL, filterOf(conv));
        cands.push({ vector: vec.map((h) => ({ id: h.id, raw: h.similarity })), lexical: new Map() });
      }
    }
    // One fresh store per analyser (same memories, same vectors, that analyser's full-text terms): BM25
    // statistics stay exact, as after a normal ingest.
    const info = { id: embedder.id, dimensions: embedder.dimensions };
    for (const variant of VARIANTS) {
      const vdir = mkdtempSync(join(tmpdir(), 'cairn-locomo-variant-'));
      const vstore = createSqliteStore({ path: join(vdir, 'variant.db') });
      try {
        await vstore.prepareVectors(info);
        await vstore.transaction(async (tx) => {
          await tx.setEmbedder(info);
          for (const m of memories.values()) {
            const [v] = await embedder.embed([m.text]);
            await tx.insertMemory(m, v as Float32Array, variant.analyser.analyse(m.text));
          }
        });
        let i = 0;
        for (const conv of dev) {
          for (const q of conv.questions) {
            const terms = variant.analyser.queryTerms(q.question);
            const lex = terms.length ? await vstore.lexicalCandidates(terms, MAX_POOL, filterOf(conv)) : [];
            (cands[i++] as QuestionCandidates).lexical.set(variant.name, lex.map((h) => ({ id: h.id, raw: h.score })));
          }
        }
      } finally {
        await vstore.close();
        rmSync(vdir, { recursive: true, force: true });
      }
      log(`candidates for ${variant.name}`);
    }

    const questions = dev.flatMap((c) => c.questions);
    const nowMs = fixedNow.getTime();
    const ageDays = (m: Memory) => (nowMs - Date.parse(m.createdAt)) / 86_400_000;
    // The engine's same-topic step (src/core/topics.ts, run after fusion whenever recency > 0), with its pair
    // test memoised: the same loop as preferNewerOnSameTopic, checked against Engine.search at the end.
    const storedVectors = await store.getVectors([...memories.keys()]);
    const termSets = new Map([...memories.values()].map((m) => [m.id, new Set(analyse(indexText(m)))]));
    // Shared words weigh by their rarity in the store, as in the engine.
    const allTerms = [...new Set([...termSets.values()].flatMap((t) => [...t]))];
    const { documents, frequencies } = await store.termDocumentFrequencies(allTerms);
    const rarity = inverseDocumentFrequency(documents, frequencies);
    const pairCache = new Map<string, boolean>();
    const sameTopic = (a: Memory, b: Memory): boolean => {
      const key = a.id < b.id ? `${a.id}|${b.id}` : `${b.id}|${a.id}`;
      let same = pairCache.get(key);
      if (same === undefined) {
        same = false;
        const va = storedVectors.get(a.id);
        const vb = storedVectors.get(b.id);
        if (a.kind === b.kind && va && vb) {
          let dot = 0;
          for (let d = 0; d < va.length; d++) dot += (va[d] as number) * (vb[d] as number);
          if (dot >= SAME_TOPIC_MIN_COSINE) {
            const ta = termSets.get(a.id) as Set<string>;
            const tb = termSets.get(b.id) as Set<string>;
            same = weightedOverlap(ta, tb, rarity) >= SAME_TOPIC_MIN_OVERLAP;
          }
        }
        pairCache.set(key, same);
      }
      return same;
    };
    const preferNewer = (results: SearchResult[], window: number): SearchResult[] => {
      const head = results.slice(0, window);
      for (let i = 0; i < head.length; i++) {
        for (let j = i + 1; j < head.length; j++) {
          const older = head[i] as SearchResult;
          const newer = head[j] as SearchResult;
          if (newer.memory.createdAt > older.memory.createdAt && sameTopic(older.memory, newer.memory)) {
            head.splice(j, 1);
            head.splice(i, 0, newer);
          }
        }
      }
      return [...head, ...results.slice(window)];
    };
    const evaluate = (variant: string, weights: SignalWeights, pool: { factor: number; min: number }) => {
      const perK: Record<number, number[]> = {};
      for (const k of KS) perK[k] = [];
      questions.forEach((q, i) => {
        const c = cands[i] as QuestionCandidates;
        // Limits with the same pool size see the same fused ranking: fuse once per distinct size.
        const bySize = new Map<number, SearchResult[]>();
        for (const k of KS) {
          const size = Math.max(k * pool.factor, pool.min);
          let fused = bySize.get(size);
          if (!fused) {
            const vector = weights.vector > 0 ? c.vector.slice(0, size) : [];
            const lexical = weights.lexical > 0 ? (c.lexical.get(variant) as RankedHit[]).slice(0, size) : [];
            fused = fuse({ memories, vector, lexical, ageDays, weights, k: RRF_K });
            bySize.set(size, fused);
          }
          // Engine.search: with recency on, a newer result on the same topic moves ahead within a window.
          let ranked = fused;
          if (weights.recency > 0 && fused.length > 1) {
            const window = Math.min(fused.length, Math.max(k * 2, 20));
            ranked = preferNewer(fused, window);
          }
          (perK[k] as number[]).push(recallOf(q, ranked.slice(0, k).map((r) => r.memory.metadata.externalId)));
        }
      });
      return summarise(questions, perK);
    };

    // Check first: the product defaults through the real Engine.search must give what the harness gives.
    const productPool = { factor: DEFAULT_CANDIDATE_FACTOR, min: DEFAULT_MIN_CANDIDATES };
    const harness = evaluate(PRODUCT_VARIANT, DEFAULT_WEIGHTS, productPool);
    const perK: Record<number, number[]> = {};
    for (const k of KS) {
      perK[k] = [];
      for (const conv of dev) {
        for (const q of conv.questions) {
          const found = await engine.search(q.question, { namespace: conv.namespace, limit: k });
          perK[k].push(recallOf(q, found.map((r) => r.memory.metadata.externalId)));
        }
      }
    }
    const viaEngine = summarise(questions, perK);
    const maxDiff = Math.max(...KS.map((k) => Math.abs((harness['all']?.[String(k)] ?? 0) - (viaEngine['all']?.[String(k)] ?? 0))));

    log(`check: harness vs Engine.search with the product defaults, max |Δ| overall = ${(100 * maxDiff).toFixed(2)} points`);
    if (maxDiff > 0.001) throw new Error('the harness no longer reproduces Engine.search; fix it before trusting the sweep');

    interface Row {
      variant: string;
      weights: SignalWeights;
      pool: { factor: number; min: number };
      recall: Record<string, Record<string, number>>;
      /** Mean of overall recall@5, @10, @25, @50: the selection score. */
      score: number;
    }
    const rows: Row[] = [];
    const add = (variant: string, weights: SignalWeights, pool: { factor: number; min: number }) => {
      const recall = evaluate(variant, weights, pool);
      const overall = recall['all'] as Record<string, number>;
      rows.push({ variant, weights, pool, recall, score: KS.reduce((s, k) => s + (overall[String(k)] as number), 0) / KS.length });
    };
    // Stage A: every analyser, lexical alone and on a coarse hybrid grid.
    for (const variant of VARIANTS) {
      add(variant.name, { vector: 0, lexical: 1, recency: 0 }, { factor: 5, min: 50 });
      for (const vector of STAGE_A.vector) for (const recency of STAGE_A.recency) for (const pool of STAGE_A.pools) add(variant.name, { vector, lexical: 1, recency }, pool);
      log(`stage A: ${variant.name} (${rows.length} settings so far)`);
    }
    add(PRODUCT_VARIANT, { vector: 1, lexical: 0, recency: 0 }, { factor: 5, min: 50 });
    // Stage B: the best analyser of stage A on the full weight × pool grid.
    const bestVariants = [...new Set([...rows].sort((a, b) => b.score - a.score).map((r) => r.variant))].slice(0, STAGE_B_VARIANTS);
    const seen = new Set(rows.map((r) => JSON.stringify([r.variant, r.weights, r.pool])));
    for (const variant of bestVariants) {
      for (const vector of VECTOR_WEIGHTS.filter((v) => v > 0)) {
        for (const recency of RECENCY_WEIGHTS) {
          for (const pool of POOLS) {
            const weights = { vector, lexical: 1, recency };
            if (!seen.has(JSON.stringify([variant, weights, pool]))) add(variant, weights, pool);
          }
        }
      }
      log(`stage B: ${variant} (${rows.length} settings so far)`);
    }

    rows.sort((a, b) => b.score - a.score);
    const label = (r: Row) =>
      `${r.variant.padEnd(42)} v=${String(r.weights.vector).padEnd(4)} l=${r.weights.lexical} r=${String(r.weights.recency).padEnd(4)} pool=${r.pool.factor}×/${String(r.pool.min).padEnd(3)}`;
    const line = (r: Row) => `${label(r)} ${KS.map((k) => pct(r.recall['all']?.[String(k)])).join(' ')}  mean ${pct(r.score)}`;
    console.log(`LoCoMo dev split sweep: ${rows.length} settings, overall recall@5/10/25/50 in %, sorted by their mean\n`);
    console.log(rows.slice(0, 40).map(line).join('\n'));
    console.log('\nlexical only, per analyser:');
    console.log(rows.filter((r) => r.weights.vector === 0).map(line).join('\n'));
    console.log(`\nharness vs Engine.search with the product defaults: max |Δ| overall = ${(100 * maxDiff).toFixed(2)} points`);

    // The selection rule (see SELECTION): product constraints first, then the best mean over k.
    const lexicalOnly = rows.find((r) => r.variant === PRODUCT_VARIANT && r.weights.vector === 0) as Row;
    const vectorOnly = rows.find((r) => r.weights.lexical === 0) as Row;
    const margins = (r: Row) =>
      Object.fromEntries(
        KS.map((k) => {
          const own = r.recall['all']?.[String(k)] ?? 0;
          return [k, Math.min(own - (lexicalOnly.recall['all']?.[String(k)] ?? 0), own - (vectorOnly.recall['all']?.[String(k)] ?? 0))];
        }),
      ) as Record<number, number>;
    const eligible = rows.filter((r) => r.weights.vector > 0 && r.weights.lexical > 0 && r.weights.recency > 0 && r.weights.vector > 8 * r.weights.recency);
    const chosen = eligible[0] as Row; // rows are sorted by mean
    const beatsBoth = (r: Row) => KS.every((k) => (margins(r)[k] as number) > 0);
    console.log(`\nchosen (${SELECTION}):\n${line(chosen)}`);
    console.log(`margin over the better single signal per k: ${KS.map((k) => `@${k} ${(100 * (margins(chosen)[k] as number)).toFixed(2)}`).join(', ')}`);
    const bestBeating = eligible.find(beatsBoth);
    console.log(bestBeating ? `best eligible setting that beats both single signals at every k:\n${line(bestBeating)}` : 'no eligible setting beats both single signals at every k on dev');

    const out = {
      benchmark: 'LoCoMo evidence recall, dev split only (conversations 0–4), sweep of recall defaults',
      command: `node dist/bench/locomo-sweep.js ${process.argv.slice(2).join(' ')}`.trim(),
      date: new Date().toISOString(),
      conversations: dev.map((c) => c.sampleId),
      questions: questions.length,
      selection: SELECTION,
      chosen: { variant: chosen.variant, weights: chosen.weights, pool: chosen.pool, overall: chosen.recall['all'], score: chosen.score, marginOverBestSingleSignal: margins(chosen) },
      bestEligibleBeatingBothSingleSignals: bestBeating ? { variant: bestBeating.variant, weights: bestBeating.weights, pool: bestBeating.pool, overall: bestBeating.recall['all'] } : null,
      singleSignals: { lexical: lexicalOnly.recall['all'], vector: vectorOnly.recall['all'] },
      stages: 'A: every analyser, lexical alone and hybrid on a coarse grid; B: the best analyser of A on the full weight × pool grid',
      grid: {
        variants: VARIANTS.map((v) => v.name),
        stageA: STAGE_A,
        stageBVariants: bestVariants,
        conversationalStopWords: CONVERSATIONAL,
        vectorWeights: VECTOR_WEIGHTS,
        recencyWeights: RECENCY_WEIGHTS,
        lexicalWeight: 1,
        pools: POOLS,
      },
      check: { productDefaults: { weights: DEFAULT_WEIGHTS, pool: productPool }, harness: harness['all'], engineSearch: viaEngine['all'], maxAbsDiff: maxDiff },
      ms: Math.round(performance.now() - started),
      rows: rows.map((r) => ({
        variant: r.variant,
        weights: r.weights,
        pool: r.pool,
        score: Math.round(r.score * 10000) / 10000,
        overall: round4All(r.recall['all']),
        byCategory: Object.fromEntries(CATEGORIES.map((c) => [c, round4All(r.recall[String(c)])])),
      })),
    };
    mkdirSync(dirname(args.out), { recursive: true });
    writeFileSync(args.out, `${JSON.stringify(out, null, 1)}\n`);
    log(`wrote ${args.out} in ${(out.ms / 1000).toFixed(0)} s`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`locomo sweep failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
