// What the build workers read the database with: a short read-only connection of their own, and one consistent
// snapshot of a namespace's current vectors as int8 codes.
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { QuantizedVectors } from '../vector-codes/quantized-vectors.js';
import { changeFingerprint, currentChangeSeq, databaseIdentity, DEFAULT_INDEX_PARAMS, floats, type IndexIdentity } from './sqlite-vector-index-file.js';
import { namespaceVectorsSql } from './sqlite-neighbour-graph-file.js';

/** `read` on a read-only connection of its own (sqlite-vec loaded, waiting up to 5 s on a lock), closed after. */
export function withReadOnlyDatabase<T>(dbPath: string, read: (db: Database.Database) => T): T {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    sqliteVec.load(db);
    return read(db);
  } finally {
    db.close();
  }
}

/**
 * The namespace's current vectors as codes, with the change they reflect and its fingerprint, and what the
 * database said of itself then (null before it has an embedder): read on its own read-only connection in one
 * short read transaction, which ends before anything is built from them, so it holds back no checkpoint meanwhile.
 */
export function readNamespaceCodes(dbPath: string, namespace: string, dims: number): { codes: QuantizedVectors; seq: number; at: string | null; identity: IndexIdentity | null } {
  const codes = new QuantizedVectors(dims);
  return withReadOnlyDatabase(dbPath, (db) => {
    db.exec('BEGIN');
    const seq = currentChangeSeq(db);
    const at = changeFingerprint(db, seq);
    const identity = databaseIdentity(db, DEFAULT_INDEX_PARAMS);
    for (const raw of db.prepare(namespaceVectorsSql(dims)).iterate(namespace)) {
      const row = raw as { rowid: number; data: Buffer | null };
      if (row.data && row.data.length === dims * 4) codes.set(row.rowid, floats(row.data, dims));
    }
    db.exec('COMMIT');
    return { codes, seq, at, identity };
  });
}
