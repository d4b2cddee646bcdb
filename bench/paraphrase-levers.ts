/**
 * Query-time levers for paraphrase recall, measured on the coding-memory dev half only (the test half is
 * never searched here). Each lever reorders what the real Engine.search (SQLite, FTS5, sqlite-vec,
 * USE-lite, product defaults) returns: the first max(3 × limit, 30) results, re-scored from their score
 * details and the store's vectors, then the engine's same-topic step again, then cut to the limit. The
 * baseline through this path equals bench/coding-memory.js on the dev half. The levers: Rocchio feedback on
 * the query vector, a declarative rewrite of the query embedded beside it, sentence or clause vectors of
 * the notes (multi-vector notes, simulated with the model's own vectors of each part), the vector signal
 * normalised by the query's best cosine, the lexical part gated by the note's cosine, soft word matching
 * with the model's word vectors, a bonus for a clear vector leader, and a larger vector weight for
 * plain-language questions. Besides the figures: which dev queries each lever fixed or broke at rank 1, and
 * for each dev paraphrase the baseline misses, the answer's rank by the vector signal alone.
 *
 * Not for LoCoMo: there the baseline through this path is far from the engine's (LoCoMo dev hybrid @5/10/25/50
 * 40.4/65.3/74.2/76.6 from a search of limit max(3k, 30) re-sorted, same-topic step again and cut to k,
 * against 62.1/77.2/85.4/90.0 from a search of limit k; the engine's coverage and same-topic windows grow
 * with the limit), so a lever there has to be measured inside Engine.search.
 *
 *   node dist/bench/paraphrase-levers.js [--vector-cache <file>] [--only name,prefix,…] [--out <file>]
 *
 * --only: the variants to run (names or name prefixes; the baseline always runs first). Writes
 * bench/results/paraphrase-levers.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { DEFAULT_RECORDED_UPDATE, DEFAULT_STATED_UPDATE, dot, inverseDocumentFrequency, preferNewerOnSameTopic, termsNeedingWeights } from '../src/core/topics.js';
import { STOP_WORDS } from '../src/core/lexical.js';
import { DEFAULT_TERM_COVERAGE } from '../src/core/term-coverage.js';
import { bestFirst, DEFAULT_CALIBRATION, DEFAULT_WEIGHTS, recencyOf, type ScoreCalibration } from '../src/core/fusion.js';
import type { Store } from '../src/interfaces/store.js';
import type { SearchResult, SignalWeights } from '../src/interfaces/memory.js';
import { buildCodingFixture, codingTexts, figuresByType, runQueries, type Figures, type QueryOutcome } from './coding-memory.js';
import { CachingEmbedder, loadVectorCache, prefetchEmbeddings, saveVectorCache } from './locomo-data.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const log = (m: string) => process.stderr.write(`${m}\n`);

interface LeverInput {
  query: string;
  queryVector: Float32Array;
  /** The search's first results, best first, with their score details. */
  results: SearchResult[];
  weights: SignalWeights;
  calibration: ScoreCalibration;
  store: Store;
}
type Rescore = (input: LeverInput) => Promise<SearchResult[]>;

/** Re-scores a score-fused result whose cosine changed to `cosine`; the parts still add up. */
function setCosine(r: SearchResult, cosine: number, weights: SignalWeights, calibration: ScoreCalibration): void {
  r.scoreDetails.signals.vector.raw = cosine;
  setParts(r, clamp01((cosine - calibration.vectorZero) / (calibration.vectorFull - calibration.vectorZero)), 1, weights, calibration);
}

/** Vector signal set to v (0–1), lexical contribution scaled by `lexicalFactor`; recency and relevance follow (fusion.ts). */
function setParts(r: SearchResult, v: number, lexicalFactor: number, weights: SignalWeights, calibration: ScoreCalibration): void {
  const d = r.scoreDetails;
  const matchWeight = weights.vector + weights.lexical;
  const total = matchWeight + weights.recency;
  const context = (d.relevance ?? 0) - d.signals.vector.contribution - d.signals.lexical.contribution - d.signals.recency.contribution;
  d.signals.vector.contribution = (100 * weights.vector * v) / total;
  d.signals.lexical.contribution *= lexicalFactor;
  const r01 = recencyOf(d.signals.recency.raw ?? 0, calibration);
  d.signals.recency.contribution = (weights.recency * r01 * (d.signals.vector.contribution + d.signals.lexical.contribution)) / matchWeight;
  d.relevance = d.signals.vector.contribution + d.signals.lexical.contribution + d.signals.recency.contribution + Math.max(0, context);
  d.fused = d.relevance / 100;
  r.score = d.fused;
}

const resort = (results: SearchResult[]) => results.sort(bestFirst);

interface Variant {
  name: string;
  rescore?: Rescore;
  /** Per-query weight override. */
  weightsFor?: (query: string) => Partial<SignalWeights> | undefined;
}

function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  return v.map((x) => x / n);
}

/** Rocchio on the vector side: q' = q + α · mean of the top-m results' vectors, every result re-scored by it. */
function rocchio(alpha: number, m: number): Rescore {
  return async (inp) => {
    const head = inp.results;
    if (head.length < 2) return inp.results;
    const vectors = await inp.store.getVectors(head.map((r) => r.memory.id));
    const top = head.slice(0, m).map((r) => vectors.get(r.memory.id)).filter((v): v is Float32Array => !!v);
    if (!top.length) return inp.results;
    const q = new Float32Array(inp.queryVector);
    for (const v of top) for (let i = 0; i < q.length; i++) q[i] = (q[i] as number) + (alpha * (v[i] as number)) / top.length;
    const qn = normalise(q);
    for (const r of head) {
      const v = vectors.get(r.memory.id);
      if (v) setCosine(r, dot(qn, v), inp.weights, inp.calibration);
    }
    return resort(inp.results);
  };
}

/** Cosines of the results to the query (from the stored vectors; −1 without one). */
async function cosines(inp: LeverInput): Promise<number[]> {
  const head = inp.results;
  const vectors = await inp.store.getVectors(head.map((r) => r.memory.id));
  return head.map((r) => {
    const v = vectors.get(r.memory.id);
    return v ? dot(inp.queryVector, v) : -1;
  });
}

const clamp01 = (x: number) => (x <= 0 || !Number.isFinite(x) ? 0 : x >= 1 ? 1 : x);

/** Vector signal normalised by the query's best cosine: v' = (1 − β)·v + β·(cos − zero)/(best − zero). */
function maxNorm(beta: number, naturalOnly: boolean): Rescore {
  return async (inp) => {
    if (naturalOnly && !isNatural(inp.query)) return inp.results;
    const cos = await cosines(inp);
    const best = Math.max(...cos);
    const zero = inp.calibration.vectorZero;
    const span = inp.calibration.vectorFull - zero;
    if (best <= zero) return inp.results;
    inp.results.forEach((r, i) => {
      const c = cos[i] as number;
      setParts(r, (1 - beta) * clamp01((c - zero) / span) + beta * clamp01((c - zero) / (best - zero)), 1, inp.weights, inp.calibration);
    });
    return resort(inp.results);
  };
}

/** Lexical part scaled by how close the note is to the query: clamp((cos − lo) / (hi − lo)). */
function gate(lo: number, hi: number, naturalOnly: boolean): Rescore {
  return async (inp) => {
    if (naturalOnly && !isNatural(inp.query)) return inp.results;
    const cos = await cosines(inp);
    const zero = inp.calibration.vectorZero;
    const span = inp.calibration.vectorFull - zero;
    inp.results.forEach((r, i) => {
      const c = cos[i] as number;
      setParts(r, clamp01((c - zero) / span), clamp01((c - lo) / (hi - lo)), inp.weights, inp.calibration);
    });
    return resort(inp.results);
  };
}

/** Content words of a text, lower-cased (stop words and one-letter tokens dropped). */
function wordsOf(text: string): string[] {
  return [...new Set(text.toLowerCase().split(/[^a-z0-9]+/u).filter((w) => w.length > 1 && !STOP_WORDS.has(w) && !/^[0-9]+$/u.test(w)))];
}

/**
 * Soft term coverage: each query word counts by its best USE-lite word cosine to a word of the note,
 * credit (sim − τ)/(1 − τ) above τ (1 for the same word); replaces the coverage half of the lexical part.
 */
function soft(embedder: CachingEmbedder, tau: number, share: number, naturalOnly: boolean): Rescore {
  return async (inp) => {
    if (naturalOnly && !isNatural(inp.query)) return inp.results;
    const qWords = wordsOf(inp.query);
    if (!qWords.length) return inp.results;
    const qv = await embedder.embed(qWords);
    const total = inp.weights.vector + inp.weights.lexical + inp.weights.recency;
    for (const r of inp.results) {
      const nWords = wordsOf(r.memory.text + ' ' + (r.memory.route?.title ?? ''));
      const nv = await embedder.embed(nWords);
      let credit = 0;
      qWords.forEach((w, i) => {
        let best = 0;
        nWords.forEach((x, j) => {
          const sim = x === w ? 1 : dot(qv[i] as Float32Array, nv[j] as Float32Array);
          if (sim > best) best = sim;
        });
        credit += best >= 1 ? 1 : clamp01((best - tau) / (1 - tau));
      });
      const softCov = credit / qWords.length;
      const lex = r.scoreDetails.signals.lexical;
      const hard = lex.coverage ?? 0;
      const covered = DEFAULT_TERM_COVERAGE.share;
      const bmPart = lex.coverage === undefined ? lex.contribution : (lex.contribution - (covered * 100 * inp.weights.lexical * hard) / total) / (1 - covered);
      const covPart = (100 * inp.weights.lexical * Math.max(hard, softCov)) / total;
      lex.contribution = (1 - share) * bmPart + share * covPart;
      const c = r.scoreDetails.signals.vector.raw ?? 0;
      setParts(r, clamp01((c - inp.calibration.vectorZero) / (inp.calibration.vectorFull - inp.calibration.vectorZero)), 1, inp.weights, inp.calibration);
    }
    return resort(inp.results);
  };
}

/** The nearest note by cosine gets `bonus` vector points when it leads the second by at least `delta`. */
function leader(delta: number, bonus: number): Rescore {
  return async (inp) => {
    const cos = await cosines(inp);
    const order = cos.map((c, i) => [c, i] as const).sort((a, b) => b[0] - a[0]);
    const [first, second] = order;
    if (!first || !second || first[0] - second[0] < delta) return inp.results;
    const r = inp.results[first[1]] as SearchResult;
    const d = r.scoreDetails;
    d.signals.vector.contribution += bonus;
    d.relevance = (d.relevance ?? 0) + bonus;
    d.fused = d.relevance / 100;
    r.score = d.fused;
    return resort(inp.results);
  };
}

/** The query in declarative form: leading question words and fillers dropped. */
function declarative(query: string): string {
  let q = query.trim().replace(/[?]+$/u, '');
  const lead = /^(how|what|where|which|who|whom|when|why|whose|is|are|was|were|do|does|did|can|could|should|would|will|shall|may|must|has|have|had)\b\s*/iu;
  const fill = /^(do|does|did|we|i|you|they|is|are|the|a|an|should|can|to|our|my|it|there|be)\b\s*/iu;
  for (let i = 0; i < 3 && lead.test(q); i++) q = q.replace(lead, '');
  for (let i = 0; i < 4 && fill.test(q); i++) q = q.replace(fill, '');
  return q.trim() || query;
}

/** A second query vector (the declarative form): each result re-scored by the larger cosine (max) or by the normalised sum of both vectors (sum). */
function rewrite(embedder: CachingEmbedder, mode: 'max' | 'sum'): Rescore {
  return async (inp) => {
    const d = declarative(inp.query);
    if (d === inp.query.trim()) return inp.results;
    const [dv] = await embedder.embed([d]);
    if (!dv) return inp.results;
    const head = inp.results;
    const vectors = await inp.store.getVectors(head.map((r) => r.memory.id));
    const both = mode === 'sum' ? normalise(inp.queryVector.map((x, i) => x + (dv[i] as number))) : null;
    for (const r of head) {
      const v = vectors.get(r.memory.id);
      if (!v) continue;
      const cos = both ? dot(both, v) : Math.max(dot(inp.queryVector, v), dot(dv, v));
      setCosine(r, cos, inp.weights, inp.calibration);
    }
    return resort(inp.results);
  };
}

function sentencesOf(text: string, clauses: boolean): string[] {
  const parts = text.split(clauses ? /(?<=[.!?;:,])\s+|\s+[—–-]\s+/u : /(?<=[.!?;])\s+|\s+[—–]\s+/u);
  return parts.map((p) => p.trim()).filter((p) => p.split(/\s+/u).length >= 3);
}

/** Multi-vector notes (simulated: sentence vectors from the caching embedder): cos' = (1 − λ)·cos + λ·max(cos, best sentence). */
function sentences(embedder: CachingEmbedder, lambda: number, clauses: boolean): Rescore {
  return async (inp) => {
    const head = inp.results;
    const vectors = await inp.store.getVectors(head.map((r) => r.memory.id));
    for (const r of head) {
      const v = vectors.get(r.memory.id);
      if (!v) continue;
      const cos = dot(inp.queryVector, v);
      const parts = sentencesOf(r.memory.text, clauses);
      let best = cos;
      if (parts.length > 1) for (const sv of await embedder.embed(parts)) best = Math.max(best, dot(inp.queryVector, sv));
      setCosine(r, (1 - lambda) * cos + lambda * best, inp.weights, inp.calibration);
    }
    return resort(inp.results);
  };
}

/** A natural-language question: no identifier, path, code or digits, three words or more. */
function isNatural(query: string): boolean {
  const words = query.trim().split(/\s+/u);
  return words.length >= 3 && words.every((w) => /^[A-Za-z][a-z']*[?.,!]?$/u.test(w));
}

/**
 * A lever applied to a search's results as Engine.search would have: re-scored, best first, then the
 * engine's same-topic step (topics.ts) again on the new order, since it reorders without changing scores.
 */
async function applyLever(v: Variant, store: Store, embedder: CachingEmbedder, query: string, namespace: string, limit: number, results: SearchResult[]): Promise<SearchResult[]> {
  let out = results;
  if (v.rescore && out.length > 0) {
    const [queryVector] = await embedder.embed([query]);
    out = await v.rescore({ query, queryVector: queryVector as Float32Array, results: out, weights: { ...DEFAULT_WEIGHTS, ...v.weightsFor?.(query) }, calibration: DEFAULT_CALIBRATION, store });
  }
  if (out.length < 2) return out.slice(0, limit);
  const window = Math.min(out.length, Math.max(limit * 2, 20));
  const vectors = await store.getVectors(out.slice(0, window).map((r) => r.memory.id));
  const cache = new Map<string, Set<string>>();
  const needed = termsNeedingWeights(out, vectors, window, cache);
  let weight: ((term: string) => number) | undefined;
  if (needed.length > 0) {
    const { documents, frequencies } = await store.termDocumentFrequencies(needed, namespace);
    if (documents > 0) weight = inverseDocumentFrequency(documents, frequencies);
  }
  // As Engine.search with the defaults: the stated-update rule and the recorded likely-replaces relation on.
  return preferNewerOnSameTopic(out, vectors, window, weight, cache, DEFAULT_STATED_UPDATE, DEFAULT_RECORDED_UPDATE).slice(0, limit);
}

/** R@1 changes per variant on the coding dev half (query texts), filled by codingDev. */
const changes: Record<string, { fixed: string[]; broken: string[] }> = {};
/** Dev paraphrases the baseline misses at rank 1, with the answer's rank by the vector signal alone. */
const ceiling: { query: string; engineRank: number | null; cosine: number; cosineRank: number; clauseRank: number }[] = [];

async function codingDev(embedder: CachingEmbedder, variants: Variant[]): Promise<Record<string, Record<string, Figures>>> {
  const fixture = await buildCodingFixture(embedder);
  const out: Record<string, Record<string, Figures>> = {};
  let base: QueryOutcome[] | undefined;
  try {
    const dev = fixture.queries.filter((q) => q.split === 'dev');
    for (const v of variants) {
      const outcomes: QueryOutcome[] = [];
      for (const q of dev) {
        const options = v.weightsFor ? { weights: v.weightsFor(q.query) } : {};
        outcomes.push(...(await runQueries(fixture, [q], options, 10, (query, results) => applyLever(v, fixture.store, embedder, query.query, query.namespace, 10, results))));
      }
      const f = figuresByType(outcomes);
      out[v.name] = f;
      // Dev queries whose first result changed against the first variant (the baseline).
      base ??= outcomes;
      const hit = (o: QueryOutcome) => o.rank === 1;
      const fixed = outcomes.filter((o, i) => hit(o) && !hit(base?.[i] as QueryOutcome)).map((o) => o.query.query);
      const broken = outcomes.filter((o, i) => !hit(o) && hit(base?.[i] as QueryOutcome) && o.query.expect).map((o) => o.query.query);
      changes[v.name] = { fixed, broken };
      const all = f['all'] as Figures;
      const para = f['paraphrase'] as Figures;
      log(`coding dev ${v.name.padEnd(36)} R@1 ${all.r1} R@5 ${all.r5} MRR ${all.mrr} upd ${all.updateCorrect} rej ${all.offTopicRejected} leaks ${all.leaks} | para R@1 ${para.r1} R@5 ${para.r5} | fixed ${fixed.length} broken ${broken.length}`);
    }
    // Where the vector signal alone puts the answer of each dev paraphrase the baseline misses at rank 1:
    // its rank among the namespace's live notes by whole-note cosine and by best clause cosine.
    for (const o of base ?? []) {
      if (o.query.type !== 'paraphrase' || o.rank === 1 || !o.query.expect) continue;
      const ids: string[] = [];
      const texts = new Map<string, string>();
      for await (const page of fixture.store.iterateMemories(o.query.namespace, 1000)) for (const m of page) if (!fixture.inactive.has(m.id)) (ids.push(m.id), texts.set(m.id, m.text));
      const vectors = await fixture.store.getVectors(ids);
      const [qv] = (await embedder.embed([o.query.query])) as [Float32Array];
      const whole = new Map(ids.map((id) => [id, dot(qv, vectors.get(id) as Float32Array)]));
      const clause = new Map<string, number>();
      for (const id of ids) {
        let best = whole.get(id) as number;
        for (const sv of await embedder.embed(sentencesOf(texts.get(id) as string, true))) best = Math.max(best, dot(qv, sv));
        clause.set(id, best);
      }
      const rankIn = (m: Map<string, number>) => [...m.values()].filter((x) => x > (m.get(o.query.expect as string) as number)).length + 1;
      ceiling.push({ query: o.query.query, engineRank: o.rank, cosine: Math.round((whole.get(o.query.expect) as number) * 1000) / 1000, cosineRank: rankIn(whole), clauseRank: rankIn(clause) });
    }
  } finally {
    await fixture.close();
  }
  return out;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let vectorCache: string | null = null;
  let only: string[] | null = null;
  let out = join(repoRoot, 'bench', 'results', 'paraphrase-levers.json');
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--vector-cache') vectorCache = resolve(argv[++i] ?? '');
    else if (argv[i] === '--only') only = (argv[++i] ?? '').split(',');
    else if (argv[i] === '--out') out = resolve(argv[++i] ?? '');
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  const embedder = new CachingEmbedder(createUseEmbedder());
  if (vectorCache) loadVectorCache(embedder, vectorCache);
  const texts = codingTexts();
  const extra = [...texts.flatMap(wordsOf), ...texts.map(declarative), ...texts.flatMap((t) => [...sentencesOf(t, false), ...sentencesOf(t, true)])];
  await prefetchEmbeddings(embedder, [...texts, ...extra], 2);
  if (vectorCache) saveVectorCache(embedder, vectorCache);

  const all: Variant[] = [{ name: 'base' }];
  for (const alpha of [0.25, 0.5, 1]) for (const m of [1, 3, 5]) all.push({ name: `rocchio a${alpha} m${m}`, rescore: rocchio(alpha, m) });
  all.push({ name: 'rewrite max', rescore: rewrite(embedder, 'max') }, { name: 'rewrite sum', rescore: rewrite(embedder, 'sum') });
  for (const lambda of [0.5, 1]) {
    all.push({ name: `sentences l${lambda}`, rescore: sentences(embedder, lambda, false) });
    all.push({ name: `clauses l${lambda}`, rescore: sentences(embedder, lambda, true) });
  }
  for (const beta of [0.25, 0.5, 1]) for (const nat of [true, false]) all.push({ name: `maxnorm b${beta}${nat ? ' natural' : ''}`, rescore: maxNorm(beta, nat) });
  for (const [lo, hi] of [[0.1, 0.3], [0.15, 0.35], [0.2, 0.4], [0.2, 0.3], [0.25, 0.35], [0.1, 0.4]] as const) for (const nat of [true, false]) all.push({ name: `gate ${lo}-${hi}${nat ? ' natural' : ''}`, rescore: gate(lo, hi, nat) });
  for (const tau of [0.3, 0.4, 0.5, 0.6]) for (const share of [0.5, 0.75]) for (const nat of [true, false]) all.push({ name: `soft t${tau} s${share}${nat ? ' natural' : ''}`, rescore: soft(embedder, tau, share, nat) });
  for (const delta of [0.02, 0.05, 0.1]) for (const bonus of [5, 10, 20]) all.push({ name: `leader d${delta} b${bonus}`, rescore: leader(delta, bonus) });
  for (const w of [0.75, 1, 1.5]) all.push({ name: `natural vector ${w}`, weightsFor: (q) => (isNatural(q) ? { vector: w } : undefined) });
  const picked = (names: string[]) => all.filter((v) => v.name === 'base' || names.some((o) => v.name === o || v.name.startsWith(o)));
  const variants = only ? picked(only) : all;

  const coding = await codingDev(embedder, variants);
  if (vectorCache) saveVectorCache(embedder, vectorCache);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify({ benchmark: 'paraphrase levers on the dev halves', command: `node dist/bench/paraphrase-levers.js ${argv.join(' ')}`.trim(), date: new Date().toISOString(), coding, codingR1Changes: changes, devParaphraseMisses: ceiling }, null, 1)}\n`);
  log(`wrote ${out}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`paraphrase levers failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
