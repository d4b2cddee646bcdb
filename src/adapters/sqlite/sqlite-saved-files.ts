// The rules for files cairn saves beside a SQLite database as caches of it (the vector index file `<db>.usearch`,
// the neighbour graph files `<db>.graph.*`): when one may be trusted, how one is written so a crash leaves the
// old or the new, and how its siblings are found. Kept free of the store's imports (the workers load it too).
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** What a saved file says it was made from (its header), as far as trusting it goes. */
export interface SavedFileIdentity {
  /** The database's random id (meta `store_id`). */
  storeId: string;
  embedder: { id: string; dimensions: number };
  /** The last `vector_changes` sequence number it includes. */
  seq: number;
  /** The database's erasure counter (meta `erasures`) it was made under; absent (0) in older index files. */
  erasures?: number | undefined;
  /** What identifies change `seq` in the database's history (changeFingerprint); undefined: not checked. */
  at?: string | null | undefined;
}

/** What the database is now, and how to ask it about its history. */
export interface SavedFileRules {
  want: SavedFileIdentity;
  /** Whether the file was built with the parameters this version builds with (each file has its own). */
  sameParams: boolean;
  /** Whether the kept change log still holds every change after `from` up to `to`. */
  covers(from: number, to: number): boolean;
  /** Why change `seq` with fingerprint `at` is not of the database's history, or null (historyProblem). */
  history(seq: number, at: string | null | undefined): string | null;
}

/**
 * The one rule for trusting a file saved beside the database: it must be of this database (store id), of its
 * embedder, built with the same parameters, made under the latest erasure (usearch keeps a removed vector's
 * bytes, and a build in flight reads a snapshot from before one), not ahead of the database, no older than the
 * change log it is caught up from, and of the database's history (not saved beside a copy restored since). The
 * first that fails, said with `what` ("the index file", "the graph file"); `erased` when it was the erasure
 * counter (such a file is deleted, not only passed over); null when it may be used.
 */
export function savedFileProblem(what: string, have: SavedFileIdentity, rules: SavedFileRules): { problem: string; erased: boolean } | null {
  const { want } = rules;
  const no = (problem: string) => ({ problem, erased: false });
  if (have.storeId !== want.storeId) return no(`${what} belongs to another database`);
  if (have.embedder?.id !== want.embedder.id || have.embedder?.dimensions !== want.embedder.dimensions) {
    return no(`${what} was built from ${String(have.embedder?.id)} (${String(have.embedder?.dimensions)} dimensions); the store holds ${want.embedder.id} (${want.embedder.dimensions})`);
  }
  if (!rules.sameParams) return no(`${what} was built with other parameters`);
  if ((have.erasures ?? 0) !== (want.erasures ?? 0)) {
    return { problem: `${what} was saved before the latest erasure (${have.erasures ?? 0} of ${want.erasures ?? 0})`, erased: true };
  }
  if (!(have.seq <= want.seq)) return no(`${what} reflects change ${have.seq}, the database only ${want.seq} (restored from an older copy?)`);
  if (!rules.covers(have.seq, want.seq)) return no(`${what} is older than the change log the database keeps`);
  const history = rules.history(have.seq, have.at);
  if (history !== null) return no(`${what} is from another history of this database: ${history}`);
  return null;
}

/** Flushes a file or a folder to disk; a filesystem that cannot fsync a folder is let be (renames stay atomic). */
export function fsyncPath(path: string): void {
  try {
    const fd = openSync(path, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some filesystems cannot fsync a folder.
  }
}

/**
 * Writes `parts` to `path` atomically: into `tmp` (beside it), flushed, renamed over `path`, and the folder
 * flushed. A process killed at any point leaves the old file or the new one, never a mix; on an error the
 * temporary goes and the old file stays.
 */
export function writeFileAtomically(path: string, tmp: string, parts: readonly (Buffer | string)[]): void {
  try {
    const fd = openSync(tmp, 'w', 0o600);
    try {
      for (const part of parts) writeSync(fd, typeof part === 'string' ? Buffer.from(part, 'utf8') : part);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  fsyncPath(dirname(path));
}

/** The names in `start`'s folder that begin with its last part (e.g. `<db>.graph.` lists the saved graphs); [] when the folder cannot be read. */
export function namesStartingWith(start: string): string[] {
  const prefix = basename(start);
  try {
    return readdirSync(dirname(start)).filter((n) => n.startsWith(prefix));
  } catch {
    return [];
  }
}

/**
 * How long a file beside the database that nothing names (a graph file no header names, a temporary) is left
 * alone: another process may be between writing it and naming it (a publish takes milliseconds from its rename
 * to its header). Age decides, not the pid a name carries: a pid says nothing across PID namespaces (two
 * containers sharing the database's folder, each with its own pid 1) and, once reused, nothing about the
 * process that wrote the file.
 */
export const UNNAMED_FILE_GRACE_MS = 10 * 60_000;

/** Whether the file at `path` was last written more than the grace period ago (false when it cannot be seen). */
export function olderThanGrace(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > UNNAMED_FILE_GRACE_MS;
  } catch {
    return false;
  }
}

/**
 * Removes temporary files named `<start>…` (`start` a path, e.g. `<db>.usearch.tmp-`) written more than the grace
 * period ago: left by processes killed mid-save or before deleting them. A fresh one may be another process's
 * save in flight, whatever pid its name carries. One this process may not remove (EPERM, EACCES) is left.
 */
export function removeStaleTemporaries(start: string): void {
  for (const name of namesStartingWith(start)) {
    const path = join(dirname(start), name);
    if (!olderThanGrace(path)) continue;
    try {
      rmSync(path, { force: true });
    } catch {
      // Left alone: one that cannot be removed (another user's, in a shared folder) must not fail an open or a save.
    }
  }
}
