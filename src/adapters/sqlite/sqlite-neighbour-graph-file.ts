// The neighbour graph's shared parts, read by the store's main thread and by the worker that builds a graph:
// its parameters, how a vector enters it, and the rows it is built from. Kept free of the store's imports.
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fsyncPath, namesStartingWith, olderThanGrace, writeFileAtomically } from './sqlite-saved-files.js';
import type { FileDigest } from '../vector-codes/background-build.js';
import type { Usearch } from '../vector-codes/usearch.js';
import { vectorTableName } from './sqlite-vector-table.js';

/**
 * usearch HNSW parameters of a neighbour graph (int8 vectors, cosine). Connectivity 16 and expansion 64 at
 * insertion: at 50,000 noisy copies of 512 real-like vectors on this machine one insertion took 0.09 ms.
 * Expansion 128 at search, which the store asks for 4 × k candidates: on the first 300,000 codes of the latency
 * bench's 1M namespace (noisy copies of pool notes) the exact int8 ten of a fresh noisy copy were among them
 * 0.967 of the time (0.917 at expansion 64 with 2k candidates, the earlier setting), 0.48 ms a search.
 */
export const GRAPH_PARAMS = { connectivity: 16, expansionAdd: 64, expansionSearch: 128 } as const;

export type Graph = InstanceType<Usearch['Index']>;

export function newGraph(usearch: Usearch, dimensions: number): Graph {
  return new usearch.Index({
    dimensions,
    metric: usearch.MetricKind.Cos,
    quantization: usearch.ScalarKind.I8,
    connectivity: GRAPH_PARAMS.connectivity,
    expansion_add: GRAPH_PARAMS.expansionAdd,
    expansion_search: GRAPH_PARAMS.expansionSearch,
    multi: false,
  });
}

/** Vectors inserted per call (a batch of floats: 4,096 × 512 × 4 bytes = 8 MiB). */
const BATCH = 4096;

/**
 * Inserts rows given as the quantised scan's int8 codes (vector-codes/quantized-vectors.ts). usearch takes floats
 * and turns them into int8 as round(x × 127), so each code is passed as code / 127 and lands unchanged: the graph
 * holds the same codes as the scan (a unit vector of 512 dimensions given as it is, components around 0.04, would
 * keep a few levels only). The graph compares by cosine, which ignores the codes' length: a graph saved when codes
 * were scaled to each vector's largest component still answers with the codes of today's form added to it.
 */
export function addCodes(graph: Graph, keys: ArrayLike<number>, codes: Int8Array, dimensions: number, threads: number): void {
  const floats = new Float32Array(Math.min(BATCH, keys.length) * dimensions);
  for (let start = 0; start < keys.length; start += BATCH) {
    const n = Math.min(BATCH, keys.length - start);
    const batchKeys = new BigUint64Array(n);
    for (let i = 0; i < n; i++) batchKeys[i] = BigInt(keys[start + i] as number);
    const from = start * dimensions;
    for (let i = 0; i < n * dimensions; i++) floats[i] = (codes[from + i] as number) / 127;
    graph.add(batchKeys, floats.subarray(0, n * dimensions), threads);
  }
}

/**
 * The current vectors of one namespace (the rows its quantised index holds): the log's copy of each vector
 * (one B-tree lookup by its hash), or the vector table's when the blob is missing.
 */
export function namespaceVectorsSql(dimensions: number): string {
  return `SELECT m.rowid AS rowid, COALESCE(b.data, (SELECT embedding FROM ${vectorTableName(dimensions)} WHERE rowid = m.rowid)) AS data
  FROM memories m LEFT JOIN vector_blobs b ON b.hash = m.vector_hash
  WHERE m.namespace = ? AND m.vector_hash IS NOT NULL AND m.forgotten_at IS NULL AND m.superseded_by IS NULL`;
}

// ------------------------------------------------------------------------------------ the saved graphs

/**
 * A namespace's graph saved beside the database, so a process that opens the store loads it instead of building
 * it again: `<db>.graph.<namespace key>.<pid>-<token>.usearch` (usearch's own format) named by a header
 * `<db>.graph.<namespace key>.json` that says what it was built from. Like the index file it is a cache, never a
 * source: a reader takes it only when the header matches the database (store id, embedder, parameters), its
 * change is one the database can still catch up from, and the loaded graph holds the vectors the header says.
 */
export const GRAPH_FILE_FORMAT = 2;

export interface GraphFileHeader {
  format: number;
  storeId: string;
  embedder: { id: string; dimensions: number };
  params: typeof GRAPH_PARAMS;
  namespace: string;
  /** The last `vector_changes` sequence number the graph includes. */
  seq: number;
  /**
   * The database's erasure counter (meta `erasures`) when the graph's bytes were built or loaded. usearch keeps
   * a removed vector's bytes in the file, so a graph from before an erasure is never taken or saved again.
   */
  erasures: number;
  /** What identifies change `seq` in the database's history (changeFingerprint in sqlite-vector-index-file.ts). */
  at: string | null;
  vectors: number;
  /** The graph file's name (in the database's folder), its size and SHA-256. */
  file: string;
  bytes: number;
  sha256: string;
}

/** A file's SHA-256 and size (the graph build's worker hashes what it wrote). */
export function fileDigest(path: string): FileDigest {
  return { sha256: fileSha256(path), bytes: statSync(path).size };
}

/** SHA-256 of a file, read in pieces of 8 MiB (a graph at 1M vectors is about 650 MB). */
function fileSha256(path: string): string {
  const hash = createHash('sha256');
  const piece = Buffer.alloc(8 << 20);
  const fd = openSync(path, 'r');
  try {
    for (let n = readSync(fd, piece); n > 0; n = readSync(fd, piece)) hash.update(piece.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

export function namespaceKey(namespace: string): string {
  return createHash('sha256').update(namespace, 'utf8').digest('hex').slice(0, 16);
}

export function graphHeaderPath(dbPath: string, namespace: string): string {
  return `${dbPath}.graph.${namespaceKey(namespace)}.json`;
}

/**
 * Makes the graph file at `source` (a temporary file in the database's folder) the namespace's saved graph:
 * renamed to a name of its own, flushed, then named by a new header written atomically over the old one; the
 * namespace's older graph files go last. A process killed at any point leaves the old header with its file, or
 * the new ones.
 *
 * Several processes may publish one namespace's graph at once (two long-lived cairns on one database, perhaps in
 * two containers). Another process's file may be about to be named by that process's header, and removing it
 * would leave that header naming nothing (and that publish failing). So a publisher removes the files it
 * published itself before (it knows them by name) and any other file the header does not name once it was last
 * written longer ago than UNNAMED_FILE_GRACE_MS (a live publisher's are fresh; a dead one's age out), never by
 * the pid a name carries (`<pid>-<token>`, which only says who wrote it). Each live publisher keeps at most its
 * latest file beside the one named. A reader that has a removed file open keeps reading it (on Linux an
 * unlinked file stays readable); one that looks it up after finds it missing and reads the header again, which
 * names the new file (openNamedGraphFile); only when that fails too does it build the graph.
 */
export function publishGraphFile(dbPath: string, source: string, header: Omit<GraphFileHeader, 'file' | 'bytes' | 'sha256' | 'format'>, digest?: FileDigest): void {
  const key = namespaceKey(header.namespace);
  const name = `${basename(dbPath)}.graph.${key}.${process.pid}-${randomBytes(6).toString('hex')}.usearch`;
  const path = join(dirname(dbPath), name);
  // Its age, which tells other publishers whether it may still be about to be named, counts from now.
  const now = new Date();
  utimesSync(source, now, now);
  renameSync(source, path);
  // The graph's rename is durable before the header that names it is written.
  fsyncPath(dirname(dbPath));
  try {
    fsyncPath(path);
    // `digest`: hashed where the file was written (the build's worker); taken when the size still agrees.
    const bytes = statSync(path).size;
    const sha256 = digest && digest.bytes === bytes ? digest.sha256 : fileSha256(path);
    const full: GraphFileHeader = { format: GRAPH_FILE_FORMAT, ...header, file: name, bytes, sha256 };
    writeFileAtomically(graphHeaderPath(dbPath, header.namespace), `${dbPath}.graph-${process.pid}-${randomBytes(4).toString('hex')}.json`, [JSON.stringify(full)]);
  } catch (err) {
    // Not published: the graph goes back to `source`, where the caller loads or removes it; no orphan is left.
    renameSync(path, source);
    throw err;
  }
  const prefix = `${basename(dbPath)}.graph.${key}.`;
  const named = readGraphHeader(dbPath, header.namespace);
  const keep = 'header' in named ? named.header.file : name;
  publishedHere.add(path);
  for (const other of namesStartingWith(`${dirname(dbPath)}/${prefix}`)) {
    const otherPath = join(dirname(dbPath), other);
    if (!other.endsWith('.usearch') || other === name || other === keep) continue;
    if (!publishedHere.has(otherPath) && !olderThanGrace(otherPath)) continue;
    try {
      rmSync(otherPath, { force: true });
      publishedHere.delete(otherPath);
    } catch {
      // Not a file (a folder in its way): left alone, it names no graph.
    }
  }
}

/** The graph files this process published (paths), so it removes its own older ones as soon as they are replaced. */
const publishedHere = new Set<string>();

/** Why a saved graph is not used; `gone` when the file its header named no longer exists. */
export interface GraphFileRefusal {
  problem: string;
  gone?: boolean;
}

/**
 * Reads the namespace's header and opens the file it names with `open` (which marks a file it found gone,
 * unreadGraphFile). A publisher in another process may
 * replace that file (and remove it) between the header being read and the file being opened: when the file
 * is gone, the header is read once more, and names the new file, instead of the graph being built again.
 */
export function openNamedGraphFile<T extends object>(
  dbPath: string,
  namespace: string,
  open: (file: { header: GraphFileHeader; path: string }) => T | GraphFileRefusal,
): T | GraphFileRefusal {
  const once = (): T | GraphFileRefusal => {
    const file = readGraphHeader(dbPath, namespace);
    if ('problem' in file) return file;
    return open(file);
  };
  const first = once();
  return 'problem' in first && first.gone === true ? once() : first;
}

/** Why the file could not be read or loaded, marked gone when it no longer exists (another process removed it). */
export function unreadGraphFile(file: { path: string }, problem: string): GraphFileRefusal {
  return existsSync(file.path) ? { problem } : { problem, gone: true };
}

/** The saved graph of a namespace as its header describes it, or why there is none to use. */
export function readGraphHeader(dbPath: string, namespace: string): { header: GraphFileHeader; path: string } | GraphFileRefusal {
  let text: string;
  try {
    text = readFileSync(graphHeaderPath(dbPath, namespace), 'utf8');
  } catch (err) {
    return { problem: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no graph file' : `the graph file cannot be read (${(err as Error).message})` };
  }
  let header: GraphFileHeader;
  try {
    header = JSON.parse(text) as GraphFileHeader;
  } catch {
    return { problem: 'the graph file header is damaged' };
  }
  if (header.format !== GRAPH_FILE_FORMAT || header.namespace !== namespace || typeof header.file !== 'string' || basename(header.file) !== header.file) {
    return { problem: 'the graph file header is not one this version reads' };
  }
  const path = join(dirname(dbPath), header.file);
  let size: number;
  try {
    size = statSync(path).size;
  } catch (err) {
    return { problem: 'the graph file named by its header is missing', gone: (err as NodeJS.ErrnoException).code === 'ENOENT' };
  }
  if (size !== header.bytes) return { problem: `the graph file holds ${size} bytes, its header says ${header.bytes}` };
  return { header, path };
}

/** Why the graph file's bytes are not the ones its header names (checked before it is loaded), or null. */
export function graphFileProblem(file: { header: GraphFileHeader; path: string }): string | null {
  try {
    return fileSha256(file.path) === file.header.sha256 ? null : 'the graph file is damaged (checksum)';
  } catch (err) {
    // A folder in its place, no permission, or deleted by another process's publish since it was looked at.
    return `the graph file cannot be read (${(err as Error).message.split('\n')[0]})`;
  }
}

/** Every namespace that has a saved graph header beside the database. */
export function savedGraphNamespaces(dbPath: string): string[] {
  const out: string[] = [];
  for (const name of namesStartingWith(`${dbPath}.graph.`)) {
    if (!name.endsWith('.json')) continue;
    try {
      const header = JSON.parse(readFileSync(join(dirname(dbPath), name), 'utf8')) as Partial<GraphFileHeader>;
      if (typeof header.namespace === 'string' && graphHeaderPath(dbPath, header.namespace) === join(dirname(dbPath), name)) out.push(header.namespace);
    } catch {
      rmSync(join(dirname(dbPath), name), { force: true });
    }
  }
  return out;
}

/**
 * Removes a namespace's saved graph (header first, so no reader takes a half-removed one), or every one with
 * every graph temporary `<db>.graph-<pid>-…` (a build's or a save's output not yet published).
 */
export function removeGraphFiles(dbPath: string, namespace?: string): void {
  const starts = namespace === undefined ? [`${dbPath}.graph.`, `${dbPath}.graph-`] : [`${dbPath}.graph.${namespaceKey(namespace)}.`];
  const ours = starts.flatMap(namesStartingWith);
  for (const name of [...ours.filter((n) => n.endsWith('.json')), ...ours.filter((n) => !n.endsWith('.json'))]) rmSync(join(dirname(dbPath), name), { force: true });
}
