/**
 * Gives the store one namespace's coarse lists off the main thread: the lists saved beside the database when they
 * may be used (sqlite-coarse-lists-file.ts), otherwise built from one consistent snapshot of the namespace's current
 * vectors as int8 codes (sqlite-namespace-snapshot.ts, coarse-build.ts) and saved for the next process; either way
 * it says which change they reflect.
 */
import { rmSync } from 'node:fs';
import { replyToStore } from '../vector-codes/background-build.js';
import { coarseBuildReply } from '../vector-codes/coarse-build.js';
import type { CoarseBuildParams, CoarseBuildReply } from '../vector-codes/coarse-lists.js';
import { coarseListsPath, readCoarseLists, saveCoarseLists } from './sqlite-coarse-lists-file.js';
import { readNamespaceCodes, withReadOnlyDatabase } from './sqlite-namespace-snapshot.js';
import { databaseIdentity, DEFAULT_INDEX_PARAMS, erasureCount, historyProblem } from './sqlite-vector-index-file.js';

export interface CoarseBuildRequest extends CoarseBuildParams {
  dbPath: string;
  namespace: string;
  /** Whether the saved lists may be taken (a rebuild after drift or a refused install asks for new ones). */
  reuse: boolean;
}

/**
 * Where the lists came from: the saved file, or a build, with why the saved file was not taken (if there was one)
 * and why the build could not be saved (if it could not: a read-only folder, a full disk).
 */
export type CoarseSource = { from: 'file' } | { from: 'build'; refused: string | null; unsaved: string | null };

export type SqliteCoarseReply = CoarseBuildReply & { source: CoarseSource };

/** The saved lists when they belong to the database as it is now, or why not. */
function readSaved(request: CoarseBuildRequest): ReturnType<typeof readCoarseLists> {
  return withReadOnlyDatabase(request.dbPath, (db) => {
    db.exec('BEGIN');
    try {
      const now = databaseIdentity(db, DEFAULT_INDEX_PARAMS);
      if (!now) return { problem: 'the store has no embedder' };
      return readCoarseLists(request.dbPath, { storeId: now.storeId, embedder: now.embedder, namespace: request.namespace, seq: now.seq, erasures: now.erasures ?? 0 }, (seq, at) => historyProblem(db, seq, at));
    } finally {
      db.exec('COMMIT');
    }
  });
}

function build(request: CoarseBuildRequest): SqliteCoarseReply {
  const started = performance.now();
  let refused: string | null = null;
  if (request.reuse) {
    const saved = readSaved(request);
    if ('build' in saved) {
      const { identity, build: coarse } = saved;
      return { ok: true, seq: identity.seq, at: identity.at, vectors: coarse.keys.length, ms: Math.round(performance.now() - started), coarse, source: { from: 'file' } };
    }
    if (saved.problem !== 'no saved lists') refused = saved.problem;
  }
  const { codes, seq, at, identity } = readNamespaceCodes(request.dbPath, request.namespace, request.dimensions);
  const { keys, data } = codes.rows();
  const reply = coarseBuildReply(started, keys, data, request, seq, at);
  let unsaved: string | null = null;
  if (!identity) unsaved = 'the store has no embedder';
  else {
    const erasures = identity.erasures ?? 0;
    try {
      saveCoarseLists(request.dbPath, { storeId: identity.storeId, embedder: identity.embedder, namespace: request.namespace, seq, at, erasures }, reply.coarse);
      // As the index file: an erasure committed after the snapshot may have taken vectors the centroids were made from.
      if (withReadOnlyDatabase(request.dbPath, erasureCount) !== erasures) {
        rmSync(coarseListsPath(request.dbPath, request.namespace), { force: true });
        unsaved = 'an erasure came while they were built';
      }
    } catch (err) {
      unsaved = `they could not be saved (${(err as Error).message.split('\n')[0]})`;
    }
  }
  return { ...reply, source: { from: 'build', refused, unsaved } };
}

replyToStore(build);
