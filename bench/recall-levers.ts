/**
 * Recall levers measured on the LoCoMo dev split only (conversations 0–4; the test split is never loaded):
 * score fusion as it is (fusion.ts fuseScores, range-normalised signals), z-score fusion of BM25 and cosine
 * (Lysenstøen 2026, findings-2026-12.md §1) at several lexical weights, and context from a memory's
 * session: its neighbouring memories and its session's best memory (a session is a run of memories written
 * less than SESSION_GAP_MS apart, so nothing LoCoMo-specific is read).
 *
 *   node dist/bench/recall-levers.js [--vector-cache <file>] [--out <file>] [--background-extra <file>] [--no-zscore]
 *                                    [--neighbours a,b,…] [--session a,b,…] [--shares a,b,…]
 *
 * --background-extra: more background sentences (one a line) to measure the relevance floor with;
 * --neighbours/--session: the session-context grid (defaults 0–0.5 and 0–0.6).
 *
 * Candidate lists are fetched once per question from the real store (sqlite-vec KNN and FTS5 BM25, the
 * engine's pool of 300), as bench/recall-sweep.ts does; each variant reorders them, then the engine's own
 * same-topic step runs as in Engine.search. Writes bench/results/recall-levers.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { BACKGROUND_TEXTS } from '../src/core/background.js';
import { clearsFloor, DEFAULT_CALIBRATION, DEFAULT_FLOOR, DEFAULT_WEIGHTS, fts5Idf, fuseScores, unknownTermShare, type RankedHit } from '../src/core/fusion.js';
import { addSessionContext, DEFAULT_SESSION_CONTEXT, type SessionContextWeights } from '../src/core/session-context.js';
import { DEFAULT_STATED_UPDATE, dot, preferNewerOnSameTopic, termsOf } from '../src/core/topics.js';
import { queryTerms } from '../src/core/lexical.js';
import { applyTermCoverage, COVERAGE_MIN_WINDOW, DEFAULT_TERM_COVERAGE } from '../src/core/term-coverage.js';
import type { Memory, SearchResult } from '../src/interfaces/memory.js';
import { CachingEmbedder, CATEGORIES, KS, SPLITS, loadLocomo, loadVectorCache, prefetchEmbeddings, recallOf, saveVectorCache, summarise, type Conversation } from './locomo-data.js';
import { openLocomoDevStore, type DevCandidates } from './locomo-dev-store.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const log = (m: string) => process.stderr.write(`${m}\n`);


const USAGE = 'node dist/bench/recall-levers.js [--vector-cache <file>] [--out <file>] [--background-extra <file>] [--no-zscore] [--neighbours a,b,…] [--session a,b,…] [--shares a,b,…]';
/** The session-context grid (session-context.ts weights). */
let NEIGHBOURS = [0, 0.1, 0.2, 0.3, 0.5];
let SESSION = [0, 0.2, 0.3, 0.4, 0.6];

/** `rank` orders a question's candidates for a search of limit `k` (the engine's coverage window grows with it). */
type Variant = { name: string; rank: (c: DevCandidates, k: number) => SearchResult[] };

/** Query-term coverage shares measured (term-coverage.ts), each with the default session context. */
let SHARES = [0, 0.25, 0.5, 0.75, 1];

/**
 * z-score fusion: each signal standardised over the query's candidates (cosine of a candidate missing from
 * the vector list: the lowest cosine listed; BM25 missing: 0), fused = α·z(BM25) + (1 − α)·z(cosine).
 */
export function fuseZScores(memories: Map<string, Memory>, vector: RankedHit[], lexical: RankedHit[], alpha: number): SearchResult[] {
  const cos = new Map(vector.filter((h) => memories.has(h.id)).map((h) => [h.id, h.raw]));
  const bm = new Map(lexical.filter((h) => memories.has(h.id)).map((h) => [h.id, h.raw]));
  const ids = [...new Set([...cos.keys(), ...bm.keys()])];
  const minCos = Math.min(...cos.values());
  const c = ids.map((id) => cos.get(id) ?? (Number.isFinite(minCos) ? minCos : 0));
  const b = ids.map((id) => bm.get(id) ?? 0);
  const z = (xs: number[]) => {
    const mu = xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);
    const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mu) ** 2, 0) / Math.max(1, xs.length)) || 1;
    return xs.map((x) => (x - mu) / sd);
  };
  const zc = z(c);
  const zb = z(b);
  return ids
    .map((id, i) => {
      const fused = alpha * (zb[i] as number) + (1 - alpha) * (zc[i] as number);
      const r: SearchResult = {
        memory: memories.get(id) as Memory,
        score: fused,
        scoreDetails: {
          signals: { vector: { rank: null, contribution: 0, raw: cos.get(id) ?? null }, lexical: { rank: null, contribution: 0, raw: bm.get(id) ?? null }, recency: { rank: null, contribution: 0, raw: null } },
          fused,
          rerank: null,
          method: 'score',
        },
      };
      return r;
    })
    .sort((x, y) => y.score - x.score);
}

/** Session context for z-scores (no 0–100 scale): scores shifted to start at 0, then the same lifts added. */
function zContext(results: SearchResult[], neighbours: number, session: number): SearchResult[] {
  const low = Math.min(...results.map((r) => r.score));
  const shifted = results.map((r) => ({ ...r, scoreDetails: { ...r.scoreDetails, relevance: r.score - low } }));
  const scale = Math.max(1e-9, ...shifted.map((r) => r.scoreDetails.relevance as number));
  for (const r of shifted) r.scoreDetails.relevance = (100 * (r.scoreDetails.relevance as number)) / scale;
  return addSessionContext(shifted, { neighbours, session });
}

async function main(): Promise<void> {
  const started = performance.now();
  let vectorCache: string | null = null;
  let out = join(repoRoot, 'bench', 'results', 'recall-levers.json');
  let extraFile: string | null = null;
  let withZ = true;
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--vector-cache') vectorCache = resolve(argv[++i] ?? '');
    else if (argv[i] === '--out') out = resolve(argv[++i] ?? '');
    else if (argv[i] === '--background-extra') extraFile = resolve(argv[++i] ?? '');
    else if (argv[i] === '--no-zscore') withZ = false;
    else if (argv[i] === '--neighbours') NEIGHBOURS = (argv[++i] ?? '').split(',').map(Number);
    else if (argv[i] === '--session') SESSION = (argv[++i] ?? '').split(',').map(Number);
    else if (argv[i] === '--shares') SHARES = (argv[++i] ?? '').split(',').map(Number);
    else throw new Error(`unknown argument ${argv[i]}; usage: ${USAGE}`);
  }
  const extraBackground = extraFile ? readFileSync(extraFile, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean) : [];
  const embedder = new CachingEmbedder(createUseEmbedder());
  if (vectorCache) loadVectorCache(embedder, vectorCache);
  const dev = SPLITS.dev.map((i) => loadLocomo()[i] as Conversation);
  await prefetchEmbeddings(embedder, dev.flatMap((c) => [...c.turns.map((t) => t.text), ...c.questions.map((q) => q.question)]), Math.min(2, cpus().length));
  if (vectorCache) saveVectorCache(embedder, vectorCache);
  const fx = await openLocomoDevStore(embedder);
  try {
    const { memories, questions, cands, vectors, termCache, rarity, ageDays } = fx;
    const questionVectors = cands.map((c) => c.queryVector);
    log(`LoCoMo dev: ${questions.length} questions, candidates fetched in ${Math.round((performance.now() - started) / 1000)} s`);
    const weights = DEFAULT_WEIGHTS;
    const base = (c: DevCandidates) => fuseScores({ memories, vector: c.vector, lexical: c.lexical, lexicalScale: c.scale, ageDays, weights, calibration: DEFAULT_CALIBRATION });
    const variants: Variant[] = [{ name: 'score (current)', rank: base }];
    for (const alpha of withZ ? [0.3, 0.4, 0.5, 0.6, 0.7, 0.8] : []) {
      variants.push({ name: `zscore lexical ${alpha}`, rank: (c) => fuseZScores(memories, c.vector, c.lexical, alpha) });
    }
    const contexts: SessionContextWeights[] = [];
    for (const neighbours of NEIGHBOURS) for (const session of SESSION) if (neighbours + session > 0) contexts.push({ neighbours, session });
    for (const ctx of contexts) {
      variants.push({ name: `score + neighbours ${ctx.neighbours} session ${ctx.session}`, rank: (c) => addSessionContext(base(c), ctx) });
    }
    // Query-term coverage as Engine.search applies it: after fusion, on the first max(3k, 30) results, then
    // session context.
    const idfs = await Promise.all(questions.map(async ({ conv, q }) => {
      const terms = queryTerms(q.question);
      const { documents, frequencies } = await fx.store.termDocumentFrequencies(terms, conv.namespace);
      const idf = new Map(terms.map((t) => [t, fts5Idf(documents, frequencies.get(t) ?? 0)]));
      return { terms, idf, unknownShare: unknownTermShare(idf, frequencies, documents) };
    }));
    for (const share of SHARES) {
      variants.push({
        name: `coverage ${share} + default session context`,
        rank: (c, k) => {
          const { terms, idf } = idfs[cands.indexOf(c)] as { terms: string[]; idf: Map<string, number> };
          const covered = applyTermCoverage(base(c), { terms, idf, termsOf: (r) => termsOf(r, termCache), weights, calibration: DEFAULT_CALIBRATION, coverage: { share }, window: Math.max(3 * k, COVERAGE_MIN_WINDOW) });
          return addSessionContext(covered, DEFAULT_SESSION_CONTEXT);
        },
      });
    }
    if (withZ) {
      for (const alpha of [0.5, 0.6]) {
        variants.push({ name: `zscore ${alpha} + neighbours 0.2 session 0.3 (additive)`, rank: (c) => zContext(fuseZScores(memories, c.vector, c.lexical, alpha), 0.2, 0.3) });
      }
    }
    // The relevance floor on the defaults (judged before session context, as Engine.search does), with the
    // background sentences of background.ts and with those plus --background-extra.
    const backgrounds: [string, Float32Array[]][] = [['background.ts', await embedder.embed([...BACKGROUND_TEXTS])]];
    if (extraBackground.length) backgrounds.push([`background.ts + ${extraBackground.length} from ${extraFile}`, await embedder.embed([...BACKGROUND_TEXTS, ...extraBackground])]);
    for (const [name, bg] of backgrounds) {
      const bgCos = questionVectors.map((qv) => Math.max(...bg.map((b) => dot(b, qv))));
      variants.push({
        name: `defaults + floor (${name})`,
        rank: (c, k) => {
          const fused = base(c);
          const i = cands.indexOf(c);
          const { terms, idf, unknownShare } = idfs[i] as { terms: string[]; idf: Map<string, number>; unknownShare: number };
          const covered = applyTermCoverage(fused, { terms, idf, termsOf: (r) => termsOf(r, termCache), weights, calibration: DEFAULT_CALIBRATION, coverage: DEFAULT_TERM_COVERAGE, window: Math.max(3 * k, COVERAGE_MIN_WINDOW) });
          return clearsFloor(covered, DEFAULT_FLOOR, c.vector[0]?.raw ?? null, bgCos[i] as number, unknownShare) ? addSessionContext(covered, DEFAULT_SESSION_CONTEXT) : [];
        },
      });
    }
    const rows: { name: string; all: Record<string, number>; mean: number; perCategory: Record<string, Record<string, number>> }[] = [];
    for (const v of variants) {
      const perK: Record<number, number[]> = {};
      for (const k of KS) perK[k] = [];
      questions.forEach(({ q }, i) => {
        for (const k of KS) {
          const fused = v.rank(cands[i] as DevCandidates, k);
          let ranked: SearchResult[] = fused;
          if (fused.length > 1) {
            const window = Math.min(fused.length, Math.max(k * 2, 20));
            ranked = preferNewerOnSameTopic(fused.map((r) => ({ ...r, scoreDetails: { ...r.scoreDetails } })), vectors, window, rarity, termCache, DEFAULT_STATED_UPDATE);
          }
          (perK[k] as number[]).push(recallOf(q, ranked.slice(0, k).map((r) => r.memory.metadata.externalId)));
        }
      });
      const table = summarise(questions.map((x) => x.q), perK);
      const all = table['all'] as Record<string, number>;
      const mean = KS.reduce((a, k) => a + (all[String(k)] as number), 0) / KS.length;
      rows.push({ name: v.name, all, mean, perCategory: Object.fromEntries(CATEGORIES.map((cat) => [String(cat), table[String(cat)] as Record<string, number>])) });
      log(`${v.name.padEnd(40)} ${KS.map((k) => (100 * (all[String(k)] as number)).toFixed(1)).join(' / ')}  mean ${(100 * mean).toFixed(2)}`);
    }
    const result = {
      benchmark: 'recall levers on the LoCoMo dev split (conversations 0–4)',
      command: `node dist/bench/recall-levers.js ${argv.join(' ')}`.trim(),
      date: new Date().toISOString(),
      questions: questions.length,
      rows,
      ms: Math.round(performance.now() - started),
    };
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(result, null, 1)}\n`);
    log(`wrote ${out}`);
  } finally {
    await fx.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`recall levers failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
