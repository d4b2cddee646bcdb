/**
 * Schema of the embedded store, as ordered migrations. A database records the version it reached in
 * `schema_version`; opening it applies the missing steps in one transaction. The vector tables are created
 * later, one per dimension, by `prepareVectors` before the transaction that records an embedder (its
 * dimension is only known then, and no write transaction runs DDL).
 */
import type Database from 'better-sqlite3';
import { indexText } from '../../core/events.js';
import { analyse, analysedBefore } from '../../core/lexical.js';
import type { Memory } from '../../interfaces/memory.js';
import { nsToken } from './sqlite-rows.js';
import { vectorTableName, vectorTableSql } from './sqlite-vector-table.js';

/**
 * The full-text table: a namespace token and the memory's analysed terms, joined by spaces. The ascii
 * tokenizer splits only on ASCII characters other than letters, digits and `_ . / - :` (core's terms hold
 * none), folds only ASCII case (core's terms are lower-case already) and leaves other characters as they
 * are, so each indexed token is exactly one of core's terms.
 */
const FTS_TABLE_SQL = `CREATE VIRTUAL TABLE memories_fts USING fts5(
    ns, terms, content='', contentless_delete=1,
    tokenize="ascii tokenchars '_./-:'"
  );`;

/** The full-text table emptied and made anew (its rows are then re-analysed by rebuildFullText). */
const FTS_REBUILD_SQL = `
  DROP TABLE IF EXISTS memories_fts_vocab;
  DROP TABLE IF EXISTS memories_fts;
  ${FTS_TABLE_SQL}
  CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, col);
  `;

export const MIGRATIONS: readonly string[] = [
  // 1: memories (the projection), full-text index, the event log with its vector blobs, snapshots, settings
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE memories (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    namespace TEXT NOT NULL,
    text TEXT NOT NULL,
    kind TEXT NOT NULL,
    importance INTEGER NOT NULL,
    tags TEXT NOT NULL,
    task_id TEXT,
    metadata TEXT NOT NULL,
    route TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    expires_at TEXT,
    supersedes TEXT,
    superseded_by TEXT,
    forgotten_at TEXT,
    forget_reason TEXT,
    dedupe_key TEXT NOT NULL,
    vector_hash TEXT
  );
  CREATE INDEX memories_namespace_id ON memories(namespace, id);
  CREATE INDEX memories_expires ON memories(expires_at) WHERE expires_at IS NOT NULL;
  CREATE INDEX memories_task ON memories(namespace, task_id) WHERE task_id IS NOT NULL;
  CREATE UNIQUE INDEX memories_live_dedupe ON memories(namespace, dedupe_key)
    WHERE forgotten_at IS NULL AND superseded_by IS NULL;
  CREATE VIRTUAL TABLE memories_fts USING fts5(
    ns, terms, content='', contentless_delete=1,
    tokenize="unicode61 remove_diacritics 2 tokenchars '_./-:'"
  );
  CREATE TABLE events (
    gseq INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    memory_id TEXT,
    payload TEXT NOT NULL,
    at TEXT NOT NULL,
    UNIQUE (namespace, seq)
  );
  CREATE INDEX events_type ON events(namespace, type);
  -- A rowid table: a 2 KB vector fits inside its leaf page; as a WITHOUT ROWID table every vector spilled
  -- into an overflow page of its own (measured 4.7 KB per memory instead of about 2.1 KB).
  CREATE TABLE vector_blobs (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, data BLOB NOT NULL);
  CREATE TABLE snapshots (
    scope TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    blob BLOB NOT NULL,
    blob_sha256 TEXT NOT NULL,
    checksum TEXT NOT NULL,
    engine_version INTEGER NOT NULL,
    created_at TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE settings (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (namespace, key)
  ) WITHOUT ROWID;
  `,
  // 2: the ingest filter's quarantine. \`quarantine\` is a projection of the store-wide quarantine events and
  // holds no content; the held text (\`quarantine_vault\`) and the anchors learned from blocks
  // (\`learned_anchors\`) are derived from user content and live outside the immutable log, so they can be
  // erased. \`anchor_cache\` keeps the seed catalogue's vectors per embedder (derived from code, not data).
  `
  CREATE TABLE quarantine (
    id TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    entry TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX quarantine_status ON quarantine(status, created_at);
  CREATE INDEX quarantine_hash ON quarantine(hash);
  CREATE TABLE quarantine_vault (
    id TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    request TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE learned_anchors (
    id TEXT PRIMARY KEY,
    vector BLOB NOT NULL,
    created_at TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE anchor_cache (
    key TEXT PRIMARY KEY,
    vectors BLOB NOT NULL
  ) WITHOUT ROWID;
  `,
  // 3: the HTTP server's access tokens (hashed; not memory, so outside the event log) and recall counts
  // (usage statistics for the brain page; outside the log and the checksum, deleted with their memory).
  `
  CREATE TABLE access_tokens (
    id TEXT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    name TEXT,
    namespaces TEXT NOT NULL,
    scope TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    revoked_at TEXT,
    last_used_at TEXT
  ) WITHOUT ROWID;
  CREATE TABLE recall_counts (
    memory_id TEXT PRIMARY KEY,
    namespace TEXT NOT NULL,
    count INTEGER NOT NULL,
    last_at TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX recall_counts_namespace ON recall_counts(namespace, count);
  `,
  // 4: documents per term of the full-text index (term rarity for the same-topic test of recall).
  `
  CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, col);
  `,
  // 5: an automatic hold no longer teaches the filter (only an operator's drop or a poison mark does), so the
  // anchors learned from entries still held are removed; the anchor cache gains a checksum trailer, so the
  // old checksum-less rows are dropped and rebuilt from the catalogue on first use.
  `
  DELETE FROM learned_anchors WHERE id IN (SELECT id FROM quarantine WHERE status = 'held');
  DELETE FROM anchor_cache;
  `,
  // 6: code awareness and usefulness feedback on memories (JSON; NULL when a memory has none): the files a
  // memory is anchored to with the commit it was written at and its branch scope, and how often it was
  // marked useful, wrong or stale.
  `
  ALTER TABLE memories ADD COLUMN code TEXT;
  ALTER TABLE memories ADD COLUMN feedback TEXT;
  `,
  // 7: erasures in progress: the lock that keeps every writer out of an erasure's scope across processes,
  // and what a re-run needs to finish an erasure a crash interrupted.
  `
  CREATE TABLE pending_erasures (
    id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    plan TEXT,
    started_at TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  // 8: the change counter of the approximate vector index (sqlite-vector-index.ts). Triggers log every change
  // of a memory's vector, namespace or currency with its row and namespace, so an index saved at change N
  // catches up by reading the rows changed after N; the log keeps the last 200,000 changes (an index older
  // than that is rebuilt). \`store_id\` names this database, so an index file of another one is never read.
  `
  CREATE TABLE vector_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, memory_rowid INTEGER NOT NULL, namespace TEXT NOT NULL);
  CREATE TRIGGER vector_changes_insert AFTER INSERT ON memories WHEN NEW.vector_hash IS NOT NULL BEGIN
    INSERT INTO vector_changes (memory_rowid, namespace) VALUES (NEW.rowid, NEW.namespace);
  END;
  CREATE TRIGGER vector_changes_update AFTER UPDATE ON memories
    WHEN OLD.vector_hash IS NOT NEW.vector_hash OR OLD.forgotten_at IS NOT NEW.forgotten_at
      OR OLD.superseded_by IS NOT NEW.superseded_by OR OLD.namespace IS NOT NEW.namespace BEGIN
    INSERT INTO vector_changes (memory_rowid, namespace) VALUES (NEW.rowid, NEW.namespace);
    INSERT INTO vector_changes (memory_rowid, namespace) SELECT OLD.rowid, OLD.namespace WHERE OLD.namespace IS NOT NEW.namespace;
  END;
  CREATE TRIGGER vector_changes_delete AFTER DELETE ON memories WHEN OLD.vector_hash IS NOT NULL BEGIN
    INSERT INTO vector_changes (memory_rowid, namespace) VALUES (OLD.rowid, OLD.namespace);
  END;
  CREATE TRIGGER vector_changes_trim AFTER INSERT ON vector_changes WHEN NEW.seq % 1024 = 0 BEGIN
    DELETE FROM vector_changes WHERE seq <= NEW.seq - 200000;
  END;
  INSERT OR IGNORE INTO meta (key, value) VALUES ('store_id', lower(hex(randomblob(16))));
  `,
  // 9: the full-text index takes core's analysed terms as they are. unicode61 folded diacritics and split on
  // characters cairn's analyser keeps, so `café` was indexed as `cafe` and its document frequency was not
  // found under the term core asks for; the ascii tokenizer splits only on ASCII punctuation and spaces
  // (never found inside a term, `_ . / - :` kept) and leaves every other character alone. The rows are
  // re-analysed from the memories by rebuildFullText (MIGRATION_FOLLOW_UPS).
  FTS_REBUILD_SQL,
  // 10: how many events refer to each vector blob (an event's \`vector\` member), kept by triggers on the log,
  // so erasure asks one row whether a blob is still needed instead of scanning every payload. Re-runnable: the
  // counts are recomputed from the log.
  `
  CREATE TABLE IF NOT EXISTS vector_refs (hash TEXT PRIMARY KEY, events INTEGER NOT NULL) WITHOUT ROWID;
  DELETE FROM vector_refs;
  INSERT INTO vector_refs (hash, events)
    SELECT json_extract(payload, '$.vector'), COUNT(*) FROM events WHERE json_type(payload, '$.vector') = 'text' GROUP BY 1;
  CREATE TRIGGER IF NOT EXISTS vector_refs_insert AFTER INSERT ON events WHEN json_type(NEW.payload, '$.vector') = 'text' BEGIN
    INSERT INTO vector_refs (hash, events) VALUES (json_extract(NEW.payload, '$.vector'), 1)
      ON CONFLICT (hash) DO UPDATE SET events = events + 1;
  END;
  CREATE TRIGGER IF NOT EXISTS vector_refs_update_old AFTER UPDATE OF payload ON events WHEN json_type(OLD.payload, '$.vector') = 'text' BEGIN
    UPDATE vector_refs SET events = events - 1 WHERE hash = json_extract(OLD.payload, '$.vector');
    DELETE FROM vector_refs WHERE hash = json_extract(OLD.payload, '$.vector') AND events <= 0;
  END;
  CREATE TRIGGER IF NOT EXISTS vector_refs_update_new AFTER UPDATE OF payload ON events WHEN json_type(NEW.payload, '$.vector') = 'text' BEGIN
    INSERT INTO vector_refs (hash, events) VALUES (json_extract(NEW.payload, '$.vector'), 1)
      ON CONFLICT (hash) DO UPDATE SET events = events + 1;
  END;
  CREATE TRIGGER IF NOT EXISTS vector_refs_delete AFTER DELETE ON events WHEN json_type(OLD.payload, '$.vector') = 'text' BEGIN
    UPDATE vector_refs SET events = events - 1 WHERE hash = json_extract(OLD.payload, '$.vector');
    DELETE FROM vector_refs WHERE hash = json_extract(OLD.payload, '$.vector') AND events <= 0;
  END;
  `,
  // 11: the vector table is named by its dimension (memories_vec_<n>), so prepareVectors can create the
  // next embedder's table beside the current one before a reindex's transaction, instead of that
  // transaction dropping and creating it. vec0 tables cannot be renamed: moveVectorTable copies the rows.
  `SELECT 1;`,
  // 12: the older notes a memory probably updates, found when it was written (JSON list of ids; NULL when
  // none). The partial index keeps recall's "which live notes update these" lookup to the few that do.
  `
  ALTER TABLE memories ADD COLUMN likely_replaces TEXT;
  CREATE INDEX memories_replacing ON memories (namespace) WHERE likely_replaces IS NOT NULL;
  `,
  // 13: core's analyser changed its terms (British spellings folded to American ones, spelling.ts; a folder
  // written with its trailing slash is a term of its own, lexical.ts). The migration only records that every
  // memory is to be re-analysed (the mark in meta); reanalysePage does it after the migration, a page per
  // write transaction, rewriting only the rows whose terms changed, so other processes' writes wait a page at
  // most. Recorded first, so no older cairn (writing the old terms) opens the store afterwards.
  `INSERT OR IGNORE INTO meta (key, value) VALUES ('reanalysed_through', '0');`,
  // 14: whether the text read like an instruction when written, and under which rules (Memory.instructionCheck,
  // JSON; NULL for memories, and routes, written before it was kept), so recall's spotlighting need not run the rules again.
  `ALTER TABLE memories ADD COLUMN instruction_check TEXT;`,
];

/** What migrations cannot do in SQL, run right after the migration reaching that version, in its transaction. */
export const MIGRATION_FOLLOW_UPS: ReadonlyMap<number, (db: Database.Database) => void> = new Map([
  [9, rebuildFullText],
  [11, moveVectorTable],
]);

/** Moves the vectors of the unnamed-dimension table `memories_vec` (before migration 11) into memories_vec_<n>. */
function moveVectorTable(db: Database.Database): void {
  const legacy = db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'memories_vec'`).get() as { sql: string } | undefined;
  if (!legacy) return;
  const dims = Number(/float\[(\d+)\]/.exec(legacy.sql)?.[1]);
  db.exec(vectorTableSql(dims));
  db.exec(`INSERT INTO ${vectorTableName(dims)} (rowid, namespace, active, kind, embedding) SELECT rowid, namespace, active, kind, embedding FROM memories_vec`);
  db.exec('DROP TABLE memories_vec');
}

/** Re-indexes every memory's terms (analysed by core, as the write path does) into memories_fts. */
function rebuildFullText(db: Database.Database): void {
  const insert = db.prepare('INSERT INTO memories_fts (rowid, ns, terms) VALUES (?, ?, ?)');
  const page = db.prepare('SELECT rowid, namespace, text, route FROM memories WHERE rowid > ? ORDER BY rowid LIMIT 1000');
  // In pages: the connection cannot insert while a statement is still iterating.
  for (let after = 0; ; ) {
    const rows = page.all(after) as { rowid: number; namespace: string; text: string; route: string | null }[];
    if (rows.length === 0) return;
    for (const row of rows) {
      const route = row.route ? (JSON.parse(row.route) as Memory['route']) : null;
      insert.run(BigInt(row.rowid), nsToken(row.namespace), analyse(indexText({ text: row.text, route })).join(' '));
    }
    after = (rows[rows.length - 1] as { rowid: number }).rowid;
  }
}

/** The meta key of the re-analysis still to do: the last rowid done (migration 13 sets it to 0, the end removes it). */
export const REANALYSIS_MARK = 'reanalysed_through';

/**
 * One page of the re-analysis migration 13 asked for, in a write transaction of its own, from the rowid in
 * meta onwards: a memory whose terms under core's analyser differ from the analyser's before (what its
 * full-text row holds; the table keeps no content to compare with) gets its row replaced; the rest (nearly
 * all) are left alone. A memory written since migration 13 already has the new terms, and replacing them
 * with the same is harmless, so the pass can resume anywhere: a crash loses at most the page in hand.
 * Returns whether the pass is complete.
 */
export function reanalysePage(db: Database.Database, pageSize = 1000): boolean {
  // Every writable open calls this: with no pass owed, a plain read answers without taking the write lock.
  if (db.prepare('SELECT 1 FROM meta WHERE key = ?').get(REANALYSIS_MARK) === undefined) return true;
  db.exec('BEGIN IMMEDIATE');
  try {
    const mark = db.prepare('SELECT value FROM meta WHERE key = ?').get(REANALYSIS_MARK) as { value: string } | undefined;
    if (mark === undefined) {
      db.exec('COMMIT');
      return true;
    }
    const rows = db.prepare('SELECT rowid, namespace, text, route FROM memories WHERE rowid > ? ORDER BY rowid LIMIT ?').all(Number(mark.value), pageSize) as {
      rowid: number;
      namespace: string;
      text: string;
      route: string | null;
    }[];
    const last = rows[rows.length - 1]?.rowid;
    if (last === undefined) {
      db.prepare('DELETE FROM meta WHERE key = ?').run(REANALYSIS_MARK);
    } else {
      const remove = db.prepare('DELETE FROM memories_fts WHERE rowid = ?');
      const insert = db.prepare('INSERT INTO memories_fts (rowid, ns, terms) VALUES (?, ?, ?)');
      for (const row of rows) {
        const route = row.route ? (JSON.parse(row.route) as Memory['route']) : null;
        const text = indexText({ text: row.text, route });
        const terms = analyse(text).join(' ');
        if (terms === analysedBefore(text).join(' ')) continue;
        remove.run(BigInt(row.rowid));
        insert.run(BigInt(row.rowid), nsToken(row.namespace), terms);
      }
      db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(String(last), REANALYSIS_MARK);
    }
    db.exec('COMMIT');
    return last === undefined;
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Page size of the database file. A 512-dimension vector (2 KB) in the log's blob table fits in a 4 KB page
 * only once, so every vector took a page of its own; 16 KB pages hold seven.
 */
export const PAGE_SIZE = 16_384;

/** Files up to this size are converted to PAGE_SIZE when opened with no other connection (a VACUUM). */
export const PAGE_SIZE_CONVERSION_MAX_BYTES = 128 * 2 ** 20;

/** Minimal view of a better-sqlite3 connection. */
interface Connection {
  pragma(source: string, options?: { simple?: boolean }): unknown;
  exec(sql: string): unknown;
  prepare(sql: string): { get(): unknown };
}

/**
 * Gives the file PAGE_SIZE pages (call before WAL is switched on): a new, empty database takes it at once; an
 * older one is rewritten by VACUUM when it is at most PAGE_SIZE_CONVERSION_MAX_BYTES and no other connection
 * has it open (leaving WAL needs that); otherwise it keeps its pages and a later open tries again. Page size is
 * not schema: nothing else depends on it, and the migrations above run the same on any page size.
 */
export function applyPageSize(db: Connection, fileBytes: number, pageSize = PAGE_SIZE): 'set' | 'converted' | 'kept' {
  const current = db.pragma('page_size', { simple: true }) as number;
  if (current === pageSize) return 'kept';
  const empty = db.prepare(`SELECT 1 FROM sqlite_master LIMIT 1`).get() === undefined;
  if (empty) {
    db.pragma(`page_size = ${pageSize}`);
    return 'set';
  }
  if (fileBytes > PAGE_SIZE_CONVERSION_MAX_BYTES) return 'kept';
  try {
    if (db.pragma('journal_mode = DELETE', { simple: true }) !== 'delete') return 'kept';
    db.pragma(`page_size = ${pageSize}`);
    db.exec('VACUUM');
    return 'converted';
  } catch {
    return 'kept'; // another connection holds the file: a later open converts it
  }
}

