import type { FusedCandidate, FusedRecall } from '../../interfaces/store.js';
import { rowToRankingFields } from '../sql/sql-rows.js';
import type { ArrayRows } from './postgres-rows.js';
import { RANKING_COLUMNS, STATEMENT_HEAD } from './postgres-search.js';

/**
 * The rows of the fused statement (postgres-search.ts `fusedRecallSql`) as results with per-signal details,
 * shaped as core's `fuseScores` (or, for rank fusion, `fuse`) shapes them. Every number comes from the server;
 * only score fusion's fused = relevance / 100 is divided here, as fuseScores does.
 */
export function fusedResult({ rows, columns }: ArrayRows): FusedRecall {
  const at = (name: string) => columns.get(name) ?? -1;
  const ranking = RANKING_COLUMNS.map(at);
  const vrank = at('vrank');
  const cVector = at('c_vector');
  const cos = at('cos');
  const lrank = at('lrank');
  const cLexical = at('c_lexical');
  const bm = at('bm');
  const recencyRank = at('recency_rank');
  const cRecency = at('c_recency');
  const age = at('age');
  const fusedAt = at('fused');
  const relevanceAt = at('relevance');
  const value = (r: unknown[], i: number): unknown => (i < 0 ? undefined : r[i]);
  const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  const results: FusedCandidate[] = rows.map((r) => {
    const fields = rowToRankingFields(ranking.map((i) => value(r, i)));
    const signals = {
      vector: { rank: num(value(r, vrank)), contribution: Number(value(r, cVector)), raw: num(value(r, cos)) },
      lexical: { rank: num(value(r, lrank)), contribution: Number(value(r, cLexical)), raw: num(value(r, bm)) },
      recency: { rank: num(value(r, recencyRank)), contribution: Number(value(r, cRecency)), raw: num(value(r, age)) },
    };
    if (fusedAt >= 0) {
      // Reciprocal rank fusion: the score is the sum of the contributions, as fuse() gives it.
      const fused = Number(r[fusedAt]);
      return { fields, score: fused, scoreDetails: { signals, fused, rerank: null, method: 'rrf' } };
    }
    const relevance = Number(value(r, relevanceAt));
    return { fields, score: relevance / 100, scoreDetails: { signals, fused: relevance / 100, rerank: null, method: 'score', relevance } };
  });
  // The statement's values of the whole search are in its head row (postgres-search.ts `once`).
  const head = at(STATEMENT_HEAD);
  const first = head < 0 ? undefined : rows.find((r) => r[head] === true);
  const of = (name: string) => (first ? value(first, at(name)) : undefined);
  const termStatistics =
    first && of('lex_documents') !== undefined
      ? {
          documents: Number(of('lex_documents')),
          frequencies: new Map(Object.entries((of('lex_df') ?? {}) as Record<string, number>).filter(([, df]) => df > 0).map(([t, df]) => [t, Number(df)])),
        }
      : undefined;
  return { results, bestCosine: num(of('best_cosine')), termStatistics };
}
