import { extractStatements } from '../../core/capture.js';
import { redactTexts } from '../../core/redact.js';
import { entryTimestamp, isToolResultLine, parseTranscriptLine, userAuthoredText } from '../../core/transcript.js';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../interfaces/embedder.js';
import { isCairnError } from '../../interfaces/errors.js';
import type { MemoryInput, SaveResult } from '../../interfaces/memory.js';
import { capturePath, fileIdentity, readState, sessionKey, statePath, stringField, writeState, type HookContext, type HookOutcome } from './hook-io.js';
import { readLines } from './jsonl-reader.js';

/**
 * The PreCompact hook: before the context is summarised away, keep what the user said that later sessions
 * need — decisions, constraints, conventions, open instructions — verbatim, with provenance. Write-only:
 * it never blocks compaction and always exits 0; problems go to the hooks log. The transcript is read
 * from where the previous capture of the session stopped, in bounded memory; the statements are then
 * saved by a detached worker (capture-worker.ts), so compaction waits for reading, not for embedding.
 */

/** Statements kept per capture (the most recent ones): bounds the time spent embedding. */
export const MAX_STATEMENTS_PER_CAPTURE = 200;
const SAVE_BATCH = 50;

const USER = Buffer.from('"user"');
const QUEUED = Buffer.from('queued_command');
const TOOL_RESULT = Buffer.from('"toolUseResult":');

interface StoredCapture {
  ino: number;
  offset: number;
}

export interface CaptureReport {
  statements: number;
  saved: number;
  duplicates: number;
  /** Statements the ingest filter held for review instead of storing (see `cairn quarantine`). */
  held: number;
  /** Statements refused for another reason (logged one by one). */
  refused: number;
  /** Older statements left out beyond MAX_STATEMENTS_PER_CAPTURE. */
  dropped: number;
}

function plainTrigger(value: string | null): string {
  return value && /^[a-z_-]{1,32}$/u.test(value) ? value : 'unknown';
}

export async function handlePreCompact(ctx: HookContext, background = true): Promise<HookOutcome> {
  const { input, log, streams } = ctx;
  const transcript = stringField(input, 'transcript_path');
  const sessionId = stringField(input, 'session_id');
  const trigger = plainTrigger(stringField(input, 'trigger'));
  if (!transcript) {
    log.warn('pre-compact: no transcript_path in the hook input; nothing captured', { sessionId });
    return { code: 0 };
  }
  const identity = fileIdentity(transcript);
  if (!identity) {
    log.warn('pre-compact: transcript not found; nothing captured', { transcript, sessionId });
    return { code: 0 };
  }
  const path = statePath(ctx.dataDir, 'capture', sessionKey(sessionId, transcript));
  const stored = readState(path) as Partial<StoredCapture> | null;
  const from = stored && stored.ino === identity.ino && typeof stored.offset === 'number' && stored.offset <= identity.size ? stored.offset : 0;

  // The most recent statements, at most MAX_STATEMENTS_PER_CAPTURE, in transcript order.
  const kept: MemoryInput[] = [];
  let dropped = 0;
  const metadata = { source: 'pre-compact-hook', trigger, origin: 'user' as const, ...(sessionId ? { sessionId: sessionId.slice(0, 512) } : {}) };
  const take = (line: string) => {
    const entry = parseTranscriptLine(line);
    const text = entry ? userAuthoredText(entry) : null;
    if (!entry || text === null) return;
    const at = entryTimestamp(entry);
    for (const s of extractStatements(text)) {
      kept.push({ text: s.text, kind: s.kind, importance: s.importance, metadata, ...(at ? { createdAt: at } : {}) });
      if (kept.length > MAX_STATEMENTS_PER_CAPTURE) {
        kept.shift();
        dropped++;
      }
    }
  };
  let read;
  try {
    read = await readLines(transcript, {
      from,
      wanted: (b) => (b.includes(USER) || b.includes(QUEUED)) && !b.includes(TOOL_RESULT),
      onLine: take,
    });
  } catch (err) {
    log.error('pre-compact: cannot read the transcript; nothing captured', { transcript, error: (err as Error).message });
    return { code: 0 };
  }
  let offset = read.endOffset;
  if (read.tail !== null && parseTranscriptLine(read.tail)) {
    if (!isToolResultLine(read.tail)) take(read.tail);
    offset = read.size;
  }

  const job: CaptureJob = {
    version: 1,
    dataDir: ctx.dataDir,
    statePath: path,
    ino: identity.ino,
    from,
    offset,
    cwd: stringField(input, 'cwd') ?? streams.cwd,
    flags: { db: ctx.dbPath, namespace: streams.flags?.namespace },
    sessionId,
    trigger,
    linesSkippedTooLong: read.linesSkippedTooLong,
    dropped,
    inputs: kept,
  };
  const config = kept.length === 0 || !background ? null : await resolvedConfig(job, streams.env);
  if (!config || config.embedder.provider !== 'use') {
    await runCaptureJob(job, streams.env, log);
    return { code: 0 };
  }
  // Embedding with the local model takes seconds (far more on a busy machine): compaction does not wait
  // for it. A detached worker saves the statements and then records the position. The job file is the
  // only copy of the statements on disk outside the database: secrets are redacted before it is written.
  const spool = capturePath(path, process.pid, Date.now());
  try {
    writeState(spool, { ...job, inputs: redactTexts(job.inputs, config.security.redaction) });
    const child = spawn(process.execPath, [fileURLToPath(new URL('./capture-worker.js', import.meta.url)), spool], {
      cwd: ctx.dataDir,
      env: streams.env,
      detached: true,
      stdio: 'ignore',
    });
    child.on('error', (err) => log.error('pre-compact: the capture worker did not start', { error: err.message }));
    child.unref();
    log.debug('pre-compact: statements handed to the capture worker', { sessionId, statements: kept.length, pid: child.pid });
  } catch (err) {
    log.warn('pre-compact: cannot start the capture worker; saving here', { error: (err as Error).message });
    await runCaptureJob(job, streams.env, log);
  }
  return { code: 0 };
}

/** The configuration the save will use: the local model means a background worker, and how to redact. */
async function resolvedConfig(job: CaptureJob, env: NodeJS.ProcessEnv) {
  const { resolveConfig } = await import('../open-engine.js');
  return resolveConfig(job.flags, { env, cwd: job.cwd });
}

/** Everything a capture needs to finish in another process: what to save, and the position to record after. */
export interface CaptureJob {
  version: 1;
  dataDir: string;
  /** The session's capture state file. */
  statePath: string;
  ino: number;
  from: number;
  /** Where the next capture starts, once these statements are saved. */
  offset: number;
  cwd: string;
  flags: { db?: string | undefined; namespace?: string | undefined };
  sessionId: string | null;
  trigger: string;
  linesSkippedTooLong: number;
  dropped: number;
  inputs: MemoryInput[];
}

/**
 * Saves a capture and records the position: only after the statements are saved, and never moving it
 * back (another capture may have gone further meanwhile). When saving fails the position stays, so the
 * next capture retries; the engine's dedupe makes that harmless.
 */
export async function runCaptureJob(job: CaptureJob, env: NodeJS.ProcessEnv, log: Logger): Promise<void> {
  const { sessionId, trigger, from, offset } = job;
  let report: CaptureReport = { statements: job.inputs.length, saved: 0, duplicates: 0, held: 0, refused: 0, dropped: job.dropped };
  if (job.inputs.length > 0) {
    try {
      report = { ...report, ...(await save(job, env, log)) };
    } catch (err) {
      log.error('pre-compact: saving failed; nothing captured this time', { sessionId, error: (err as Error).message, code: isCairnError(err) ? err.code : undefined });
      return;
    }
  }
  try {
    const stored = readState(job.statePath) as Partial<StoredCapture> | null;
    const further = stored && stored.ino === job.ino && typeof stored.offset === 'number' && stored.offset > offset;
    if (!further) writeState(job.statePath, { ino: job.ino, offset } satisfies StoredCapture);
  } catch (err) {
    log.warn('pre-compact: cannot save the capture position; the next capture rereads the transcript', { path: job.statePath, error: (err as Error).message });
  }
  log.info('pre-compact: captured', { sessionId, trigger, from, to: offset, linesSkippedTooLong: job.linesSkippedTooLong, ...report });
}

/** Saves through the engine (which deduplicates), in batches; without the model when it cannot load. */
async function save(job: CaptureJob, env: NodeJS.ProcessEnv, log: Logger): Promise<Pick<CaptureReport, 'saved' | 'duplicates' | 'held' | 'refused'>> {
  const { openEngine } = await import('../open-engine.js');
  const inputs = job.inputs;
  const environment = { env, cwd: job.cwd };
  const flags = job.flags;
  let opened = await openEngine(flags, { logger: log }, environment);
  let saved = 0;
  let duplicates = 0;
  let held = 0;
  let refused = 0;
  const count = (results: SaveResult[]) => {
    for (const r of results) r.duplicate ? duplicates++ : saved++;
  };
  try {
    for (let i = 0; i < inputs.length; i += SAVE_BATCH) {
      const batch = inputs.slice(i, i + SAVE_BATCH);
      try {
        count(await opened.engine.saveMany(batch));
      } catch (err) {
        if (isCairnError(err) && err.code === 'EMBEDDER_UNAVAILABLE' && opened.engine.embedder) {
          log.warn('pre-compact: the embedder is unavailable; saving without vectors (cairn reindex adds them later)', { error: err.message });
          await opened.close();
          opened = await openEngine(flags, { logger: log, withoutEmbedder: true }, environment);
          i -= SAVE_BATCH;
          continue;
        }
        if (isCairnError(err) && (err.code === 'STORE_UNAVAILABLE' || err.code === 'EMBEDDER_MISMATCH' || err.code === 'INTEGRITY')) throw err;
        // One statement refused (or held for review by the ingest filter) must not lose the batch: save one
        // by one and count the others.
        for (const one of batch) {
          try {
            count(await opened.engine.saveMany([one]));
          } catch (e) {
            if (isCairnError(e) && e.code === 'QUARANTINED') {
              held++;
              // The hook has no caller to answer: the log is where a held statement's id and reasons go (the
              // message never repeats the text).
              log.warn('pre-compact: a statement was held for review', { error: e.message });
            } else {
              refused++;
              log.warn('pre-compact: a statement was not saved', { error: (e as Error).message });
            }
          }
        }
      }
    }
  } finally {
    await opened.close();
  }
  return { saved, duplicates, held, refused };
}
