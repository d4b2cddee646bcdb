/**
 * Builds one namespace's neighbour graph off the main thread: reads one consistent snapshot of the namespace's
 * current vectors (its own read-only connection, one short read transaction) as int8 codes, inserts them into a
 * usearch HNSW graph, saves it to a temporary file the store loads, and says which change it reflects.
 */
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { replyToStore, type BuildReply } from '../vector-codes/background-build.js';
import type { Usearch } from '../vector-codes/usearch.js';
import { addCodes, fileDigest, newGraph } from './sqlite-neighbour-graph-file.js';
import { readNamespaceCodes } from './sqlite-namespace-snapshot.js';

export interface GraphBuildRequest {
  dbPath: string;
  namespace: string;
  dimensions: number;
  /** Where the graph is saved (a temporary file the store loads and deletes). */
  target: string;
}


function build(request: GraphBuildRequest): BuildReply {
  const started = performance.now();
  const usearch = createRequire(import.meta.url)('usearch') as Usearch;
  const dims = request.dimensions;
  const { codes, seq, at } = readNamespaceCodes(request.dbPath, request.namespace, dims);
  const graph = newGraph(usearch, dims);
  const { keys, data } = codes.rows();
  // One core is left to the process that serves requests.
  addCodes(graph, keys, data, dims, Math.max(1, availableParallelism() - 1));
  graph.save(request.target);
  // Hashed here, not by the store's thread when it publishes the file (about 650 MB at 1M vectors).
  return { ok: true, seq, at, vectors: keys.length, ms: Math.round(performance.now() - started), digest: fileDigest(request.target) };
}

replyToStore(build);
