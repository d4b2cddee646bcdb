import type { SearchResult } from '../interfaces/memory.js';
import { analyse } from './lexical.js';
import { indexText } from './events.js';

/**
 * "A newer note on the same topic outranks an older one." Rank fusion cannot guarantee it: recency is one
 * signal among three, and one rank of BM25 or cosine outweighs it. So after fusion, two results are taken
 * to be about the same topic when their vectors are close AND they share much of their wording, and then
 * the newer one moves up to the older one's place.
 *
 * Both conditions are needed (measured on the offline embedder): "Start the dev server with make dev" /
 * "… pnpm dev --turbo" have cosine 0.80 and term overlap 0.5 (same topic), while "Database column names use
 * snake_case" / "Database table names are plural" have cosine 0.78 but overlap 0.22 (two different rules).
 */
export const SAME_TOPIC_MIN_COSINE = 0.75;
export const SAME_TOPIC_MIN_OVERLAP = 0.4;

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  let both = 0;
  for (const t of a) if (b.has(t)) both++;
  const union = a.size + b.size - both;
  return union === 0 ? 0 : both / union;
}

/**
 * Reorders the first `window` results in place so that whenever two are about the same topic, the newer
 * comes first. Notes of different kinds (a route and a decision) are never treated as one topic.
 */
export function preferNewerOnSameTopic(results: SearchResult[], vectors: Map<string, Float32Array>, window: number): SearchResult[] {
  const head = results.slice(0, window);
  const terms = new Map(head.map((r) => [r.memory.id, new Set(analyse(indexText(r.memory)))]));
  const sameTopic = (a: SearchResult, b: SearchResult): boolean => {
    if (a.memory.kind !== b.memory.kind) return false;
    const va = vectors.get(a.memory.id);
    const vb = vectors.get(b.memory.id);
    if (!va || !vb || dot(va, vb) < SAME_TOPIC_MIN_COSINE) return false;
    return jaccard(terms.get(a.memory.id) as Set<string>, terms.get(b.memory.id) as Set<string>) >= SAME_TOPIC_MIN_OVERLAP;
  };
  for (let i = 0; i < head.length; i++) {
    for (let j = i + 1; j < head.length; j++) {
      const older = head[i] as SearchResult;
      const newer = head[j] as SearchResult;
      if (newer.memory.createdAt > older.memory.createdAt && sameTopic(older, newer)) {
        head.splice(j, 1);
        head.splice(i, 0, newer);
        newer.scoreDetails.newerThan = older.memory.id;
      }
    }
  }
  return [...head, ...results.slice(window)];
}
