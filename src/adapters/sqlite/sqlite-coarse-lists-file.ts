/**
 * A namespace's coarse lists saved beside the database (`<db>.lists.<namespace key>`), so a long-lived process
 * that opens a large store (every `cairn mcp` an agent starts) installs them at once instead of building them
 * again (at 1M vectors about two minutes of a core). The file holds what a build hands over (centroids, each
 * snapshot row's list, the far list's bound), not the codes: they come from the index as they are now, and the
 * rows changed since the snapshot are placed again at install, as after a build. Like the index file it is a
 * cache, never a source: it is taken only when it belongs to the database (store id, embedder, a change the
 * database's history holds, no erasure since it was written) and its bytes are whole; otherwise the lists are
 * built. Written whole to a temporary file then renamed, so a reader sees an old file or a new one.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { decodeCoarseBuild, encodeCoarseBuild, type CoarseBuildShape } from '../vector-codes/coarse-build-bytes.js';
import type { CoarseBuild } from '../vector-codes/coarse-lists.js';
import { namespaceKey } from './sqlite-neighbour-graph-file.js';
import { namesStartingWith, removeStaleTemporaries, writeFileAtomically } from './sqlite-saved-files.js';

export const COARSE_FILE_FORMAT = 1;
const MAGIC = Buffer.from('CAIRNCL1', 'latin1');

/** What a saved build belongs to: the database, its embedder, the change its snapshot reflects, and erasures before it. */
export interface CoarseFileIdentity {
  storeId: string;
  embedder: { id: string; dimensions: number };
  namespace: string;
  /** The last `vector_changes` sequence number the snapshot includes, and what identifies it (changeFingerprint). */
  seq: number;
  at: string | null;
  /** The database's erasure counter when the snapshot was read: a file from before an erasure is never taken. */
  erasures: number;
}

interface CoarseFileHeader extends CoarseFileIdentity, CoarseBuildShape {
  format: number;
}

export function coarseListsPath(dbPath: string, namespace: string): string {
  return `${dbPath}.lists.${namespaceKey(namespace)}`;
}

/** Removes every saved lists file and temporary beside the database (after an erasure). */
export function removeCoarseListsFiles(dbPath: string): void {
  for (const name of namesStartingWith(`${dbPath}.lists.`)) rmSync(join(dirname(dbPath), name), { force: true });
}

/** Writes the build as the namespace's saved lists (centroids, then row ids, then each row's list). */
export function saveCoarseLists(dbPath: string, identity: CoarseFileIdentity, build: CoarseBuild): void {
  const path = coarseListsPath(dbPath, identity.namespace);
  removeStaleTemporaries(`${path}.tmp-`);
  const { body, shape } = encodeCoarseBuild(build);
  const header: CoarseFileHeader = { format: COARSE_FILE_FORMAT, ...identity, ...shape };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.length, 0);
  writeFileAtomically(path, `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`, [MAGIC, length, json, body]);
}

/**
 * The namespace's saved build with the identity it was written under, or why there is none to use. `current`:
 * what the database says now (its change `seq` the latest); `historyProblem` tells whether the file's change is
 * one of the database's.
 */
export function readCoarseLists(
  dbPath: string,
  current: Omit<CoarseFileIdentity, 'at'>,
  historyProblem: (seq: number, at: string | null) => string | null,
): { identity: CoarseFileIdentity; build: CoarseBuild } | { problem: string } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(coarseListsPath(dbPath, current.namespace));
  } catch (err) {
    return { problem: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no saved lists' : `the saved lists cannot be read (${(err as Error).message})` };
  }
  if (bytes.length < 12 || !bytes.subarray(0, 8).equals(MAGIC)) return { problem: 'the saved lists are not a cairn lists file' };
  const length = bytes.readUInt32LE(8);
  let header: CoarseFileHeader;
  try {
    header = JSON.parse(bytes.subarray(12, 12 + length).toString('utf8')) as CoarseFileHeader;
  } catch {
    return { problem: 'the saved lists header is damaged' };
  }
  if (typeof header !== 'object' || header === null) return { problem: 'the saved lists header is damaged' };
  if (header.format !== COARSE_FILE_FORMAT) return { problem: `the saved lists have format ${String(header.format)}, not ${COARSE_FILE_FORMAT}` };
  if (header.storeId !== current.storeId || header.namespace !== current.namespace) return { problem: 'the saved lists belong to another database' };
  if (header.embedder?.id !== current.embedder.id || header.embedder.dimensions !== current.embedder.dimensions) {
    return { problem: `the saved lists were built from ${String(header.embedder?.id)}; the store holds ${current.embedder.id}` };
  }
  if (header.erasures !== current.erasures) return { problem: 'the saved lists were made before an erasure' };
  if (!(header.seq <= current.seq)) return { problem: `the saved lists are ahead of the database (change ${header.seq} of ${current.seq})` };
  const history = historyProblem(header.seq, header.at);
  if (history) return { problem: `the saved lists do not belong to this database: ${history}` };
  const decoded = decodeCoarseBuild(bytes.subarray(12 + length), header, current.embedder.dimensions, 'the saved lists');
  if ('problem' in decoded) return decoded;
  const identity: CoarseFileIdentity = { storeId: header.storeId, embedder: header.embedder, namespace: header.namespace, seq: header.seq, at: header.at, erasures: header.erasures };
  return { identity, build: decoded.build };
}
