import { CairnError } from '../../interfaces/errors.js';
import { LOCK_TIMEOUT_MS, sleep, type PoolClient } from './postgres-driver.js';
import { snapshotHolders } from './postgres-vector-index.js';
import { MIGRATION_FOLLOW_UPS } from './postgres-follow-ups.js';
import { CONCURRENT_BUILDS, MIGRATION_LOCK, MIGRATIONS, SCHEMA_VERSION, type ConcurrentBuild, type VectorStorage } from './postgres-schema.js';

/** What opening found out about the server, for the capability flags and `cairn doctor`. */
export interface ServerFacts {
  serverVersion: string;
  schemaVersion: number;
  vectorStorage: VectorStorage;
  /** The installed pgvector version in this database, null when the extension is absent. */
  pgvectorVersion: string | null;
  /** Why vectors are kept without an index, when they are (null with pgvector). */
  fallbackReason: string | null;
}

async function schemaVersion(client: PoolClient): Promise<number | null> {
  const { rows } = await client.query<{ v: number | null; present: boolean }>(
    // In the current schema only: a scratch schema (cairn verify) must not find the live one's table later on its path.
    `SELECT to_regclass(format('%I.schema_version', current_schema())) IS NOT NULL AS present`,
  );
  if (!rows[0]?.present) return null;
  const r = await client.query<{ v: number | null }>('SELECT max(version)::int AS v FROM schema_version');
  return r.rows[0]?.v ?? 0;
}

function refuseNewer(version: number): void {
  if (version > SCHEMA_VERSION) {
    throw new CairnError('UNSUPPORTED', `the database's cairn schema is version ${version}, newer than this cairn understands (${SCHEMA_VERSION})`, {
      hint: 'upgrade cairn on this machine (every process sharing the database needs the newer version)',
    });
  }
}

async function pgvectorVersion(client: PoolClient): Promise<string | null> {
  const { rows } = await client.query<{ v: string }>(`SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'`);
  return rows[0]?.v ?? null;
}

/**
 * Creates the `vector` extension when allowed and possible, inside the migration's transaction (a savepoint,
 * so a refusal leaves the transaction usable). Returns why not when it is not there.
 */
async function ensurePgvector(client: PoolClient, create: boolean): Promise<string | null> {
  if (await pgvectorVersion(client)) return null;
  const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_available_extensions WHERE name = 'vector'`);
  if ((rows[0]?.n ?? 0) === 0) return 'the server has no pgvector extension installed';
  if (!create) return 'pgvector is not created in this database and creating it is switched off';
  await client.query('SAVEPOINT cairn_vector');
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS vector');
    await client.query('RELEASE SAVEPOINT cairn_vector');
    return null;
  } catch (err) {
    await client.query('ROLLBACK TO SAVEPOINT cairn_vector');
    return `this role may not create the vector extension (${(err as Error).message})`;
  }
}

/** Attempts of a migration transaction that timed out on a lock (then STORE_UNAVAILABLE). */
const LOCK_ATTEMPTS = 6;
/** How long an opener waits for another process's migration before it gives up. */
const MIGRATION_WAIT_MS = 15 * 60_000;

/**
 * Brings the schema to SCHEMA_VERSION: refuses a newer one, refuses a database that holds another program's
 * tables, and applies the missing steps under the migration lock (many processes may open a new database
 * at once; the second waits and then finds it done). The steps run in transactions, each committing the
 * versions it applied, so a crash resumes at the first step not recorded. A step with CONCURRENT_BUILDS
 * starts a new transaction, after its indexes are built CONCURRENTLY outside any (a crash there leaves an
 * invalid index, dropped and built again on the next open; a build waiting past LOCK_TIMEOUT_MS for another
 * session's transaction fails the open, see buildConcurrently). No statement timeout applies (a build can
 * outlast one), but a lock is waited for at most LOCK_TIMEOUT_MS: a table lock a migration waits for
 * makes every later query of that table queue behind it, so on a timeout the transaction rolls back,
 * lets them through, and tries again.
 */
export async function migrate(client: PoolClient, options: { createExtension: boolean; location: string }): Promise<ServerFacts> {
  const serverVersion = (await client.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0]?.v ?? 'unknown';
  let version = await schemaVersion(client);
  if (version !== null) refuseNewer(version);
  if (version !== SCHEMA_VERSION) {
    await takeMigrationLock(client);
    try {
      await client.query('SET statement_timeout = 0');
      version = await schemaVersion(client); // another process may have migrated meanwhile
      if (version !== null) refuseNewer(version);
      let v = version ?? 0;
      let fresh = version === null;
      while (fresh || v < SCHEMA_VERSION) {
        const builds = v > 0 ? CONCURRENT_BUILDS[v] : undefined;
        if (builds) await buildConcurrently(client, builds);
        // A new store runs every step in one transaction (its tables are empty); otherwise up to the next
        // step that has indexes to build first.
        let end = v === 0 ? SCHEMA_VERSION : v + 1;
        while (end < SCHEMA_VERSION && !CONCURRENT_BUILDS[end]) end++;
        const from = v;
        const isFresh = fresh;
        await withLockRetries(client, `migrating the schema to version ${end}`, () => applySteps(client, from, end, isFresh, options));
        v = end;
        fresh = false;
      }
    } finally {
      await client.query('RESET statement_timeout').catch(() => {});
      await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => {});
    }
  }
  const storage = await storedVectorStorage(client);
  const fallback = (await client.query<{ value: string }>(`SELECT value FROM meta WHERE key = 'vector_fallback'`)).rows[0]?.value ?? null;
  return {
    serverVersion,
    schemaVersion: SCHEMA_VERSION,
    vectorStorage: storage,
    pgvectorVersion: await pgvectorVersion(client),
    fallbackReason: storage === 'array' ? (fallback ?? 'vectors were stored without pgvector when this database was created') : null,
  };
}

async function storedVectorStorage(client: PoolClient): Promise<VectorStorage> {
  const { rows } = await client.query<{ value: string }>(`SELECT value FROM meta WHERE key = 'vector_storage'`);
  return rows[0]?.value === 'pgvector' ? 'pgvector' : 'array';
}

/**
 * Takes the migration lock for this session, polling (a waiting statement would hold a snapshot that a
 * concurrent index build of the process migrating waits for, and that wait would never end).
 */
async function takeMigrationLock(client: PoolClient): Promise<void> {
  const deadline = Date.now() + MIGRATION_WAIT_MS;
  for (;;) {
    const { rows } = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${MIGRATION_LOCK}) AS ok`);
    if (rows[0]?.ok) return;
    if (Date.now() > deadline) {
      throw new CairnError('STORE_UNAVAILABLE', `another process has been migrating the cairn schema for more than ${MIGRATION_WAIT_MS / 60_000} minutes`, {
        hint: 'see pg_stat_activity for the migrating session; open again when it has finished',
      });
    }
    await sleep(200);
  }
}

/**
 * Builds a step's indexes CONCURRENTLY; an invalid one (a build cut short) is dropped and built again. A
 * concurrent build waits for every transaction of the database holding an older snapshot (a REPEATABLE READ
 * reader idle in transaction, pg_dump) and for the table's open writers, and nothing ends those waits but a
 * lock timeout: each is bounded by LOCK_TIMEOUT_MS. On a timeout the invalid leftover is dropped (or left to
 * the next open when that too has to wait), nothing of the step is applied, and the open fails with
 * STORE_UNAVAILABLE naming the sessions whose transactions it waited for.
 */
async function buildConcurrently(client: PoolClient, builds: readonly ConcurrentBuild[]): Promise<void> {
  await client.query(`SET lock_timeout = ${LOCK_TIMEOUT_MS}`);
  try {
    for (const build of builds) {
      try {
        const { rows } = await client.query<{ valid: boolean }>(
          `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
          [build.index],
        );
        if (rows[0]?.valid === false) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${build.index}`);
        await client.query(build.sql);
      } catch (err) {
        if ((err as { code?: string }).code !== '55P03') throw err;
        const blockers = await snapshotHolders(client);
        await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${build.index}`).catch(() => {});
        throw new CairnError(
          'STORE_UNAVAILABLE',
          `migrating the schema: building index ${build.index} CONCURRENTLY waited ${LOCK_TIMEOUT_MS / 1000} s for ${blockers || 'a long transaction of another session'}; nothing of this step was applied`,
          { cause: err, hint: 'end that transaction (pg_terminate_backend(pid), or commit it where it runs) and open the store again; the migration resumes there' },
        );
      }
    }
  } finally {
    await client.query('RESET lock_timeout').catch(() => {});
  }
}

/** Runs one migration transaction, again after a lock timeout (55P03), up to LOCK_ATTEMPTS times. */
async function withLockRetries(client: PoolClient, what: string, run: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await run();
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '55P03') throw err;
      if (attempt >= LOCK_ATTEMPTS) {
        throw new CairnError('STORE_UNAVAILABLE', `${what}: a table lock was not granted within ${LOCK_TIMEOUT_MS / 1000} s in ${LOCK_ATTEMPTS} attempts (a long transaction of another session holds it); nothing of this step was applied`, {
          cause: err,
          hint: 'end the long transaction (pg_stat_activity shows it) and open the store again',
        });
      }
      await sleep(Math.min(8_000, 500 * 2 ** (attempt - 1)));
    }
  }
}

/** Applies steps from..end-1 in one transaction (the first also creates the version table on a new database). */
async function applySteps(client: PoolClient, from: number, end: number, fresh: boolean, options: { createExtension: boolean; location: string }): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`);
    if (fresh) {
      const { rows } = await client.query<{ name: string }>(
        `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename LIMIT 6`,
      );
      if (rows.length > 0) {
        const shown = rows.slice(0, 5).map((r) => r.name).join(', ') + (rows.length > 5 ? ', …' : '');
        throw new CairnError('INVALID_INPUT', `${options.location} holds another program's tables (${shown}), not cairn's; cairn left it untouched`, {
          field: 'db',
          hint: 'point --db / CAIRN_DB at an empty database (createdb cairn) or a cairn one',
        });
      }
      await client.query('CREATE TABLE schema_version (version integer PRIMARY KEY, applied_at text NOT NULL)');
    }
    const reason = from === 0 ? await ensurePgvector(client, options.createExtension) : null;
    const storage: VectorStorage = from === 0 ? (reason === null ? 'pgvector' : 'array') : await storedVectorStorage(client);
    for (let v = from; v < end; v++) {
      await client.query((MIGRATIONS[v] as (s: VectorStorage) => string)(storage));
      await MIGRATION_FOLLOW_UPS.get(v + 1)?.(client);
      await client.query('INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)', [v + 1, new Date().toISOString()]);
    }
    if (reason !== null) await client.query(`INSERT INTO meta (key, value) VALUES ('vector_fallback', $1)`, [reason]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}
