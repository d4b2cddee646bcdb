import type { SearchResult } from '../../interfaces/memory.js';
import type { FusedRecall } from '../../interfaces/store.js';
import { rowToMemory, type Row } from '../sql/sql-rows.js';

/**
 * The rows of the fused statement (postgres-search.ts `fusedRecallSql`) as results with per-signal details,
 * shaped as core's `fuseScores` shapes them. Every number comes from the server; only fused = relevance / 100
 * is divided here, as fuseScores does.
 */
export function fusedResult(rows: Row[]): FusedRecall {
  const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  const results: SearchResult[] = rows.map((r) => {
    const relevance = Number(r['relevance']);
    return {
      memory: rowToMemory(r),
      score: relevance / 100,
      scoreDetails: {
        signals: {
          vector: { rank: num(r['vrank']), contribution: Number(r['c_vector']), raw: num(r['cos']) },
          lexical: { rank: num(r['lrank']), contribution: Number(r['c_lexical']), raw: num(r['bm']) },
          recency: { rank: num(r['recency_rank']), contribution: Number(r['c_recency']), raw: Number(r['age']) },
        },
        fused: relevance / 100,
        rerank: null,
        method: 'score',
        relevance,
      },
    };
  });
  return { results, bestCosine: num(rows[0]?.['best_cosine']) };
}
