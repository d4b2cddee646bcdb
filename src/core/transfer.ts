// JSON lines in and out: import (validated line by line, held lines reported) and export.
import { CairnError, isCairnError } from '../interfaces/errors.js';
import type { Memory, MemoryInput } from '../interfaces/memory.js';
import { isActive } from '../interfaces/memory.js';
import { jsonTooDeep, MAX_JSON_DEPTH, notJsonProblem } from './text.js';
import type { EngineContext, ProgressFn, SaveOutcome } from './engine-context.js';
import { prepare, saveScreened } from './write-path.js';

export interface ImportRecord extends MemoryInput {
  externalId?: string;
}

export interface ImportCounts {
  imported: number;
  duplicate: number;
  rejected: number;
  errors: { line: number; message: string }[];
  /** Lines the ingest filter held for review (not stored; see `cairn quarantine list`). */
  quarantined: { line: number; id: string; score: number }[];
}

/** Failures of the store itself, as opposed to a bad input: no later write can succeed either. */
const STORAGE_FAILURES: ReadonlySet<string> = new Set(['STORE_UNAVAILABLE', 'INTEGRITY', 'INTERNAL', 'EMBEDDER_UNAVAILABLE']);

/** Imported lines record no likely-replaces relation, whether they land in a batch or one at a time. */
const IMPORT_WRITE = { partial: true, recordLikelyReplaces: false } as const;

/**
 * Imports JSON lines (one object a line: text plus optional namespace, kind, tags, importance, createdAt,
 * externalId, metadata). Bad lines are reported with their line number and skipped; good ones are kept.
 */
export async function importLines(ctx: EngineContext, lines: AsyncIterable<string> | Iterable<string>, onProgress?: ProgressFn, batchSize = 64): Promise<ImportCounts> {
  const counts: ImportCounts = { imported: 0, duplicate: 0, rejected: 0, errors: [], quarantined: [] };
  let batch: { line: number; input: MemoryInput }[] = [];
  let seen = 0;
  const tally = (o: SaveOutcome, line: number) => {
    if ('quarantined' in o) counts.quarantined.push({ line, id: o.quarantined.id, score: o.quarantined.score });
    else if (o.duplicate) counts.duplicate++;
    else counts.imported++;
  };
  /**
   * A line is rejected for what it says; a failure of the store (read-only, disk full, damaged) would fail
   * every line alike, so it stops the import with one error naming where it stopped.
   */
  const stopOnStorageFailure = (err: unknown, line: number) => {
    if (!isCairnError(err) || !STORAGE_FAILURES.has(err.code)) return;
    throw new CairnError(err.code, `import stopped at line ${line} (${counts.imported} imported before it): ${err.message}`, { cause: err, ...(err.hint ? { hint: err.hint } : {}) });
  };
  const flush = async () => {
    if (batch.length === 0) return;
    try {
      // Held lines are reported with their line number; the rest of the batch lands.
      const results = await saveScreened(ctx, batch.map((b) => b.input), IMPORT_WRITE);
      results.forEach((r, i) => tally(r, (batch[i] as { line: number }).line));
    } catch (err) {
      stopOnStorageFailure(err, batch[0]?.line ?? lineNo);
      // A batch failed as a whole (e.g. a supersede target missing): fall back to one line at a time.
      for (const b of batch) {
        try {
          const [r] = await saveScreened(ctx, [b.input], IMPORT_WRITE);
          if (r) tally(r, b.line);
        } catch (e) {
          stopOnStorageFailure(e, b.line);
          counts.rejected++;
          counts.errors.push({ line: b.line, message: (e as Error).message });
        }
      }
    }
    batch = [];
    onProgress?.(seen, null);
  };
  let lineNo = 0;
  for await (const raw of lines) {
    lineNo++;
    const line = raw.trim();
    if (line === '') continue;
    seen++;
    try {
      const input = parseImportLine(line);
      prepare(ctx, input); // validate now so the line number is reported
      batch.push({ line: lineNo, input });
    } catch (err) {
      counts.rejected++;
      counts.errors.push({ line: lineNo, message: err instanceof CairnError ? err.message : notJsonProblem(line) });
    }
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return counts;
}

/** Memories as JSON lines that `importLines` reads back (live ones by default). */
export async function* exportLines(ctx: EngineContext, options: { namespace?: string; includeInactive?: boolean } = {}): AsyncGenerator<string> {
  const namespace = ctx.ns(options.namespace);
  const now = ctx.now();
  for await (const page of ctx.store.iterateMemories(namespace, 500)) {
    for (const m of page) {
      if (!options.includeInactive && !isActive(m, now)) continue;
      yield JSON.stringify(toExportRecord(m));
    }
  }
}

/** One export line: what `import` needs to recreate the memory. */
export function toExportRecord(m: Memory): Record<string, unknown> {
  const rec: Record<string, unknown> = { text: m.text, namespace: m.namespace, kind: m.kind, importance: m.importance, tags: m.tags, createdAt: m.createdAt };
  if (m.taskId) rec['taskId'] = m.taskId;
  if (m.route) rec['route'] = m.route;
  if (m.expiresAt) rec['expiresAt'] = m.expiresAt;
  const { externalId, ...rest } = m.metadata;
  rec['externalId'] = externalId ?? m.id;
  if (Object.keys(rest).length) rec['metadata'] = rest;
  return rec;
}

const IMPORT_KEYS = new Set(['text', 'namespace', 'kind', 'tags', 'importance', 'createdAt', 'externalId', 'metadata', 'taskId', 'route', 'expiresAt']);

export function parseImportLine(line: string): MemoryInput {
  if (jsonTooDeep(line)) throw new CairnError('INVALID_INPUT', `nested more than ${MAX_JSON_DEPTH} levels deep; a memory record needs three`);
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new CairnError('INVALID_INPUT', notJsonProblem(line));
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CairnError('INVALID_INPUT', 'each line must be a JSON object');
  }
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (!IMPORT_KEYS.has(key)) throw new CairnError('INVALID_INPUT', `${key}: unknown field; allowed: ${[...IMPORT_KEYS].join(', ')}`, { field: key });
  }
  const metadata = { ...((obj['metadata'] as Record<string, unknown> | undefined) ?? {}) };
  if (obj['externalId'] !== undefined) metadata['externalId'] = obj['externalId'];
  metadata['source'] ??= 'import';
  const input: MemoryInput = { text: obj['text'] as string, metadata: metadata as MemoryInput['metadata'] };
  for (const key of ['namespace', 'kind', 'tags', 'importance', 'createdAt', 'taskId', 'route', 'expiresAt'] as const) {
    if (obj[key] !== undefined) (input as unknown as Record<string, unknown>)[key] = obj[key];
  }
  return input;
}

