// The neighbour graph's shared parts, read by the store's main thread and by the worker that builds a graph:
// its parameters, how a vector enters it, and the rows it is built from. Kept free of the store's imports.
import type { Usearch } from './sqlite-vector-index-file.js';
import { vectorTableName } from './sqlite-vector-table.js';

/**
 * usearch HNSW parameters of a neighbour graph (int8 vectors, cosine). Connectivity 16 and expansion 64 at
 * insertion and search: at 50,000 noisy copies of 512 real-like vectors on this machine one insertion took
 * 0.09 ms and one search for 10 neighbours 0.09 ms.
 */
export const GRAPH_PARAMS = { connectivity: 16, expansionAdd: 64, expansionSearch: 64 } as const;

export type Graph = InstanceType<Usearch['Index']>;

export function newGraph(usearch: Usearch, dimensions: number): Graph {
  return new usearch.Index({
    dimensions,
    metric: usearch.MetricKind.Cos,
    quantization: usearch.ScalarKind.I8,
    connectivity: GRAPH_PARAMS.connectivity,
    expansion_add: GRAPH_PARAMS.expansionAdd,
    expansion_search: GRAPH_PARAMS.expansionSearch,
    multi: false,
  });
}

/** Vectors inserted per call (a batch of floats: 4,096 × 512 × 4 bytes = 8 MiB). */
const BATCH = 4096;

/**
 * Inserts rows given as the quantised scan's int8 codes (each vector scaled to ±127 at its largest component,
 * sqlite-quantized-vectors.ts). usearch takes floats and turns them into int8 as round(x × 127), so each code is
 * passed as code / 127 and lands unchanged: the graph holds the same codes as the scan, at their full range
 * (a unit vector of 512 dimensions given as it is, components around 0.04, would keep a few levels only).
 */
export function addCodes(graph: Graph, keys: ArrayLike<number>, codes: Int8Array, dimensions: number, threads: number): void {
  const floats = new Float32Array(Math.min(BATCH, keys.length) * dimensions);
  for (let start = 0; start < keys.length; start += BATCH) {
    const n = Math.min(BATCH, keys.length - start);
    const batchKeys = new BigUint64Array(n);
    for (let i = 0; i < n; i++) batchKeys[i] = BigInt(keys[start + i] as number);
    const from = start * dimensions;
    for (let i = 0; i < n * dimensions; i++) floats[i] = (codes[from + i] as number) / 127;
    graph.add(batchKeys, floats.subarray(0, n * dimensions), threads);
  }
}

/**
 * The current vectors of one namespace (the rows its quantised index holds): the log's copy of each vector
 * (one B-tree lookup by its hash), or the vector table's when the blob is missing.
 */
export function namespaceVectorsSql(dimensions: number): string {
  return `SELECT m.rowid AS rowid, COALESCE(b.data, (SELECT embedding FROM ${vectorTableName(dimensions)} WHERE rowid = m.rowid)) AS data
  FROM memories m LEFT JOIN vector_blobs b ON b.hash = m.vector_hash
  WHERE m.namespace = ? AND m.vector_hash IS NOT NULL AND m.forgotten_at IS NULL AND m.superseded_by IS NULL`;
}
