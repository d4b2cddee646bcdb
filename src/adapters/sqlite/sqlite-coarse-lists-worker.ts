/**
 * Builds one namespace's coarse lists off the main thread: reads one consistent snapshot of the namespace's
 * current vectors as int8 codes (sqlite-namespace-snapshot.ts), builds the lists from it (coarse-build.ts), and
 * says which change the snapshot reflects.
 */
import { createRequire } from 'node:module';
import { replyToStore } from '../vector-codes/background-build.js';
import { buildCoarse } from '../vector-codes/coarse-build.js';
import type { CoarseBuildReply } from '../vector-codes/coarse-lists.js';
import type { Usearch } from '../vector-codes/usearch.js';
import { readNamespaceCodes } from './sqlite-namespace-snapshot.js';

export interface CoarseBuildRequest {
  dbPath: string;
  namespace: string;
  dimensions: number;
  lists: number;
  threads: number;
}

function build(request: CoarseBuildRequest): CoarseBuildReply {
  const started = performance.now();
  const usearch = createRequire(import.meta.url)('usearch') as Usearch;
  const { codes, seq, at } = readNamespaceCodes(request.dbPath, request.namespace, request.dimensions);
  const { keys, data } = codes.rows();
  const coarse = buildCoarse(usearch, keys, data, request.dimensions, request.lists, request.threads);
  return { ok: true, seq, at, vectors: keys.length, ms: Math.round(performance.now() - started), coarse };
}

replyToStore(build);
