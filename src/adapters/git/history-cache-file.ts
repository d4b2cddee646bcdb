import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PathChange } from '../../interfaces/code.js';

/**
 * The git adapter's history answers kept between processes, in `<git dir>/cairn/history-cache.json` (never
 * committed). A hook or CLI call is a fresh process: without this file its first search runs `git diff`
 * for every memory commit again. Every entry is keyed by the commits it was computed between, which never
 * change, so an entry stays true as HEAD moves on (the adapter composes onto it or ignores it). The file is
 * written whole to a temporary name and renamed (a reader sees the old file or the new one), carries a
 * version and a checksum of its data, and is ignored when either does not match or an entry is malformed;
 * the next search then rebuilds it. A file that cannot be read or written costs time, never a failure.
 */

export const HISTORY_CACHE_VERSION = 1;
export const HISTORY_CACHE_FILE = join('cairn', 'history-cache.json');

export interface HistoryCacheData {
  /** Per memory commit: the HEAD its changes were computed at, and the changes. */
  latest: Array<[commit: string, head: string, changes: PathChange[]]>;
  /** `<commit>..<head>:<path>` → lines added and deleted. */
  counted: Array<[key: string, added: number, deleted: number]>;
  /** The first commit after `since` that removed `path`, found along `since..head`. */
  removals: Array<[since: string, head: string, path: string, commit: string]>;
}

const SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/u;
const isSha = (x: unknown): x is string => typeof x === 'string' && SHA.test(x);
const isText = (x: unknown): x is string => typeof x === 'string' && x.length > 0;
const isCount = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 0;

function validChange(c: unknown): c is PathChange {
  if (!c || typeof c !== 'object') return false;
  const { status, path, newPath, commit } = c as Record<string, unknown>;
  if (!isText(path) || !['renamed', 'deleted', 'modified'].includes(status as string)) return false;
  if (newPath !== undefined && !isText(newPath)) return false;
  return commit === undefined || isSha(commit);
}

function validData(d: unknown): d is HistoryCacheData {
  if (!d || typeof d !== 'object') return false;
  const { latest, counted, removals } = d as Record<string, unknown>;
  return (
    Array.isArray(latest) &&
    latest.every((e) => Array.isArray(e) && e.length === 3 && isSha(e[0]) && isSha(e[1]) && Array.isArray(e[2]) && e[2].every(validChange)) &&
    Array.isArray(counted) &&
    counted.every((e) => Array.isArray(e) && e.length === 3 && isText(e[0]) && isCount(e[1]) && isCount(e[2])) &&
    Array.isArray(removals) &&
    removals.every((e) => Array.isArray(e) && e.length === 4 && isSha(e[0]) && isSha(e[1]) && isText(e[2]) && isSha(e[3]))
  );
}

const checksum = (body: string) => createHash('sha256').update(body).digest('hex');

/** The cached answers of this git directory; null when the file is missing, unreadable, of another version, altered or malformed. */
export function readHistoryCache(gitDir: string): HistoryCacheData | null {
  try {
    const file = JSON.parse(readFileSync(join(gitDir, HISTORY_CACHE_FILE), 'utf8')) as Record<string, unknown>;
    if (file['version'] !== HISTORY_CACHE_VERSION || typeof file['data'] !== 'string' || file['checksum'] !== checksum(file['data'])) return null;
    const data: unknown = JSON.parse(file['data']);
    return validData(data) ? data : null;
  } catch {
    return null;
  }
}

/** Replaces the file atomically; false (and nothing left behind) when it cannot be written. */
export function writeHistoryCache(gitDir: string, data: HistoryCacheData): boolean {
  const target = join(gitDir, HISTORY_CACHE_FILE);
  const temp = `${target}.${process.pid}.${Date.now()}.tmp`;
  try {
    mkdirSync(join(gitDir, 'cairn'), { recursive: true });
    const body = JSON.stringify(data);
    writeFileSync(temp, JSON.stringify({ version: HISTORY_CACHE_VERSION, checksum: checksum(body), data: body }));
    renameSync(temp, target);
    return true;
  } catch {
    try {
      rmSync(temp, { force: true });
    } catch {
      // nothing was written
    }
    return false;
  }
}
