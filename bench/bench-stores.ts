/**
 * Fresh, empty stores for benchmarks that run on either backend: an SQLite file in a folder, or a new
 * database on a PostgreSQL server given by its admin URL (created here, dropped by `drop`).
 */
import pg from 'pg';
import { join } from 'node:path';

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
