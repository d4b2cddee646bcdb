import { isCairnError } from '../interfaces/errors.js';
import type { Memory } from '../interfaces/memory.js';
import type { MemoryFolder } from '../interfaces/sync.js';
import { fileHash, idOfFileName, memoryFileName, parseMemoryFile, renderMemoryFile, type MemoryFile } from './memory-file.js';

/**
 * `cairn sync`: the namespace's live memories as one Markdown file each in the repository (memory-file.ts),
 * and what others committed there read back. Three versions of each memory are compared: the file, the
 * memory in the store, and the base (the file's text after this clone's last sync). A side that differs
 * from the base changed; the other side takes the change:
 *
 *   - a file with no memory of its id → imported with its id (a second clone gets the same ids);
 *   - a file edited since the base → its memory is superseded (new text) or updated (kind, tags, importance);
 *   - a file deleted since the base → its memory is forgotten (reversibly);
 *   - a memory new, changed, forgotten or replaced since the base → the file is written or removed;
 *   - both changed → a conflict: reported, nothing of either side touched, until `resolve` picks a side.
 *
 * Imports and edits go through the engine's write path, so redaction and the ingest filter apply as to any
 * write: a held text is reported with its quarantine id and not imported.
 */

export type SyncSide = 'file' | 'memory';

export type ImportOutcome = { imported: Memory } | { held: string } | { duplicateOf: string } | { error: string };

/** Files imported per batch (one embedding call and one transaction each). */
const IMPORT_BATCH = 200;
/** Files written at once. */
const WRITE_BATCH = 64;

/** The engine operations a sync needs (each one is a normal, event-logged write). */
export interface SyncOps {
  /** The memories that belong in the folder: live and of the repository tier. */
  live(): Promise<Memory[]>;
  get(id: string): Promise<Memory | null>;
  /** Imports files as new memories with their ids, in one batch; one outcome per file, in order. */
  importFiles(files: MemoryFile[]): Promise<ImportOutcome[]>;
  /** Applies an edited file: supersedes on a new text, updates kind/tags/importance otherwise. */
  applyEdit(memory: Memory, file: MemoryFile): Promise<{ memory: Memory; superseded: boolean } | { held: string }>;
  forget(id: string, reason: string): Promise<void>;
}

export interface SyncReport {
  folder: string;
  /** Files written or rewritten from memory. */
  written: string[];
  /** Files removed because their memory was forgotten or replaced here. */
  removed: string[];
  /** Files imported as new memories (with their ids). */
  imported: string[];
  /** Memories replaced because their file's text was edited: old id → new id. */
  superseded: { old: string; new: string }[];
  /** Memories whose kind, tags or importance were taken from their edited file. */
  updated: string[];
  /** Memories forgotten because their file was deleted. */
  forgotten: string[];
  /** Files the ingest filter held (not imported): memory id → quarantine entry id. */
  held: { id: string; quarantine: string }[];
  /** Both sides changed (or a file and memory disagree with no base to decide): nothing was touched. */
  conflicts: { id: string; reason: string }[];
  /** Files that could not be read as memory files. */
  invalid: { file: string; message: string }[];
  unchanged: number;
}

export const SYNC_FORGET_REASON = 'its file was deleted from .cairn/ in the repository';

export async function syncFolder(folder: MemoryFolder, ops: SyncOps, resolve: ReadonlyMap<string, SyncSide> = new Map()): Promise<SyncReport> {
  const report: SyncReport = { folder: folder.location, written: [], removed: [], imported: [], superseded: [], updated: [], forgotten: [], held: [], conflicts: [], invalid: [], unchanged: 0 };
  const [texts, storedBase] = await Promise.all([folder.read(), folder.readBase()]);
  const base: Record<string, string> = { ...(storedBase ?? {}) };
  const files = new Map<string, { text: string; hash: string; file: MemoryFile }>();
  for (const [name, text] of texts) {
    const id = idOfFileName(name);
    if (!id) continue;
    try {
      files.set(id, { text, hash: fileHash(text), file: parseMemoryFile(name, text) });
    } catch (err) {
      report.invalid.push({ file: name, message: (err as Error).message });
    }
  }
  const invalidIds = new Set(report.invalid.map((i) => idOfFileName(i.file)));

  // 1. Files others added: imported in id order, so a file that supersedes an older one finds it.
  let live = new Map((await ops.live()).map((m) => [m.id, m]));
  const fresh: string[] = [];
  for (const id of [...files.keys()].sort()) if (!live.has(id) && !(await ops.get(id))) fresh.push(id);
  for (let i = 0; i < fresh.length; i += IMPORT_BATCH) {
    const batch = fresh.slice(i, i + IMPORT_BATCH);
    const outcomes = await ops.importFiles(batch.map((id) => (files.get(id) as { file: MemoryFile }).file));
    batch.forEach((id, k) => {
      const r = outcomes[k] as ImportOutcome;
      if ('imported' in r) {
        report.imported.push(id);
        base[memoryFileName(id)] = (files.get(id) as { hash: string }).hash;
      } else if ('held' in r) report.held.push({ id, quarantine: r.held });
      else if ('duplicateOf' in r) report.conflicts.push({ id, reason: `the same text is already memory ${r.duplicateOf}` });
      else report.invalid.push({ file: memoryFileName(id), message: r.error });
    });
  }

  // 2. Every other memory and file, against the base.
  live = new Map((await ops.live()).map((m) => [m.id, m]));
  const ids = new Set<string>([...live.keys(), ...files.keys(), ...Object.keys(base).flatMap((n) => idOfFileName(n) ?? [])]);
  // Writes are queued and flushed in batches (writing 10,000 files one after another is I/O-latency bound).
  let pending: Promise<void>[] = [];
  const write = async (m: Memory) => {
    const text = renderMemoryFile(m);
    pending.push(folder.write(memoryFileName(m.id), text));
    base[memoryFileName(m.id)] = fileHash(text);
    report.written.push(m.id);
    if (pending.length >= WRITE_BATCH) {
      await Promise.all(pending);
      pending = [];
    }
  };
  for (const id of [...ids].sort()) {
    if (invalidIds.has(id) || report.held.some((h) => h.id === id)) continue;
    const name = memoryFileName(id);
    const f = files.get(id);
    const m = live.get(id);
    const b = base[name];
    const side = resolve.get(id);
    if (f && m) {
      const rendered = renderMemoryFile(m);
      const dh = fileHash(rendered);
      if (f.hash === dh) {
        base[name] = dh;
        if (!report.imported.includes(id)) report.unchanged++;
        continue;
      }
      const pick: SyncSide | null = side ?? (b === dh ? 'file' : b === f.hash ? 'memory' : null);
      if (pick === 'memory') await write(m);
      else if (pick === 'file') {
        const r = await ops.applyEdit(m, f.file).catch((err: unknown) => {
          if (isCairnError(err)) return { error: err.message };
          throw err;
        });
        if ('error' in r) report.invalid.push({ file: name, message: r.error });
        else if ('held' in r) report.held.push({ id, quarantine: r.held });
        else if (r.superseded) {
          await write(r.memory);
          await folder.remove(name);
          delete base[name];
          report.superseded.push({ old: id, new: r.memory.id });
        } else {
          await write(r.memory);
          report.updated.push(id);
        }
      } else report.conflicts.push({ id, reason: b === undefined ? 'the file and the memory differ and this clone never synced them' : 'changed in the file and in memory since the last sync' });
    } else if (m) {
      const rendered = renderMemoryFile(m);
      if (b === undefined || side === 'memory') await write(m);
      else if (b === fileHash(rendered) || side === 'file') {
        await ops.forget(id, SYNC_FORGET_REASON);
        delete base[name];
        report.forgotten.push(id);
      } else report.conflicts.push({ id, reason: 'its file was deleted, and the memory changed since the last sync' });
    } else if (f) {
      const stored = await ops.get(id);
      if (!stored) continue; // an import that did not happen (reported above)
      if (stored.code?.branch && stored.forgottenAt === null && stored.supersededBy === null) continue; // kept to a branch
      if (b === f.hash || side === 'memory') {
        await folder.remove(name);
        delete base[name];
        report.removed.push(id);
      } else report.conflicts.push({ id, reason: 'its file changed, and the memory was forgotten or replaced here since the last sync' });
    } else if (b !== undefined) delete base[name];
  }
  await Promise.all(pending);
  await folder.writeBase(base);
  return report;
}
