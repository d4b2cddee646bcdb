/**
 * Builds the quantised vector index off the main thread: reads one consistent snapshot of the database (its
 * own read-only connection, one read transaction), quantises every namespace's vectors, writes the index file
 * and says which change it reflects. A server keeps answering, exhaustively, meanwhile.
 */
import { replyToStore, type BuildReply } from '../vector-codes/background-build.js';
import { rmSync } from 'node:fs';
import { withReadOnlyDatabase } from './sqlite-namespace-snapshot.js';
import { buildFromDatabase, databaseIdentity, erasureCount, writeIndexFile, type IndexParams } from './sqlite-vector-index-file.js';

export interface BuildRequest {
  dbPath: string;
  target: string;
  params: IndexParams;
}


function build(request: BuildRequest): BuildReply {
  const started = performance.now();
  return withReadOnlyDatabase(request.dbPath, (db) => {
    db.exec('BEGIN');
    const identity = databaseIdentity(db, request.params);
    if (!identity) return { ok: false, error: 'the store has no embedder record yet' };
    const indexes = buildFromDatabase(db, identity.embedder.dimensions);
    db.exec('COMMIT');
    writeIndexFile(request.target, identity, indexes);
    if (erasureCount(db) !== identity.erasures) {
      // An erasure committed after the snapshot: the file may hold an erased vector, so it goes at once.
      rmSync(request.target, { force: true });
      return { ok: false, error: 'an erasure came during the index build; it is built again' };
    }
    const vectors = [...indexes.values()].reduce((s, i) => s + i.size(), 0);
    return { ok: true, seq: identity.seq, vectors, ms: Math.round(performance.now() - started) };
  });
}

replyToStore(build);
