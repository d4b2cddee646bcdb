import { createHash, randomBytes } from 'node:crypto';
import { after, before } from 'node:test';
import pg from 'pg';
import { parsePostgresUrl, type PostgresStoreConfig } from '../../src/adapters/postgres/postgres-config.js';
import { hnswIndexName, MIGRATIONS, SCHEMA_VERSION } from '../../src/adapters/postgres/postgres-schema.js';
import { createPostgresStore, type PostgresStore } from '../../src/adapters/postgres/postgres-store.js';

/**
 * A real PostgreSQL server for tests, found through CAIRN_TEST_PG (the admin URL of a throwaway cluster:
 * `bash scripts/pg-cluster.sh start <dir> <port>` prints it; CI's .ci/run exports it). Every test gets a
 * fresh database with a unique name and drops it afterwards. Without CAIRN_TEST_PG the PostgreSQL suites
 * skip, naming why (`pgSkip`).
 */

const ADMIN_URL = process.env['CAIRN_TEST_PG'] ?? '';

/** The reason to skip PostgreSQL tests, or undefined when a server is configured. */
export const pgSkip: string | undefined = ADMIN_URL
  ? undefined
  : 'CAIRN_TEST_PG is not set: start a cluster with `bash scripts/pg-cluster.sh start /tmp/pg-test 54350` and export the URL it prints';

/** A role without superuser rights: it cannot create the (untrusted) vector extension. */
const NO_VECTOR_ROLE = 'cairn_test_novector';

export interface TestDatabase {
  name: string;
  /** URL of the database, as the role the store connects as. */
  url: string;
  /** The cluster's data directory and this database's folder in it (base/<oid>), to read its files. */
  dataDir: string;
  databaseDir: string;
  drop(): Promise<void>;
}

let counter = 0;

async function admin<T>(fn: (client: pg.Client) => Promise<T>, database?: string): Promise<T> {
  const url = new URL(ADMIN_URL);
  if (database) url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates an empty database. `vector: false` makes it owned by, and reached as, a role that may not create
 * the vector extension, so the store takes its fallback (vectors without an index, fusion in cairn).
 */
export async function createTestDatabase(options: { vector?: boolean } = {}): Promise<TestDatabase> {
  if (pgSkip) throw new Error(pgSkip);
  const vector = options.vector ?? true;
  counter++;
  const name = `cairn_t_${process.pid}_${counter}_${randomBytes(3).toString('hex')}`;
  await admin(async (c) => {
    if (!vector) {
      const { rowCount } = await c.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [NO_VECTOR_ROLE]);
      if (!rowCount) await c.query(`CREATE ROLE ${NO_VECTOR_ROLE} LOGIN NOSUPERUSER`).catch(() => {}); // another test file may race us
    }
    await c.query(`CREATE DATABASE ${name}${vector ? '' : ` OWNER ${NO_VECTOR_ROLE}`}`);
  });
  return describeDatabase(name, vector);
}

/** A created database as the tests see it: its URL (as the role the store connects as) and its folder. */
async function describeDatabase(name: string, vector: boolean): Promise<TestDatabase> {
  const { dataDir, oid } = await admin(async (c) => {
    const dir = (await c.query<{ d: string }>(`SELECT current_setting('data_directory') AS d`)).rows[0]?.d as string;
    const o = (await c.query<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = $1', [name])).rows[0]?.oid as number;
    return { dataDir: dir, oid: o };
  });
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  if (!vector) url.username = NO_VECTOR_ROLE;
  return {
    name,
    url: url.toString(),
    dataDir,
    databaseDir: `${dataDir}/base/${oid}`,
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/**
 * The committed schema objects of the store's database (relations and their kinds, indexes with their
 * definitions, in cairn's schema), read on a connection of their own: what a DDL statement would change.
 */
export async function postgresCatalog(store: { location: string }): Promise<string[]> {
  const database = new URL(store.location).pathname.slice(1);
  return admin(async (c) => {
    const { rows } = await c.query<{ entry: string }>(
      `SELECT c.relkind::text || ' ' || c.relname || CASE WHEN c.relkind = 'i' THEN ' ' || pg_get_indexdef(c.oid) ELSE '' END AS entry
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') ORDER BY 1`,
    );
    return rows.map((r) => r.entry);
  }, database);
}

/** Runs one statement as the cluster's admin in `database` and returns its rows. */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(database: string, sql: string, values: unknown[] = []): Promise<R[]> {
  return admin(async (c) => (await c.query<R>(sql, values)).rows, database);
}

/** The store configuration for a test database URL. */
export function testStoreConfig(url: string, over: Partial<PostgresStoreConfig> = {}): PostgresStoreConfig {
  const { rootCertPath: _ignored, ...parsed } = parsePostgresUrl(url);
  return { ...parsed, poolSize: 4, ...over };
}

/**
 * A database with cairn's schema already migrated, cloned from a template made once per schema and
 * variant (shared by every test process; migrating costs about half of a fresh database's set-up).
 */
async function createMigratedDatabase(vector: boolean): Promise<TestDatabase> {
  const template = `cairn_tpl_s${SCHEMA_VERSION}_${vector ? 'vector' : 'plain'}_${createHash('sha256').update(MIGRATIONS.map((m) => m('pgvector')).join('')).digest('hex').slice(0, 8)}`;
  templates[template] ??= (async () => {
    const exists = await admin(async (c) => ((await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [template])).rowCount ?? 0) > 0);
    if (exists) return;
    const fresh = await createTestDatabase({ vector });
    const store = createPostgresStore(testStoreConfig(fresh.url));
    await store.open();
    await store.close();
    // Another process may have made the same template meanwhile: then this copy is simply dropped.
    await admin((c) => c.query(`ALTER DATABASE ${fresh.name} RENAME TO ${template}`)).catch(() => fresh.drop());
  })();
  await templates[template];
  counter++;
  const name = `cairn_t_${process.pid}_${counter}_${randomBytes(3).toString('hex')}`;
  await admin(async (c) => {
    for (let attempt = 0; ; attempt++) {
      try {
        // FILE_COPY: no connection may be open to the template, which holds none between clones.
        await c.query(`CREATE DATABASE ${name} TEMPLATE ${template} STRATEGY FILE_COPY${vector ? '' : ` OWNER ${NO_VECTOR_ROLE}`}`);
        break;
      } catch (err) {
        // Two processes cloning the same template at the same instant: the second waits and retries.
        if (attempt > 20 || !/being accessed by other users/u.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  });
  return describeDatabase(name, vector);
}

const templates: Record<string, Promise<void>> = {};

/**
 * A factory of fresh PostgreSQL stores for the shared suites (contract, engine, replay…): each store lives
 * in its own new database (already migrated, cloned from a template), dropped when the store is closed.
 * Suites about opening an empty database (migrations, faults) use createTestDatabase instead.
 */
export function postgresStoreFactory(options: { vector?: boolean } = {}): () => Promise<PostgresStore> {
  return async () => {
    const db = await createMigratedDatabase(options.vector ?? true);
    const store = createPostgresStore(testStoreConfig(db.url));
    const close = store.close.bind(store);
    store.close = async () => {
      await close();
      await db.drop();
    };
    return store;
  };
}

/** Brings an empty database to schema `version` (with pgvector), as an older cairn left it. */
export async function migrateTestDatabaseTo(client: pg.Client, version: number): Promise<void> {
  await client.query('CREATE EXTENSION IF NOT EXISTS vector');
  await client.query('BEGIN');
  await client.query('CREATE TABLE schema_version (version integer PRIMARY KEY, applied_at text NOT NULL)');
  for (let v = 0; v < version; v++) {
    await client.query((MIGRATIONS[v] as (s: 'pgvector') => string)('pgvector'));
    await client.query('INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)', [v + 1, 'then']);
  }
  await client.query('COMMIT');
}

/** A fresh database for the enclosing describe block and a client on it: made in before(), dropped in after(). */
export function useTestDatabase(): { readonly db: TestDatabase; readonly sql: pg.Client } {
  const state = {} as { db: TestDatabase; sql: pg.Client };
  before(async () => {
    state.db = await createTestDatabase();
    state.sql = new pg.Client({ connectionString: state.db.url });
    await state.sql.connect();
  });
  after(async () => {
    await state.sql?.end();
    await state.db?.drop();
  });
  return state;
}

/**
 * A migrated store at `url` with an embedder of `dims` dimensions and `rows` memories with random vectors,
 * whose HNSW index is then dropped (as a restore or a hand might leave it).
 */
export async function seedVectorsWithoutIndex(url: string, sql: pg.Client, dims: number, rows: number): Promise<void> {
  const first = createPostgresStore(testStoreConfig(url));
  await first.prepareVectors({ id: 'test-embedder', dimensions: dims });
  await first.close();
  await sql.query(`INSERT INTO meta (key, value) VALUES ('embedder', $1)`, [JSON.stringify({ id: 'test-embedder', dimensions: dims })]);
  await sql.query(`DROP INDEX ${hnswIndexName(dims)}`);
  await sql.query(
    `INSERT INTO memories (id, namespace, text, kind, importance, tags, metadata, created_at, updated_at, dedupe_key, doc_length)
     SELECT 'm' || g, 'acme/shop', 'note ' || g, 'note', 1, '[]', '{}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'm' || g, 2 FROM generate_series(1, ${rows}) g`,
  );
  await sql.query(
    `INSERT INTO memory_vectors (memory_pk, namespace, active, kind, embedding)
     SELECT m.pk, m.namespace, true, 'note', ARRAY(SELECT random() FROM generate_series(1, ${dims}) WHERE m.pk > 0)::real[]::vector FROM memories m`,
  );
}

/**
 * Inserts a memory of namespace acme/shop and its postings straight into the tables, as an older cairn's writer
 * left them (no trigger-kept counts before schema 3): `postings` maps each term to its frequency.
 */
export async function insertRawMemory(client: pg.Client, id: string, text: string, docLength: number, postings: Record<string, number>): Promise<void> {
  const { rows } = await client.query<{ pk: string }>(
    `INSERT INTO memories (id, namespace, text, kind, importance, tags, metadata, created_at, updated_at, dedupe_key, doc_length)
     VALUES ($1, 'acme/shop', $2, 'note', 1, '[]', '{}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', $1, $3) RETURNING pk`,
    [id, text, docLength],
  );
  for (const [term, tf] of Object.entries(postings)) {
    await client.query(`INSERT INTO memory_terms (namespace, term, memory_pk, tf) VALUES ('acme/shop', $1, $2, $3)`, [term, rows[0]?.pk, tf]);
  }
}

/** The HNSW index of `dims` as the catalog has it: valid, invalid (being built, or cut short) or missing. */
export async function hnswIndexState(sql: pg.Client, dims: number): Promise<'valid' | 'invalid' | 'missing'> {
  const { rows } = await sql.query<{ valid: boolean }>(`SELECT indisvalid AND indisready AS valid FROM pg_index WHERE indexrelid = to_regclass($1)`, [hnswIndexName(dims)]);
  return rows[0] === undefined ? 'missing' : rows[0].valid ? 'valid' : 'invalid';
}
