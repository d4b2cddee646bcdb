import { CairnError } from '../../interfaces/errors.js';
import { LOCK_TIMEOUT_MS, sleep, type Pool, type PoolClient } from './postgres-driver.js';
import { TABLES } from './postgres-schema.js';
import { sessionLine } from './postgres-vector-index.js';

/**
 * What PostgreSQL needs after an erasure so the erased bytes leave the files, and the check that they did.
 *
 * The erasing transaction deletes rows, postings, vectors and rewrites events; PostgreSQL only marks the
 * old tuple versions dead, and their bytes stay in the heap, TOAST and index pages until the space is
 * reused. `VACUUM FULL` writes each table (with its TOAST table) into new files and rebuilds every index of
 * it, including the HNSW index; the old files are truncated to zero at commit and unlinked at the next
 * checkpoint. It takes an ACCESS EXCLUSIVE lock per table while it runs, so other processes wait for it.
 *
 * The planner statistics keep copies of column values outside the tables: ANALYZE (autovacuum's too) stores
 * sample values (most common values, histogram bounds) of `memories.text`, `events.payload`,
 * `memory_terms.term`, `term_stats.term` in the catalog `pg_statistic`. VACUUM FULL does not refresh them,
 * so after the rewrite every compacted table is analysed again (the samples are taken from what is left),
 * and then, when the role may (superuser or the database's owner), `pg_statistic` itself is rewritten so its
 * replaced tuples leave its file too; otherwise the proof says so in what it does not cover.
 *
 * No wait is unbounded: a rewrite waits at most LOCK_TIMEOUT_MS for its lock and is tried again, so a
 * session idle in a transaction that read a cairn table holds the erasure up for a few attempts, never for
 * as long as it lives (and the queries queued behind the lock request get through between attempts); a
 * concurrent index build on those tables is waited for first (boundedByLocks, waitForIndexBuilds). Past the
 * bounds the compaction fails with STORE_UNAVAILABLE naming the session; the erasing transaction stays
 * committed, and running the erasure again resumes it.
 *
 * Not covered: the write-ahead log (pg_wal) holds the erased rows until its segments are recycled (after
 * the checkpoints that follow, longer with wal_keep_size, replication slots or archiving), and WAL archives,
 * base backups and replicas keep what their retention keeps. README (PostgreSQL, erasure) says so.
 */
export async function compactAfterErasure(pool: Pool, tables: readonly string[] = TABLES, options: CompactionBounds = {}): Promise<string[]> {
  const bounds = { lockTimeoutMs: options.lockTimeoutMs ?? LOCK_TIMEOUT_MS, attempts: options.attempts ?? COMPACTION_ATTEMPTS };
  const steps: string[] = [];
  const builds = await waitForIndexBuilds(pool, tables, options.buildWaitMs ?? BUILD_WAIT_MS);
  if (builds) steps.push(builds);
  steps.push((await waitForOlderSnapshots(pool, options.snapshotWaitMs)).step);
  // Rewriting a large table can outlast the statement timeout meant for queries: this connection has none,
  // and is closed afterwards so its settings never reach another caller.
  const client = await pool.connect();
  try {
    await client.query(`SET statement_timeout = 0; SET lock_timeout = ${bounds.lockTimeoutMs}`);
    for (const table of tables) await boundedByLocks(client, `VACUUM FULL ${table}`, [table], bounds);
    steps.push(`VACUUM FULL of ${tables.length} tables (${tables.join(', ')}): each rewritten with its TOAST table, every index rebuilt (HNSW and GIN too)`);
    await boundedByLocks(client, `ANALYZE ${tables.join(', ')}`, tables, bounds);
    steps.push(`ANALYZE of the same ${tables.length} tables: the planner statistics (pg_statistic) sampled again from what is left`);
    if (await canVacuumCatalog(client)) {
      // The tuples ANALYZE replaced are dead only to transactions that began after it: wait again.
      const second = await waitForOlderSnapshots(pool, options.snapshotWaitMs);
      steps.push(second.step);
      await boundedByLocks(client, 'VACUUM FULL pg_statistic', ['pg_catalog.pg_statistic'], bounds);
      steps.push('VACUUM FULL pg_statistic: the replaced statistics tuples rewritten out of its file');
      if (!second.complete) steps.push(STATISTICS_UNSETTLED);
    } else {
      steps.push(`pg_statistic not rewritten: ${CATALOG_NOT_VACUUMED}`);
    }
  } finally {
    client.release(true);
  }
  return steps;
}

/** The bounds of a compaction's waits; the defaults serve every caller but tests. */
export interface CompactionBounds {
  /** Each wait for older snapshots (default 30 s). */
  snapshotWaitMs?: number;
  /** Each wait for a table lock (default LOCK_TIMEOUT_MS, as a migration step). */
  lockTimeoutMs?: number;
  /** Tries of a statement whose lock was not granted (default COMPACTION_ATTEMPTS), then STORE_UNAVAILABLE. */
  attempts?: number;
  /** The wait for index builds running on the compacted tables (default BUILD_WAIT_MS). */
  buildWaitMs?: number;
}

const COMPACTION_ATTEMPTS = 3;
const BUILD_WAIT_MS = 60_000;

/**
 * Runs a statement that takes table locks (VACUUM FULL takes ACCESS EXCLUSIVE, ANALYZE SHARE UPDATE
 * EXCLUSIVE) under the connection's lock timeout. A lock still held by another session when the timeout
 * runs out (a reader idle in its transaction), a deadlock with another session, or a catalog row another
 * session updated meanwhile ("tuple concurrently updated": a concurrent index build) rolls the statement
 * back, which lets the queries queued behind its lock request through; it is tried again after 0.5 s, 1 s,
 * …, and after the last attempt fails with STORE_UNAVAILABLE naming the sessions holding `relations`' locks
 * and the index builds running. Every step of the compaction is idempotent, so a later run completes it.
 */
async function boundedByLocks(client: PoolClient, sql: string, relations: readonly string[], bounds: { lockTimeoutMs: number; attempts: number }): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query(sql);
      return;
    } catch (err) {
      const why = lockFailure(err, bounds.lockTimeoutMs);
      if (why === null) throw err;
      if (attempt >= bounds.attempts) {
        const blockers = await lockBlockers(client, relations);
        throw new CairnError('STORE_UNAVAILABLE', `${sql} did not get its lock in ${bounds.attempts} attempts (${why}), held by ${blockers || 'another session, now gone'}`, {
          cause: err,
          hint: 'end that session\'s transaction (pg_terminate_backend(pid), or commit it where it runs), or wait for its index build to finish',
        });
      }
      await sleep(500 * 2 ** (attempt - 1));
    }
  }
}

/** Why a statement lost a lock contest, in a few words; null for any other failure. */
function lockFailure(err: unknown, lockTimeoutMs: number): string | null {
  const { code, message } = err as { code?: string; message?: string };
  if (code === '55P03') return `each wait ended by its ${lockTimeoutMs / 1000} s lock timeout`;
  if (code === '40P01') return 'a deadlock with another session';
  if (code === 'XX000' && /tuple concurrently updated/u.test(message ?? '')) return 'a catalog row updated by another session meanwhile';
  return null;
}

/** The other sessions holding a lock of one of `relations` in this database, and the index builds running, for messages. */
async function lockBlockers(client: PoolClient, relations: readonly string[]): Promise<string> {
  const { rows } = await client.query<{ pid: number; state: string | null; since: string | null }>(
    `SELECT DISTINCT a.pid, a.state, to_char(a.xact_start, 'YYYY-MM-DD"T"HH24:MI:SS') AS since
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.granted AND l.locktype = 'relation' AND l.pid <> pg_backend_pid()
        AND l.database IN (0, (SELECT oid FROM pg_database WHERE datname = current_database()))
        AND l.relation IN (SELECT to_regclass(r) FROM unnest($1::text[]) r)
      ORDER BY since LIMIT 3`,
    [[...relations]],
  );
  return [...rows.map(sessionLine), ...(await indexBuilds(client, TABLES)).map(buildLine)].join(', ');
}

interface IndexBuild {
  pid: number;
  index: string | null;
  phase: string;
}

function buildLine(b: IndexBuild): string {
  return `pid ${b.pid} (building index ${b.index ?? '?'}, ${b.phase})`;
}

/** Index builds (CREATE INDEX, REINDEX, CLUSTER's) other sessions run on `tables` of this database. */
async function indexBuilds(client: Pool | PoolClient, tables: readonly string[]): Promise<IndexBuild[]> {
  const { rows } = await client.query<IndexBuild>(
    `SELECT p.pid, c.relname AS index, p.phase FROM pg_stat_progress_create_index p LEFT JOIN pg_class c ON c.oid = p.index_relid
      WHERE p.datname = current_database() AND p.pid <> pg_backend_pid()
        AND p.relid IN (SELECT to_regclass(format('%I.%I', current_schema(), t)) FROM unnest($1::text[]) t)
      ORDER BY p.pid`,
    [[...tables]],
  );
  return rows;
}

/**
 * A concurrent index build (the background HNSW build of a long-lived cairn, a migration's) on a table
 * about to be rewritten: VACUUM FULL would queue behind its lock, and while it waits the build waits for the
 * compaction's transaction, so the deadlock detector ends one of them (often the build, hours of work on a
 * large store); and ANALYZE beside it can fail on a catalog row both update. So the compaction waits for the
 * builds first, polling, at most `boundMs`; one still running then fails it with STORE_UNAVAILABLE naming the
 * build. Returns the step to record when it waited, null when none was running.
 */
async function waitForIndexBuilds(pool: Pool, tables: readonly string[], boundMs: number): Promise<string | null> {
  const started = Date.now();
  let running = await indexBuilds(pool, tables);
  if (running.length === 0) return null;
  const count = running.length;
  while (running.length > 0) {
    if (Date.now() - started > boundMs) {
      throw new CairnError('STORE_UNAVAILABLE', `an index build on the tables to compact was still running after ${boundMs / 1000} s: ${running.map(buildLine).join(', ')}`, {
        hint: 'let the build finish (pg_stat_progress_create_index shows how far it is), or cancel it (pg_cancel_backend(pid): a long-lived cairn builds it again later)',
      });
    }
    await sleep(100);
    running = await indexBuilds(pool, tables);
  }
  return `waited ${Date.now() - started} ms for ${count} index build${count === 1 ? '' : 's'} on the compacted tables to finish`;
}

/**
 * The compaction step saying VACUUM FULL pg_statistic ran while a transaction older than the ANALYZE was
 * still open: it keeps the replaced statistics tuples (recently dead), and the byte scan of pg_statistic's
 * file is no evidence they are gone, since the sampled values of a text column are stored compressed
 * (pglz). The proof's check reads this step and reports the erasure unproven, failing `file-bytes`.
 */
export const STATISTICS_UNSETTLED =
  'pg_statistic not proven clean: a transaction older than the ANALYZE was still open when it was rewritten, so the replaced statistics tuples (sampled values, stored compressed where the file scan cannot see them) may remain; erase again once it has ended';

export const CATALOG_NOT_VACUUMED = 'the role is neither superuser nor the database\'s owner, so it may not VACUUM FULL the catalog';

/** Whether the connected role may VACUUM FULL this database's catalogs (superuser or the database's owner). */
export async function canVacuumCatalog(client: Pool | PoolClient): Promise<boolean> {
  const { rows } = await client.query<{ ok: boolean }>(
    `SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
         OR pg_has_role(current_user, (SELECT datdba FROM pg_database WHERE datname = current_database()), 'USAGE') AS ok`,
  );
  return rows[0]?.ok === true;
}

/**
 * VACUUM FULL copies a dead tuple that some open snapshot may still see ("recently dead"), so the erased
 * versions would survive it while any transaction of this database began before the erasure committed (a
 * long read in another cairn process, an auto-analyze). Waits, up to `timeoutMs`, until no other backend of
 * the cluster holds a snapshot or an open transaction id older than now (a transaction between statements
 * has no snapshot but its id still holds the horizon back; backends of other databases are counted too,
 * since some of them — CREATE DATABASE among them — hold back every database's horizon); past that the compaction runs anyway and the file check
 * reports what it finds (a re-run of the erasure compacts and checks again).
 */
async function waitForOlderSnapshots(pool: Pool, timeoutMs = 30_000): Promise<{ complete: boolean; step: string }> {
  const started = Date.now();
  const { rows } = await pool.query<{ xmax: string }>('SELECT txid_snapshot_xmax(txid_current_snapshot())::text AS xmax');
  const horizon = String(BigInt(rows[0]?.xmax ?? '0') % 4294967296n);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE pid <> pg_backend_pid()
          AND ((backend_xmin IS NOT NULL AND age(backend_xmin) > age($1::text::xid)) OR (backend_xid IS NOT NULL AND age(backend_xid) > age($1::text::xid)))`,
      [horizon],
    );
    const older = r.rows[0]?.n ?? 0;
    if (older === 0) return { complete: true, step: `waited ${Date.now() - started} ms until no older transaction of the cluster held a snapshot` };
    if (Date.now() > deadline) {
      return { complete: false, step: `stopped waiting after ${timeoutMs} ms with ${older} older transactions still open (their dead tuples may survive VACUUM FULL)` };
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** What the raw scan read: per kind of relation file, how many and their bytes; and how many needles it found. */
export interface RelationScan {
  /** Whether this role may read the server's files (superuser or pg_read_server_files). */
  readable: boolean;
  found: number;
  /** Indexes (into the needles) of those found. */
  foundNeedles: Set<number>;
  scanned: { what: string; files: number; bytes: number }[];
  detail: string;
}

/** What the proof does not reach; README (PostgreSQL, erasure) says the same. */
export const NOT_COVERED: readonly string[] = [
  'the write-ahead log (pg_wal): it keeps the erased rows until its segments are recycled, after the next checkpoints (longer with wal_keep_size, replication slots or archiving)',
  'WAL archives, base backups and replicas, for as long as their own retention keeps them',
];

/** Whether the connected role may read the cluster's files through pg_read_binary_file. */
export async function canReadServerFiles(pool: Pool): Promise<boolean> {
  const { rows } = await pool.query<{ ok: boolean }>(
    `SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) OR pg_has_role(current_user, 'pg_read_server_files', 'MEMBER') AS ok`,
  );
  return rows[0]?.ok === true;
}

const CHUNK = 8 * 1024 * 1024;
const SEGMENT = 1024 * 1024 * 1024;

/**
 * TOAST stores a long value in chunks of about 2 KB (TOAST_MAX_CHUNK_SIZE, 1996 bytes with 8 KB pages), so
 * a long text is never contiguous in the files. A needle longer than WINDOW bytes is looked for as its
 * consecutive WINDOW-byte pieces: any run of 1996 stored bytes holds at least one whole piece (900 + 900 − 1
 * ≤ 1996), so a text that survives anywhere is still seen, and a 900-byte piece of real text cannot occur
 * by chance.
 */
const WINDOW = 900;

function needlePieces(needle: string): Buffer[] {
  const bytes = Buffer.from(needle, 'utf8');
  if (bytes.length <= WINDOW) return [bytes];
  const pieces: Buffer[] = [];
  for (let at = 0; at + WINDOW <= bytes.length; at += WINDOW) pieces.push(bytes.subarray(at, at + WINDOW));
  return pieces;
}

/**
 * Reads the files of every relation of the schema (heap, TOAST heap and TOAST index, every index; each 1 GB
 * segment) through the server and counts the needles found in their raw bytes (a long needle counts when
 * any of its pieces is found). Reads overlap by the longest piece, so one across a read border is seen.
 */
export async function rawFilesContain(pool: Pool, needles: string[], options: { statistics?: boolean } = {}): Promise<RelationScan> {
  if (!(await canReadServerFiles(pool))) {
    return { readable: false, found: 0, foundNeedles: new Set(), scanned: [], detail: 'this role is neither superuser nor a member of pg_read_server_files' };
  }
  const { rows } = await pool.query<{ path: string; kind: string }>(
    `WITH t AS (SELECT c.oid, c.reltoastrelid FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relname = ANY($1::text[])
                  OR $2::boolean AND c.oid = 'pg_catalog.pg_statistic'::regclass),
     rels AS (
       SELECT oid FROM t
       UNION SELECT reltoastrelid FROM t WHERE reltoastrelid <> 0
       UNION SELECT i.indexrelid FROM pg_index i WHERE i.indrelid IN (SELECT oid FROM t UNION SELECT reltoastrelid FROM t WHERE reltoastrelid <> 0))
     SELECT pg_relation_filepath(r.oid) AS path, c.relkind::text AS kind FROM rels r JOIN pg_class c ON c.oid = r.oid
      WHERE pg_relation_filepath(r.oid) IS NOT NULL ORDER BY 1`,
    [[...TABLES], options.statistics === true],
  );
  const pieces = needles.map(needlePieces);
  const targets = pieces.flat();
  const owner = pieces.flatMap((p, i) => p.map(() => i));
  const overlap = Math.max(0, ...targets.map((t) => t.length)) - 1;
  const seen = new Set<number>();
  const kinds = new Map<string, { what: string; files: number; bytes: number }>([
    ['r', { what: 'table files (heap)', files: 0, bytes: 0 }],
    ['t', { what: 'TOAST table files', files: 0, bytes: 0 }],
    ['i', { what: 'index files (B-tree, GIN, HNSW, TOAST indexes)', files: 0, bytes: 0 }],
  ]);
  for (const { path, kind } of rows) {
    const tally = kinds.get(kind) ?? (kinds.get('r') as { what: string; files: number; bytes: number });
    for (let segment = 0; ; segment++) {
      const file = segment === 0 ? path : `${path}.${segment}`;
      let read = 0;
      for (let offset = 0; offset < SEGMENT; offset += CHUNK) {
        const start = Math.max(0, offset - overlap);
        const r = await pool.query<{ data: Buffer | null }>('SELECT pg_read_binary_file($1, $2, $3, true) AS data', [file, start, CHUNK + (offset - start)]);
        const data = r.rows[0]?.data ?? null;
        if (data === null) break;
        if (offset === 0) tally.files++;
        targets.forEach((t, i) => {
          const needle = owner[i] as number;
          if (!seen.has(needle) && data.includes(t)) seen.add(needle);
        });
        read += data.length - (offset - start);
        if (data.length < CHUNK + (offset - start)) break;
      }
      tally.bytes += Math.max(0, read);
      if (read < SEGMENT) break;
    }
  }
  const scanned = [...kinds.values()];
  const files = scanned.reduce((n, k) => n + k.files, 0);
  const bytes = scanned.reduce((n, k) => n + k.bytes, 0);
  return { readable: true, found: seen.size, foundNeedles: seen, scanned, detail: `${seen.size} of ${needles.length} needles in ${files} relation files (${bytes} bytes)` };
}

/**
 * Looks for the needles (as substrings) and the terms (as whole values of the columns holding terms:
 * `memory_terms.term`, `term_stats.term`) among the values pg_stats shows for
 * cairn's tables: most common values, histogram bounds and most common elements, each cast to text (ANALYZE
 * keeps no value wider than 1 KB there, so a long needle is looked for whole). Returns the indexes found:
 * needles first, then terms after them.
 */
const TERM_COLUMNS = new Set(['memory_terms.term', 'term_stats.term']);

export async function statisticsContain(pool: Pool, needles: string[], terms: string[]): Promise<{ found: Set<number>; values: number; columns: number; bytes: number }> {
  const { rows } = await pool.query<{ col: string; value: string }>(
    `SELECT s.tablename || '.' || s.attname AS col, v AS value
       FROM pg_stats s,
            LATERAL unnest(coalesce(s.most_common_vals::text::text[], '{}') || coalesce(s.histogram_bounds::text::text[], '{}')
                           || coalesce(s.most_common_elems::text::text[], '{}')) v
      WHERE s.schemaname = current_schema() AND s.tablename = ANY($1::text[])`,
    [[...TABLES]],
  );
  const termSet = new Map(terms.map((t, i) => [t, needles.length + i]));
  const found = new Set<number>();
  for (const { col, value } of rows) {
    needles.forEach((n, i) => {
      if (!found.has(i) && value.includes(n)) found.add(i);
    });
    const t = TERM_COLUMNS.has(col) ? termSet.get(value) : undefined;
    if (t !== undefined) found.add(t);
  }
  const bytes = rows.reduce((n, r) => n + Buffer.byteLength(r.value), 0);
  return { found, values: rows.length, columns: new Set(rows.map((r) => r.col)).size, bytes };
}
