/**
 * Coarse lists' build from one snapshot of a namespace's int8 codes (pure, for a worker thread): spherical
 * k-means on a sample of the rows, every row assigned to its nearest centroid, and the rows least like their
 * centroid (FAR_SHARE) sent to the far list. The embedded store's worker reads the snapshot from SQLite
 * (sqlite-coarse-lists-worker.ts), the PostgreSQL copies' worker is handed it (coarse-build-worker.ts).
 */
import { createRequire } from 'node:module';
import { FAR_SHARE, type CoarseBuild, type CoarseBuildParams, type CoarseBuildReply } from './coarse-lists.js';
import { quantize } from './quantized-vectors.js';
import type { Usearch } from './usearch.js';
import { normalise } from '../embed-use/use-embedder.js';

/** A build worker's reply: the lists of the rows `keys` / `data`, at change `seq` (`at`) of the store, timed from `started`. */
export function coarseBuildReply(started: number, keys: Float64Array, data: Int8Array, params: CoarseBuildParams, seq: number, at?: string | null): CoarseBuildReply {
  const usearch = createRequire(import.meta.url)('usearch') as Usearch;
  const coarse = buildCoarse(usearch, keys, data, params.dimensions, params.lists, params.threads);
  return { ok: true, seq, ...(at === undefined ? {} : { at }), vectors: keys.length, ms: Math.round(performance.now() - started), coarse };
}

/** Sample rows per list that k-means trains on, and its rounds (measured at 1M: 32 × 1,024 rows, 6 rounds, 27 s). */
const SAMPLE_PER_LIST = 32;
const ROUNDS = 6;

/** About `wanted` lists (fewer for fewer rows) of the rows `keys` with codes `data`, `dims` apiece. */
export function buildCoarse(usearch: Usearch, keys: Float64Array, data: Int8Array, dims: number, wanted: number, threads: number): CoarseBuild {
  const n = keys.length;
  const lists = Math.max(1, Math.min(wanted, n));
  const centroids = kMeans(usearch, data, n, dims, lists, threads);
  // Every row to its nearest centroid, by the int8 kernel in chunks (the centroids quantised like the rows).
  const centroidCodes = new Int8Array(lists * dims);
  for (let c = 0; c < lists; c++) quantize(centroids.subarray(c * dims, (c + 1) * dims), centroidCodes, c * dims);
  const assignment = new Uint16Array(n);
  const similarity = new Float32Array(n);
  const chunk = 65_536;
  for (let from = 0; from < n; from += chunk) {
    const to = Math.min(n, from + chunk);
    const found = usearch.exactSearch(centroidCodes, data.slice(from * dims, to * dims), dims, 1, usearch.MetricKind.Cos, threads);
    const nearest = found.keys as BigUint64Array;
    const distances = found.distances as Float32Array;
    for (let i = from; i < to; i++) {
      assignment[i] = Number(nearest[i - from]);
      similarity[i] = 1 - (distances[i - from] as number);
    }
  }
  // The rows least like their list's centroid go to the far list, which every search scans.
  const farBelow = n > 0 ? (Float32Array.from(similarity).sort()[Math.floor(FAR_SHARE * (n - 1))] as number) : -1;
  for (let i = 0; i < n; i++) if ((similarity[i] as number) < farBelow) assignment[i] = lists;
  return { dimensions: dims, centroids, keys: Float64Array.from(keys), assignment, farBelow };
}

/** Spherical k-means (unit centroids, cosine) on an even sample of the rows; an emptied list takes a sample row. */
function kMeans(usearch: Usearch, data: Int8Array, n: number, dims: number, lists: number, threads: number): Float32Array {
  const sampleSize = Math.min(n, lists * SAMPLE_PER_LIST);
  const step = n / sampleSize;
  const sample = new Float32Array(sampleSize * dims);
  for (let i = 0; i < sampleSize; i++) {
    const row = Math.floor(i * step);
    for (let j = 0; j < dims; j++) sample[i * dims + j] = data[row * dims + j] as number;
    normalise(sample.subarray(i * dims, (i + 1) * dims));
  }
  const centroids = new Float32Array(lists * dims);
  const seedStep = sampleSize / lists;
  for (let c = 0; c < lists; c++) centroids.set(sample.subarray(Math.floor(c * seedStep) * dims, (Math.floor(c * seedStep) + 1) * dims), c * dims);
  const sums = new Float64Array(lists * dims);
  const counts = new Uint32Array(lists);
  for (let round = 0; round < ROUNDS; round++) {
    const found = usearch.exactSearch(centroids, sample, dims, 1, usearch.MetricKind.Cos, threads);
    const nearest = found.keys as BigUint64Array;
    sums.fill(0);
    counts.fill(0);
    for (let i = 0; i < sampleSize; i++) {
      const c = Number(nearest[i]);
      counts[c] = (counts[c] as number) + 1;
      for (let j = 0; j < dims; j++) sums[c * dims + j] = (sums[c * dims + j] as number) + (sample[i * dims + j] as number);
    }
    for (let c = 0; c < lists; c++) {
      if (counts[c] === 0) {
        const row = (c * 7919 + round * 104729) % sampleSize;
        centroids.set(sample.subarray(row * dims, (row + 1) * dims), c * dims);
        continue;
      }
      for (let j = 0; j < dims; j++) centroids[c * dims + j] = sums[c * dims + j] as number;
      normalise(centroids.subarray(c * dims, (c + 1) * dims));
    }
  }
  return centroids;
}
