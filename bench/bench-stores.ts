/**
 * Fresh, empty stores for benchmarks that run on either backend: an SQLite file in a folder, or a new
 * database on a PostgreSQL server given by its admin URL (created here, dropped by `drop`).
 */
import pg from 'pg';
import { join } from 'node:path';
import { hnswIndexName, hnswIndexSql } from '../src/adapters/postgres/postgres-schema.js';

export interface Location {
  backend: 'sqlite' | 'postgres';
  /** What --db takes: a file path or a URL. */
  db: string;
  drop(): Promise<void>;
}

let counter = 0;

/** A fresh, empty store location of `backend` (`pgAdmin` is required for postgres). */
export async function freshLocation(backend: Location['backend'], dir: string, pgAdmin: string | null, label: string): Promise<Location> {
  counter++;
  if (backend === 'sqlite') return { backend, db: join(dir, `${label}-${counter}.db`), drop: async () => {} };
  if (!pgAdmin) throw new Error('a PostgreSQL benchmark needs the admin URL of a server (--pg or CAIRN_BENCH_PG)');
  const admin = new pg.Client({ connectionString: pgAdmin });
  await admin.connect();
  const name = `cairn_bench_${process.pid}_${counter}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(pgAdmin);
  url.pathname = `/${name}`;
  return {
    backend,
    db: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: pgAdmin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * Bulk filling on PostgreSQL: runs `fill` with the store's HNSW index dropped (each row then costs no graph
 * insert), then builds it again as the store defines it, with `maintenance_work_mem` raised so the graph is
 * built in memory (2GB unless `maintenanceWorkMem` says), and parallel build workers. Returns the seconds the build took (null: no index to drop).
 */
export async function withIndexBuiltAfter(
  db: string,
  fill: () => Promise<void>,
  options: { maintenanceWorkMem?: string } = {},
): Promise<{ indexBuildSeconds: number | null }> {
  const c = new pg.Client({ connectionString: db });
  await c.connect();
  try {
    const { rows } = await c.query<{ name: string; def: string }>(
      `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'memory_vectors' AND indexname LIKE 'memory_vectors_hnsw_%'`,
    );
    for (const r of rows) await c.query(`DROP INDEX ${r.name}`);
    await fill();
    if (rows.length === 0) {
      // None to drop: an earlier fill of a kept database was stopped after dropping it. Build the store's own.
      const { rows: e } = await c.query<{ value: string }>(`SELECT value FROM meta WHERE key = 'embedder'`);
      const dims = e[0] ? (JSON.parse(e[0].value) as { dimensions: number }).dimensions : null;
      if (dims === null) return { indexBuildSeconds: null };
      rows.push({ name: hnswIndexName(dims), def: hnswIndexSql(dims) });
    }
    const memory = options.maintenanceWorkMem ?? '2GB';
    if (!/^\d+[kMG]B$/u.test(memory)) throw new Error(`bad maintenance_work_mem ${memory}`);
    await c.query(`SET maintenance_work_mem = '${memory}'`);
    await c.query('SET max_parallel_maintenance_workers = 2');
    const t = performance.now();
    for (const r of rows) await c.query(r.def);
    // What autovacuum does to a freshly filled table soon after: statistics, and the visibility map that lets
    // the lexical statement read its covering indexes only.
    await c.query('VACUUM ANALYZE memory_vectors, memories, memory_terms');
    return { indexBuildSeconds: Math.round((performance.now() - t) / 100) / 10 };
  } finally {
    await c.end();
  }
}
