import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { Index as UsearchIndex, ScalarKind } from 'usearch';

/**
 * The approximate vector index's file, saved beside the database (`<db>.usearch`): one usearch HNSW graph per
 * namespace behind a header that names what the graphs were built from. The file is a cache of the store's
 * vectors, never a source: a reader trusts it only when its header matches the database (store id, embedder,
 * dimensions) and its change counter is one the database can still catch up from; anything else is rebuilt.
 *
 *   "CAIRNVX1" | u32 LE header length | header JSON | segment bytes (usearch's own format), one per namespace
 */

export type Usearch = typeof import('usearch');

/** HNSW parameters. i8 vectors in the graph (a quarter of f32's bytes); every hit is rescored exactly. */
export interface IndexParams {
  quantization: 'i8' | 'f16' | 'f32';
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
}

export const DEFAULT_INDEX_PARAMS: IndexParams = { quantization: 'i8', connectivity: 16, expansionAdd: 128, expansionSearch: 128 };

export const INDEX_FORMAT = 1;
const MAGIC = Buffer.from('CAIRNVX1', 'latin1');

/** What an index file reflects: the database it was built from and the last vector change included. */
export interface IndexIdentity {
  format: number;
  /** The database's random id (meta `store_id`): an index of another database (a copy, a restored file) is never read. */
  storeId: string;
  embedder: { id: string; dimensions: number };
  /** The last `vector_changes` sequence number the graphs include. */
  seq: number;
  params: IndexParams;
}

export interface IndexHeader extends IndexIdentity {
  segments: { namespace: string; vectors: number; length: number; sha256: string }[];
}

let loaded: Usearch | Error | null = null;

/**
 * usearch, loaded on first use (a native module; the short commands never need it). Null with the reason when
 * it cannot load on this platform (no prebuilt binary): the store then searches exhaustively with sqlite-vec.
 */
export function loadUsearch(): { usearch: Usearch } | { error: string } {
  if (loaded === null) {
    try {
      loaded = createRequire(import.meta.url)('usearch') as Usearch;
    } catch (err) {
      loaded = err instanceof Error ? err : new Error(String(err));
    }
  }
  return loaded instanceof Error ? { error: `usearch could not load: ${loaded.message.split('\n')[0]}` } : { usearch: loaded };
}

export function newIndex(usearch: Usearch, dimensions: number, params: IndexParams): UsearchIndex {
  return new usearch.Index({
    dimensions,
    metric: usearch.MetricKind.Cos,
    quantization: params.quantization as ScalarKind,
    connectivity: params.connectivity,
    expansion_add: params.expansionAdd,
    expansion_search: params.expansionSearch,
    multi: false,
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes temporary files that writers killed mid-save left beside `path`. */
function removeStaleTemporaries(path: string): void {
  const prefix = `${basename(path)}.tmp-`;
  let names: string[] = [];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid !== process.pid && !isAlive(pid)) rmSync(join(dirname(path), name), { force: true });
  }
}

/**
 * Writes the graphs and their header to `path` atomically: a temporary file beside it, flushed, then renamed
 * over the old one. A process killed at any point leaves either the old file or the new one, never a mix.
 */
export function writeIndexFile(path: string, identity: IndexIdentity, indexes: Map<string, UsearchIndex>): void {
  removeStaleTemporaries(path);
  const scratch = mkdtempSync(join(tmpdir(), 'cairn-vx-'));
  try {
    const segments: IndexHeader['segments'] = [];
    const bodies: Buffer[] = [];
    let i = 0;
    for (const [namespace, index] of [...indexes].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      const file = join(scratch, `${i++}.usearch`);
      index.save(file);
      const body = readFileSync(file);
      rmSync(file, { force: true });
      bodies.push(body);
      segments.push({ namespace, vectors: index.size(), length: body.length, sha256: createHash('sha256').update(body).digest('hex') });
    }
    const header: IndexHeader = { ...identity, segments };
    const json = Buffer.from(JSON.stringify(header), 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(json.length, 0);
    const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      for (const part of [MAGIC, length, json, ...bodies]) writeSync(fd, part);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    try {
      const dirFd = openSync(dirname(path), 'r');
      try {
        fsyncSync(dirFd);
      } finally {
        closeSync(dirFd);
      }
    } catch {
      // Some filesystems cannot fsync a folder; the rename itself is still atomic.
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The header alone (the graphs are read by loadIndexSegments), or why the file cannot be used. */
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

/** Loads every graph of a file whose header was accepted; each segment's SHA-256 is checked first. */
export function loadIndexSegments(
  usearch: Usearch,
  path: string,
  file: { header: IndexHeader; bodyOffset: number },
): { indexes: Map<string, UsearchIndex> } | { problem: string } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    return { problem: `the index file cannot be read (${(err as Error).message})` };
  }
  const scratch = mkdtempSync(join(tmpdir(), 'cairn-vx-'));
  try {
    const indexes = new Map<string, UsearchIndex>();
    let at = file.bodyOffset;
    for (const [i, segment] of file.header.segments.entries()) {
      const body = bytes.subarray(at, at + segment.length);
      at += segment.length;
      if (createHash('sha256').update(body).digest('hex') !== segment.sha256) return { problem: `the index of namespace ${JSON.stringify(segment.namespace)} is damaged (checksum)` };
      const part = join(scratch, `${i}.usearch`);
      writeFileSync(part, body);
      const index = newIndex(usearch, file.header.embedder.dimensions, file.header.params);
      try {
        index.load(part);
      } catch (err) {
        return { problem: `the index of namespace ${JSON.stringify(segment.namespace)} does not load (${(err as Error).message})` };
      } finally {
        unlinkSync(part);
      }
      if (index.size() !== segment.vectors || index.dimensions() !== file.header.embedder.dimensions) {
        return { problem: `the index of namespace ${JSON.stringify(segment.namespace)} holds ${index.size()} vectors, its header says ${segment.vectors}` };
      }
      indexes.set(segment.namespace, index);
    }
    return { indexes };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------------------------- what graphs hold

/** Minimal view of a better-sqlite3 connection, so the worker and the store share these reads. */
interface Connection {
  prepare(sql: string): { get(...params: unknown[]): unknown; iterate(...params: unknown[]): IterableIterator<unknown> };
}

/**
 * The vectors an index holds: every current memory (not forgotten, not superseded) with a vector in the
 * store's vector table, the same vectors its exhaustive search reads. Expiry, kinds and tags are checked when
 * hits are rescored, not here.
 */
export const INDEXED_VECTORS_SQL = `SELECT m.rowid AS rowid, m.namespace AS namespace, v.embedding AS data FROM memories m
  JOIN memories_vec v ON v.rowid = m.rowid WHERE m.forgotten_at IS NULL AND m.superseded_by IS NULL`;

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
  return { format: INDEX_FORMAT, storeId: storeId.value, embedder: { id: e.id, dimensions: e.dimensions }, seq: currentChangeSeq(db), params };
}

/** Builds one graph per namespace from every indexed vector of `db` (call inside a read transaction). */
export function buildFromDatabase(usearch: Usearch, db: Connection, dimensions: number, params: IndexParams, threads: number): Map<string, UsearchIndex> {
  const indexes = new Map<string, UsearchIndex>();
  const pending = new Map<string, { keys: bigint[]; data: Float32Array; n: number }>();
  const BATCH = 1024;
  const flush = (namespace: string, p: { keys: bigint[]; data: Float32Array; n: number }) => {
    if (p.n === 0) return;
    let index = indexes.get(namespace);
    if (!index) indexes.set(namespace, (index = newIndex(usearch, dimensions, params)));
    index.add(BigUint64Array.from(p.keys), p.data.subarray(0, p.n * dimensions), threads);
    p.keys = [];
    p.n = 0;
  };
  for (const raw of db.prepare(INDEXED_VECTORS_SQL).iterate()) {
    const row = raw as { rowid: number; namespace: string; data: Buffer };
    if (row.data.length !== dimensions * 4) continue;
    let p = pending.get(row.namespace);
    if (!p) pending.set(row.namespace, (p = { keys: [], data: new Float32Array(BATCH * dimensions), n: 0 }));
    p.data.set(new Float32Array(row.data.buffer, row.data.byteOffset, dimensions), p.n * dimensions);
    p.keys.push(BigInt(row.rowid));
    p.n++;
    if (p.n === BATCH) flush(row.namespace, p);
  }
  for (const [namespace, p] of pending) flush(namespace, p);
  return indexes;
}
