/**
 * Builds one namespace's neighbour graph off the main thread: reads one consistent snapshot of the namespace's
 * current vectors (its own read-only connection, one short read transaction) as int8 codes, inserts them into a
 * usearch HNSW graph, saves it to a temporary file the store loads, and says which change it reflects.
 */
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { replyToStore, type BuildReply } from './sqlite-background-build.js';
import { QuantizedVectors } from './sqlite-quantized-vectors.js';
import { changeFingerprint, currentChangeSeq, floats, type Usearch } from './sqlite-vector-index-file.js';
import { addCodes, fileDigest, namespaceVectorsSql, newGraph } from './sqlite-neighbour-graph-file.js';

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
  const codes = new QuantizedVectors(dims);
  let seq: number;
  let at: string | null;
  const db = new Database(request.dbPath, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    sqliteVec.load(db);
    // The read transaction ends before the graph is built, so it holds back no checkpoint meanwhile.
    db.exec('BEGIN');
    seq = currentChangeSeq(db);
    at = changeFingerprint(db, seq);
    for (const raw of db.prepare(namespaceVectorsSql(dims)).iterate(request.namespace)) {
      const row = raw as { rowid: number; data: Buffer | null };
      if (row.data && row.data.length === dims * 4) codes.set(row.rowid, floats(row.data, dims));
    }
    db.exec('COMMIT');
  } finally {
    db.close();
  }
  const graph = newGraph(usearch, dims);
  const { keys, data } = codes.rows();
  // One core is left to the process that serves requests.
  addCodes(graph, keys, data, dims, Math.max(1, availableParallelism() - 1));
  graph.save(request.target);
  // Hashed here, not by the store's thread when it publishes the file (about 650 MB at 1M vectors).
  return { ok: true, seq, at, vectors: keys.length, ms: Math.round(performance.now() - started), digest: fileDigest(request.target) };
}

replyToStore(build);
