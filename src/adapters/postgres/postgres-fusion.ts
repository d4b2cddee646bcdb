import type { FusedCandidate, FusedRecall } from '../../interfaces/store.js';
import { rowToRankingFields, type Row } from '../sql/sql-rows.js';
import { STATEMENT_HEAD } from './postgres-search.js';

/**
 * The rows of the fused statement (postgres-search.ts `fusedRecallSql`) as results with per-signal details,
 * shaped as core's `fuseScores` (or, for rank fusion, `fuse`) shapes them. Every number comes from the server;
 * only score fusion's fused = relevance / 100 is divided here, as fuseScores does.
 */
export function fusedResult(rows: Row[]): FusedRecall {
  const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  const results: FusedCandidate[] = rows.map((r) => {
    const fields = rowToRankingFields([r['id'], r['namespace'], r['created_at'], r['metadata'], r['feedback'], r['code']]);
    const signals = {
      vector: { rank: num(r['vrank']), contribution: Number(r['c_vector']), raw: num(r['cos']) },
      lexical: { rank: num(r['lrank']), contribution: Number(r['c_lexical']), raw: num(r['bm']) },
      recency: { rank: num(r['recency_rank']), contribution: Number(r['c_recency']), raw: num(r['age']) },
    };
    if (r['fused'] !== undefined) {
      // Reciprocal rank fusion: the score is the sum of the contributions, as fuse() gives it.
      const fused = Number(r['fused']);
      return { fields, score: fused, scoreDetails: { signals, fused, rerank: null, method: 'rrf' } };
    }
    const relevance = Number(r['relevance']);
    return { fields, score: relevance / 100, scoreDetails: { signals, fused: relevance / 100, rerank: null, method: 'score', relevance } };
  });
  // The statement's values of the whole search are in its head row (postgres-search.ts `once`).
  const first = rows.find((r) => r[STATEMENT_HEAD] === true);
  const termStatistics =
    first && first['lex_documents'] !== undefined
      ? {
          documents: Number(first['lex_documents']),
          frequencies: new Map(Object.entries((first['lex_df'] ?? {}) as Record<string, number>).filter(([, df]) => df > 0).map(([t, df]) => [t, Number(df)])),
        }
      : undefined;
  return { results, bestCosine: num(first?.['best_cosine']), termStatistics };
}
