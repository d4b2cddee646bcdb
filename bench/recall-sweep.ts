/**
 * Choice of the score-fusion defaults (weights, cosine bounds, recency half-life) and of the relevance floor,
 * on dev halves only: the LoCoMo dev split (conversations 0–4; the test split is never loaded) and the dev
 * half of the coding-memory benchmark.
 *
 *   node dist/bench/recall-sweep.js [--vector-cache <file>] [--out <file>]
 *
 * LoCoMo: candidate lists are fetched once per question from the real store (sqlite-vec KNN and FTS5 BM25,
 * the engine's pool of 300), with the BM25 scale of score fusion (Σ idf of the query terms); every setting is
 * then fused by the engine's own fuseScores() and reordered by its own preferNewerOnSameTopic(), as
 * Engine.search does. A check re-runs the chosen setting through Engine.search. Coding: every setting is a
 * fresh Engine over one store, each query through Engine.search. Writes bench/results/recall-sweep.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { clearsFloor, DEFAULT_RRF_WEIGHTS, fuse, fuseScores, RRF_K, type RelevanceFloor, type ScoreCalibration } from '../src/core/fusion.js';
import { BACKGROUND_TEXTS } from '../src/core/background.js';
import { DEFAULT_STATED_UPDATE, dot, preferNewerOnSameTopic, type StatedUpdateRule } from '../src/core/topics.js';
import type { SearchResult, SignalWeights } from '../src/interfaces/memory.js';
import { openLocomoDevStore, type DevCandidates } from './locomo-dev-store.js';
import { buildCodingFixture, codingTexts, figures, runQueries, type Figures } from './coding-memory.js';
import {
  CachingEmbedder,
  KS,
  SPLITS,
  loadLocomo,
  loadVectorCache,
  prefetchEmbeddings,
  recallOf,
  saveVectorCache,
  summarise,
  type Conversation,
} from './locomo-data.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const log = (m: string) => process.stderr.write(`${m}\n`);

interface Setting {
  weights: SignalWeights;
  calibration: ScoreCalibration;
  statedUpdate: StatedUpdateRule | null;
}

// A small grid: each LoCoMo setting costs about 10 s here (the same-topic step at four limits for 999 questions).
// A first pass over vector ∈ {0.5, 1, 1.5} × recency ∈ {0, 0.1, 0.2} × vectorZero ∈ {0.1, 0.2, 0.3} found
// vector 0.5 and vectorZero 0.2 best on LoCoMo dev (57.7 / 67.0 / 77.1 / 83.5 at recency 0); this grid refines it.
const VECTOR = [0.35, 0.5, 0.75, 1];
const RECENCY = [0, 0.05, 0.1];
const ZERO = [0.2];
const HALF_LIFE = [30];
const STATED: (StatedUpdateRule | null)[] = [null, DEFAULT_STATED_UPDATE, { minCosine: 0.5, minOverlap: 0.2, minScoreRatio: 0.5 }, { minCosine: 0.5, minOverlap: 0.1, minScoreRatio: 0.7 }];

function grid(): Setting[] {
  const out: Setting[] = [];
  for (const vector of VECTOR)
    for (const recency of RECENCY)
      for (const vectorZero of ZERO)
        for (const recencyHalfLifeDays of HALF_LIFE)
          out.push({ weights: { vector, lexical: 1, recency }, calibration: { vectorZero, vectorFull: 0.8, recencyHalfLifeDays }, statedUpdate: DEFAULT_STATED_UPDATE });
  return out;
}

const key = (s: Setting) => JSON.stringify(s);
const r4 = (x: number) => Math.round(x * 10000) / 10000;

interface Candidates extends DevCandidates {
  /** The query's cosine to the nearest background sentence. */
  background: number;
}


async function main(): Promise<void> {
  const started = performance.now();
  let vectorCache: string | null = null;
  let out = join(repoRoot, 'bench', 'results', 'recall-sweep.json');
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--vector-cache') vectorCache = resolve(argv[++i] ?? '');
    else if (argv[i] === '--out') out = resolve(argv[++i] ?? '');
    else throw new Error(`unknown argument ${argv[i]}; usage: node dist/bench/recall-sweep.js [--vector-cache <file>] [--out <file>]`);
  }
  const embedder = new CachingEmbedder(createUseEmbedder());
  if (vectorCache) loadVectorCache(embedder, vectorCache);
  const dev = SPLITS.dev.map((i) => loadLocomo()[i] as Conversation);
  if (dev.some((c) => c.index >= 5)) throw new Error('the sweep must only see the dev split');
  await prefetchEmbeddings(embedder, [...dev.flatMap((c) => [...c.turns.map((t) => t.text), ...c.questions.map((q) => q.question)]), ...codingTexts()], Math.min(2, cpus().length));
  if (vectorCache) saveVectorCache(embedder, vectorCache);

  // ---------------------------------------------------------------------------------------- LoCoMo dev
  const tokenCounter = createGptTokenCounter();
  const rows: { setting: Setting; locomo: Record<string, number>; locomoMean: number; coding?: Figures }[] = [];
  const codingRows: { setting: Setting; coding: Figures }[] = [];
  let check: unknown = null;
  let floorTable: unknown = null;
  let chosen: Setting | null = null;
  const fx = await openLocomoDevStore(embedder);
  const { store, now: fixedNow, memories, questions, vectors, termCache, rarity, ageDays } = fx;
  try {
    const backgroundVectors = await embedder.embed([...BACKGROUND_TEXTS]);
    const backgroundOf = (qv: Float32Array) => Math.max(...backgroundVectors.map((b) => dot(qv, b)));
    const cands: Candidates[] = fx.cands.map((c) => ({ ...c, background: backgroundOf(c.queryVector) }));
    log(`LoCoMo dev: ${questions.length} questions, candidates fetched`);

    const locomoRanked = (s: Setting | 'rrf', floor: RelevanceFloor | null) =>
      questions.map((_, i) => {
        const c = cands[i] as Candidates;
        const weights = s === 'rrf' ? DEFAULT_RRF_WEIGHTS : s.weights;
        let fused =
          s === 'rrf'
            ? fuse({ memories, vector: c.vector, lexical: c.lexical, ageDays, weights, k: RRF_K })
            : fuseScores({ memories, vector: c.vector, lexical: c.lexical, lexicalScale: c.scale, ageDays, weights, calibration: s.calibration });
        if (s !== 'rrf' && floor && !clearsFloor(fused, floor, c.vector[0]?.raw ?? null, c.background)) fused = [];
        return { fused, weights };
      });
    const locomoRecall = (s: Setting | 'rrf', floor: RelevanceFloor | null = null) => {
      const perK: Record<number, number[]> = {};
      for (const k of KS) perK[k] = [];
      locomoRanked(s, floor).forEach(({ fused, weights }, i) => {
        for (const k of KS) {
          let ranked: SearchResult[] = fused;
          if (weights.recency > 0 && fused.length > 1) {
            const window = Math.min(fused.length, Math.max(k * 2, 20));
            ranked = preferNewerOnSameTopic(fused.map((r) => ({ ...r, scoreDetails: { ...r.scoreDetails } })), vectors, window, rarity, termCache, s === 'rrf' ? null : s.statedUpdate);
          }
          (perK[k] as number[]).push(recallOf((questions[i] as { q: Conversation['questions'][number] }).q, ranked.slice(0, k).map((r) => r.memory.metadata.externalId)));
        }
      });
      const all = summarise(questions.map((x) => x.q), perK)['all'] as Record<string, number>;
      return { all, mean: KS.reduce((a, k) => a + (all[String(k)] as number), 0) / KS.length };
    };
    const rrf = locomoRecall('rrf');
    log(`rrf (previous defaults): ${KS.map((k) => (100 * (rrf.all[String(k)] as number)).toFixed(1)).join(' / ')}`);
    const lexicalOnly = locomoRecall({ weights: { vector: 0, lexical: 1, recency: 0 }, calibration: { vectorZero: 0.2, vectorFull: 0.8, recencyHalfLifeDays: 30 }, statedUpdate: null });
    for (const s of grid()) {
      const r = locomoRecall(s);
      rows.push({ setting: s, locomo: r.all, locomoMean: r.mean });
      log(`${JSON.stringify(s.weights)} zero=${s.calibration.vectorZero}: ${KS.map((k) => (100 * (r.all[String(k)] as number)).toFixed(1)).join(' / ')}`);
    }
    // The stated-update rule variants on the best few settings where it runs (recency > 0).
    rows.sort((a, b) => b.locomoMean - a.locomoMean);
    for (const base of rows.filter((r) => r.setting.weights.recency > 0).slice(0, 3).map((r) => r.setting)) {
      for (const statedUpdate of STATED) {
        const s = { ...base, statedUpdate };
        if (rows.some((r) => key(r.setting) === key(s))) continue;
        const r = locomoRecall(s);
        rows.push({ setting: s, locomo: r.all, locomoMean: r.mean });
      }
    }
    log(`LoCoMo dev: ${rows.length} settings in ${Math.round((performance.now() - started) / 1000)} s`);

    // ------------------------------------------------------------------------------------ coding dev
    const fixture = await buildCodingFixture(embedder);
    try {
      const devQueries = fixture.queries.filter((q) => q.split === 'dev');
      const codingFor = async (s: Setting, floor: RelevanceFloor | null = null) => {
        const e = new Engine({
          store: fixture.store,
          embedder,
          tokenCounter,
          defaultNamespace: 'bench',
          countRecalls: false,
          now: () => new Date('2026-11-01T12:00:00.000Z'),
          weights: s.weights,
          calibration: s.calibration,
          statedUpdate: s.statedUpdate,
          relevanceFloor: floor,
        });
        return runQueries({ ...fixture, engine: e }, devQueries);
      };
      // Coding on every setting (about 2 s each).
      rows.sort((a, b) => b.locomoMean - a.locomoMean);
      for (const row of rows) {
        row.coding = figures(await codingFor(row.setting));
        codingRows.push({ setting: row.setting, coding: row.coding });
      }
      log(`coding dev: ${codingRows.length} settings`);
      // Selection: best sum of LoCoMo dev mean recall@5–50 and coding dev MRR (both in [0, 1]).
      const scored = rows.filter((r) => r.coding).map((r) => ({ r, score: r.locomoMean + ((r.coding as Figures).mrr ?? 0) }));
      scored.sort((a, b) => b.score - a.score);
      chosen = (scored[0] as { r: (typeof rows)[number] }).r.setting;

      // Floor: per dev query, the best relevance and the margin of the store's nearest note over the nearest
      // background sentence, without a floor; then what each floor keeps and rejects.
      const noFloor = await codingFor(chosen, null);
      const e0 = new Engine({ store: fixture.store, embedder, tokenCounter, defaultNamespace: 'bench', countRecalls: false, now: () => new Date('2026-11-01T12:00:00.000Z'), weights: chosen.weights, calibration: chosen.calibration, statedUpdate: chosen.statedUpdate, relevanceFloor: null });
      const tops: { type: string; answerable: boolean; found: boolean; top: number; margin: number }[] = [];
      for (const o of noFloor) {
        const r = await e0.search(o.query.query, { namespace: o.query.namespace, limit: 1, countRecall: false });
        const [qv] = await embedder.embed([o.query.query]);
        const near = await fixture.store.vectorCandidates(qv as Float32Array, 1, { namespace: o.query.namespace, now: '2026-11-01T12:00:00.000Z' });
        tops.push({ type: o.query.type, answerable: o.query.expect !== null, found: o.rank !== null, top: 100 * (r[0]?.score ?? 0), margin: (near[0]?.similarity ?? -1) - backgroundOf(qv as Float32Array) });
      }
      const floors: RelevanceFloor[] = [];
      for (const relevance of [30, 40, 50]) for (const margin of [-0.2, -0.15, -0.13, -0.1, -0.05, 0]) floors.push({ relevance, margin, unknownShare: 1, unknownMargin: margin });
      const clears = (t: { top: number; margin: number }, f: RelevanceFloor) => t.top >= f.relevance || t.margin >= f.margin;
      const base = locomoRecall(chosen, null);
      floorTable = floors.map((f) => ({
        floor: f,
        codingOffTopicRejected: r4(tops.filter((t) => t.type === 'off-topic' && !clears(t, f)).length / tops.filter((t) => t.type === 'off-topic').length),
        codingAnswerableLost: tops.filter((t) => t.answerable && t.found && !clears(t, f)).length,
        locomoCostAt5: r4((base.all['5'] as number) - (locomoRecall(chosen as Setting, f).all['5'] as number)),
      }));
      log(JSON.stringify(floorTable));
      check = { chosenNoFloor: base.all, margins: tops.map((t) => ({ type: t.type, top: Math.round(t.top * 10) / 10, margin: r4(t.margin) })) };

      // Harness check: the chosen setting through Engine.search on LoCoMo dev at k = 5 and 10.
      const ce = new Engine({ store, embedder, tokenCounter, defaultNamespace: 'locomo', now: () => fixedNow, countRecalls: false, weights: chosen.weights, calibration: chosen.calibration, statedUpdate: chosen.statedUpdate, relevanceFloor: null });
      const viaEngine: Record<string, number> = {};
      for (const k of [5, 10]) {
        let sum = 0;
        for (const { conv, q } of questions) sum += recallOf(q, (await ce.search(q.question, { namespace: conv.namespace, limit: k })).map((r) => r.memory.metadata.externalId));
        viaEngine[String(k)] = r4(sum / questions.length);
      }
      check = { ...(check as object), engineSearch: viaEngine };
      log(`check: harness ${JSON.stringify(base.all)} vs Engine.search ${JSON.stringify(viaEngine)}`);
      const result = {
        benchmark: 'score-fusion defaults and relevance floor, dev halves only (LoCoMo conversations 0–4, coding-memory dev half)',
        command: `node dist/bench/recall-sweep.js ${argv.join(' ')}`.trim(),
        date: new Date().toISOString(),
        selection: 'best LoCoMo dev mean recall@5/10/25/50 + coding dev MRR ',
        chosen,
        baselines: { rrfPreviousDefaults: rrf.all, lexicalOnly: lexicalOnly.all },
        floor: floorTable,
        check,
        top: scored.slice(0, 20).map(({ r, score }) => ({ setting: r.setting, score: r4(score), locomo: r.locomo, coding: r.coding })),
        rows: rows.map((r) => ({ setting: r.setting, locomoMean: r4(r.locomoMean), locomo: r.locomo, coding: r.coding ?? null })),
        ms: Math.round(performance.now() - started),
      };
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, `${JSON.stringify(result, null, 1)}\n`);
      console.log(JSON.stringify({ chosen, top: result.top.slice(0, 8), floor: floorTable, check, rrf: rrf.all, lexical: lexicalOnly.all }, null, 1));
      log(`wrote ${out}`);
    } finally {
      await fixture.close();
    }
  } finally {
    await fx.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`recall sweep failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
