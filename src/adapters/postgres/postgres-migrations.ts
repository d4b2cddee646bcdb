import { CairnError } from '../../interfaces/errors.js';
import type { PoolClient } from './postgres-driver.js';
import { MIGRATION_LOCK, MIGRATIONS, SCHEMA_VERSION, type VectorStorage } from './postgres-schema.js';

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

/**
 * Brings the schema to SCHEMA_VERSION: refuses a newer one, refuses a database that holds another program's
 * tables, and applies the missing steps in one transaction under an advisory lock (many processes may open
 * a new database at once; the second waits and then finds it done).
 */
export async function migrate(client: PoolClient, options: { createExtension: boolean; location: string }): Promise<ServerFacts> {
  const serverVersion = (await client.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0]?.v ?? 'unknown';
  let version = await schemaVersion(client);
  if (version !== null) refuseNewer(version);
  if (version !== SCHEMA_VERSION) {
    await client.query('BEGIN');
    try {
      await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      // A step may rebuild an index of a large store (schema 6 rebuilds the postings' key): no statement
      // timeout for this transaction, which would roll the whole migration back on every open.
      await client.query('SET LOCAL statement_timeout = 0');
      version = await schemaVersion(client); // another process may have migrated meanwhile
      if (version !== null) refuseNewer(version);
      if (version === null) {
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
      let v = version ?? 0;
      if (v < SCHEMA_VERSION) {
        const reason = v === 0 ? await ensurePgvector(client, options.createExtension) : null;
        const storage: VectorStorage = v === 0 ? (reason === null ? 'pgvector' : 'array') : await storedVectorStorage(client);
        for (; v < SCHEMA_VERSION; v++) {
          await client.query((MIGRATIONS[v] as (s: VectorStorage) => string)(storage));
          await client.query('INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)', [v + 1, new Date().toISOString()]);
        }
        if (reason !== null) await client.query(`INSERT INTO meta (key, value) VALUES ('vector_fallback', $1)`, [reason]);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
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
