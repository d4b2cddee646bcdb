import { analyse, queryTerms } from '../../core/lexical.js';
import type { Reranker } from '../../interfaces/embedder.js';

/**
 * A local reranker that needs no model: it scores a document by how many distinct query terms it covers
 * (with identifier and stem analysis), then by how densely. Cheap and deterministic; it favours notes that
 * answer every part of a question over notes that match one word many times.
 */
export function createOverlapReranker(): Reranker {
  return {
    id: 'term-overlap',
    async score(query: string, documents: string[]): Promise<number[]> {
      const q = queryTerms(query);
      if (q.length === 0) return documents.map(() => 0);
      return documents.map((doc) => {
        const terms = analyse(doc);
        const set = new Set(terms);
        const covered = q.filter((t) => set.has(t)).length;
        const density = terms.length ? covered / Math.sqrt(terms.length) : 0;
        return covered / q.length + 0.01 * density;
      });
    },
  };
}
