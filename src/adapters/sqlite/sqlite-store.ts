import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, closeSync, constants as fsConstants, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { CairnError } from '../../interfaces/errors.js';
import { isCurrent, type Memory, type MemoryKind, type StoreStats } from '../../interfaces/memory.js';
import type { QuarantineEntry, QuarantineListOptions } from '../../interfaces/quarantine.js';
import { vectorBytes, vectorFromBytes, vectorHash } from '../../core/checksum.js';
import type {
  AccessScope,
  AccessTokenRecord,
  CandidateFilter,
  EmbedderInfo,
  EventInput,
  LexicalHit,
  ListFilter,
  PendingErasure,
  RecallStats,
  ScopeInfo,
  SnapshotRecord,
  Store,
  StoreCapabilities,
  StoredEvent,
  StoreTx,
  VectorHit,
  VectorIndexCheck,
} from '../../interfaces/store.js';
import { applyPageSize, MIGRATIONS, PAGE_SIZE, SCHEMA_VERSION, vectorTableSql } from './sqlite-schema.js';
import { SqliteVectorIndex, type SqliteVectorIndexConfig } from './sqlite-vector-index.js';

export interface SqliteStoreConfig {
  /** Path of the database file; created with its folder when missing. `:memory:` for a throwaway store. */
  path: string;
  /** How long one SQLite call waits for another process's lock, blocking the thread, in ms. Default 100. */
  busyTimeoutMs?: number;
  /** Total time a write keeps retrying on a busy database before failing STORE_UNAVAILABLE. Default 60 s. */
  maxBusyWaitMs?: number;
  /**
   * The approximate vector index (usearch HNSW, saved as `<path>.usearch`), or false for exhaustive search
   * only. Never used for `:memory:` or a store this process cannot write.
   */
  vectorIndex?: SqliteVectorIndexConfig | false;
  /** Page size of a new database file (older files are converted when small, see applyPageSize). Default 16 KB. */
  pageSize?: number;
}

type Row = Record<string, unknown>;

/** Measured: two writers in one server took 10.1 s with 5,000 ms (timers stalled) and 0.25 s with 100 ms. */
const DEFAULT_BUSY_TIMEOUT_MS = 100;

const SQLITE_HEADER = 'SQLite format 3\0';

/** sqlite-vec's largest k in one KNN query. */
const MAX_KNN = 4096;

/** Translates a driver error into a CairnError (the one place this adapter does so). */
function translate(err: unknown, what: string): CairnError {
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

function isBusy(err: unknown): boolean {
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

/** A token standing for the namespace inside the full-text index, so BM25 queries stay in one namespace. */
function nsToken(namespace: string): string {
  return 'n' + createHash('sha256').update(namespace).digest('hex').slice(0, 24);
}

function quoteTerm(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}

function rowToMemory(r: Row): Memory {
  return {
    id: r['id'] as string,
    namespace: r['namespace'] as string,
    text: r['text'] as string,
    kind: r['kind'] as MemoryKind,
    importance: r['importance'] as number,
    tags: JSON.parse(r['tags'] as string) as string[],
    taskId: (r['task_id'] as string | null) ?? null,
    metadata: JSON.parse(r['metadata'] as string) as Memory['metadata'],
    route: r['route'] ? (JSON.parse(r['route'] as string) as Memory['route']) : null,
    createdAt: r['created_at'] as string,
    updatedAt: r['updated_at'] as string,
    expiresAt: (r['expires_at'] as string | null) ?? null,
    supersedes: (r['supersedes'] as string | null) ?? null,
    supersededBy: (r['superseded_by'] as string | null) ?? null,
    forgottenAt: (r['forgotten_at'] as string | null) ?? null,
    forgetReason: (r['forget_reason'] as string | null) ?? null,
    dedupeKey: r['dedupe_key'] as string,
    // Absent (not null) when unset, so memories without them keep their canonical form and checksum.
    ...(r['code'] ? { code: JSON.parse(r['code'] as string) as NonNullable<Memory['code']> } : {}),
    ...(r['feedback'] ? { feedback: JSON.parse(r['feedback'] as string) as NonNullable<Memory['feedback']> } : {}),
  };
}

function memoryParams(m: Memory): Row {
  return {
    id: m.id,
    namespace: m.namespace,
    text: m.text,
    kind: m.kind,
    importance: m.importance,
    tags: JSON.stringify(m.tags),
    task_id: m.taskId,
    metadata: JSON.stringify(m.metadata),
    route: m.route ? JSON.stringify(m.route) : null,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
    expires_at: m.expiresAt,
    supersedes: m.supersedes,
    superseded_by: m.supersededBy,
    forgotten_at: m.forgottenAt,
    forget_reason: m.forgetReason,
    dedupe_key: m.dedupeKey,
    code: m.code ? JSON.stringify(m.code) : null,
    feedback: m.feedback ? JSON.stringify(m.feedback) : null,
  };
}

function rowToEvent(r: Row): StoredEvent {
  return {
    gseq: r['gseq'] as number,
    namespace: r['namespace'] as string,
    seq: r['seq'] as number,
    type: r['type'] as string,
    memoryId: (r['memory_id'] as string | null) ?? null,
    payload: JSON.parse(r['payload'] as string) as unknown,
    at: r['at'] as string,
  };
}

function rowToSnapshot(r: Row): SnapshotRecord {
  return {
    scope: r['scope'] as string,
    version: r['version'] as number,
    seq: r['seq'] as number,
    blob: new Uint8Array(r['blob'] as Buffer),
    blobSha256: r['blob_sha256'] as string,
    checksum: r['checksum'] as string,
    engineVersion: r['engine_version'] as number,
    createdAt: r['created_at'] as string,
  };
}

/** isCurrent and isActive (interfaces/memory.ts) in SQL, over the alias `m`; `@now` is the time. */
const CURRENT_SQL = `m.forgotten_at IS NULL AND m.superseded_by IS NULL`;
const ACTIVE_SQL = `${CURRENT_SQL} AND (m.expires_at IS NULL OR m.expires_at > @now)`;

/** Counts the needles (JSON on stdin) found in the raw bytes of the files named in argv. */
const RAW_SCAN_SCRIPT = `
const fs = require('node:fs');
const needles = JSON.parse(fs.readFileSync(0, 'utf8'));
const contents = process.argv.slice(1).map((f) => fs.readFileSync(f));
process.stdout.write(String(needles.filter((n) => contents.some((c) => c.includes(Buffer.from(n, 'utf8')))).length));
`;

function rowToToken(r: Row): AccessTokenRecord {
  return {
    id: r['id'] as string,
    hash: r['hash'] as string,
    name: (r['name'] as string | null) ?? null,
    namespaces: JSON.parse(r['namespaces'] as string) as string[],
    scope: r['scope'] as AccessScope,
    createdAt: r['created_at'] as string,
    expiresAt: (r['expires_at'] as string | null) ?? null,
    revokedAt: (r['revoked_at'] as string | null) ?? null,
    lastUsedAt: (r['last_used_at'] as string | null) ?? null,
  };
}


/** WHERE fragments for kinds/tags/activity; parameters go into `params`. */
function filterSql(filter: { kinds?: MemoryKind[] | undefined; tags?: string[] | undefined; includeInactive?: boolean | undefined }, params: Row): string {
  const parts: string[] = [];
  if (!filter.includeInactive) parts.push(ACTIVE_SQL);
  if (filter.kinds && filter.kinds.length) {
    parts.push(`m.kind IN (${filter.kinds.map((k, i) => ((params[`kind${i}`] = k), `@kind${i}`)).join(', ')})`);
  }
  if (filter.tags && filter.tags.length) {
    parts.push(
      `EXISTS (SELECT 1 FROM json_each(m.tags) t WHERE t.value IN (${filter.tags.map((t, i) => ((params[`tag${i}`] = t), `@tag${i}`)).join(', ')}))`,
    );
  }
  return parts.length ? parts.join(' AND ') : '1';
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

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * The embedded store: one SQLite file with WAL, FTS5 for BM25 and sqlite-vec for cosine KNN. Several
 * processes share the file: writes take the database's write lock (BEGIN IMMEDIATE) and retry while another
 * process holds it, so no write is lost and SQLITE_BUSY never reaches the user before `maxBusyWaitMs`.
 */
export class SqliteStore implements Store {
  readonly capabilities: StoreCapabilities = { vectorSearch: true, fullText: true, concurrentWriters: true, serverSideFusion: false, erasureChecks: true };
  readonly location: string;
  private readonly db: Database.Database;
  private readonly mutex = new Mutex();
  private readonly maxBusyWaitMs: number;
  private vectorDims: number | null = null;
  private closed = false;

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
      this.refuseForeignDatabase(config.path);
      sqliteVec.load(this.db);
      if (!this.readOnly) {
        if (config.path !== ':memory:') applyPageSize(this.db, existsSync(config.path) ? statSync(config.path).size : 0, config.pageSize ?? PAGE_SIZE);
        this.retrySync(() => this.db.pragma('journal_mode = WAL'));
        this.db.pragma('synchronous = NORMAL');
      }
      this.db.pragma('foreign_keys = ON');
      this.migrate();
      this.loadVectorInfo();
      const indexed = config.vectorIndex !== false && !this.readOnly && config.path !== ':memory:';
      this.vectorIndex = indexed ? new SqliteVectorIndex((sql) => this.stmt(sql), config.path, config.vectorIndex || {}) : null;
    } catch (err) {
      this.db.close();
      this.cleanup();
      throw translate(err, `opening ${config.path}`);
    }
  }

  /** The approximate vector index, or null when this store searches exhaustively only. */
  readonly vectorIndex: SqliteVectorIndex | null = null;

  /** True when this process may not write the file: reads work, every write fails STORE_UNAVAILABLE. */
  readonly readOnly: boolean;
  private readonly cleanup: () => void;

  private refuseWrite(what: string): void {
    if (this.readOnly) {
      throw new CairnError('STORE_UNAVAILABLE', `${what}: ${this.location} is read-only for this process; cairn can read it but not write to it`, {
        hint: 'check the permissions of the file and its folder',
      });
    }
  }

  private readonly statements = new Map<string, Database.Statement>();

  /** A prepared statement, compiled once per SQL text (preparing dominates small queries otherwise). */
  private stmt(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) {
      if (this.statements.size > 1000) this.statements.clear();
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }

  private retrySync<T>(fn: () => T): T {
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
    const quick = this.retrySync(current);
    if (quick > SCHEMA_VERSION) {
      throw new CairnError('UNSUPPORTED', `database schema version ${quick} is newer than this cairn understands (${SCHEMA_VERSION})`, {
        hint: 'upgrade cairn',
      });
    }
    if (quick === SCHEMA_VERSION) return;
    this.retrySync(() => {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        let v = current(); // re-read under the write lock: another process may have migrated meanwhile
        for (; v < SCHEMA_VERSION; v++) {
          this.db.exec(MIGRATIONS[v] as string);
          this.stmt('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)').run(v + 1, new Date().toISOString());
        }
        this.db.exec('COMMIT');
      } catch (err) {
        this.db.exec('ROLLBACK');
        throw err;
      }
    });
  }

  /**
   * Another program's SQLite file is left exactly as it is: a database that holds tables but no cairn
   * `schema_version` is refused before anything (WAL mode, migrations) writes to it. Only an empty database
   * or one cairn created is opened.
   */
  private refuseForeignDatabase(path: string): void {
    const tables = this.retrySync(() => this.db.prepare(`SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name`).all() as { name: string }[]).map((t) => t.name);
    if (tables.length === 0 || tables.includes('schema_version')) return;
    const shown = tables.slice(0, 5).join(', ') + (tables.length > 5 ? ', …' : '');
    throw new CairnError('INVALID_INPUT', `${path} is another program's SQLite database (tables ${shown}), not cairn's; cairn left it untouched`, {
      field: 'db',
      hint: 'point --db / CAIRN_DB at a cairn database or a new path',
    });
  }

  private loadVectorInfo(): void {
    const row = this.stmt(`SELECT value FROM meta WHERE key = 'embedder'`).get() as { value: string } | undefined;
    const hasTable = this.stmt(`SELECT 1 FROM sqlite_master WHERE name = 'memories_vec'`).get();
    this.vectorDims = row && hasTable ? (JSON.parse(row.value) as EmbedderInfo).dimensions : null;
  }

  private ensureOpen(): void {
    if (this.closed) throw new CairnError('STORE_UNAVAILABLE', 'the store is closed');
  }

  /** Runs a synchronous read, translating driver errors. */
  private read<T>(what: string, fn: () => T): T {
    this.ensureOpen();
    try {
      return fn();
    } catch (err) {
      throw translate(err, what);
    }
  }

  async transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    this.ensureOpen();
    this.refuseWrite('writing');
    return this.mutex.run(async () => {
      await this.whileBusy('starting a write', () => this.db.exec('BEGIN IMMEDIATE'));
      const vectorDimsBefore = this.vectorDims;
      try {
        this.loadVectorInfo(); // another process may have created or reset the vector index
        const result = await fn(this.makeTx());
        this.db.exec('COMMIT');
        this.ownWrites++;
        return result;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        this.vectorDims = vectorDimsBefore;
        throw translate(err, 'writing');
      }
    });
  }

  private makeTx(): StoreTx {
    const db = this.db;
    return {
      getMemory: async (id) => this.getMemorySync(id),
      findLiveByDedupeKey: async (namespace, key) => {
        const r = this.stmt(`SELECT * FROM memories m WHERE m.namespace = ? AND m.dedupe_key = ? AND ${CURRENT_SQL}`)
          .get(namespace, key) as Row | undefined;
        return r ? rowToMemory(r) : null;
      },
      insertMemory: async (memory, vector, terms) => {
        const info = this.stmt(
            `INSERT INTO memories (id, namespace, text, kind, importance, tags, task_id, metadata, route, created_at, updated_at,
              expires_at, supersedes, superseded_by, forgotten_at, forget_reason, dedupe_key,
              code, feedback)
             VALUES (@id, @namespace, @text, @kind, @importance, @tags, @task_id, @metadata, @route, @created_at, @updated_at,
              @expires_at, @supersedes, @superseded_by, @forgotten_at, @forget_reason, @dedupe_key,
              @code, @feedback)`,
          )
          .run(memoryParams(memory));
        const rowid = BigInt(info.lastInsertRowid);
        this.stmt('INSERT INTO memories_fts (rowid, ns, terms) VALUES (?, ?, ?)').run(rowid, nsToken(memory.namespace), terms.join(' '));
        if (vector) this.writeVector(rowid, memory, vector);
      },
      updateMemory: async (memory, index) => {
        const row = this.stmt('SELECT rowid FROM memories WHERE id = ?').get(memory.id) as { rowid: number } | undefined;
        if (!row) throw new CairnError('NOT_FOUND', `no memory ${memory.id}`);
        const p = memoryParams(memory);
        this.stmt(
          `UPDATE memories SET namespace=@namespace, text=@text, kind=@kind, importance=@importance, tags=@tags, task_id=@task_id,
            metadata=@metadata, route=@route, created_at=@created_at, updated_at=@updated_at, expires_at=@expires_at,
            supersedes=@supersedes, superseded_by=@superseded_by, forgotten_at=@forgotten_at, forget_reason=@forget_reason,
            dedupe_key=@dedupe_key,
            code=@code, feedback=@feedback WHERE id=@id`,
        ).run(p);
        const rowid = BigInt(row.rowid);
        if (index) {
          this.stmt('DELETE FROM memories_fts WHERE rowid = ?').run(rowid);
          this.stmt('INSERT INTO memories_fts (rowid, ns, terms) VALUES (?, ?, ?)').run(rowid, nsToken(memory.namespace), index.terms.join(' '));
          if (this.vectorDims !== null) this.stmt('DELETE FROM memories_vec WHERE rowid = ?').run(rowid);
          this.stmt('UPDATE memories SET vector_hash = NULL WHERE rowid = ?').run(rowid);
          if (index.vector) this.writeVector(rowid, memory, index.vector);
        } else if (this.vectorDims !== null) {
          this.stmt('UPDATE memories_vec SET active = ?, kind = ? WHERE rowid = ?').run(isCurrent(memory) ? 1n : 0n, memory.kind, rowid);
        }
      },
      deleteMemory: async (id) => {
        const row = this.stmt('SELECT rowid FROM memories WHERE id = ?').get(id) as { rowid: number } | undefined;
        if (!row) return;
        const rowid = BigInt(row.rowid);
        this.stmt('DELETE FROM memories_fts WHERE rowid = ?').run(rowid);
        if (this.vectorDims !== null) this.stmt('DELETE FROM memories_vec WHERE rowid = ?').run(rowid);
        this.stmt('DELETE FROM memories WHERE rowid = ?').run(rowid);
        this.stmt('DELETE FROM recall_counts WHERE memory_id = ?').run(id);
      },
      pendingErasures: async () => this.pendingErasuresSync(),
      putPendingErasure: async (e) => {
        this.stmt('INSERT OR REPLACE INTO pending_erasures (id, scope, plan, started_at) VALUES (?, ?, ?, ?)').run(
          e.id,
          JSON.stringify(e.scope),
          e.plan === null || e.plan === undefined ? null : JSON.stringify(e.plan),
          e.startedAt,
        );
      },
      appendEvent: async (event: EventInput) => {
        const { next } = this.stmt('SELECT COALESCE(MAX(seq), 0) + 1 AS next FROM events WHERE namespace = ?').get(event.namespace) as { next: number };
        this.stmt('INSERT INTO events (namespace, seq, type, memory_id, payload, at) VALUES (?, ?, ?, ?, ?, ?)').run(
          event.namespace,
          next,
          event.type,
          event.memoryId,
          JSON.stringify(event.payload ?? null),
          event.at,
        );
        return next;
      },
      embedder: async () => this.embedderSync(),
      setEmbedder: async (info) => {
        const existing = this.stmt(`SELECT value FROM meta WHERE key = 'embedder'`).get() as { value: string } | undefined;
        if (existing) {
          const e = JSON.parse(existing.value) as EmbedderInfo;
          if (e.id === info.id && e.dimensions === info.dimensions) {
            this.vectorDims = e.dimensions;
            return;
          }
          throw new CairnError('EMBEDDER_MISMATCH', `the store already holds vectors from ${e.id} (${e.dimensions} dimensions)`, {
            hint: 'run `cairn reindex`',
          });
        }
        this.stmt(`INSERT INTO meta (key, value) VALUES ('embedder', ?)`).run(JSON.stringify(info));
        db.exec('DROP TABLE IF EXISTS memories_vec');
        this.statements.clear();
        db.exec(vectorTableSql(info.dimensions));
        this.vectorDims = info.dimensions;
      },
      setVector: async (id, vector) => {
        const r = this.stmt('SELECT * FROM memories WHERE id = ?').get(id) as Row | undefined;
        if (!r) throw new CairnError('NOT_FOUND', `no memory ${id}`);
        const rowid = BigInt(r['rowid'] as number);
        this.stmt('DELETE FROM memories_vec WHERE rowid = ?').run(rowid);
        this.writeVector(rowid, rowToMemory(r), vector);
      },
      resetVectors: async () => {
        db.exec('DROP TABLE IF EXISTS memories_vec');
        this.statements.clear();
        this.stmt('UPDATE memories SET vector_hash = NULL WHERE vector_hash IS NOT NULL').run();
        this.stmt(`DELETE FROM meta WHERE key = 'embedder'`).run();
        this.vectorDims = null;
      },
      setSetting: async (namespace, key, value) => {
        this.stmt('INSERT INTO settings (namespace, key, value) VALUES (?, ?, ?) ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value').run(
          namespace,
          key,
          JSON.stringify(value),
        );
      },
      putVectorBlob: async (hash, vector) => {
        this.stmt('INSERT OR IGNORE INTO vector_blobs (hash, data) VALUES (?, ?)').run(hash, Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength));
      },
      getVectorBlob: async (hash) => this.getVectorBlobSync(hash),
      memoriesOf: async (namespace) => {
        const rows = this.stmt('SELECT * FROM memories WHERE namespace = ? ORDER BY id').all(namespace) as Row[];
        return rows.map((r) => ({ memory: rowToMemory(r), vectorHash: (r['vector_hash'] as string | null) ?? null }));
      },
      settingsOf: async (namespace) => this.listSettingsSync(namespace),
      lastSeq: async (scope) => (this.stmt('SELECT COALESCE(MAX(seq), 0) AS n FROM events WHERE namespace = ?').get(scope) as { n: number }).n,
      countEvents: async (scope, type) =>
        (this.stmt('SELECT COUNT(*) AS n FROM events WHERE namespace = ? AND type = ?').get(scope, type) as { n: number }).n,
      getSnapshot: async (scope) => this.getSnapshotSync(scope),
      putSnapshot: async (snap, expectedVersion) => {
        const current = this.stmt('SELECT version FROM snapshots WHERE scope = ?').get(snap.scope) as { version: number } | undefined;
        const have = current?.version ?? null;
        if (have !== expectedVersion) {
          throw new CairnError('CONFLICT', `snapshot of scope ${JSON.stringify(snap.scope)} is at version ${have ?? 'none'}, expected ${expectedVersion ?? 'none'}: another writer checkpointed first`);
        }
        const version = (have ?? 0) + 1;
        this.stmt(
          `INSERT INTO snapshots (scope, version, seq, blob, blob_sha256, checksum, engine_version, created_at)
           VALUES (@scope, @version, @seq, @blob, @blob_sha256, @checksum, @engine_version, @created_at)
           ON CONFLICT (scope) DO UPDATE SET version = excluded.version, seq = excluded.seq, blob = excluded.blob,
             blob_sha256 = excluded.blob_sha256, checksum = excluded.checksum, engine_version = excluded.engine_version,
             created_at = excluded.created_at`,
        ).run({
          scope: snap.scope,
          version,
          seq: snap.seq,
          blob: Buffer.from(snap.blob),
          blob_sha256: snap.blobSha256,
          checksum: snap.checksum,
          engine_version: snap.engineVersion,
          created_at: snap.createdAt,
        });
        return version;
      },
      deleteSnapshot: async (scope) => {
        this.stmt('DELETE FROM snapshots WHERE scope = ?').run(scope);
      },
      rewriteEvent: async (scope, seq, type, payload) => {
        this.stmt('UPDATE events SET type = ?, payload = ?, memory_id = NULL WHERE namespace = ? AND seq = ?').run(type, JSON.stringify(payload), scope, seq);
      },
      vectorBlobReferenced: async (hash) =>
        this.stmt(`SELECT 1 FROM events WHERE instr(payload, ?) > 0 LIMIT 1`).get(hash) !== undefined ||
        this.stmt('SELECT 1 FROM memories WHERE vector_hash = ? LIMIT 1').get(hash) !== undefined,
      deleteVectorBlob: async (hash) => {
        this.stmt('DELETE FROM vector_blobs WHERE hash = ?').run(hash);
      },
      deleteQuarantineEntry: async (id) => {
        this.stmt('DELETE FROM quarantine WHERE id = ?').run(id);
      },
      clearProjection: async (namespace) => {
        const rowids = this.stmt('SELECT rowid FROM memories WHERE namespace = ?').all(namespace) as { rowid: number }[];
        const delFts = this.stmt('DELETE FROM memories_fts WHERE rowid = ?');
        const delVec = this.vectorDims !== null ? this.stmt('DELETE FROM memories_vec WHERE rowid = ?') : null;
        for (const { rowid } of rowids) {
          delFts.run(BigInt(rowid));
          delVec?.run(BigInt(rowid));
        }
        this.stmt('DELETE FROM memories WHERE namespace = ?').run(namespace);
        this.stmt('DELETE FROM settings WHERE namespace = ?').run(namespace);
      },
      putQuarantine: async (entry) => {
        this.stmt(
          `INSERT INTO quarantine (id, hash, entry, status, created_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, entry = excluded.entry, status = excluded.status, created_at = excluded.created_at`,
        ).run(entry.id, entry.hash, JSON.stringify(entry), entry.status, entry.createdAt);
      },
      getQuarantine: async (id) => this.getQuarantineSync(id),
      findQuarantineByHash: async (hash) => this.findQuarantineByHashSync(hash),
      clearQuarantine: async () => {
        this.stmt('DELETE FROM quarantine').run();
      },
      putQuarantineVault: async (id, text, request) => {
        this.stmt('INSERT OR REPLACE INTO quarantine_vault (id, text, request) VALUES (?, ?, ?)').run(id, text, JSON.stringify(request));
      },
      getQuarantineVault: async (id) => this.getQuarantineVaultSync(id),
      deleteQuarantineVault: async (id) => {
        this.stmt('DELETE FROM quarantine_vault WHERE id = ?').run(id);
      },
      putLearnedAnchor: async (id, vector, at) => {
        this.stmt('INSERT OR REPLACE INTO learned_anchors (id, vector, created_at) VALUES (?, ?, ?)').run(id, vectorBytes(vector), at);
      },
      getLearnedAnchor: async (id) => {
        const r = this.stmt('SELECT vector FROM learned_anchors WHERE id = ?').get(id) as { vector: Buffer } | undefined;
        return r ? vectorFromBytes(r.vector) : null;
      },
      deleteLearnedAnchor: async (id) => {
        this.stmt('DELETE FROM learned_anchors WHERE id = ?').run(id);
      },
      putAnchorCache: async (key, vectors) => {
        const dims = vectors[0]?.length ?? 0;
        const body = Buffer.alloc(4 + vectors.length * dims * 4);
        body.writeUInt32LE(dims, 0);
        vectors.forEach((v, i) => vectorBytes(v).copy(body, 4 + i * dims * 4));
        // A SHA-256 trailer: a flipped page in this blob would silently move the filter's anchors.
        const buf = Buffer.concat([body, createHash('sha256').update(body).digest()]);
        this.stmt('INSERT OR REPLACE INTO anchor_cache (key, vectors) VALUES (?, ?)').run(key, buf);
      },
    };
  }

  private getQuarantineSync(id: string): QuarantineEntry | null {
    const r = this.stmt('SELECT entry FROM quarantine WHERE id = ?').get(id) as { entry: string } | undefined;
    return r ? (JSON.parse(r.entry) as QuarantineEntry) : null;
  }

  private findQuarantineByHashSync(hash: string): QuarantineEntry[] {
    const rows = this.stmt('SELECT entry FROM quarantine WHERE hash = ? ORDER BY id').all(hash) as { entry: string }[];
    return rows.map((r) => JSON.parse(r.entry) as QuarantineEntry);
  }

  private getQuarantineVaultSync(id: string): { text: string; request: unknown } | null {
    const r = this.stmt('SELECT text, request FROM quarantine_vault WHERE id = ?').get(id) as { text: string; request: string } | undefined;
    return r ? { text: r.text, request: JSON.parse(r.request) as unknown } : null;
  }

  async getQuarantine(id: string): Promise<QuarantineEntry | null> {
    return this.read('reading the quarantine', () => this.getQuarantineSync(id));
  }

  async listQuarantine(options: QuarantineListOptions): Promise<QuarantineEntry[]> {
    const status = options.status ?? 'held';
    const limit = options.limit ?? 50;
    return this.read('reading the quarantine', () => {
      const rows = (
        status === 'all'
          ? this.stmt('SELECT entry FROM quarantine ORDER BY id DESC LIMIT ?').all(limit)
          : this.stmt('SELECT entry FROM quarantine WHERE status = ? ORDER BY id DESC LIMIT ?').all(status, limit)
      ) as { entry: string }[];
      return rows.map((r) => JSON.parse(r.entry) as QuarantineEntry);
    });
  }

  async findQuarantineByHash(hash: string): Promise<QuarantineEntry[]> {
    return this.read('reading the quarantine', () => this.findQuarantineByHashSync(hash));
  }

  async getQuarantineVault(id: string): Promise<{ text: string; request: unknown } | null> {
    return this.read('reading the quarantine vault', () => this.getQuarantineVaultSync(id));
  }

  async learnedAnchors(): Promise<{ id: string; vector: Float32Array }[]> {
    return this.read('reading learned anchors', () =>
      (this.stmt('SELECT id, vector FROM learned_anchors ORDER BY id').all() as { id: string; vector: Buffer }[]).map((r) => ({
        id: r.id,
        vector: vectorFromBytes(r.vector),
      })),
    );
  }

  async getAnchorCache(key: string): Promise<Float32Array[] | null> {
    return this.read('reading the anchor cache', () => {
      const r = this.stmt('SELECT vectors FROM anchor_cache WHERE key = ?').get(key) as { vectors: Buffer } | undefined;
      if (!r || r.vectors.length < 36) return null;
      const body = r.vectors.subarray(0, r.vectors.length - 32);
      // A cache whose checksum does not match is treated as missing: the caller rebuilds it from the catalogue.
      if (!createHash('sha256').update(body).digest().equals(r.vectors.subarray(r.vectors.length - 32))) return null;
      const dims = body.readUInt32LE(0);
      if (dims === 0 || (body.length - 4) % (dims * 4) !== 0) return null;
      const out: Float32Array[] = [];
      for (let at = 4; at + dims * 4 <= body.length; at += dims * 4) out.push(vectorFromBytes(body.subarray(at, at + dims * 4)));
      return out;
    });
  }

  private writeVector(rowid: bigint, memory: Memory, vector: Float32Array): void {
    if (this.vectorDims === null) throw new CairnError('INTERNAL', 'no embedder recorded before writing a vector');
    if (vector.length !== this.vectorDims) {
      throw new CairnError('EMBEDDER_MISMATCH', `vector has ${vector.length} dimensions; the store holds ${this.vectorDims}`, { hint: 'run `cairn reindex`' });
    }
    this.stmt('INSERT INTO memories_vec (rowid, namespace, active, kind, embedding) VALUES (?, ?, ?, ?, ?)')
      .run(rowid, memory.namespace, isCurrent(memory) ? 1n : 0n, memory.kind, vector);
    this.stmt('UPDATE memories SET vector_hash = ? WHERE rowid = ?').run(vectorHash(vector), rowid);
  }

  private getVectorBlobSync(hash: string): Float32Array | null {
    const r = this.stmt('SELECT data FROM vector_blobs WHERE hash = ?').get(hash) as { data: Buffer } | undefined;
    return r ? vectorFromBytes(r.data) : null;
  }

  private listSettingsSync(namespace: string): { key: string; value: unknown }[] {
    const rows = this.stmt('SELECT key, value FROM settings WHERE namespace = ? ORDER BY key').all(namespace) as { key: string; value: string }[];
    return rows.map((r) => ({ key: r.key, value: JSON.parse(r.value) as unknown }));
  }

  private getSnapshotSync(scope: string): SnapshotRecord | null {
    const r = this.stmt('SELECT * FROM snapshots WHERE scope = ?').get(scope) as Row | undefined;
    return r ? rowToSnapshot(r) : null;
  }

  async getVectorBlob(hash: string): Promise<Float32Array | null> {
    return this.read('reading a vector', () => this.getVectorBlobSync(hash));
  }

  async listSettings(namespace: string): Promise<{ key: string; value: unknown }[]> {
    return this.read('reading settings', () => this.listSettingsSync(namespace));
  }

  async getSnapshot(scope: string): Promise<SnapshotRecord | null> {
    return this.read('reading a snapshot', () => this.getSnapshotSync(scope));
  }

  async getVectors(ids: string[]): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    if (ids.length === 0) return out;
    if (this.vectorDims === null) this.read('reading the vector index', () => this.loadVectorInfo());
    if (this.vectorDims === null) return out;
    return this.read('reading vectors', () => {
      const rowOf = this.stmt('SELECT rowid FROM memories WHERE id = ?');
      const vec = this.stmt('SELECT embedding FROM memories_vec WHERE rowid = ?');
      for (const id of ids) {
        const r = rowOf.get(id) as { rowid: number } | undefined;
        if (!r) continue;
        const v = vec.get(BigInt(r.rowid)) as { embedding: Buffer } | undefined;
        if (v) out.set(id, vectorFromBytes(v.embedding));
      }
      return out;
    });
  }

  async *iterateEvents(afterGseq = 0, pageSize = 1000): AsyncIterable<StoredEvent[]> {
    let after = afterGseq;
    for (;;) {
      const page = this.read('reading the event log', () =>
        (this.stmt('SELECT * FROM events WHERE gseq > ? ORDER BY gseq LIMIT ?').all(after, pageSize) as Row[]).map(rowToEvent),
      );
      if (page.length === 0) return;
      after = (page[page.length - 1] as StoredEvent).gseq;
      yield page;
    }
  }

  async scopes(): Promise<ScopeInfo[]> {
    return this.read('reading the event log', () =>
      this.stmt('SELECT namespace AS scope, COUNT(*) AS events, MAX(seq) AS lastSeq FROM events GROUP BY namespace ORDER BY namespace').all() as ScopeInfo[],
    );
  }

  private getMemorySync(id: string): Memory | null {
    const r = this.stmt('SELECT * FROM memories WHERE id = ?').get(id) as Row | undefined;
    return r ? rowToMemory(r) : null;
  }

  async getMemory(id: string): Promise<Memory | null> {
    return this.read('reading a memory', () => this.getMemorySync(id));
  }

  async getMemories(ids: string[]): Promise<Memory[]> {
    if (ids.length === 0) return [];
    return this.read('reading memories', () => {
      const out: Memory[] = [];
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        const rows = this.stmt(`SELECT * FROM memories WHERE id IN (${chunk.map(() => '?').join(',')})`).all(...chunk) as Row[];
        out.push(...rows.map(rowToMemory));
      }
      return out;
    });
  }

  async listMemories(filter: ListFilter): Promise<Memory[]> {
    return this.read('listing memories', () => {
      const params: Row = { now: filter.now, limit: filter.limit };
      const where = [filterSql(filter, params)];
      if (filter.namespace !== undefined) {
        where.push('m.namespace = @namespace');
        params['namespace'] = filter.namespace;
      }
      if (filter.before !== undefined) {
        where.push('m.id < @before');
        params['before'] = filter.before;
      }
      if (filter.createdFrom !== undefined) {
        where.push('m.created_at >= @createdFrom');
        params['createdFrom'] = filter.createdFrom;
      }
      if (filter.createdTo !== undefined) {
        where.push('m.created_at < @createdTo');
        params['createdTo'] = filter.createdTo;
      }
      for (const key of ['source', 'agent', 'sessionId'] as const) {
        const value = filter.provenance?.[key];
        if (value === undefined) continue;
        where.push(`json_extract(m.metadata, '$.${key}') = @p_${key}`);
        params[`p_${key}`] = value;
      }
      const rows = this.stmt(`SELECT m.* FROM memories m WHERE ${where.join(' AND ')} ORDER BY m.id DESC LIMIT @limit`).all(params) as Row[];
      return rows.map(rowToMemory);
    });
  }

  async *iterateMemories(namespace: string | undefined, pageSize = 500): AsyncIterable<Memory[]> {
    let after = '';
    for (;;) {
      const page = this.read('reading memories', () => {
        const rows = (
          namespace === undefined
            ? this.stmt('SELECT * FROM memories WHERE id > ? ORDER BY id LIMIT ?').all(after, pageSize)
            : this.stmt('SELECT * FROM memories WHERE namespace = ? AND id > ? ORDER BY id LIMIT ?').all(namespace, after, pageSize)
        ) as Row[];
        return rows.map(rowToMemory);
      });
      if (page.length === 0) return;
      after = (page[page.length - 1] as Memory).id;
      yield page;
    }
  }

  async listExpired(now: string, namespace?: string): Promise<Memory[]> {
    return this.read('listing expired memories', () => {
      const rows = (
        namespace === undefined
          ? this.stmt('SELECT * FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?').all(now)
          : this.stmt('SELECT * FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ? AND namespace = ?').all(now, namespace)
      ) as Row[];
      return rows.map(rowToMemory);
    });
  }

  async vectorCandidates(vector: Float32Array, k: number, filter: CandidateFilter): Promise<VectorHit[]> {
    if (this.vectorDims === null) this.read('reading the vector index', () => this.loadVectorInfo());
    if (this.vectorDims === null) return [];
    if (vector.length !== this.vectorDims) {
      throw new CairnError('EMBEDDER_MISMATCH', `query vector has ${vector.length} dimensions; the store holds ${this.vectorDims}`, { hint: 'run `cairn reindex`' });
    }
    return this.read('vector search', () => {
      const params: Row = { q: vector, namespace: filter.namespace, now: filter.now };
      const knnWhere = ['v.embedding MATCH @q', 'v.k = @k', 'v.namespace = @namespace'];
      if (!filter.includeInactive) knnWhere.push('v.active = 1');
      if (filter.kinds && filter.kinds.length === 1) {
        knnWhere.push('v.kind = @vkind');
        params['vkind'] = filter.kinds[0];
      }
      const post = filterSql(filter, params);
      const approximate = this.vectorIndex?.search(vector, k, filter, post, params);
      if (approximate) return approximate;
      // Expiry, tags and several kinds are checked after the KNN. Widen the KNN until k rows pass that
      // filter or the index has no more rows; past the KNN's own limit, scan the namespace exactly, so
      // nearer inactive or filtered-out memories never hide the k nearest matching ones.
      params['limit'] = k;
      const knn = this.stmt(
        `SELECT m.id AS id, v.distance AS distance, (${post}) AS ok FROM (SELECT rowid, distance FROM memories_vec v WHERE ${knnWhere.join(' AND ')}) v
         JOIN memories m ON m.rowid = v.rowid ORDER BY v.distance`,
      );
      let fetch = Math.min(MAX_KNN, filter.tags?.length || (filter.kinds?.length ?? 0) > 1 ? k * 4 : k + 16);
      for (;;) {
        params['k'] = fetch;
        const rows = knn.all(params) as { id: string; distance: number; ok: number }[];
        const hits = rows.filter((r) => r.ok === 1).slice(0, k);
        if (hits.length >= k || rows.length < fetch) return hits.map((r) => ({ id: r.id, similarity: 1 - r.distance }));
        if (fetch >= MAX_KNN) break;
        fetch = Math.min(MAX_KNN, fetch * 4);
      }
      const rows = this.stmt(
          `SELECT m.id AS id, vec_distance_cosine(v.embedding, @q) AS distance FROM memories m JOIN memories_vec v ON v.rowid = m.rowid
           WHERE m.namespace = @namespace AND ${post} ORDER BY distance LIMIT @limit`,
        )
        .all(params) as { id: string; distance: number }[];
      return rows.map((r) => ({ id: r.id, similarity: 1 - r.distance }));
    });
  }

  async lexicalCandidates(terms: string[], k: number, filter: CandidateFilter): Promise<LexicalHit[]> {
    if (terms.length === 0) return [];
    return this.read('full-text search', () => {
      const params: Row = { now: filter.now, namespace: filter.namespace, k };
      const match = `ns:${quoteTerm(nsToken(filter.namespace))} AND terms:(${terms.map(quoteTerm).join(' OR ')})`;
      params['match'] = match;
      const post = filterSql(filter, params);
      const rows = this.stmt(
          `SELECT m.id AS id, -bm25(memories_fts, 0.0, 1.0) AS score FROM memories_fts f JOIN memories m ON m.rowid = f.rowid
           WHERE memories_fts MATCH @match AND m.namespace = @namespace AND ${post}
           ORDER BY bm25(memories_fts, 0.0, 1.0) LIMIT @k`,
        )
        .all(params) as { id: string; score: number }[];
      return rows;
    });
  }

  private embedderSync(): EmbedderInfo | null {
    const row = this.stmt(`SELECT value FROM meta WHERE key = 'embedder'`).get() as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as EmbedderInfo) : null;
  }

  async embedder(): Promise<EmbedderInfo | null> {
    return this.read('reading the embedder record', () => this.embedderSync());
  }

  async getSetting(namespace: string, key: string): Promise<unknown> {
    return this.read('reading a setting', () => {
      const row = this.stmt('SELECT value FROM settings WHERE namespace = ? AND key = ?').get(namespace, key) as { value: string } | undefined;
      return row ? (JSON.parse(row.value) as unknown) : null;
    });
  }

  async events(namespace: string, afterSeq = 0, limit = 1000): Promise<StoredEvent[]> {
    return this.read('reading events', () => {
      const rows = this.stmt('SELECT * FROM events WHERE namespace = ? AND seq > ? ORDER BY seq LIMIT ?')
        .all(namespace, afterSeq, limit) as Row[];
      return rows.map(rowToEvent);
    });
  }

  async stats(now: string): Promise<StoreStats> {
    return this.read('counting', () => {
      const rows = this.stmt(
          `SELECT m.namespace AS namespace,
             SUM(CASE WHEN ${ACTIVE_SQL} THEN 1 ELSE 0 END) AS live,
             SUM(CASE WHEN m.forgotten_at IS NOT NULL THEN 1 ELSE 0 END) AS forgotten,
             SUM(CASE WHEN m.forgotten_at IS NULL AND m.superseded_by IS NOT NULL THEN 1 ELSE 0 END) AS superseded,
             SUM(CASE WHEN ${CURRENT_SQL} AND NOT (${ACTIVE_SQL}) THEN 1 ELSE 0 END) AS expired
           FROM memories m GROUP BY m.namespace ORDER BY m.namespace`,
        )
        .all({ now }) as StoreStats['namespaces'];
      const total = rows.reduce((s, r) => s + r.live + r.forgotten + r.superseded + r.expired, 0);
      const { n } = this.stmt('SELECT COUNT(*) AS n FROM events').get() as { n: number };
      return { namespaces: rows, total, events: n };
    });
  }

  /** A short write outside the event log (tokens, recall counts), retried while another process writes. */
  private smallWrite(what: string, fn: () => void): Promise<void> {
    this.ensureOpen();
    this.refuseWrite(what);
    // Tokens and recall counts: no change to the full-text index, so the term counts stay valid.
    return this.mutex.run(() => this.whileBusy(what, fn));
  }

  /** Runs `fn`, retrying with backoff while another process holds the write lock, up to the busy budget. */
  private async whileBusy(what: string, fn: () => void): Promise<void> {
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


  async putToken(t: AccessTokenRecord): Promise<void> {
    await this.smallWrite('storing the token', () => {
      this.stmt(
        'INSERT INTO access_tokens (id, hash, name, namespaces, scope, created_at, expires_at, revoked_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ).run(t.id, t.hash, t.name, JSON.stringify(t.namespaces), t.scope, t.createdAt, t.expiresAt, t.revokedAt, t.lastUsedAt);
    });
  }

  async getTokenByHash(hash: string): Promise<AccessTokenRecord | null> {
    return this.read('reading tokens', () => {
      const r = this.stmt('SELECT * FROM access_tokens WHERE hash = ?').get(hash) as Row | undefined;
      return r ? rowToToken(r) : null;
    });
  }

  async listTokens(): Promise<AccessTokenRecord[]> {
    return this.read('reading tokens', () => (this.stmt('SELECT * FROM access_tokens ORDER BY created_at, id').all() as Row[]).map(rowToToken));
  }

  async revokeToken(id: string, at: string): Promise<boolean> {
    let changed = false;
    await this.smallWrite('revoking the token', () => {
      const found = this.stmt('SELECT 1 FROM access_tokens WHERE id = ?').get(id);
      if (found) this.stmt('UPDATE access_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?').run(at, id);
      changed = found !== undefined;
    });
    return changed;
  }

  async touchToken(id: string, at: string): Promise<void> {
    await this.smallWrite('recording token use', () => {
      this.stmt('UPDATE access_tokens SET last_used_at = ? WHERE id = ?').run(at, id);
    });
  }

  async recordRecalls(namespace: string, ids: string[], at: string): Promise<void> {
    // Statistics only: a search of a read-only database still answers, uncounted.
    if (ids.length === 0 || this.readOnly) return;
    await this.smallWrite('counting recalls', () => {
      const upsert = this.stmt(
        // Only for a memory that still exists: a search answered just before an erasure deleted it must not
        // leave a count behind for an id that is gone.
        `INSERT INTO recall_counts (memory_id, namespace, count, last_at) SELECT ?, ?, 1, ? WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?)
         ON CONFLICT(memory_id) DO UPDATE SET count = count + 1, last_at = excluded.last_at`,
      );
      this.db.transaction(() => {
        for (const id of ids) upsert.run(id, namespace, at, id);
      }).immediate();
    });
  }

  async recallStats(namespace: string, now: string, top: number): Promise<RecallStats> {
    return this.read('counting recalls', () => {
      const live = `m.namespace = @namespace AND ${ACTIVE_SQL}`;
      const rows = this.stmt(
        `SELECT CASE WHEN r.count IS NULL THEN '0' WHEN r.count = 1 THEN '1' WHEN r.count < 5 THEN '2-4' WHEN r.count < 10 THEN '5-9' ELSE '10+' END AS bucket,
                COUNT(*) AS memories
           FROM memories m LEFT JOIN recall_counts r ON r.memory_id = m.id WHERE ${live} GROUP BY bucket`,
      ).all({ namespace, now }) as { bucket: string; memories: number }[];
      const byBucket = new Map(rows.map((r) => [r.bucket, r.memories]));
      const histogram = ['0', '1', '2-4', '5-9', '10+'].map((bucket) => ({ bucket, memories: byBucket.get(bucket) ?? 0 }));
      const topRows = this.stmt(
        `SELECT m.id, m.text, m.kind, r.count, r.last_at FROM recall_counts r JOIN memories m ON m.id = r.memory_id
          WHERE ${live} ORDER BY r.count DESC, r.last_at DESC LIMIT @top`,
      ).all({ namespace, now, top }) as { id: string; text: string; kind: string; count: number; last_at: string }[];
      return {
        live: histogram.reduce((s, b) => s + b.memories, 0),
        neverRecalled: byBucket.get('0') ?? 0,
        top: topRows.map((r) => ({ id: r.id, text: r.text, kind: r.kind, count: r.count, lastAt: r.last_at })),
        histogram,
      };
    });
  }

  /**
   * Document frequencies are kept in memory until the database changes (this connection's writes, or another
   * process's commit, seen through `PRAGMA data_version`): counting a common term reads its whole posting list.
   */
  private readonly dfCache = { version: '', documents: 0, frequencies: new Map<string, number>() };
  private ownWrites = 0;

  async termDocumentFrequencies(terms: string[]): Promise<{ documents: number; frequencies: Map<string, number> }> {
    return this.read('counting terms', () => {
      const version = `${String(this.db.pragma('data_version', { simple: true }))}:${this.ownWrites}`;
      const cache = this.dfCache;
      if (cache.version !== version || cache.frequencies.size > 100_000) {
        cache.version = version;
        cache.documents = (this.stmt('SELECT COUNT(*) AS n FROM memories').get() as { n: number }).n;
        cache.frequencies.clear();
      }
      const lookup = this.stmt(`SELECT doc FROM memories_fts_vocab WHERE col = 'terms' AND term = ?`);
      const frequencies = new Map<string, number>();
      for (const term of new Set(terms)) {
        let df = cache.frequencies.get(term);
        if (df === undefined) {
          df = (lookup.get(term) as { doc: number } | undefined)?.doc ?? 0;
          cache.frequencies.set(term, df);
        }
        if (df > 0) frequencies.set(term, df);
      }
      return { documents: cache.documents, frequencies };
    });
  }

  async createdPerDay(namespace: string): Promise<{ day: string; count: number }[]> {
    return this.read('counting memories', () =>
      this.stmt('SELECT substr(created_at, 1, 10) AS day, COUNT(*) AS count FROM memories WHERE namespace = ? GROUP BY day ORDER BY day').all(namespace) as {
        day: string;
        count: number;
      }[],
    );
  }

  async countLiveEventsOf(memoryIds: string[], namespace: string | null): Promise<number> {
    return this.read('counting events', () => {
      let n = 0;
      if (namespace !== null) {
        n += (this.stmt(`SELECT COUNT(*) AS n FROM events WHERE namespace = ? AND type != 'erased'`).get(namespace) as { n: number }).n;
      }
      const byId = this.stmt(`SELECT COUNT(*) AS n FROM events WHERE memory_id = ? AND type != 'erased'`);
      for (const id of memoryIds) n += (byId.get(id) as { n: number }).n;
      return n;
    });
  }

  async compactAfterErasure(options: { vectorsRemoved: boolean }): Promise<void> {
    this.ensureOpen();
    this.refuseWrite('compacting after an erasure');
    const what = 'compacting after an erasure';
    await this.mutex.run(async () => {
      try {
        // Under the write lock, so no other process's write falls between reading the rows and rebuilding.
        await this.whileBusy(what, () => this.db.exec('BEGIN IMMEDIATE'));
        try {
          // FTS5 keeps deleted entries in its segments until they are merged.
          this.db.exec(`INSERT INTO memories_fts (memories_fts) VALUES ('optimize')`);
          if (options.vectorsRemoved && this.vectorDims !== null) {
            // vec0 marks deleted rows but may keep their bytes in its chunks: rebuild the index from the rows left.
            const rows = this.stmt('SELECT m.rowid AS rowid, m.namespace, m.kind, m.forgotten_at, m.superseded_by, b.data FROM memories m JOIN vector_blobs b ON b.hash = m.vector_hash').all() as Row[];
            this.db.exec('DROP TABLE memories_vec');
            this.statements.clear();
            this.db.exec(vectorTableSql(this.vectorDims));
            const ins = this.stmt('INSERT INTO memories_vec (rowid, namespace, active, kind, embedding) VALUES (?, ?, ?, ?, ?)');
            for (const r of rows) {
              const current = isCurrent({ forgottenAt: r['forgotten_at'] as string | null, supersededBy: r['superseded_by'] as string | null });
              ins.run(BigInt(r['rowid'] as number), r['namespace'], current ? 1n : 0n, r['kind'], r['data']);
            }
          }
          this.db.exec('COMMIT');
        } catch (err) {
          if (this.db.inTransaction) this.db.exec('ROLLBACK');
          throw err;
        }
        if (options.vectorsRemoved) this.vectorIndex?.discard();
        await this.checkpoint();
        this.db.pragma('secure_delete = ON');
        await this.whileBusy(what, () => this.db.exec('VACUUM'));
        await this.checkpoint();
      } catch (err) {
        throw translate(err, what);
      }
    });
  }

  /**
   * Copies the write-ahead log into the file and truncates it, waiting (without blocking the event loop)
   * while readers of older snapshots still need it, up to the busy budget.
   */
  private async checkpoint(): Promise<void> {
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

  private pendingErasuresSync(): PendingErasure[] {
    const rows = this.stmt('SELECT id, scope, plan, started_at FROM pending_erasures ORDER BY started_at, id').all() as Row[];
    return rows.map((r) => ({
      id: r['id'] as string,
      scope: JSON.parse(r['scope'] as string) as PendingErasure['scope'],
      plan: r['plan'] === null ? null : (JSON.parse(r['plan'] as string) as unknown),
      startedAt: r['started_at'] as string,
    }));
  }

  async pendingErasures(): Promise<PendingErasure[]> {
    return this.read('reading erasures in progress', () => this.pendingErasuresSync());
  }

  async finishErasure(id: string): Promise<void> {
    this.ensureOpen();
    this.refuseWrite('finishing the erasure');
    await this.mutex.run(async () => {
      // secure_delete overwrites the row's bytes in the page; the checkpoint clears the write-ahead log.
      this.db.pragma('secure_delete = ON');
      await this.whileBusy('finishing the erasure', () => this.db.prepare('DELETE FROM pending_erasures WHERE id = ?').run(id));
      await this.checkpoint();
    });
  }

  async rawFilesContain(needles: string[]): Promise<number> {
    if (this.location === ':memory:') return 0;
    const files = [this.location, `${this.location}-wal`, `${this.location}-shm`].filter((f) => existsSync(f));
    // Scanned in a child process: closing a descriptor of the database file in this process would drop every
    // POSIX lock SQLite holds on it, and this connection would then stop seeing other processes' writes.
    // The needles travel on stdin, never on the command line.
    const out = execFileSync(process.execPath, ['-e', RAW_SCAN_SCRIPT, ...files], { input: JSON.stringify(needles), maxBuffer: 1024 * 1024 });
    return Number(out.toString('utf8').trim());
  }

  async diagnostics(): Promise<Record<string, unknown>> {
    return this.read('diagnostics', () => {
      const versions = this.stmt('SELECT sqlite_version() AS sqlite, vec_version() AS vec').get() as { sqlite: string; vec: string };
      const fts5 = (this.stmt(`SELECT sqlite_compileoption_used('ENABLE_FTS5') AS f`).get() as { f: number }).f === 1;
      const schema = (this.stmt('SELECT MAX(version) AS v FROM schema_version').get() as { v: number }).v;
      const pageCount = this.db.pragma('page_count', { simple: true }) as number;
      const pageSize = this.db.pragma('page_size', { simple: true }) as number;
      const journal = this.db.pragma('journal_mode', { simple: true }) as string;
      const integrity = this.db.pragma('quick_check', { simple: true }) as string;
      return {
        backend: 'sqlite',
        path: this.location,
        schemaVersion: schema,
        sqliteVersion: versions.sqlite,
        sqliteVecVersion: versions.vec,
        fts5,
        journalMode: journal,
        bytes: pageCount * pageSize,
        quickCheck: integrity,
        vectorDimensions: this.vectorDims,
        vectorIndex: this.vectorIndex?.status() ?? { engine: 'exhaustive', state: 'off', reason: this.readOnly ? 'read-only store' : 'disabled' },
      };
    });
  }

  /** For `cairn verify`: the approximate index checked against the stored vectors (rebuilt when it differs). */
  async checkVectorIndex(): Promise<VectorIndexCheck> {
    this.ensureOpen();
    return this.vectorIndex ? this.vectorIndex.check() : { status: 'exhaustive', detail: 'no approximate index for this store' };
  }

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

export function createSqliteStore(config: SqliteStoreConfig): SqliteStore {
  return new SqliteStore(config);
}
