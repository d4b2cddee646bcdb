// One SQLite connection and what every part of the store shares: opening (refusing foreign or damaged files,
// read-only fallbacks, migrations), the statement cache, the in-process write mutex, retries while another
// process holds the write lock, and the one translation of driver errors into CairnError.
import type { PostingCacheConfig } from './sqlite-postings.js';
import {
  accessSync,
  closeSync,
  constants as fsConstants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { CairnError } from '../../interfaces/errors.js';
import type { EmbedderInfo } from '../../interfaces/store.js';
import { applyPageSize, MIGRATION_FOLLOW_UPS, MIGRATIONS, PAGE_SIZE, reanalysePage, SCHEMA_VERSION } from './sqlite-schema.js';
import { SqliteVectorIndex, type SqliteVectorIndexConfig } from './sqlite-vector-index.js';
import { vectorTableName } from './sqlite-vector-table.js';

export interface SqliteStoreConfig {
  /** Path of the database file; created with its folder when missing. `:memory:` for a throwaway store. */
  path: string;
  /** How long one SQLite call waits for another process's lock, blocking the thread, in ms. Default 100. */
  busyTimeoutMs?: number;
  /** Total time a write keeps retrying on a busy database before failing STORE_UNAVAILABLE. Default 60 s. */
  maxBusyWaitMs?: number;
  /**
   * The quantised vector index (int8 codes scanned with usearch, saved as `<path>.usearch`), or false for exhaustive search
   * only. Never used for `:memory:` or a store this process cannot write.
   */
  vectorIndex?: SqliteVectorIndexConfig | false;
  /** Page size of a new database file (older files are converted when small, see applyPageSize). Default 16 KB. */
  pageSize?: number;
  /**
   * BM25 from posting lists kept in memory (sqlite-postings.ts) instead of FTS5 scoring every match: for
   * long-lived processes, whose searches share the lists. Off by default (a first search reads its terms' lists).
   */
  postingCache?: PostingCacheConfig | boolean;
}

/** Measured: two writers in one server took 10.1 s with 5,000 ms (timers stalled) and 0.25 s with 100 ms. */
const DEFAULT_BUSY_TIMEOUT_MS = 100;

/** How much of the database file reads map (SQLite caps it at its compile-time limit, 2 GB here). */
const MMAP_BYTES = 1024 * 1024 * 1024;

/**
 * Where SQLite keeps its transient files, set after the migrations. A statement that fires triggers (a save's
 * memory row and its event each do) keeps the pages it changes in a statement journal, which only undoes that
 * statement inside its transaction; with 16 KB pages it passes SQLite's 64 KB in-memory limit, so every save
 * created, wrote and deleted two temporary files (seen with strace). In memory they cost nothing of that; the WAL
 * keeps a crash safe exactly as before. Sorts without an index are then held in memory too (at 1M memories, the
 * usage report's GROUP BY of every live memory: tens of MB). VACUUM, the erasure's compaction and bulk
 * transactions (reindex, recover: one statement updating every row keeps a statement journal the size of the
 * table) switch back to files (`withTempFiles`).
 */
const TEMP_STORE = 'MEMORY';

const SQLITE_HEADER = 'SQLite format 3\0';


/** Translates a driver error into a CairnError (the one place this adapter does so). */
export function translate(err: unknown, what: string): CairnError {
  if (err instanceof CairnError) return err;
  const code = (err as { code?: string }).code ?? '';
  const message = (err as Error).message ?? String(err);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new CairnError('STORE_UNAVAILABLE', `${what}: the database stayed locked by another process`, { cause: err });
  }
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new CairnError('INTEGRITY', `${what}: the database file is damaged or not a cairn database (${message})`, { cause: err });
  }
  if (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_IOERR') || code === 'SQLITE_FULL') {
    return new CairnError('STORE_UNAVAILABLE', `${what}: ${message}`, { cause: err });
  }
  if (code.startsWith('SQLITE_CONSTRAINT')) {
    return new CairnError('CONFLICT', `${what}: ${message}`, { cause: err });
  }
  return new CairnError('INTERNAL', `${what}: ${message}`, { cause: err });
}

export function isBusy(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

/** Refuses to open a file that exists but is not an SQLite database, so it is never overwritten. */
function checkExistingFile(path: string): void {
  if (path === ':memory:' || !existsSync(path)) return;
  const st = statSync(path);
  if (st.isDirectory()) throw new CairnError('INVALID_INPUT', `database path ${path} is a directory`, { field: 'db' });
  if (st.size === 0) return;
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(18);
    const n = readSync(fd, buf, 0, 18, 0);
    if (n < 18 || buf.toString('latin1', 0, 16) !== SQLITE_HEADER) {
      throw new CairnError('INTEGRITY', `${path} is not an SQLite database (its header is wrong); cairn left it untouched`, {
        hint: 'point --db / CAIRN_DB at a cairn database or a new path',
      });
    }
    // SQLite writes whole pages only; a size that is not a multiple of the page size is a truncated file,
    // which SQLite itself would open and read as zeros.
    const pageSize = buf.readUInt16BE(16) === 1 ? 65536 : buf.readUInt16BE(16);
    if (st.size % pageSize !== 0) {
      throw new CairnError('INTEGRITY', `${path} is truncated or damaged (${st.size} bytes is not a whole number of ${pageSize}-byte pages); cairn left it untouched`, {
        hint: 'restore the database from a backup, or point --db / CAIRN_DB at a new path',
      });
    }
  } finally {
    closeSync(fd);
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, fsConstants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * How an existing file that this process may not write is opened for reading. SQLite reads a WAL database
 * only through its `-shm` file; in a folder it cannot write, with no `-shm` left there, a private copy in a
 * temporary folder (mode 0700) is read instead and removed on close.
 */
function readOnlySource(path: string): { path: string; cleanup: () => void } | null {
  if (path === ':memory:' || !existsSync(path)) return null;
  const dirWritable = writable(dirname(path));
  if (writable(path) && dirWritable) return null;
  if (dirWritable || existsSync(`${path}-shm`)) return { path, cleanup: () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'cairn-readonly-'));
  const copy = join(dir, 'cairn.db');
  copyFileSync(path, copy);
  if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${copy}-wal`);
  return { path: copy, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const prev = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    await prev;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * What a write transaction of this connection changed, as far as the read caches care (SqliteSearch's term
 * counts, SqliteMemories' ranking fields): recorded by the transaction's operations, handed to `onCommit`
 * listeners when it commits, dropped when it rolls back.
 */
export interface WriteEffects {
  /** Memories whose row was updated or deleted. */
  changed: Set<string>;
  /** New memories with their full-text row and terms: each adds one document to its namespace. */
  inserted: { rowid: number; namespace: string; terms: readonly string[] }[];
  /** Namespaces whose documents or full-text rows changed otherwise (re-indexed, deleted, moved, cleared). */
  recounted: Set<string>;
}

function noEffects(): WriteEffects {
  return { changed: new Set(), inserted: [], recounted: new Set() };
}

/**
 * The open database shared by the store's parts. `vectorDims` is the dimension of the vector index (null
 * while there is none).
 */
export class SqliteConnection {
  readonly location: string;
  readonly db: Database.Database;

  readonly mutex = new Mutex();

  readonly maxBusyWaitMs: number;

  vectorDims: number | null = null;

  closed = false;

  constructor(config: SqliteStoreConfig) {
    this.location = config.path;
    this.maxBusyWaitMs = config.maxBusyWaitMs ?? 60_000;
    checkExistingFile(config.path);
    if (config.path !== ':memory:') {
      try {
        mkdirSync(dirname(config.path), { recursive: true });
      } catch (err) {
        throw new CairnError('STORE_UNAVAILABLE', `cannot create the folder of ${config.path}: ${(err as Error).message}`, { cause: err });
      }
    }
    let source: { path: string; cleanup: () => void } | null = null;
    try {
      source = readOnlySource(config.path);
      this.readOnly = source !== null;
      this.cleanup = source?.cleanup ?? (() => {});
      this.db = source ? new Database(source.path, { readonly: true, fileMustExist: true }) : new Database(config.path);
    } catch (err) {
      source?.cleanup();
      throw translate(err, `opening ${config.path}`);
    }
    try {
      // Short: SQLite's busy handler sleeps on the thread, which would stall a server's event loop. Writes
      // retry in whileBusy instead, asynchronously, up to maxBusyWaitMs.
      this.db.pragma(`busy_timeout = ${config.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS}`);
      sqliteVec.load(this.db);
      // Each step reads or writes the file, and another process opening, migrating or closing it (the last
      // connection's checkpoint) may hold it longer than the busy timeout; every step is idempotent, so the whole
      // sequence is retried as one, not only the steps known to write.
      this.retrySync(() => this.prepareFile(config));
      const indexed = config.vectorIndex !== false && !this.readOnly && config.path !== ':memory:';
      this.vectorIndex = indexed ? new SqliteVectorIndex((sql) => this.stmt(sql), config.path, config.vectorIndex || {}) : null;
    } catch (err) {
      this.db.close();
      this.cleanup();
      throw translate(err, `opening ${config.path}`);
    }
  }

  /** The open sequence after the driver's open: WAL, pragmas, migrations, the vector table's dimension. */
  private prepareFile(config: SqliteStoreConfig): void {
    this.refuseForeignDatabase(config.path);
    if (!this.readOnly) {
      if (config.path !== ':memory:') applyPageSize(this.db, existsSync(config.path) ? statSync(config.path).size : 0, config.pageSize ?? PAGE_SIZE);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
    }
    this.db.pragma('foreign_keys = ON');
    // Reads through a memory map instead of copying each 16 KB page into SQLite's cache (about 16 MB by default): a search looks
    // up several hundred scattered rows (vector blobs to rescore, candidates to load), and at 100k memories
    // that halved the time of both (4.4 against 8.6 ms for 450 rescored rows). Mapped pages are the OS's file
    // cache, shared and reclaimable, but counted in the process's resident size once touched.
    if (config.path !== ':memory:') this.db.pragma(`mmap_size = ${MMAP_BYTES}`);
    this.migrate();
    // Migration 13's re-analysis, a page per write transaction (resumed here after a crash).
    if (!this.readOnly) while (!reanalysePage(this.db));
    if (!this.readOnly && config.path !== ':memory:') this.db.pragma(`temp_store = ${TEMP_STORE}`);
    this.loadVectorInfo();
  }

  /** The approximate vector index, or null when this store searches exhaustively only. */
  readonly vectorIndex: SqliteVectorIndex | null = null;

  /** True when this process may not write the file: reads work, every write fails STORE_UNAVAILABLE. */
  readonly readOnly: boolean;

  readonly cleanup: () => void;

  refuseWrite(what: string): void {
    if (this.readOnly) {
      throw new CairnError('STORE_UNAVAILABLE', `${what}: ${this.location} is read-only for this process; cairn can read it but not write to it`, {
        hint: 'check the permissions of the file and its folder',
      });
    }
  }

  readonly statements: Map<string, Database.Statement> = new Map();

  /** A prepared statement, compiled once per SQL text (preparing dominates small queries otherwise). */
  stmt(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) {
      if (this.statements.size > 1000) this.statements.clear();
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }

  retrySync<T>(fn: () => T): T {
    const deadline = Date.now() + this.maxBusyWaitMs;
    for (;;) {
      try {
        return fn();
      } catch (err) {
        if (!isBusy(err) || Date.now() > deadline) throw err;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20 + Math.random() * 30);
      }
    }
  }

  private migrate(): void {
    if (this.readOnly) {
      const has = this.stmt(`SELECT 1 FROM sqlite_master WHERE name = 'schema_version'`).get();
      const v = has ? ((this.stmt('SELECT MAX(version) AS v FROM schema_version').get() as { v: number | null }).v ?? 0) : 0;
      if (v === SCHEMA_VERSION) return;
      throw new CairnError('STORE_UNAVAILABLE', `${this.location} is read-only and at schema version ${v}; this cairn needs ${SCHEMA_VERSION}`, {
        hint: 'open it once with write access so cairn can upgrade it',
      });
    }
    const current = (): number => {
      this.db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL)');
      const row = this.stmt('SELECT MAX(version) AS v FROM schema_version').get() as { v: number | null };
      return row.v ?? 0;
    };
    const quick = current();
    if (quick > SCHEMA_VERSION) {
      throw new CairnError('UNSUPPORTED', `database schema version ${quick} is newer than this cairn understands (${SCHEMA_VERSION})`, {
        hint: 'upgrade cairn',
      });
    }
    if (quick === SCHEMA_VERSION) return;
    this.db.exec('BEGIN IMMEDIATE');
    try {
      let v = current(); // re-read under the write lock: another process may have migrated meanwhile
      for (; v < SCHEMA_VERSION; v++) {
        this.db.exec(MIGRATIONS[v] as string);
        MIGRATION_FOLLOW_UPS.get(v + 1)?.(this.db);
        this.stmt('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)').run(v + 1, new Date().toISOString());
      }
      this.db.exec('COMMIT');
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
  }

  /**
   * Another program's SQLite file is left exactly as it is: a database that holds tables but no cairn
   * `schema_version` is refused before anything (WAL mode, migrations) writes to it. Only an empty database
   * or one cairn created is opened.
   */
  private refuseForeignDatabase(path: string): void {
    const tables = (this.db.prepare(`SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name`).all() as { name: string }[]).map((t) => t.name);
    if (tables.length === 0 || tables.includes('schema_version')) return;
    const shown = tables.slice(0, 5).join(', ') + (tables.length > 5 ? ', …' : '');
    throw new CairnError('INVALID_INPUT', `${path} is another program's SQLite database (tables ${shown}), not cairn's; cairn left it untouched`, {
      field: 'db',
      hint: 'point --db / CAIRN_DB at a cairn database or a new path',
    });
  }

  loadVectorInfo(): void {
    const row = this.stmt(`SELECT value FROM meta WHERE key = 'embedder'`).get() as { value: string } | undefined;
    const dims = row ? (JSON.parse(row.value) as EmbedderInfo).dimensions : null;
    this.vectorDims = dims !== null && this.hasVectorTable(dims) ? dims : null;
  }

  /** Runs `fn` with SQLite's transient files on disk, as SQLite's default has them. Call outside a transaction. */
  async withTempFiles<T>(fn: () => Promise<T>): Promise<T> {
    this.db.pragma('temp_store = FILE');
    try {
      return await fn();
    } finally {
      this.db.pragma(`temp_store = ${TEMP_STORE}`);
    }
  }

  /** Whether the vector table of this dimension exists (prepareVectors made it). */
  hasVectorTable(dimensions: number): boolean {
    return this.stmt(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(vectorTableName(dimensions)) !== undefined;
  }

  /** The vector table of the recorded embedder; only while `vectorDims` is set. */
  get vectorTable(): string {
    if (this.vectorDims === null) throw new CairnError('INTERNAL', 'no embedder recorded before using the vector table');
    return vectorTableName(this.vectorDims);
  }

  ensureOpen(): void {
    if (this.closed) throw new CairnError('STORE_UNAVAILABLE', 'the store is closed');
  }

  /** Runs a synchronous read, translating driver errors. */
  read<T>(what: string, fn: () => T): T {
    this.ensureOpen();
    try {
      return fn();
    } catch (err) {
      throw translate(err, what);
    }
  }

  /** `read` for a read that awaits (the vector index's scan in its worker). */
  async readAsync<T>(what: string, fn: () => Promise<T>): Promise<T> {
    this.ensureOpen();
    try {
      return await fn();
    } catch (err) {
      throw translate(err, what);
    }
  }

  /** A short write outside the event log (tokens, recall counts), retried while another process writes. */
  smallWrite(what: string, fn: () => void): Promise<void> {
    this.ensureOpen();
    this.refuseWrite(what);
    // Tokens and recall counts: no change to the full-text index, so the term counts stay valid.
    return this.mutex.run(() => this.whileBusy(what, fn));
  }

  /** Runs `fn`, retrying with backoff while another process holds the write lock, up to the busy budget. */
  async whileBusy(what: string, fn: () => void): Promise<void> {
    const deadline = Date.now() + this.maxBusyWaitMs;
    for (let attempt = 0; ; attempt++) {
      try {
        fn();
        return;
      } catch (err) {
        if (!isBusy(err) || Date.now() > deadline) throw translate(err, what);
        await sleep(Math.min(200, 10 * 2 ** Math.min(attempt, 4)) * (0.5 + Math.random()));
      }
    }
  }

  /** What the open write transaction changed so far (see WriteEffects). */
  effects: WriteEffects = noEffects();

  private readonly commitListeners: ((effects: WriteEffects) => void)[] = [];

  /** `listener` hears what each committed write transaction of this connection changed. */
  onCommit(listener: (effects: WriteEffects) => void): void {
    this.commitListeners.push(listener);
  }

  /** Starts recording a write transaction's effects. */
  beginEffects(): void {
    this.effects = noEffects();
  }

  /** The transaction committed: its effects go to the listeners (which only update caches and never throw). */
  committed(): void {
    const effects = this.effects;
    this.effects = noEffects();
    for (const listener of this.commitListeners) listener(effects);
  }

  /** The transaction rolled back: nothing it recorded happened. */
  rolledBack(): void {
    this.effects = noEffects();
  }

  /**
   * PRAGMA data_version: it changes when another connection (another process) commits, and never for this
   * connection's own commits. A cache kept across reads is dropped when it changed.
   */
  dataVersion(): number {
    return this.stmt('PRAGMA data_version').pluck().get() as number;
  }

  /**
   * Copies the write-ahead log into the file and truncates it, waiting (without blocking the event loop)
   * while readers of older snapshots still need it, up to the busy budget.
   */
  async checkpoint(): Promise<void> {
    const deadline = Date.now() + this.maxBusyWaitMs;
    for (let attempt = 0; ; attempt++) {
      let busy = 1;
      await this.whileBusy('checkpointing', () => {
        const rows = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
        busy = rows[0]?.busy ?? 0;
      });
      if (busy === 0 || Date.now() > deadline) return;
      await sleep(Math.min(200, 10 * 2 ** Math.min(attempt, 4)));
    }
  }

  /** Closes the database once no operation holds the mutex; later calls fail STORE_UNAVAILABLE. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.mutex.run(async () => {
      this.closed = true;
      this.vectorIndex?.close();
      this.db.close();
      this.cleanup();
    });
  }
}
