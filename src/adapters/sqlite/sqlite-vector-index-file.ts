import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { QuantizedVectors } from '../vector-codes/quantized-vectors.js';
import { removeStaleTemporaries, writeFileAtomically } from './sqlite-saved-files.js';
import { indexedVectorsSql } from './sqlite-vector-table.js';

/**
 * The quantised vector index's file, saved beside the database (`<db>.usearch`): one int8 copy of every
 * namespace's current vectors behind a header that names what they were built from. The file is a cache of the
 * store's vectors, never a source: a reader trusts it only when its header matches the database (store id,
 * embedder, dimensions) and its change counter is one the database can still catch up from; anything else is
 * rebuilt.
 *
 *   "CAIRNVX2" | u32 LE header length | header JSON | one segment per namespace: rowids (f64 LE), int8 codes
 */

/** How vectors are held: int8 codes (a quarter of float32's bytes), scanned exhaustively; hits are rescored exactly. */
export interface IndexParams {
  quantization: 'i8';
}

export const DEFAULT_INDEX_PARAMS: IndexParams = { quantization: 'i8' };

export const INDEX_FORMAT = 3;
const MAGIC = Buffer.from('CAIRNVX2', 'latin1');

/** What an index file reflects: the database it was built from and the last vector change included. */
export interface IndexIdentity {
  format: number;
  /** The database's random id (meta `store_id`): an index of another database (a copy, a restored file) is never read. */
  storeId: string;
  embedder: { id: string; dimensions: number };
  /** The last `vector_changes` sequence number the vectors include. */
  seq: number;
  params: IndexParams;
  /**
   * The database's erasure counter (meta `erasures`) in the snapshot the vectors were read from: a file written
   * from a snapshot before the latest erasure (another process's build in flight) is never read. Absent in
   * files from before the counter existed, which is 0 there.
   */
  erasures?: number;
  /** What identifies change `seq` in the database's history (changeFingerprint); absent in older files. */
  at?: string | null;
}

export interface IndexHeader extends IndexIdentity {
  segments: { namespace: string; vectors: number; length: number; sha256: string }[];
}

/**
 * Writes the vectors and their header to `path` atomically: a temporary file beside it, flushed, then renamed
 * over the old one. A process killed at any point leaves either the old file or the new one, never a mix.
 */
export function writeIndexFile(path: string, identity: IndexIdentity, indexes: Map<string, QuantizedVectors>): void {
  removeStaleTemporaries(`${path}.tmp-`);
  const segments: IndexHeader['segments'] = [];
  const bodies: Buffer[] = [];
  for (const [namespace, index] of [...indexes].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    const body = index.toBuffer();
    bodies.push(body);
    segments.push({ namespace, vectors: index.size(), length: body.length, sha256: createHash('sha256').update(body).digest('hex') });
  }
  const header: IndexHeader = { ...identity, segments };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.length, 0);
  writeFileAtomically(path, `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`, [MAGIC, length, json, ...bodies]);
}

/** The header alone (the vectors are read by loadIndexSegments), or why the file cannot be used. */
export function readIndexHeader(path: string): { header: IndexHeader; bodyOffset: number } | { problem: string } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    return { problem: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no index file' : `the index file cannot be read (${(err as Error).message})` };
  }
  try {
    const size = fstatSync(fd).size;
    const start = Buffer.alloc(12);
    if (size < 12 || readSync(fd, start, 0, 12, 0) < 12 || !start.subarray(0, 8).equals(MAGIC)) return { problem: 'the index file is not a cairn vector index' };
    const length = start.readUInt32LE(8);
    if (12 + length > size) return { problem: 'the index file is truncated (header)' };
    const json = Buffer.alloc(length);
    readSync(fd, json, 0, length, 12);
    let header: IndexHeader;
    try {
      header = JSON.parse(json.toString('utf8')) as IndexHeader;
    } catch {
      return { problem: 'the index file header is damaged' };
    }
    if (header.format !== INDEX_FORMAT || !Array.isArray(header.segments)) return { problem: `the index file has format ${String(header.format)}, not ${INDEX_FORMAT}` };
    const total = header.segments.reduce((s, g) => s + g.length, 0);
    if (12 + length + total !== size) return { problem: 'the index file is truncated or has trailing bytes' };
    return { header, bodyOffset: 12 + length };
  } finally {
    closeSync(fd);
  }
}

/** Loads every namespace of a file whose header was accepted; each segment's SHA-256 is checked first. */
export function loadIndexSegments(path: string, file: { header: IndexHeader; bodyOffset: number }): { indexes: Map<string, QuantizedVectors> } | { problem: string } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    return { problem: `the index file cannot be read (${(err as Error).message})` };
  }
  const indexes = new Map<string, QuantizedVectors>();
  let at = file.bodyOffset;
  for (const segment of file.header.segments) {
    const body = bytes.subarray(at, at + segment.length);
    at += segment.length;
    if (createHash('sha256').update(body).digest('hex') !== segment.sha256) return { problem: `the index of namespace ${JSON.stringify(segment.namespace)} is damaged (checksum)` };
    const vectors = QuantizedVectors.fromBuffer(file.header.embedder.dimensions, segment.vectors, body);
    if (!vectors) return { problem: `the index of namespace ${JSON.stringify(segment.namespace)} does not match its header` };
    indexes.set(segment.namespace, vectors);
  }
  return { indexes };
}

// ------------------------------------------------------------------------------------ what the index holds

/** Minimal view of a better-sqlite3 connection, so the worker and the store share these reads. */
interface Connection {
  prepare(sql: string): { get(...params: unknown[]): unknown; iterate(...params: unknown[]): IterableIterator<unknown> };
}

/** The last vector change of the database (kept by triggers, see the schema), 0 before the first. */
export function currentChangeSeq(db: Connection): number {
  const row = db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'`).get() as { seq: number } | undefined;
  return row?.seq ?? 0;
}

/** What an index built now from `db` would say about itself; null when the store has no embedder yet. */
export function databaseIdentity(db: Connection, params: IndexParams): IndexIdentity | null {
  const embedder = db.prepare(`SELECT value FROM meta WHERE key = 'embedder'`).get() as { value: string } | undefined;
  const storeId = db.prepare(`SELECT value FROM meta WHERE key = 'store_id'`).get() as { value: string } | undefined;
  if (!embedder || !storeId) return null;
  const e = JSON.parse(embedder.value) as { id: string; dimensions: number };
  const seq = currentChangeSeq(db);
  return { format: INDEX_FORMAT, storeId: storeId.value, embedder: { id: e.id, dimensions: e.dimensions }, seq, params, erasures: erasureCount(db), at: changeFingerprint(db, seq) };
}

/**
 * Whether `changes` pending on `size` vectors are too many to patch on the main thread (a save's search would
 * wait for them): the codes and a loaded graph are then built in a worker instead.
 */
export function tooFarBehind(changes: number, size: number): boolean {
  return changes > Math.max(20_000, size / 5);
}

/**
 * What identifies the database's change `seq`: the changed row, its namespace and the id of the memory now at
 * that row ('' at change 0); null when the kept change log no longer holds it. A database restored from an
 * older copy that then took other writes reaches the same change numbers, and SQLite gives its new memories the
 * same rowids, but not the same ids: a file saved beside the newer history is told apart by this.
 */
export function changeFingerprint(db: Connection, seq: number): string | null {
  if (seq === 0) return '';
  const row = db
    .prepare('SELECT c.memory_rowid AS rowid, c.namespace AS namespace, m.id AS id FROM vector_changes c LEFT JOIN memories m ON m.rowid = c.memory_rowid WHERE c.seq = ?')
    .get(seq) as { rowid: number; namespace: string; id: string | null } | undefined;
  return row ? `${row.rowid}:${row.namespace}:${row.id ?? ''}` : null;
}

/**
 * The one rule for a file saved beside the database (the index file, a graph file): why it does not belong to
 * the database's history at its change `seq` (fingerprint `at`), or null. A file without a fingerprint (older
 * index files) is not checked. `fingerprint`: the database's own fingerprint of change `seq` when the caller has
 * just read it (databaseIdentity's `at`), so it is not read again.
 */
export function historyProblem(db: Connection, seq: number, at: string | null | undefined, fingerprint?: string | null): string | null {
  if (at === undefined || at === (fingerprint === undefined ? changeFingerprint(db, seq) : fingerprint)) return null;
  return `its change ${seq} is not the database's (restored from an older copy?)`;
}

/** The database's erasure counter: meta `erasures`, bumped in the compaction of every erasure that removed vectors. */
export function erasureCount(db: Connection): number {
  const row = db.prepare(`SELECT value FROM meta WHERE key = 'erasures'`).get() as { value: string } | undefined;
  return row ? Number(row.value) : 0;
}

/** Quantises every indexed vector of `db`, per namespace (call inside a read transaction). */
export function buildFromDatabase(db: Connection, dimensions: number): Map<string, QuantizedVectors> {
  const indexes = new Map<string, QuantizedVectors>();
  for (const raw of db.prepare(indexedVectorsSql(dimensions)).iterate()) {
    const row = raw as { rowid: number; namespace: string; data: Buffer };
    if (row.data.length !== dimensions * 4) continue;
    let index = indexes.get(row.namespace);
    if (!index) indexes.set(row.namespace, (index = new QuantizedVectors(dimensions)));
    index.set(row.rowid, floats(row.data, dimensions));
  }
  return indexes;
}

/** A stored float32 vector (a blob that may not be 4-byte aligned) as a Float32Array. */
export function floats(blob: Buffer, dimensions: number): Float32Array {
  return blob.byteOffset % 4 === 0 ? new Float32Array(blob.buffer, blob.byteOffset, dimensions) : new Float32Array(Uint8Array.from(blob).buffer, 0, dimensions);
}
