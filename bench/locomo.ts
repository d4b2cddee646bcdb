/**
 * LoCoMo evidence recall through the real engine (SQLite + FTS5 + sqlite-vec file, USE-lite embedder,
 * cl100k token counter). Every turn is one memory in its conversation's namespace; every question searches
 * its own conversation. Fractional recall@k for k = 5, 10, 25, 50 per category and overall, for lexical-only,
 * vector-only and hybrid (the product defaults); plus the size of `engine.context()` against the whole history.
 *
 *   node dist/bench/locomo.js [--split dev|test|all] [--quick] [--out <file>] [--workers <n>] [--vector-cache <file>]
 *                             [--modes lexical,vector,hybrid] [--hybrid-weights <vector,lexical,recency>] [--no-floor]
 *                             [--pg <admin url>] [--store-per-conversation]
 *
 * --no-floor runs the engine without its relevance floor (to measure what the floor costs).
 * --pg runs on PostgreSQL: a fresh database on the server with that admin URL, dropped at the end.
 * --store-per-conversation gives each conversation its own store, so SQLite's BM25 statistics (FTS5's span the
 * whole file) cover one namespace, as PostgreSQL's always do.
 * --quick runs the first conversation of the split only (a smoke run; writes no file unless --out is given).
 * --workers sets the embedding threads (default: 2, or 1 on a single core). --vector-cache keeps turn and
 * question vectors in a file between runs (a development aid; the recorded runs do not use it).
 * --modes and --hybrid-weights are development aids (run a subset of modes; try other hybrid weights on the dev
 * split); recorded runs use neither.
 * Results: bench/results/locomo.json for --split all, bench/results/locomo-<split>.json otherwise (with --pg:
 * locomo-postgres.json, locomo-<split>-postgres.json).
 * Tuning happens on the dev split only (bench/locomo-sweep.ts); the test split is for reporting.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { openStoreAt } from '../src/surfaces/open-engine.js';
import { freshLocation } from './bench-stores.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { DEFAULT_CANDIDATE_FACTOR, DEFAULT_MIN_CANDIDATES, Engine } from '../src/core/engine.js';
import type { RecordedUpdateRule } from '../src/core/topics.js';
import type { RelatedTerms } from '../src/core/related-terms.js';
import { DEFAULT_WEIGHTS } from '../src/core/fusion.js';
import type { FusionMethod, SignalWeights } from '../src/interfaces/memory.js';
import {
  CachingEmbedder,
  CATEGORIES,
  CATEGORY_NAMES,
  DRAGON_OVERALL,
  ingestConversation,
  KS,
  SPLITS,
  defaultDataPath,
  loadLocomo,
  pct,
  recallOf,
  summarise,
  type Conversation,
  type Question,
  loadVectorCache,
  prefetchEmbeddings,
  ratioRule,
  relatedRule,
  saveVectorCache,
  type Split,
} from './locomo-data.js';

/**
 * The single-signal baselines rank by that signal alone (rank fusion of one list is its own order, with no
 * relevance floor); hybrid is the engine's defaults (score fusion, the floor, the same-topic step).
 */
const MODES: { name: string; weights: Partial<SignalWeights> | undefined; fusion?: FusionMethod }[] = [
  { name: 'lexical', weights: { vector: 0, lexical: 1, recency: 0 }, fusion: 'rrf' },
  { name: 'vector', weights: { vector: 1, lexical: 0, recency: 0 }, fusion: 'rrf' },
  { name: 'hybrid', weights: undefined }, // the engine's defaults
];

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const resultsDir = join(repoRoot, 'bench', 'results');

interface Args {
  split: Split;
  quick: boolean;
  /** One store per conversation: BM25 statistics then cover exactly the conversation's namespace on every backend. */
  storePerConversation: boolean;
  out: string | null;
  /** Development aid: read/write turn and question vectors from this file (official runs leave it off). */
  vectorCache: string | null;
  workers: number;
  /** Measurement aid: the engine without its relevance floor (what the floor costs). */
  noFloor: boolean;
  /** Measurement aid: recall without the write-time likely-replaces relation. */
  likelyReplaces: RecordedUpdateRule | null | undefined;
  relatedTerms: RelatedTerms | null | undefined;
  /** Run on PostgreSQL: a fresh database on the server with this admin URL (default: an SQLite file). */
  pg: string | null;
}

function parseArgs(argv: string[]): Args {
  let split: Split = 'all';
  let quick = false;
  let storePerConversation = false;
  let out: string | null = null;
  let vectorCache: string | null = null;
  let workers = Math.max(1, Math.min(2, cpus().length));
  let noFloor = false;
  let likelyReplaces: RecordedUpdateRule | null | undefined;
  let relatedTerms: RelatedTerms | null | undefined;
  let pg: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') quick = true;
    else if (a === '--no-floor') noFloor = true;
    // The recorded-update rule of recall (topics.ts RecordedUpdateRule), or off: figures with and without it, same build.
    else if (a === '--likely-replaces-ratio') likelyReplaces = ratioRule(argv[++i]);
    else if (a === '--related-weight') relatedTerms = relatedRule(argv[++i]);
    else if (a === '--split' || a?.startsWith('--split=')) {
      const v = a === '--split' ? argv[++i] : a.slice('--split='.length);
      if (v !== 'dev' && v !== 'test' && v !== 'all') throw new Error(`--split must be dev, test or all (got ${v})`);
      split = v;
    } else if (a === '--out') out = resolve(argv[++i] ?? '');
    else if (a === '--vector-cache') vectorCache = resolve(argv[++i] ?? '');
    else if (a === '--workers') workers = Math.max(1, Number(argv[++i]) || 1);
    else if (a === '--pg') pg = argv[++i] ?? null;
    else if (a === '--store-per-conversation') storePerConversation = true;
    else if (a === '--hybrid-weights') {
      // Development aid: evaluate other hybrid weights (vector,lexical,recency) instead of the defaults.
      const [vector, lexical, recency] = (argv[++i] ?? '').split(',').map(Number);
      if (![vector, lexical, recency].every((x) => typeof x === 'number' && Number.isFinite(x))) throw new Error('--hybrid-weights takes v,l,r');
      const hybridMode = MODES.find((m) => m.name === 'hybrid');
      if (hybridMode) hybridMode.weights = { vector: vector as number, lexical: lexical as number, recency: recency as number };
    } else if (a === '--modes') {
      const keep = new Set((argv[++i] ?? '').split(','));
      for (let j = MODES.length - 1; j >= 0; j--) if (!keep.has((MODES[j] as { name: string }).name)) MODES.splice(j, 1);
    } else throw new Error(`unknown argument ${a}; usage: node dist/bench/locomo.js [--split dev|test|all] [--quick] [--out <file>] [--workers <n>] [--vector-cache <file>] [--modes …] [--hybrid-weights v,l,r] [--no-floor] [--likely-replaces-ratio <r>|off] [--pg <admin url>] [--store-per-conversation]`);
  }
  return { split, quick, out, vectorCache, workers, noFloor, likelyReplaces, relatedTerms, pg, storePerConversation };
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

interface QuestionRun {
  conv: number;
  q: Question;
  /** mode → k → recall */
  recall: Record<string, Record<number, number>>;
  contextTokens: number;
  historyTokens: number;
  /** Hybrid recall had the floor been off (k → recall), and whether the floor emptied a search that had results. */
  withoutFloor?: Record<number, number>;
  floored?: boolean;
}

function round4(x: number): number {
  return Math.round(x * 10000) / 10000;
}

function table(title: string, runs: QuestionRun[]): { text: string; figures: Record<string, Record<string, Record<string, number>>> } {
  const questions = runs.map((r) => r.q);
  const figures: Record<string, Record<string, Record<string, number>>> = {};
  const lines = [`${title} — ${runs.length} questions, fractional evidence recall@k in %`];
  lines.push(`${'mode'.padEnd(8)} ${'group'.padEnd(16)} ${KS.map((k) => `@${k}`.padStart(5)).join(' ')}   n`);
  for (const mode of MODES) {
    const perK: Record<number, number[]> = {};
    for (const k of KS) perK[k] = runs.map((r) => r.recall[mode.name]?.[k] ?? NaN);
    const s = summarise(questions, perK);
    figures[mode.name] = s;
    for (const group of ['all', ...CATEGORIES.map(String)]) {
      const n = group === 'all' ? questions.length : questions.filter((q) => String(q.category) === group).length;
      const label = group === 'all' ? 'overall' : `${group} ${CATEGORY_NAMES[Number(group)]}`;
      lines.push(`${mode.name.padEnd(8)} ${label.padEnd(16)} ${KS.map((k) => pct(s[group]?.[String(k)])).join(' ')} ${String(n).padStart(4)}`);
    }
  }
  lines.push(`${'DRAGON'.padEnd(8)} ${'overall (paper)'.padEnd(16)} ${KS.map((k) => String(DRAGON_OVERALL[k]).padStart(5)).join(' ')}`);
  return { text: lines.join('\n'), figures };
}

/** The dev-split sweep behind the defaults (bench/locomo-sweep.ts), summarised; the full table stays in its file. */
function sweepSummary(path: string): unknown {
  if (!existsSync(path)) return null;
  const sweep = JSON.parse(readFileSync(path, 'utf8')) as {
    command: string;
    date: string;
    selection: string;
    chosen: unknown;
    singleSignals: unknown;
    check: unknown;
    rows: { variant: string; weights: SignalWeights; overall: Record<string, number> }[];
  };
  return {
    file: 'bench/results/locomo-sweep.json',
    split: 'dev (conversations 0–4) only',
    command: sweep.command,
    date: sweep.date,
    settings: sweep.rows.length,
    selection: sweep.selection,
    chosen: sweep.chosen,
    singleSignals: sweep.singleSignals,
    harnessCheck: sweep.check,
    top10: sweep.rows.slice(0, 10),
    lexicalOnlyPerAnalyser: sweep.rows.filter((r) => r.weights.vector === 0),
  };
}

async function main(): Promise<void> {
  const started = performance.now();
  const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
  const args = parseArgs(process.argv.slice(2));
  const dataPath = defaultDataPath();
  const all = loadLocomo(dataPath);
  let picked = SPLITS[args.split].map((i) => all[i] as Conversation);
  if (args.quick) picked = picked.slice(0, 1);

  const embedder = new CachingEmbedder(createUseEmbedder());
  const tokenCounter = createGptTokenCounter();
  const fixedNow = new Date('2024-01-01T00:00:00.000Z'); // after every LoCoMo session: ages stay positive and stable
  const timings: Record<string, number> = { ingestMs: 0, contextMs: 0, ...Object.fromEntries(MODES.map((m) => [`search_${m.name}_ms`, 0])) };
  const ms = (t: number) => Math.round(performance.now() - t);
  const add = (key: string, t: number) => (timings[key] = (timings[key] ?? 0) + ms(t));

  // One store per split. FTS5 computes BM25 statistics over the whole table, across namespaces, so
  // conversations of the other split in the same file would change this split's lexical scores; with one
  // store per split, dev figures here equal those of `--split dev` and of the sweep (which sees dev only).
  // PostgreSQL keeps BM25 statistics per namespace; --store-per-conversation gives SQLite the same scope.
  const groups: Conversation[][] = args.storePerConversation
    ? picked.map((conv) => [conv])
    : args.split === 'all' && !args.quick
      ? [SPLITS.dev, SPLITS.test].map((ids) => ids.map((i) => all[i] as Conversation))
      : [picked];

  // Embeddings first, on every core (worker threads with their own model); the engine then gets each
  // vector from the caching embedder. Questions are embedded here too: once, reused by every mode.
  let t = performance.now();
  const questions = picked.flatMap((conv) => conv.questions.map((q) => q.question));
  const cachedVectors = args.vectorCache ? loadVectorCache(embedder, args.vectorCache) : 0;
  timings['modelLoadMs'] = Math.round(
    await prefetchEmbeddings(embedder, [...picked.flatMap((conv) => conv.turns.map((x) => x.text)), ...questions], args.workers),
  );
  timings['embedMs'] = ms(t);
  timings['textsEmbedded'] = embedder.misses;
  if (args.vectorCache) saveVectorCache(embedder, args.vectorCache);
  log(`embedded ${embedder.misses} texts on ${args.workers} worker(s)${cachedVectors ? ` (${cachedVectors} from ${args.vectorCache})` : ''} in ${timings['embedMs']} ms`);

  let saved = 0;
  const duplicateTurns: string[] = [];
  const quarantinedTurns: string[] = [];
  const redactedTurns: string[] = [];
  const runs: QuestionRun[] = [];
  for (const group of groups) {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-locomo-'));
    const location = await freshLocation(args.pg ? 'postgres' : 'sqlite', dir, args.pg, 'locomo');
    const store = await openStoreAt(location.db, { mustExist: false });
    const rule = { ...(args.likelyReplaces === undefined ? {} : { likelyReplaces: args.likelyReplaces }), ...(args.relatedTerms === undefined ? {} : { relatedTerms: args.relatedTerms }) };
    const engine = new Engine({ store, embedder, tokenCounter, defaultNamespace: 'locomo', now: () => fixedNow, ...rule, ...(args.noFloor ? { relevanceFloor: null } : {}) });
    // What the floor costs, in the same run: a hybrid search the floor emptied is asked again without it.
    const unfloored = new Engine({ store, embedder, tokenCounter, defaultNamespace: 'locomo', now: () => fixedNow, relevanceFloor: null, countRecalls: false, ...rule });
    try {
      // Ingest through the engine: one memory per turn, saveMany in batches.
      t = performance.now();
      for (const conv of group) {
        const r = await ingestConversation(engine, conv);
        saved += r.saved;
        duplicateTurns.push(...r.duplicates.map((id) => `${conv.sampleId}/${id}`));
        quarantinedTurns.push(...r.quarantined.map((id) => `${conv.sampleId}/${id}`));
        log(`ingested ${conv.sampleId}: ${conv.turns.length} turns`);
      }
      // Turns whose stored text differs from the input (secret/PII redaction).
      for (const conv of group) {
        const byId = new Map(conv.turns.map((x) => [x.diaId, x.text]));
        for await (const page of store.iterateMemories(conv.namespace, 1000)) {
          for (const m of page) if (byId.get(m.metadata.externalId ?? '') !== m.text) redactedTurns.push(`${conv.sampleId}/${m.metadata.externalId}`);
        }
      }
      add('ingestMs', t);

      // History size per conversation, with the engine's token counter.
      const historyTokens = new Map<number, number>();
      for (const conv of group) historyTokens.set(conv.index, await tokenCounter.count(conv.turns.map((x) => x.text).join('\n')));
      const groupRuns: QuestionRun[] = group.flatMap((conv) =>
        conv.questions.map((q) => ({ conv: conv.index, q, recall: {}, contextTokens: 0, historyTokens: historyTokens.get(conv.index) as number })),
      );
      // Every k is its own search with limit k: that is what a caller asking for k memories gets (the
      // candidate pool grows with the limit).
      for (const mode of MODES) {
        t = performance.now();
        let i = 0;
        for (const conv of group) {
          for (const q of conv.questions) {
            const run = groupRuns[i++] as QuestionRun;
            const perK: Record<number, number> = {};
            for (const k of KS) {
              const found = await engine.search(q.question, { namespace: conv.namespace, limit: k, weights: mode.weights, ...(mode.fusion ? { fusion: mode.fusion } : {}) });
              perK[k] = recallOf(q, found.map((r) => r.memory.metadata.externalId));
              if (mode.name === 'hybrid' && !args.noFloor) {
                const again = found.length === 0 ? await unfloored.search(q.question, { namespace: conv.namespace, limit: k, weights: mode.weights }) : found;
                (run.withoutFloor ??= {})[k] = recallOf(q, again.map((r) => r.memory.metadata.externalId));
                if (found.length === 0 && again.length > 0) run.floored = true;
              }
            }
            run.recall[mode.name] = perK;
          }
        }
        add(`search_${mode.name}_ms`, t);
        log(`searched ${mode.name}: ${groupRuns.length} questions × ${KS.length} limits (${ms(t)} ms)`);
      }

      // Context size: engine.context(question) at its default budget (1000 tokens) and default limit.
      t = performance.now();
      let i = 0;
      for (const conv of group) {
        for (const q of conv.questions) {
          const pack = await engine.context(q.question, { namespace: conv.namespace });
          (groupRuns[i++] as QuestionRun).contextTokens = pack.tokens;
        }
      }
      add('contextMs', t);
      runs.push(...groupRuns);
    } finally {
      await store.close();
      await location.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const duplicates = duplicateTurns.length;
  timings['totalMs'] = ms(started);

  // Report.
  const splitsToReport: Split[] = args.split === 'all' && !args.quick ? ['dev', 'test', 'all'] : [args.split];
  const report: Record<string, unknown> = {};
  const printed: string[] = [];
  for (const split of splitsToReport) {
    const convs = new Set(SPLITS[split]);
    const subset = runs.filter((r) => convs.has(r.conv));
    const ids = [...new Set(subset.map((r) => r.conv))].map((i) => (all[i] as Conversation).sampleId);
    const { text, figures } = table(`${split} split (${ids.join(', ')})`, subset);
    printed.push(text);
    const meanContext = subset.reduce((s, r) => s + r.contextTokens, 0) / subset.length;
    const meanHistory = subset.reduce((s, r) => s + r.historyTokens, 0) / subset.length;
    const hybrid = figures['hybrid']?.['all'] ?? {};
    report[split] = {
      conversations: ids,
      questions: subset.length,
      recall: figures,
      hybridVersus: Object.fromEntries(
        KS.map((k) => {
          const h = hybrid[String(k)] ?? NaN;
          return [
            k,
            {
              hybridMinusLexical: round4(h - (figures['lexical']?.['all']?.[String(k)] ?? NaN)),
              hybridMinusVector: round4(h - (figures['vector']?.['all']?.[String(k)] ?? NaN)),
              hybridMinusDragon: round4(h - (DRAGON_OVERALL[k] as number) / 100),
            },
          ];
        }),
      ),
      floor: args.noFloor
        ? null
        : {
            note: 'hybrid recall minus hybrid recall with the floor off (a search the floor emptied, asked again without it), same run',
            questionsFloored: subset.filter((r) => r.floored).length,
            costAtK: Object.fromEntries(KS.map((k) => [k, round4(subset.reduce((a, r) => a + ((r.withoutFloor?.[k] ?? 0) - (r.recall['hybrid']?.[k] ?? 0)), 0) / subset.length)])),
          },
      context: {
        meanContextTokens: Math.round(meanContext * 10) / 10,
        maxContextTokens: Math.max(...subset.map((r) => r.contextTokens)),
        meanHistoryTokens: Math.round(meanHistory * 10) / 10,
        ratio: Math.round((meanContext / meanHistory) * 10000) / 10000,
      },
    };
    if (!args.noFloor && MODES.some((m) => m.name === 'hybrid')) {
      const floor = (report[split] as { floor: { questionsFloored: number; costAtK: Record<number, number> } }).floor;
      printed.push(`floor: ${floor.questionsFloored} questions emptied; costs ${KS.map((k) => `@${k} ${(100 * (floor.costAtK[k] ?? 0)).toFixed(2)}`).join(', ')} points of hybrid recall`);
    }
    printed.push(
      `context: mean ${meanContext.toFixed(0)} tokens from engine.context(question) (budget 1000) vs mean ${meanHistory.toFixed(0)} tokens of the whole conversation (${((100 * meanContext) / meanHistory).toFixed(1)}%)`,
    );
  }
  const gold = runs.filter((r) => !r.q.noEvidence);
  const sweepPath = join(resultsDir, 'locomo-sweep.json');
  const result = {
    benchmark: 'LoCoMo evidence recall (dialog-turn units, fractional recall@k, official definition; benchmarks.md §2.1)',
    command: `node dist/bench/locomo.js ${process.argv.slice(2).join(' ')}`.trim(),
    split: args.split,
    quick: args.quick,
    vectorCacheUsed: cachedVectors > 0,
    relevanceFloor: !args.noFloor,
    date: new Date().toISOString(),
    commit: gitCommit(),
    environment: {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? null,
      platform: process.platform,
      // The machine may be shared: timings depend on what else ran.
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadavg().map((x) => Math.round(x * 100) / 100),
    },
    data: {
      path: dataPath,
      conversations: picked.map((c) => c.sampleId),
      turns: picked.reduce((s, c) => s + c.turns.length, 0),
      memoriesSaved: saved,
      duplicateTurns: { count: duplicates, note: 'identical text in one conversation: the engine dedupes it, the first turn keeps the memory', ids: duplicateTurns },
      quarantinedTurns: { count: quarantinedTurns.length, note: 'held by the ingest filter (product default), so not retrievable', ids: quarantinedTurns },
      redactedTurns: { count: redactedTurns.length, note: 'stored text differs from the turn (secret/PII redaction, product default)', ids: redactedTurns },
      questions: runs.length,
      questionsWithoutEvidence: runs.length - gold.length,
      questionsWithUnresolvedEvidence: runs.filter((r) => r.q.unresolved.length > 0).map((r) => ({ conv: r.conv, question: r.q.question, unresolved: r.q.unresolved })),
    },
    method: {
      store: args.storePerConversation
        ? 'one store per conversation (BM25 statistics of one namespace on every backend)'
        : 'SQLite file (FTS5 BM25 + sqlite-vec cosine KNN) in a temp folder, one per split (FTS5 BM25 statistics span every namespace of a file)',
      embedder: embedder.id,
      tokenCounter: tokenCounter.id,
      memoryText: '<speaker> said, "<text>" [+ " and shared <blip_caption>"]; createdAt = session date + turn index seconds',
      evidence: 'split on ; , whitespace; accept D:?<s>:0*<t>; ids not in the conversation dropped; empty evidence → recall 1',
      search: 'one engine.search(question, { namespace, limit: k }) per k; recall@k = share of gold dia_ids among the results',
      modes: Object.fromEntries(MODES.map((m) => [m.name, m.weights ?? { ...DEFAULT_WEIGHTS, note: 'engine defaults' }])),
      context:
        'engine.context(question, { namespace }) with the default budget (1000 tokens) and limit, tokens as the pack reports them; history = all turn texts of the question\'s conversation joined by newlines; both counted with cl100k_base and averaged over questions',
    },
    weights: {
      defaults: DEFAULT_WEIGHTS,
      candidatePool: { candidateFactor: DEFAULT_CANDIDATE_FACTOR, minCandidates: DEFAULT_MIN_CANDIDATES, rule: 'per signal: max(limit × candidateFactor, minCandidates)' },
      note: 'with recency > 0 the engine also moves a newer result on the same topic ahead of an older one (src/core/topics.ts)',
    },
    baselines: { dragonDialogTurnOverall: DRAGON_OVERALL, semvecContext: { contextTokens: 987, historyTokens: 27353 } },
    results: report,
    timings: { ...timings, queries: runs.length * MODES.length * KS.length + runs.length },
    sweep: sweepSummary(sweepPath),
  };
  console.log(printed.join('\n\n'));
  console.log(
    `\ntotal ${((timings['totalMs'] as number) / 1000).toFixed(1)} s: embedding ${((timings['embedMs'] as number) / 1000).toFixed(1)} s on ${args.workers} worker(s), ingest ${((timings['ingestMs'] as number) / 1000).toFixed(1)} s (${saved} memories, ${duplicates} duplicate, ${quarantinedTurns.length} quarantined, ${redactedTurns.length} redacted turns), searches ${(MODES.reduce((s, m) => s + (timings[`search_${m.name}_ms`] ?? 0), 0) / 1000).toFixed(1)} s, context ${((timings['contextMs'] as number) / 1000).toFixed(1)} s`,
  );
  const backend = args.pg ? '-postgres' : '';
  const out = args.out ?? (args.quick ? null : join(resultsDir, args.split === 'all' ? `locomo${backend}.json` : `locomo-${args.split}${backend}.json`));
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    log(`wrote ${out}`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`locomo bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
