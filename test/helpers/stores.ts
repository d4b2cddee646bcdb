import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { createSqliteStore } from '../../src/adapters/sqlite/sqlite-store.js';
import type { Store } from '../../src/interfaces/store.js';
import { createTestDatabase, pgSkip, postgresStoreFactory } from './postgres.js';

/**
 * The backends the shared suites run on (the engine suite, replay and recovery, the Store contract): one
 * place, so a new backend is added here once. Each factory makes a fresh, empty store; the caller closes it.
 */
export interface StoreFactory {
  /** Shown in suite names: `sqlite`, `postgres`. */
  name: string;
  make: () => Promise<Store>;
  /**
   * A fresh, empty database that other processes reach by its location (what `--db` / CAIRN_DB and
   * `openStoreAt` take: a file path or a postgres:// URL), removed by `drop`.
   */
  shared: () => Promise<{ location: string; drop: () => Promise<void> }>;
}

let root: string | null = null;
let counter = 0;

/** A fresh SQLite file in a temp folder removed after the test file. */
function sqlitePath(): string {
  if (root === null) {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-stores-'));
    root = dir;
    after(() => rmSync(dir, { recursive: true, force: true }));
  }
  return join(root, `store-${++counter}.db`);
}

/**
 * SQLite always; PostgreSQL (with pgvector, a fresh database per store, dropped on close) when
 * CAIRN_TEST_PG names a server. Without it the PostgreSQL runs are left out, and `pgSkip` says why.
 */
export function storeFactories(): StoreFactory[] {
  const factories: StoreFactory[] = [
    {
      name: 'sqlite',
      make: async () => createSqliteStore({ path: sqlitePath() }),
      shared: async () => ({ location: sqlitePath(), drop: async () => {} }),
    },
  ];
  if (!pgSkip) {
    factories.push({
      name: 'postgres',
      make: postgresStoreFactory({ vector: true }),
      shared: async () => {
        const db = await createTestDatabase({ vector: true });
        return { location: db.url, drop: () => db.drop() };
      },
    });
  }
  return factories;
}

export { pgSkip };
