import { BM25_B as B, BM25_K1 as K1 } from '../../core/fusion.js';
import type { CandidateFilter, FusedRecallRequest, ListFilter } from '../../interfaces/store.js';
import { MEMORY_SELECT } from '../sql/sql-rows.js';
import { intArrayParam, type Params, vectorParam } from './postgres-rows.js';
import { REANALYSIS_MARK, type VectorStorage } from './postgres-schema.js';
import type { LexicalProposal, Proposal, Proposals, ProposedPostings } from './postgres-recall-copy.js';

/**
 * The SQL of recall. Each signal is one set of CTEs, so the candidate queries (`vectorCandidates`,
 * `lexicalCandidates`) and the one-statement fusion (`fusedRecall`) run exactly the same SQL for their
 * candidates: server-side fusion ranks what core would rank, and the contract tests compare both.
 */

/**
 * What ranking reads of a memory `m` (sql-rows.ts `rowToRankingFields`): the fused statement returns several
 * hundred candidates, and recall reads whole only the few it keeps (core/ranked-memory.ts). The metadata only
 * when it names a session.
 */
const RANKING_SELECT = `m.id, m.namespace, m.created_at, CASE WHEN strpos(m.metadata, '"sessionId"') > 0 THEN m.metadata END AS metadata, m.feedback, m.code`;
/** The columns RANKING_SELECT names, in the order sql-rows.ts `rowToRankingFields` takes them. */
export const RANKING_COLUMNS = ['id', 'namespace', 'created_at', 'metadata', 'feedback', 'code'] as const;
/** RANKING_COLUMNS over the alias `x`. */
const rankingColumns = (x: string) => RANKING_COLUMNS.map((c) => `${x}.${c}`).join(', ');

/** isCurrent and isActive (interfaces/memory.ts) over the alias `m`. */
export const CURRENT_SQL = 'm.forgotten_at IS NULL AND m.superseded_by IS NULL';

/** The live memory of a namespace with a dedupe key ($1 namespace, $2 key). */
export const LIVE_BY_DEDUPE_SQL = `SELECT ${MEMORY_SELECT} FROM memories m WHERE m.namespace = $1 AND m.dedupe_key = $2 AND ${CURRENT_SQL}`;

export function activeSql(p: Params, now: string): string {
  return `${CURRENT_SQL} AND (m.expires_at IS NULL OR m.expires_at > ${p.add(now)})`;
}

/** WHERE fragments for kinds, tags and activity over `m`. */
export function filterSql(filter: Pick<CandidateFilter, 'kinds' | 'tags' | 'includeInactive' | 'now'>, p: Params): string {
  const parts: string[] = [];
  if (!filter.includeInactive) parts.push(activeSql(p, filter.now));
  if (filter.kinds && filter.kinds.length) parts.push(`m.kind = ANY(${p.add(filter.kinds)}::text[])`);
  if (filter.tags && filter.tags.length) parts.push(`m.tags::jsonb ?| ${p.add(filter.tags)}::text[]`);
  return parts.length ? parts.join(' AND ') : 'TRUE';
}

/** WHERE of listMemories over `m`. */
export function listWhere(filter: ListFilter, p: Params): string {
  const where = [filterSql(filter, p)];
  if (filter.namespace !== undefined) where.push(`m.namespace = ${p.add(filter.namespace)}`);
  if (filter.before !== undefined) where.push(`m.id < ${p.add(filter.before)}`);
  if (filter.createdFrom !== undefined) where.push(`m.created_at >= ${p.add(filter.createdFrom)}`);
  if (filter.createdTo !== undefined) where.push(`m.created_at < ${p.add(filter.createdTo)}`);
  for (const key of ['source', 'agent', 'sessionId'] as const) {
    const value = filter.provenance?.[key];
    if (value !== undefined) where.push(`(m.metadata::jsonb ->> '${key}') = ${p.add(value)}`);
  }
  return where.join(' AND ');
}

/** Where vectors live and how to compare them: pgvector with a dimension, or `real[]`. */
export interface VectorSpace {
  storage: VectorStorage;
  dimensions: number;
}

/**
 * CTE `vec(pk, similarity)`: the k nearest active memories of the namespace by cosine. With pgvector the
 * HNSW index is walked (iterative scan, strict order, so namespace and filter rows keep coming until k
 * pass); when it yields fewer than k — a small namespace, a narrow filter, the scan's tuple limit — an exact
 * scan of the namespace replaces it, so nearer filtered-out rows never hide matching ones. Without pgvector
 * the cosine is computed exactly over `real[]`.
 */
export function vectorCtes(p: Params, vector: string | Buffer, k: number, filter: CandidateFilter, space: VectorSpace, proposal?: Proposal): string {
  const ns = p.add(filter.namespace);
  const kp = p.add(k);
  const inNamespace = `v.namespace = ${ns}${filter.includeInactive ? '' : ' AND v.active'}`;
  if (space.storage === 'array') {
    const q = p.add(vector);
    const cosine = `(SELECT sum(x::float8 * y::float8) / nullif(sqrt(sum(x::float8 * x::float8)) * sqrt(sum(y::float8 * y::float8)), 0)
        FROM unnest(v.embedding, ${q}::real[]) AS t(x, y))`;
    return `vec AS (
      SELECT v.memory_pk AS pk, ${cosine} AS similarity FROM memory_vectors v JOIN memories m ON m.pk = v.memory_pk
      WHERE ${inNamespace} AND ${filterSql(filter, p)} ORDER BY similarity DESC NULLS LAST, v.memory_pk LIMIT ${kp})`;
  }
  const type = `vector(${space.dimensions})`;
  const q = `${p.add(vector)}::${type}`;
  const distance = `(v.embedding::${type} <=> ${q})`;
  // The dimension test matches the HNSW index's predicate (postgres-schema.ts), so the planner may use it.
  const inSpace = `vector_dims(v.embedding) = ${space.dimensions}`;
  if (proposal) {
    // Only the proposed memories are rescored (proposedCtes), each passing the filter as the copy read it: their
    // rows are not read here, and the statement checks those it returns (proposalsStoodColumn). The caller searches in full
    // when the proposal does not stand.
    return proposedCtes(p, 'vec', proposal, `SELECT v.memory_pk AS pk, 1 - ${distance} AS similarity FROM memory_vectors v
      WHERE v.memory_pk = ANY(${p.add(intArrayParam(proposal.pks))}::bigint[]) AND ${inSpace} AND ${inNamespace} ORDER BY ${distance}, v.memory_pk LIMIT ${kp}`);
  }
  const where = `${inNamespace} AND ${filterSql(filter, p)}`;
  return `vec_ann AS (
      SELECT v.memory_pk AS pk, 1 - ${distance} AS similarity FROM memory_vectors v JOIN memories m ON m.pk = v.memory_pk
      WHERE ${inSpace} AND ${where} ORDER BY ${distance} LIMIT ${kp}),
    vec_exact AS (
      SELECT v.memory_pk AS pk, 1 - ${distance} AS similarity FROM memory_vectors v JOIN memories m ON m.pk = v.memory_pk
      WHERE ${inSpace} AND ${where} AND (SELECT count(*) FROM vec_ann) < ${kp}
      ORDER BY ${distance} + 0, v.memory_pk LIMIT ${kp}),
    vec AS (SELECT pk, similarity FROM vec_ann WHERE (SELECT count(*) FROM vec_ann) >= ${kp} UNION ALL SELECT pk, similarity FROM vec_exact)`;
}

/**
 * The statement of `vectorCandidates`: the k nearest memories passing the filter (vectorCtes), with proposals
 * when there are some. Over a vector proposal the memories it returns are checked against the filter
 * (proposalsStoodColumn).
 */
export function vectorCandidatesSql(p: Params, vector: string | Buffer, k: number, filter: CandidateFilter, space: VectorSpace, proposals?: Proposals): string {
  const ctes = `${proposals ? `${freshCte(p, proposals)},\n    ` : ''}${vectorCtes(p, vector, k, filter, space, proposals?.vector)}`;
  if (!proposals?.vector) return `WITH ${ctes} SELECT m.id, vec.similarity FROM vec JOIN memories m ON m.pk = vec.pk ORDER BY vec.similarity DESC, m.pk`;
  return `WITH ${ctes},
    out AS MATERIALIZED (SELECT m.pk, m.id, vec.similarity, (${filterSql(filter, p)}) AS passes FROM vec JOIN memories m ON m.pk = vec.pk)
    SELECT id, similarity${proposalsStoodColumn(['vec'], 'out')} FROM out ORDER BY similarity DESC, pk`;
}

/**
 * CTE `fresh(ok)`: whether the log ends, in this statement's snapshot, at the position the proposals were made
 * at, under the same schema version, with no re-analysis of the postings under way. Every change of a memory is
 * an event whose position is assigned in commit order, and the only changes that are not (a migration, the
 * re-analysis after one: postgres-follow-ups.ts) are ruled out by the other two, so then the proposing copy held
 * exactly what this statement reads.
 */
export function freshCte(p: Params, proposals: Pick<Proposals, 'position' | 'schema'>): string {
  return `fresh AS MATERIALIZED (SELECT coalesce(max(gseq), 0) = ${p.add(proposals.position)}::bigint
      AND (SELECT max(version) FROM schema_version) = ${p.add(proposals.schema)}::int
      AND NOT EXISTS (SELECT 1 FROM meta WHERE key = ${p.add(REANALYSIS_MARK)}) AS ok FROM events)`;
}

/**
 * The CTEs of a proposed signal: `<name>` rescores the proposed memories exactly with the signal's own
 * expression (`rescore`), and nothing else is searched; `<name>_ok` says whether the proposal stands (the log
 * unchanged since it was made, `fresh`, and at least `need` proposed memories rescored). When it does not, or when
 * a memory the statement returns fails the filter (the proposed memories are not filtered again here: each was
 * proposed passing it, and `proposalsStoodColumn` checks the ones returned), the statement's rows are not the
 * search's and the caller runs it again without proposals (`PROPOSALS_STOOD`): a search with its full CTEs behind
 * a gate cost their planning on every search.
 */
function proposedCtes(p: Params, name: string, proposal: Proposal, rescore: string): string {
  return `${name} AS MATERIALIZED (${rescore}),
    ${name}_ok AS MATERIALIZED (SELECT (SELECT ok FROM fresh) AND (SELECT count(*) FROM ${name}) >= ${p.add(proposal.need)}::bigint AS ok)`;
}

/** The column of a statement with proposals saying whether all of them stood (its rows are then the search's). */
export const PROPOSALS_STOOD = 'proposals_stood';

/**
 * `, (…) AS proposals_stood` over the `_ok` CTEs of the proposed signals named, and over `rows`, the memories the
 * statement returns with their rows read and a column `passes` (the filter); '' when none was proposed. A proposed
 * memory that fails the filter and is not returned changed nothing: it ranked below every memory returned.
 */
export function proposalsStoodColumn(names: string[], rows: string): string {
  if (names.length === 0) return '';
  return `, ((SELECT bool_and(ok) FROM (${names.map((name) => `SELECT ok FROM ${name}_ok`).join(' UNION ALL ')}) o)
      AND NOT EXISTS (SELECT 1 FROM ${rows} WHERE NOT passes)) AS ${PROPOSALS_STOOD}`;
}

/**
 * One row `(n, avgdl)`: the namespace's document count and mean document length (0 and 0 when it has none),
 * from the trigger-kept `namespace_stats` (postgres-schema.ts); the mean is divided in numeric, as avg() does.
 */
function namespaceStatsSql(ns: string): string {
  return `SELECT coalesce(sum(documents), 0)::float8 AS n,
        coalesce(sum(total_length)::numeric / nullif(sum(documents), 0)::numeric, 0)::float8 AS avgdl FROM namespace_stats WHERE namespace = ${ns}`;
}


/**
 * CTEs `lex_idf(term, idf)` and `lex(pk, score)`: Okapi BM25 of the namespace's memories holding any of the
 * terms (OR), computed from the postings with the namespace's own document count, average length and
 * document frequencies (the trigger-kept `term_stats`, equal to a count of the term's postings); idf as
 * FTS5 computes it (log((N − n + 0.5) / (n + 0.5)), 1e-6 when not positive).
 * The terms are summed in term order (bytewise, the postings' collation), so equal documents get bit-equal
 * scores (and share a rank) in every execution, whatever order the aggregate meets their postings in; `sum`
 * (default: `termSumFor`) picks how that sum is written, both forms giving the same bits.
 */
export function lexicalCtes(p: Params, terms: string[], k: number, filter: CandidateFilter, names: LexicalNames = LEX, sum: TermSum = termSumFor(terms.length), proposal?: LexicalProposal): string {
  const ns = p.add(filter.namespace);
  const tp = `${p.add(terms)}::text[]`;
  const stats = names.stats === LEX.stats ? `${LEX.stats} AS (${namespaceStatsSql(ns)}),\n    ` : '';
  const out = names.out;
  // A proposal rescores its memories with the term-ordered sum (filtered up to FILTERED_SUM_MAX_TERMS terms, sorted
  // above: the same bits either way), and nothing else.
  const scores = proposal
    ? proposedCtes(p, out, proposal, proposedScoresSql(p, k, names, proposal.postings, sum === 'filtered' ? terms.length : 0))
    : sum === 'sorted'
      ? boundedSortedCtes(p, ns, tp, k, filter, names)
      : filteredScoresCtes(p, ns, tp, terms.length, k, filter, names);
  // Both MATERIALIZED: a CTE read once is otherwise inlined, and the planner then computed the idf (four
  // lookups of term_stats) once per posting instead of once per term (at 100k, 55k index scans a term list).
  return `${stats}${names.df} AS MATERIALIZED (
      SELECT t.term, t.ord, coalesce((SELECT s.documents FROM term_stats s WHERE s.term = t.term AND s.namespace = ${ns}), 0)::float8 AS df
      FROM unnest(${tp}) WITH ORDINALITY AS t(term, ord)),
    ${names.idf} AS MATERIALIZED (
      SELECT term, ord, CASE WHEN ln((n - df + 0.5) / (df + 0.5)) > 0 THEN ln((n - df + 0.5) / (df + 0.5)) ELSE 1e-6 END AS idf,
        row_number() OVER (ORDER BY term COLLATE "C") AS pos
      FROM ${names.df}, ${LEX.stats}),
    ${scores}`;
}

/** One posting's BM25 weight, its term frequency `tf` and idf `idf`, over the memory `m` and statistics `s`. */
const weightSql = (tf: string, idf: string, length = 'm.doc_length') => `${idf} * (${tf} * ${K1 + 1}) / (${tf} + ${K1} * (1 - ${B} + ${B} * ${length} / s.avgdl))`;

/**
 * A proposal's (postgres-recall-copy.ts) memories scored by the term-ordered sum (`filtered` when `filteredTerms`, the
 * query's term count, is given, else `sorted`): their postings of the query terms and
 * their lengths are those given, as the copy holds them, each memory passing the filter as the copy read it; the
 * proposal stands only when the copy holds exactly what this statement reads (freshCte) and every memory the
 * statement returns passes the filter (proposalsStoodColumn), so they are the table's rows and the scores the same
 * bits as `boundedSortedCtes` gives, and no memory row is read here.
 */
function proposedScoresSql(p: Params, k: number, names: LexicalNames, postings: ProposedPostings, filteredTerms: number): string {
  const given = `unnest(${p.add(intArrayParam(postings.pks))}::bigint[], ${p.add(postings.terms)}::text[], ${p.add(intArrayParam(postings.tfs))}::int[], ${p.add(intArrayParam(postings.lengths))}::int[]) AS u(pk, term, tf, dl)`;
  if (filteredTerms > 0) {
    // The `filtered` sum (termSumFor): one column per query term, added in term order, the same bits without sorting
    // each memory's postings (at 100k, that per-memory sort was half of the proposed lexical scores' time).
    const js = Array.from({ length: filteredTerms }, (_, j) => j + 1);
    const idf = (j: number) => `(SELECT idf FROM ${names.idf} WHERE pos = ${j})`;
    const score = js.map((j) => `coalesce(${weightSql(`t.tf_${j}`, idf(j), 't.dl')}, 0::float8)`).join(' + ');
    return `SELECT t.pk, (${score}) AS score
      FROM (SELECT u.pk, max(u.dl) AS dl${js.map((j) => `, max(u.tf) FILTER (WHERE i.pos = ${j}) AS tf_${j}`).join('')}
        FROM ${given} JOIN ${names.idf} i ON i.term = u.term GROUP BY u.pk) t CROSS JOIN ${LEX.stats} s
      ORDER BY score DESC, t.pk LIMIT ${p.add(k)}`;
  }
  return `SELECT d.memory_pk AS pk, sum(${weightSql('d.tf', 'i.idf', 'd.dl')} ORDER BY d.term) AS score
      FROM (SELECT u.pk AS memory_pk, u.term COLLATE "C" AS term, u.tf, u.dl FROM ${given}) d
      JOIN ${names.idf} i ON i.term = d.term CROSS JOIN ${LEX.stats} s
      GROUP BY d.memory_pk ORDER BY score DESC, d.memory_pk LIMIT ${p.add(k)}`;
}

/**
 * `sorted` over a bounded set of memories: each memory matching a term gets a bound above its score from its
 * postings alone (`ub`, as `filteredScoresCtes` bounds it, summed over the postings in any order), the 2k (at least
 * k + 100) of highest bound are scored in full as a seed, and their k-th best passing score θ is at most the true
 * k-th; a memory whose bound is below θ scores below it and is not in the top k, so only the others are joined to
 * their memory row and scored, each by the sorted sum (the same bits). A long prompt's common words match most of
 * a namespace: joining every posting to its memory was most of the statement (the prompt hook at 100k, 14 terms:
 * 112k postings of 79k memories, of which 3,990 have a bound above θ).
 */
function boundedSortedCtes(p: Params, ns: string, tp: string, k: number, filter: CandidateFilter, names: LexicalNames): string {
  const x = names.out;
  // Each memory's postings read by its key (a few dozen rows), whatever the planner guesses of how many memories
  // there are: joined on the terms instead, it probed the postings once per memory and query term (at 100k, 224
  // terms and 17k memories: 3.9M probes, 22 s).
  const scored = (among: string) => `SELECT t.pk, sc.score FROM (${among}) t JOIN memories m ON m.pk = t.pk CROSS JOIN ${LEX.stats} s
      CROSS JOIN LATERAL (SELECT sum(${weightSql('d.tf', 'i.idf')} ORDER BY d.term) AS score
        FROM memory_terms d JOIN ${names.idf} i ON i.term = d.term
        WHERE d.memory_pk = t.pk AND d.namespace = ${ns} AND d.term = ANY(${tp})) sc
      WHERE ${filterSql(filter, p)}`;
  return `${x}_ub AS MATERIALIZED (
      SELECT d.memory_pk AS pk, ${boundOf(`sum(${postingBound('d.tf', 'i.idf')})`)} AS ub
      FROM memory_terms d JOIN ${names.idf} i ON i.term = d.term
      WHERE d.namespace = ${ns} AND d.term = ANY(${tp})
      GROUP BY d.memory_pk),
    ${x}_theta AS MATERIALIZED (
      SELECT score FROM (${scored(`SELECT pk FROM ${x}_ub ORDER BY ub DESC LIMIT ${p.add(Math.max(2 * k, k + 100))}`)}) seed
      ORDER BY score DESC LIMIT 1 OFFSET ${p.add(Math.max(k - 1, 0))}),
    ${x} AS (
      ${scored(`SELECT pk FROM ${x}_ub WHERE ub >= coalesce((SELECT score FROM ${x}_theta), '-Infinity'::float8)`)}
      ORDER BY score DESC, t.pk LIMIT ${p.add(k)})`;
}

/**
 * Above any memory's score, from its term frequencies alone: a posting's weight tf·(k1+1) / (tf + k1·(1 − b +
 * b·dl/A)) is at most tf·(k1+1) / (tf + k1·(1 − b)) for every length dl ≥ 0. The margin covers the rounding
 * of both sums.
 */
const BOUND_MARGIN = 1 + 1e-9;

/** One posting's share of the bound: idf · tf / (tf + k1·(1 − b)); summed over a memory's postings, times `boundOf`. */
const postingBound = (tf: string, idf: string) => `${idf} * ${tf}::float8 / (${tf}::float8 + ${K1 * (1 - B)}::float8)`;
/** A memory's bound from the sum of its postings' shares: (k1 + 1) times it, with the margin. */
const boundOf = (shares: string) => `${(K1 + 1) * BOUND_MARGIN}::float8 * ${shares}`;

/**
 * `filtered`, the top k by BM25 with few memories read. The postings are grouped by memory first, each query
 * term's frequency in a column of its own (`tf_j`, the memory's one posting of the term j-th in term order,
 * or NULL), with a bound above the memory's score from those alone (`ub`, BOUND_MARGIN). The 2k (at least
 * k + 100) memories of highest bound are scored in full as a seed; their k-th best score θ is at most the true k-th score, so a memory whose
 * bound is below θ is not in the top k (ties included), and only the others are joined to their memory row
 * for its length and filter and scored. A score adds the terms' weights in term order, 0 for a term the memory
 * lacks, each the sorted form's expression over the same values, so the scores are the same bits.
 */
function filteredScoresCtes(p: Params, ns: string, tp: string, count: number, k: number, filter: CandidateFilter, names: LexicalNames): string {
  const x = names.out;
  const js = Array.from({ length: count }, (_, j) => j + 1);
  const idf = (j: number) => `(SELECT idf FROM ${names.idf} WHERE pos = ${j})`;
  const tfs = js.map((j) => `, max(d.tf) FILTER (WHERE i.pos = ${j}) AS tf_${j}`).join('');
  const sum = (parts: string[]) => (parts.length ? `(${parts.join(' + ')})` : '0::float8');
  const score = sum(js.map((j) => `coalesce(${weightSql(`t.tf_${j}`, idf(j))}, 0::float8)`));
  const bound = sum(js.map((j) => `coalesce(${postingBound(`g.tf_${j}`, idf(j))}, 0::float8)`));
  const kp = p.add(k);
  const scored = (set: string) => `SELECT t.pk, ${score} AS score FROM ${set} t JOIN memories m ON m.pk = t.pk CROSS JOIN ${LEX.stats} s WHERE ${filterSql(filter, p)}`;
  return `${x}_tf AS MATERIALIZED (
      SELECT g.*, ${boundOf(bound)} AS ub FROM (
        SELECT d.memory_pk AS pk${tfs}
        FROM memory_terms d JOIN ${names.idf} i ON i.term = d.term
        WHERE d.namespace = ${ns} AND d.term = ANY(${tp})
        GROUP BY d.memory_pk) g),
    ${x}_theta AS MATERIALIZED (
      SELECT score FROM (${scored(`(SELECT * FROM ${x}_tf ORDER BY ub DESC LIMIT ${p.add(Math.max(2 * k, k + 100))})`)}) seed
      ORDER BY score DESC LIMIT 1 OFFSET ${p.add(Math.max(k - 1, 0))}),
    ${x} AS (
      ${scored(`${x}_tf`)} AND t.ub >= coalesce((SELECT score FROM ${x}_theta), '-Infinity'::float8)
      ORDER BY score DESC, t.pk LIMIT ${kp})`;
}

/**
 * How a memory's BM25 weights are added in term order. `sorted`: `sum(… ORDER BY d.term)`, which sorts each
 * memory's postings. `filtered`: one column per query term, added in term order (`i.pos`): each is the
 * memory's one posting of that term, so exactly its weight, or 0 when it has none (adding 0 changes no bits),
 * so the result is the sorted sum's, bit for bit, without its sort, and read from a bounded set of memories
 * (`filteredScoresCtes`); but every posting is tested against
 * every term's filter, a cost of postings × terms.
 */
export type TermSum = 'sorted' | 'filtered';

/**
 * The most query terms summed `filtered`. On 1M postings (50k memories, no parallel workers) the filtered
 * form was faster up to about 8 terms (2: 13 vs 16 ms, 4: 21 vs 25 ms), about even from 8 to 16, and up to
 * twice as slow above (40: 277 vs 164 ms, 150: 1.06 s vs 0.49 s); a prompt of 2000 characters gives 150-200 terms.
 */
export const FILTERED_SUM_MAX_TERMS = 8;

/** The sum form for a list of `count` query terms: the one rule choosing it. */
export function termSumFor(count: number): TermSum {
  return count <= FILTERED_SUM_MAX_TERMS ? 'filtered' : 'sorted';
}

/** The CTE names of one lexical signal; only the first set (LEX) defines `lex_stats`, the others read it. */
interface LexicalNames {
  stats: string;
  df: string;
  idf: string;
  out: string;
}
const LEX: LexicalNames = { stats: 'lex_stats', df: 'lex_df', idf: 'lex_idf', out: 'lex' };

/**
 * The lexical signal with related terms (core/related-terms.ts `withRelated` in SQL): the query's own BM25
 * candidates (`lex_own`, statistics in `lex_df`/`lex_idf` as without them) and the related terms' (`lex_rel`,
 * their own k), each memory scored by the larger of its own score and weight × its related score, ordered
 * by that score, then own candidates before related-only ones, each in its own order; the first k as `lex`.
 */
function lexicalWithRelatedCtes(p: Params, terms: string[], k: number, filter: CandidateFilter, related: NonNullable<FusedRecallRequest['related']>, proposals?: Proposals): string {
  const own = lexicalCtes(p, terms, k, filter, { ...LEX, out: 'lex_own' }, termSumFor(terms.length), proposals?.lexical);
  const rel = lexicalCtes(p, related.terms, related.k, filter, { stats: 'rel_stats', df: 'rel_df', idf: 'rel_idf', out: 'lex_rel' }, termSumFor(related.terms.length), proposals?.related);
  const w = `${p.add(related.weight)}::float8`;
  return `${own},
    ${rel},
    lex AS (
      SELECT coalesce(o.pk, r.pk) AS pk,
        CASE WHEN r.pk IS NULL THEN o.score WHEN o.pk IS NULL THEN ${w} * r.score ELSE greatest(o.score, ${w} * r.score) END AS score,
        CASE WHEN o.pk IS NULL THEN 1 ELSE 0 END AS src, coalesce(o.pos, r.pos) AS pos
      FROM (SELECT pk, score, row_number() OVER (ORDER BY score DESC, pk) AS pos FROM lex_own) o
      FULL JOIN (SELECT pk, score, row_number() OVER (ORDER BY score DESC, pk) AS pos FROM lex_rel) r ON r.pk = o.pk
      ORDER BY score DESC, src, pos LIMIT ${p.add(k)})`;
}

/** The column naming the one row of the fused statement that carries its statement-wide values (`once`). */
export const STATEMENT_HEAD = 'statement_head';

/**
 * A statement-wide value (the best cosine, the term statistics) in one row only, the head, and NULL in the others:
 * in every one of several hundred rows it was sent and parsed (JSON) as many times.
 */
const once = (value: string, name: string) => `CASE WHEN row_number() OVER () = 1 THEN ${value} END AS ${name}`;

/**
 * One statement for hybrid recall: each signal's candidates, their ranks (equal values share a rank), and
 * the fused ranking with each signal's contribution, best first. Score fusion (the default) is `fuseScores`
 * of core/fusion.ts written in SQL, term by term in the same order of operations, so the numbers agree;
 * with `request.rrf` it is `fuse` (reciprocal rank fusion): weight / (k + rank) per signal, recency ranked
 * by age among the candidates.
 */
export function fusedRecallSql(p: Params, request: FusedRecallRequest, space: VectorSpace | null, proposals?: Proposals): string {
  const { weights: w, filter, k } = request;
  const useVector = request.vector !== null && space !== null && w.vector > 0;
  const useLexical = request.terms.length > 0 && w.lexical > 0;
  const ctes: string[] = [];
  if (proposals) ctes.push(freshCte(p, proposals));
  ctes.push(useVector ? vectorCtes(p, vectorParam(request.vector as Float32Array, (space as VectorSpace).storage), k, filter, space as VectorSpace, proposals?.vector) : 'vec AS (SELECT NULL::bigint AS pk, NULL::float8 AS similarity WHERE FALSE)');
  if (useLexical) {
    ctes.push(request.related && request.related.terms.length > 0 ? lexicalWithRelatedCtes(p, request.terms, k, filter, request.related, proposals) : lexicalCtes(p, request.terms, k, filter, LEX, termSumFor(request.terms.length), proposals?.lexical));
  }
  else ctes.push('lex_idf AS (SELECT NULL::text AS term, NULL::bigint AS ord, 0::float8 AS idf WHERE FALSE), lex AS (SELECT NULL::bigint AS pk, NULL::float8 AS score WHERE FALSE)');
  const f = (x: number) => `${p.add(x)}::float8`;
  const [wv, wl, wr] = [f(w.vector), f(w.lexical), f(w.recency)];
  const nowMs = `(extract(epoch FROM ${p.add(filter.now)}::timestamptz) * 1000)`;
  ctes.push(`vr AS (SELECT pk, similarity, rank() OVER (ORDER BY similarity DESC) AS rnk FROM vec)`);
  ctes.push(`lr AS (SELECT pk, score, rank() OVER (ORDER BY score DESC) AS rnk FROM lex)`);
  // Every candidate of either signal once, with both signals' values: a full join, which the planner must
  // hash or merge (with left joins it chose nested loops over the CTEs, a scan of one per row of the other).
  ctes.push(`cand AS (
      SELECT coalesce(vr.pk, lr.pk) AS pk, vr.similarity AS cos, vr.rnk AS vrank, lr.score AS bm, lr.rnk AS lrank
      FROM vr FULL JOIN lr ON lr.pk = vr.pk)`);
  // Over proposals, each candidate's row says whether it passes the filter (proposalsStoodColumn).
  ctes.push(`raw AS (
      SELECT c.pk, c.cos, c.vrank, c.bm, c.lrank, ${RANKING_SELECT},
        greatest(0::float8, ((${nowMs} - extract(epoch FROM m.created_at::timestamptz) * 1000)::float8) / 86400000::float8) AS age${proposals ? `,
        (${filterSql(filter, p)}) AS passes` : ''}
      FROM cand c JOIN memories m ON m.pk = c.pk)`);
  let select: string;
  if (request.rrf) {
    // fuse(): contributions summed vector, lexical, recency (0 + x is x, so the sums agree bit for bit).
    const rk = p.add(request.rrf.k);
    const share = (weight: string, rank: string) => `(CASE WHEN ${rank} IS NULL THEN 0::float8 ELSE ${weight} / (${rk}::int + ${rank})::float8 END)`;
    ctes.push(`parts AS (
      SELECT raw.*, CASE WHEN ${wr} > 0 THEN rank() OVER (ORDER BY age) END AS recency_rank FROM raw)`);
    select = `parts.cos, parts.vrank, parts.bm, parts.lrank, CASE WHEN ${wr} > 0 THEN parts.age END AS age, parts.recency_rank,
      ${share(wv, 'parts.vrank')} AS c_vector, ${share(wl, 'parts.lrank')} AS c_lexical, ${share(wr, 'parts.recency_rank')} AS c_recency,
      ((${share(wv, 'parts.vrank')} + ${share(wl, 'parts.lrank')}) + ${share(wr, 'parts.recency_rank')}) AS fused`;
  } else {
    const c = request.calibration;
    const total = `(${wv} + ${wl} + ${wr})`;
    const matchWeight = `(${wv} + ${wl})`;
    const zero = f(c.vectorZero);
    const span = `(${f(c.vectorFull)} - ${zero})`;
    const halfLife = f(c.recencyHalfLifeDays);
    const clamp = (x: string) => `(CASE WHEN (${x}) <= 0 THEN 0::float8 WHEN (${x}) >= 1 THEN 1::float8 ELSE (${x}) END)`;
    const part = (x: string) => `(CASE WHEN ${total} > 0 THEN (100 * (${x})) / ${total} ELSE 0::float8 END)`;
    // Summed in the query's term order, as core sums the scale, so both give the same bits.
    ctes.push(`scale AS MATERIALIZED (SELECT coalesce(sum(idf ORDER BY ord), 0)::float8 AS s FROM lex_idf)`);
    ctes.push(`norm AS (
      SELECT raw.*,
        CASE WHEN cos IS NULL OR ${span} <= 0 THEN 0::float8 ELSE ${clamp(`(cos - ${zero}) / ${span}`)} END AS v,
        CASE WHEN bm IS NULL OR scale.s <= 0 THEN 0::float8 ELSE ${clamp('bm / scale.s')} END AS l,
        CASE WHEN ${halfLife} > 0 THEN power(0.5::float8, age / ${halfLife}) ELSE 0::float8 END AS r
      FROM raw CROSS JOIN scale)`);
    ctes.push(`parts AS (
      SELECT norm.*,
        ${part(`${wv} * v`)} AS c_vector,
        ${part(`${wl} * l`)} AS c_lexical,
        ${part(`${wr} * r * (CASE WHEN ${matchWeight} > 0 THEN (${wv} * v + ${wl} * l) / ${matchWeight} ELSE 0::float8 END)`)} AS c_recency
      FROM norm)`);
    select = `parts.cos, parts.vrank, parts.bm, parts.lrank, parts.age,
      parts.c_vector, parts.c_lexical, parts.c_recency, (parts.c_vector + parts.c_lexical + parts.c_recency) AS relevance,
      row_number() OVER (ORDER BY parts.created_at DESC, parts.vrank NULLS LAST, parts.lrank NULLS LAST) AS recency_rank`;
  }
  // Whether every proposal stood (postgres-recall-copies.ts counts them), for the proposed signals that ran.
  select += proposalsStoodColumn(
    [
      useVector && proposals?.vector ? 'vec' : null,
      ...(useLexical && request.related && request.related.terms.length > 0
        ? [proposals?.lexical ? 'lex_own' : null, proposals?.related ? 'lex_rel' : null]
        : [useLexical && proposals?.lexical ? 'lex' : null]),
    ].filter((name): name is string => name !== null),
    'raw',
  );
  return `WITH ${ctes.join(',\n    ')}
    SELECT ${rankingColumns('parts')}, ${select},
      ${once('(SELECT max(similarity) FROM vec)', 'best_cosine')}${useLexical ? `, ${once('(SELECT n FROM lex_stats)', 'lex_documents')}, ${once('(SELECT json_object_agg(term, df) FROM lex_df)', 'lex_df')}` : ''},
      row_number() OVER () = 1 AS ${STATEMENT_HEAD}
    FROM parts
    ORDER BY ${request.rrf ? 'fused' : 'relevance'} DESC, parts.created_at DESC, parts.vrank NULLS LAST, parts.lrank NULLS LAST`;
}
