import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { notJsonProblem } from '../../core/text.js';
import type { Logger } from '../../interfaces/embedder.js';
import { createLogger, parseLogLevel } from '../logger.js';

/**
 * What every hook handler gets: the streams and the environment as parameters (tests drive handlers with
 * strings and buffers), the parsed hook input, the log, and where hooks keep their per-session state.
 */

export interface HookStreams {
  /** The hook's JSON input: a stream (the real stdin) or the text itself. */
  stdin: NodeJS.ReadableStream | string;
  /** Belongs to the protocol: only the hook's JSON answer is ever written here. */
  stdout: NodeJS.WritableStream;
  /** Read by Claude Code only on exit 2 (the gate's reasons); otherwise it lands in its debug log. */
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** Working directory of the process, used when the input names none. */
  cwd: string;
  flags?: { db?: string | undefined; namespace?: string | undefined };
}

/** The fields of a hook input that cairn uses; anything may be missing from a malformed one. */
export interface HookInput {
  session_id?: unknown;
  transcript_path?: unknown;
  cwd?: unknown;
  hook_event_name?: unknown;
  stop_hook_active?: unknown;
  trigger?: unknown;
  source?: unknown;
  prompt?: unknown;
  [key: string]: unknown;
}

export interface HookOutcome {
  /** 0, or 2 when the Stop gate blocks. */
  code: number;
  /** True when the hook gave up on work still running (a missed deadline): the process need not wait for it. */
  abandoned?: boolean;
}

export interface HookContext {
  input: HookInput;
  streams: HookStreams;
  log: Logger;
  /** The database file (absolute), resolved once for every handler. */
  dbPath: string;
  /** Folder of the database; hooks keep their log and state next to it. */
  dataDir: string;
  /** performance.now() when the hook started, for deadlines. */
  startedAt: number;
}

export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

/** Reads the hook input; gives up (returning what it has) after `timeoutMs` so a stuck parent cannot hang a hook. */
export async function readInput(stdin: NodeJS.ReadableStream | string, timeoutMs = 10_000): Promise<{ text: string; problem: string | null }> {
  if (typeof stdin === 'string') return { text: stdin, problem: null };
  if ((stdin as NodeJS.ReadStream).isTTY) return { text: '', problem: 'stdin is a terminal: no hook input' };
  return new Promise((resolvePromise) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    const finish = (problem: string | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stdin.removeListener('data', onData);
      stdin.removeListener('end', onEnd);
      stdin.removeListener('error', onError);
      if (problem) (stdin as NodeJS.ReadStream).destroy?.();
      resolvePromise({ text: Buffer.concat(chunks).toString('utf8'), problem });
    };
    const onData = (d: Buffer | string) => {
      const b = typeof d === 'string' ? Buffer.from(d) : d;
      bytes += b.length;
      if (bytes > MAX_INPUT_BYTES) return finish(`hook input larger than ${MAX_INPUT_BYTES} bytes`);
      chunks.push(b);
    };
    const onEnd = () => finish(null);
    const onError = (err: Error) => finish(`reading stdin failed: ${err.message}`);
    const timer = setTimeout(() => finish(`no end of hook input after ${timeoutMs} ms`), timeoutMs);
    timer.unref();
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    stdin.once('error', onError);
    stdin.resume();
  });
}

/** Parses the hook input; a malformed one becomes an empty input plus the problem, never an exception. */
export function parseInput(text: string): { input: HookInput; problem: string | null } {
  if (text.trim() === '') return { input: {}, problem: 'empty hook input' };
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { input: {}, problem: 'hook input is not a JSON object' };
    return { input: value as HookInput, problem: null };
  } catch {
    return { input: {}, problem: `hook input is ${notJsonProblem(text)}` };
  }
}

export function stringField(input: HookInput, key: string): string | null {
  const v = input[key];
  return typeof v === 'string' && v !== '' ? v : null;
}

const LOG_ROTATE_BYTES = 1024 * 1024;

/** The hooks' log file, `<dataDir>/hooks.log`, rotated to hooks.log.1 past 1 MiB. Never stdout. */
export function createHookLog(dataDir: string, env: NodeJS.ProcessEnv): { log: Logger; path: string } {
  const path = join(dataDir, 'hooks.log');
  try {
    mkdirSync(dataDir, { recursive: true });
    if ((statSync(path, { throwIfNoEntry: false })?.size ?? 0) > LOG_ROTATE_BYTES) renameSync(path, `${path}.1`);
  } catch {
    // a log that cannot be prepared must not stop the hook; createLogger swallows write errors too
  }
  return { log: createLogger({ level: env['CAIRN_LOG'] ? parseLogLevel(env['CAIRN_LOG']) : 'info', file: path }), path };
}

/** A file name for a session's state: the id when it is plain, else a hash of it. */
export function sessionKey(sessionId: string | null, transcriptPath: string | null): string {
  const id = sessionId ?? (transcriptPath ? `transcript-${transcriptPath}` : 'unknown');
  if (/^[A-Za-z0-9_.-]{1,100}$/u.test(id) && !id.startsWith('.')) return id;
  return createHash('sha256').update(id).digest('hex').slice(0, 32);
}

/** Per-session state files under `<dataDir>/hook-state/`, one JSON file per kind and session. */
export function statePath(dataDir: string, kind: 'stop' | 'capture', key: string): string {
  return join(dataDir, 'hook-state', `${kind}-${key}.json`);
}

/** The stored JSON, or null when there is none or it cannot be read (the caller starts over). */
export function readState(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch {
    return null;
  }
}

/** Writes atomically (temp file + rename), so a killed hook never leaves half a file; readable by its owner only. */
export function writeState(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(value), { mode: 0o600 });
  renameSync(tmp, path);
}

/** The job file a PreCompact capture hands to its background worker (see pre-compact.ts). */
export function capturePath(statePathOfSession: string, pid: number, at: number): string {
  return `${statePathOfSession.slice(0, -'.json'.length)}.job-${pid}-${at}.json`;
}

const JOB_FILE = /^capture-.+\.job-\d+-(\d+)\.json$/u;
/** A worker reads its job file within seconds; one older than this was left by a worker that died. */
const JOB_FILE_MAX_AGE_MS = 3_600_000;

/**
 * Removes capture job files: all of them (an erasure: they hold statements not yet in the database), or
 * only those a dead worker left (older than an hour). Losing one loses nothing: the capture position moves
 * only after its statements are saved, so the next capture reads them again. Returns how many it removed.
 */
export function removeCaptureJobs(dataDir: string, options: { all: boolean }, now = Date.now()): number {
  const dir = join(dataDir, 'hook-state');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const m = JOB_FILE.exec(name);
    if (!m) continue;
    if (!options.all && now - Number(m[1]) < JOB_FILE_MAX_AGE_MS) continue;
    try {
      rmSync(join(dir, name), { force: true });
      removed++;
    } catch {
      // removed by its worker meanwhile
    }
  }
  return removed;
}

/**
 * Removes session state files untouched for `maxAgeDays` (Claude Code itself deletes transcripts after 30
 * days by default), so the state folder does not grow forever. Returns how many were removed.
 */
export function pruneStates(dataDir: string, maxAgeDays = 45, now = Date.now()): number {
  const dir = join(dataDir, 'hook-state');
  let removed = removeCaptureJobs(dataDir, { all: false }, now);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      if (now - statSync(path).mtimeMs > maxAgeDays * 86_400_000) {
        rmSync(path, { force: true });
        removed++;
      }
    } catch {
      // another hook removed or replaced it meanwhile
    }
  }
  return removed;
}

/** Identity of a transcript file, so a replaced file (not appended to) restarts reading from its start. */
export function fileIdentity(path: string): { size: number; ino: number } | null {
  try {
    const s = statSync(path);
    return s.isFile() ? { size: s.size, ino: s.ino } : null;
  } catch {
    return null;
  }
}
