/**
 * Builds coarse lists off the main thread from the snapshot of a namespace's int8 codes it is handed (the
 * PostgreSQL search copies', postgres-recall-copies.ts): the build of coarse-build.ts.
 */
import { replyToStore } from './background-build.js';
import { coarseBuildReply } from './coarse-build.js';
import type { CoarseBuildParams, CoarseBuildReply } from './coarse-lists.js';

export interface HandedCoarseBuildRequest extends CoarseBuildParams {
  keys: Float64Array;
  data: Int8Array;
}

replyToStore((request: HandedCoarseBuildRequest): CoarseBuildReply => coarseBuildReply(performance.now(), request.keys, request.data, request, 0));
