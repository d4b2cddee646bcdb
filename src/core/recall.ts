// Recall: candidate signals, fusion, floor, same-topic ordering, rerank, recall counting.
import { CairnError } from '../interfaces/errors.js';
import type { Embedder } from '../interfaces/embedder.js';
import { isActive } from '../interfaces/memory.js';
import type { FusionMethod, Memory, SearchOptions, SearchResult, SignalWeights } from '../interfaces/memory.js';
import type { CandidateFilter } from '../interfaces/store.js';
import { clearsFloor, defaultWeightsFor, fts5Idf, fuse, fuseScores, resolveWeights, RRF_K, unknownTermShare } from './fusion.js';
import { BACKGROUND_TEXTS } from './background.js';
import { plainTerms, queryTerms } from './lexical.js';
import { indexText } from './events.js';
import { dot, inverseDocumentFrequency, preferNewerOnSameTopic, termsNeedingWeights, termsOf } from './topics.js';
import { applyTermCoverage, COVERAGE_MIN_WINDOW } from './term-coverage.js';
import { addLikelyReplacing } from './likely-replaces.js';
import { weighRoutes } from './route-answers.js';
import { defaultVocabulary, relatedPool, relatedTermsFor, withRelated } from './related-terms.js';
import { demoteDoubted, netDoubt } from './feedback.js';
import { addSessionContext } from './session-context.js';
import { validateKind, validateLimit, validateFusion, validateTags, MAX_LIMIT } from './validate.js';
import type { EngineContext } from './engine-context.js';
import { checkEmbedder, embedMany } from './embedding.js';
import { fusedResults, readCandidates, readWhole } from './ranked-memory.js';
import { readAhead, VectorReads } from './read-ahead.js';

export const DEFAULT_LIMIT = 10;

export async function weightsFor(ctx: EngineContext, namespace: string, override?: Partial<SignalWeights>, method: FusionMethod = ctx.fusion): Promise<SignalWeights> {
  const stored = (await ctx.store.getSetting(namespace, 'weights')) as Partial<SignalWeights> | null;
  const base = resolveWeights(defaultWeightsFor(method), ctx.configWeights);
  return resolveWeights(resolveWeights(base, stored ?? undefined), override);
}

/**
 * Hybrid recall: vector KNN and BM25 candidates, fused with recency (score fusion by default, reciprocal
 * rank as an option); a newer note on the same topic moves above an older one; a configured reranker then
 * reorders the fused candidates. With score fusion, nothing comes back when no candidate reaches the
 * relevance floor. Results are best first with per-signal score details.
 */
export async function search(ctx: EngineContext, query: string, options: SearchOptions = {}): Promise<SearchResult[]> {
  if (typeof query !== 'string' || query.trim() === '') throw new CairnError('INVALID_INPUT', 'query: must not be empty', { field: 'query' });
  if (Buffer.byteLength(query) > 32 * 1024) throw new CairnError('INVALID_INPUT', 'query: must be at most 32 KB', { field: 'query' });
  const namespace = ctx.ns(options.namespace);
  const limit = options.limit === undefined ? DEFAULT_LIMIT : validateLimit(options.limit, 'limit', MAX_LIMIT);
  const method = options.fusion === undefined ? ctx.fusion : validateFusion(options.fusion, 'fusion');
  const now = ctx.now();
  const filter: CandidateFilter = {
    namespace,
    kinds: options.kinds?.map((k) => validateKind(k, 'kinds')),
    tags: options.tags === undefined ? undefined : validateTags(options.tags),
    now,
    includeInactive: options.includeInactive ?? false,
  };
  const pool = Math.max(limit * ctx.candidateFactor, ctx.minCandidates);
  const asked = queryTerms(query);
  const mayUseLexical = asked.length > 0 && ctx.store.capabilities.fullText;
  // A long query may be searched by part of its terms; the relevance floor still weighs all of them (`askedWeights`).
  // The term statistics read to decide it (null for a short query) serve the terms' weights below too.
  const { terms, statistics } = mayUseLexical ? await searchedTerms(ctx, asked, namespace) : { terms: asked, statistics: null };
  const askedWeights = statistics && termWeightsOf(asked, statistics);
  const weighTerms = async (): Promise<TermWeights> => (statistics ? termWeightsOf(terms, statistics) : termIdf(ctx, terms, namespace));
  const mayUseVector = Boolean(ctx.embedder) && ctx.store.capabilities.vectorSearch;
  // Related terms (an engineering vocabulary) join the lexical signal weighed down; identifiers stay exact. The
  // weights decide whether they and the embedder record are used; the three are read together. On PostgreSQL at
  // 100k their four round trips took 1.3 ms one after another; read together, paired runs saved up to 0.15 ms a
  // search (on two cores shared with the server, a round trip costs CPU more than waiting).
  // Related terms never bring back a query word the search left out (they leave out the query's own words).
  const relatedRead = mayUseLexical ? readAhead(relatedTermsFor(ctx, namespace, query, asked)) : null;
  const embedderRead = mayUseVector ? readAhead(checkEmbedder(ctx)) : null;
  const weights = await weightsFor(ctx, namespace, options.weights, method);
  const useLexical = weights.lexical > 0 && mayUseLexical;
  const related = useLexical ? await relatedRead : null;
  let queryVector: Float32Array | null = null;

  const embedQuery = async (): Promise<Float32Array | null> => {
    if (weights.vector <= 0 || !embedderRead) return null;
    const stored = await embedderRead;
    if (!stored) return null; // nothing embedded yet
    const [qv] = await embedMany(ctx, [query]);
    return qv ?? null;
  };
  let results: SearchResult[];
  let bestCosine: number | null;
  let termWeights: TermWeights | null = null;
  const coverage = method === 'score' && useLexical ? ctx.termCoverage : null;
  if (ctx.store.capabilities.serverSideFusion && ctx.store.fusedRecall) {
    // The backend gathers both signals' candidates and fuses them in one round trip, as fuseScores (or fuse) would.
    queryVector = await embedQuery();
    const rrf = method === 'rrf' ? { rrf: { k: RRF_K } } : {};
    const withTerms = related ? { related: { terms: related.terms, k: relatedPool(limit, pool), weight: related.weight } } : {};
    const fused = await ctx.store.fusedRecall({ vector: queryVector, terms: useLexical ? terms : [], k: pool, filter, weights, calibration: ctx.calibration, ...rrf, ...withTerms });
    results = fusedResults(fused.results);
    bestCosine = fused.bestCosine;
    if (method === 'score' && useLexical && results.length > 0) {
      // The statement returns the statistics it scored with; a backend that does not asks for them.
      termWeights = fused.termStatistics ? termWeightsOf(terms, fused.termStatistics) : await weighTerms();
    }
  } else {
    // Where the vector search runs beside this thread, the lexical side waits until it is asked for (the query
    // embedded), so its work runs during the scan rather than before it.
    let vectorAsked: () => void = () => {};
    const lexicalAfter = ctx.store.vectorSearchRunsBeside?.(namespace) ? new Promise<void>((resolve) => (vectorAsked = resolve)) : null;
    const vectorHits = async () => {
      try {
        queryVector = await embedQuery();
        return queryVector ? ctx.store.vectorCandidates(queryVector, pool, filter) : [];
      } finally {
        vectorAsked();
      }
    };
    const lexicalHits = async () => {
      if (!useLexical) return [];
      if (lexicalAfter) await lexicalAfter;
      if (!related) return ctx.store.lexicalCandidates(terms, pool, filter);
      const [own, more] = await Promise.all([ctx.store.lexicalCandidates(terms, pool, filter), ctx.store.lexicalCandidates(related.terms, relatedPool(limit, pool), filter)]);
      return withRelated(own, more, related.weight, pool);
    };
    // Score fusion scales BM25 by the query terms' rarity: Σ idf is what a full match scores.
    const [vec, lex, weighed] = await Promise.all([vectorHits(), lexicalHits(), method === 'score' && useLexical ? weighTerms() : null]);
    termWeights = weighed;
    const scale = weighed ? [...weighed.idf.values()].reduce((sum, w) => sum + w, 0) : 0;
    const ids = [...new Set([...vec.map((h) => h.id), ...lex.map((h) => h.id)])];
    // Read for ranking only; the results the steps below look at closely are read whole (readWhole) first.
    const memories = await readCandidates(ctx.store, ids);
    const nowMs = Date.parse(now);
    const ageDays = (m: Memory) => (nowMs - Date.parse(m.createdAt)) / 86_400_000;
    const vectorRanked = vec.map((h) => ({ id: h.id, raw: h.similarity }));
    const lexicalRanked = lex.map((h) => ({ id: h.id, raw: h.score }));
    results =
      method === 'score'
        ? fuseScores({ memories, vector: vectorRanked, lexical: lexicalRanked, lexicalScale: scale, ageDays, weights, calibration: ctx.calibration })
        : fuse({ memories, vector: vectorRanked, lexical: lexicalRanked, ageDays, weights, k: RRF_K });
    bestCosine = vec[0]?.similarity ?? null;
  }
  results = await ctx.code.visible(results, (r) => r.memory);
  // The first results that coverage, routes and the reranker look at closely. The steps below read the first
  // results whole, in windows of at most this many (coverage, routes, recency, the reranker): one read here
  // serves them all, instead of a round trip of the store for each; they read again only what their own
  // re-ordering brought into the window.
  const headWindow = Math.max(limit * 3, COVERAGE_MIN_WINDOW);
  results = await readWhole(ctx.store, results, headWindow);
  const termCache = new Map<string, Set<string>>();
  // A word the namespace lacks counts half known when the first result holds a term related to it ("i18n" and
  // a note that says "translation"). Counted whole whenever any memory held one, "dinner reservation policy"
  // passed on any note about roles ("policy" → "role").
  const shareWeights = termWeights && (askedWeights ?? termWeights);
  let unknownShare = shareWeights?.unknownShare ?? 0;
  if (related && shareWeights && unknownShare > 0 && results.length > 0) {
    results = await readWhole(ctx.store, results, 1);
    const first = termsOf(results[0] as SearchResult, termCache);
    const halfKnown = new Set([...related.byTerm].filter(([, list]) => list.some((x) => first.has(x))).map(([t]) => t));
    unknownShare = unknownTermShare(shareWeights.idf, shareWeights.frequencies, shareWeights.documents, halfKnown);
  }
  if (coverage && termWeights) {
    results = await readWhole(ctx.store, results, headWindow);
    results = applyTermCoverage(results, { terms, idf: termWeights.idf, termsOf: (r) => termsOf(r, termCache), weights, calibration: ctx.calibration, coverage, window: headWindow, related: related && coverageStandIns(related.byTerm), plainTermsOf: (r) => new Set(plainTerms(indexText(r.memory))) });
  }
  if (method === 'score' && ctx.relevanceFloor && !clearsFloor(results, ctx.relevanceFloor, bestCosine, await backgroundCosine(ctx, queryVector), unknownShare)) results = [];
  if (method === 'score' && ctx.routeAnswers && results.length > 1) {
    // After the floor: a route counts less against an answer, it does not make a query irrelevant.
    results = weighRoutes(await readWhole(ctx.store, results, headWindow), query, ctx.routeAnswers, headWindow);
  }
  if (method === 'score' && ctx.sessionContext) results = addSessionContext(results, ctx.sessionContext);
  // After the floor: a doubted memory sinks among the relevant ones, it does not make a query irrelevant.
  results = demoteDoubted(results);
  // The recency step's window is mostly the first results as they stand now: their vectors are read beside the
  // update step's reads, and only what that step brings into the window is read later (on PostgreSQL at 100k, a
  // round trip of 0.7–1.6 ms after them; paired runs saved about 0.3 ms a search).
  const recencyWindow = (count: number) => Math.min(count, Math.max(limit * 2, 20));
  const vectors = new VectorReads(ctx.store);
  if (weights.recency > 0 && results.length > 1) vectors.readAhead(results.slice(0, recencyWindow(results.length)).map((r) => r.memory.id));
  if (method === 'score' && ctx.likelyReplaces && queryVector && results.length > 0) {
    const nowMs = Date.parse(now);
    const ageDays = (m: Memory) => (nowMs - Date.parse(m.createdAt)) / 86_400_000;
    results = await readWhole(ctx.store, results, limit);
    results = await addLikelyReplacing(ctx, results, { filter, queryVector, weights, ageDays, window: limit, rule: ctx.likelyReplaces });
  }
  if (weights.recency > 0 && results.length > 1) {
    const window = recencyWindow(results.length);
    results = await readWhole(ctx.store, results, window);
    const windowVectors = await vectors.get(results.slice(0, window).map((r) => r.memory.id));
    const needed = termsNeedingWeights(results, windowVectors, window, termCache);
    let weight: ((term: string) => number) | undefined;
    if (needed.length > 0 && ctx.store.capabilities.fullText) {
      const { documents, frequencies } = await ctx.store.termDocumentFrequencies(needed, namespace);
      if (documents > 0) weight = inverseDocumentFrequency(documents, frequencies);
    }
    const mayLead = (m: Memory) => isActive(m, now) && netDoubt(m.feedback) <= 0;
    results = preferNewerOnSameTopic(results, windowVectors, window, weight, termCache, method === 'score' ? ctx.statedUpdate : null, method === 'score' ? ctx.likelyReplaces : null, mayLead);
  }

  if (ctx.reranker && results.length > 1) {
    results = await readWhole(ctx.store, results, headWindow);
    const head = results.slice(0, headWindow);
    const scores = await ctx.reranker.score(query, head.map((r) => r.memory.text));
    head.forEach((r, i) => {
      r.scoreDetails.rerank = scores[i] ?? 0;
    });
    const reranked = head
      .map((r, i) => ({ r, i }))
      .sort((a, b) => (b.r.scoreDetails.rerank ?? 0) - (a.r.scoreDetails.rerank ?? 0) || a.i - b.i)
      .map((x) => x.r);
    results = [...reranked, ...results.slice(head.length)];
  }
  const final = (await readWhole(ctx.store, results, limit)).slice(0, limit);
  await ctx.code.mark(final);
  if (options.countRecall !== false) await countAsRecalled(ctx, namespace, final.map((r) => r.memory), now);
  return final;
}

/**
 * A query of more than this many distinct terms (a long prompt, a pasted log) whose terms the namespace holds more
 * than MAX_QUERY_POSTINGS times is searched by its MAX_QUERY_TERMS rarest terms. Its lexical side reads every
 * posting of every term searched: at 100k memories on SQLite a 300-character prompt (45 terms, 365k postings) took
 * 545 ms and a 2,000-character one (233 terms, 1.3M postings) 2.1 s, past the prompt hook's 300 ms (PostgreSQL
 * 0.4–2.4 s); an 80-character one (8 terms, 78k postings) 78 ms. The common words of a long text add little to any
 * memory's BM25 score and cost most of its postings. The longest LoCoMo question has 15 terms.
 */
export const MAX_QUERY_TERMS = 16;
/**
 * The postings (memories holding a term, summed over the terms) above which a long query is cut to its rarest
 * terms: about 50 ms of reading at 100k. It does not bound what the kept terms read (sixteen terms each held by
 * 20,000 memories read 320,000 postings).
 */
export const MAX_QUERY_POSTINGS = 50_000;

/**
 * The terms a query is searched with, in its order: all of them, unless there are more than MAX_QUERY_TERMS and
 * the namespace holds them more than MAX_QUERY_POSTINGS times. Then the MAX_QUERY_TERMS rarest (fewest memories
 * holding them; ties to the earlier term) and every term no memory holds (it reads no posting). With the term
 * statistics it read for a query of more than MAX_QUERY_TERMS terms (all the asked terms'), or null: the relevance
 * floor's share of unknown words is worked out over all of them (over the searched terms alone the known words left
 * out would not count), and the searched terms' weights from them. Searching by more of the rare terms, while their
 * postings stayed within MAX_QUERY_POSTINGS, took 75–111 ms against 38–54 ms for 300- to 2,000-character prompts
 * at 100k.
 */
async function searchedTerms(ctx: EngineContext, asked: string[], namespace: string): Promise<{ terms: string[]; statistics: TermStatistics | null }> {
  if (asked.length <= MAX_QUERY_TERMS) return { terms: asked, statistics: null };
  const statistics = await ctx.store.termDocumentFrequencies(asked, namespace);
  const df = (t: string) => statistics.frequencies.get(t) ?? 0;
  const known = asked.map((t, i) => ({ t, i, df: df(t) })).filter((x) => x.df > 0);
  if (known.reduce((sum, x) => sum + x.df, 0) <= MAX_QUERY_POSTINGS) return { terms: asked, statistics };
  const rarest = new Set(
    known
      .sort((a, b) => a.df - b.df || a.i - b.i)
      .slice(0, MAX_QUERY_TERMS)
      .map((x) => x.t),
  );
  return { terms: asked.filter((t) => df(t) === 0 || rarest.has(t)), statistics };
}

/** Each query term's inverse document frequency in the namespace (fts5Idf), as score fusion weighs BM25. */
async function termIdf(ctx: EngineContext, terms: readonly string[], namespace: string): Promise<TermWeights> {
  return termWeightsOf(terms, await ctx.store.termDocumentFrequencies([...terms], namespace));
}

function termWeightsOf(terms: readonly string[], { documents, frequencies }: TermStatistics): TermWeights {
  const idf = new Map(terms.map((t) => [t, fts5Idf(documents, frequencies.get(t) ?? 0)]));
  return { idf, frequencies, documents, unknownShare: unknownTermShare(idf, frequencies, documents) };
}

/**
 * The related terms that stand in for a query word in coverage (term-coverage.ts): whole members only. A word
 * of a phrase member ("time" of "response time", "code" of "code signing") is searched loose for BM25, where it
 * counts at the related weight, but alone it says too little to cover a word.
 */
function coverageStandIns(byTerm: ReadonlyMap<string, string[]>): Map<string, string[]> {
  const vocabulary = defaultVocabulary();
  return new Map([...byTerm].map(([t, list]) => [t, list.filter((x) => vocabulary.isWholeMember(x))] as const).filter(([, list]) => list.length > 0));
}

/** The namespace's memories and the query terms' document frequencies, as counted (Store.termDocumentFrequencies). */
interface TermStatistics {
  documents: number;
  frequencies: Map<string, number>;
}

interface TermWeights extends TermStatistics {
  idf: Map<string, number>;
  /** unknownTermShare: how much of the query's weight is in words the namespace never uses. */
  unknownShare: number;
}

/**
 * The background sentences' vectors by embedder, shared by every engine on one: the same model gives them the
 * same vectors, so a process embeds them once (and with `fixed`, an embedder may keep them on disk for the next).
 */
const backgroundByEmbedder = new WeakMap<Embedder, Promise<(Float32Array | null)[]>>();

/** The query's cosine to the nearest background sentence (background.ts); null without a query vector. */
export async function backgroundCosine(ctx: EngineContext, queryVector: Float32Array | null): Promise<number | null> {
  if (!queryVector) return null;
  const { embedder } = ctx;
  let vectors = embedder ? backgroundByEmbedder.get(embedder) : undefined;
  if (!vectors) {
    vectors = embedMany(ctx, [...BACKGROUND_TEXTS], { fixed: true });
    if (embedder && ctx.store.capabilities.vectorSearch) {
      backgroundByEmbedder.set(embedder, vectors);
      vectors.catch(() => backgroundByEmbedder.delete(embedder)); // a failed call is tried again by the next search
    }
  }
  let best = -1;
  for (const v of await vectors) {
    const cosine = v ? dot(v, queryVector) : -1;
    if (cosine > best) best = cosine;
  }
  return best;
}

/** Usage statistics only: a failure (a busy file, a read-only store) never fails the recall that counts. */
export async function countAsRecalled(ctx: EngineContext, namespace: string, memories: Memory[], now: string): Promise<void> {
  const ids = memories.filter((m) => m.namespace === namespace).map((m) => m.id);
  if (!ctx.countRecalls || ids.length === 0) return;
  await ctx.store.recordRecalls(namespace, ids, now).catch((err: unknown) => {
    ctx.log?.debug(`recall counts not recorded: ${(err as Error).message}`);
  });
}
