/**
 * Builds one namespace's coarse lists off the main thread: reads one consistent snapshot of the namespace's
 * current vectors as int8 codes (sqlite-namespace-snapshot.ts), builds the lists from it (coarse-build.ts), and
 * says which change the snapshot reflects.
 */
import { replyToStore } from '../vector-codes/background-build.js';
import { coarseBuildReply } from '../vector-codes/coarse-build.js';
import type { CoarseBuildParams, CoarseBuildReply } from '../vector-codes/coarse-lists.js';
import { readNamespaceCodes } from './sqlite-namespace-snapshot.js';

export interface CoarseBuildRequest extends CoarseBuildParams {
  dbPath: string;
  namespace: string;
}

function build(request: CoarseBuildRequest): CoarseBuildReply {
  const started = performance.now();
  const { codes, seq, at } = readNamespaceCodes(request.dbPath, request.namespace, request.dimensions);
  const { keys, data } = codes.rows();
  return coarseBuildReply(started, keys, data, request, seq, at);
}

replyToStore(build);
