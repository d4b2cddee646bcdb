import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { PAGE_SIZE, SCHEMA_VERSION } from '../src/adapters/sqlite/sqlite-schema.js';
import { vectorTableName, vectorTableSql } from '../src/adapters/sqlite/sqlite-vector-table.js';
import { insertVectors, vectorSource } from './fixtures/vector-index-data.js';
import { UNDO_MIGRATION_12 } from './helpers/sqlite-downgrade.js';

const root = mkdtempSync(join(tmpdir(), 'cairn-sqlite-upgrade-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const NS = 'acme/shop';
const now = () => new Date().toISOString();

/**
 * A database as cairn left it before schema version 8: 4 KB pages, no vector change log, no store id. Built by
 * a current store, then taken back: the objects migration 8 adds are removed and the versions from 8 on are
 * forgotten, so opening it applies migration 8 and re-applies the later ones (which leave what they find).
 */
async function version7Database(): Promise<{ path: string; ids: string[]; probe: Float32Array; before: { id: string; similarity: number }[] }> {
  const path = join(root, `old-${++counter}.db`);
  const store = createSqliteStore({ path, pageSize: 4096, vectorIndex: false });
  const next = vectorSource(7);
  const memories = await insertVectors(store, NS, 300, next);
  const probe = next();
  const before = await store.vectorCandidates(probe, 10, { namespace: NS, now: now() });
  await store.close();
  const db = new Database(path);
  db.exec(`DROP TRIGGER vector_changes_insert; DROP TRIGGER vector_changes_update; DROP TRIGGER vector_changes_delete; DROP TRIGGER vector_changes_trim;
           DROP TABLE vector_changes; DELETE FROM meta WHERE key = 'store_id'; ${UNDO_MIGRATION_12}
           DELETE FROM schema_version WHERE version >= 8`);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { path, ids: memories.map((m) => m.id), probe, before };
}

function facts(path: string): { pageSize: number; version: number; changes: number | null; storeId: string | null } {
  const db = new Database(path, { readonly: true });
  try {
    const hasChanges = db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'vector_changes'`).get() !== undefined;
    return {
      pageSize: db.pragma('page_size', { simple: true }) as number,
      version: (db.prepare('SELECT MAX(version) AS v FROM schema_version').get() as { v: number }).v,
      changes: hasChanges ? (db.prepare('SELECT COUNT(*) AS n FROM vector_changes').get() as { n: number }).n : null,
      storeId: (db.prepare(`SELECT value FROM meta WHERE key = 'store_id'`).get() as { value: string } | undefined)?.value ?? null,
    };
  } finally {
    db.close();
  }
}

describe('SQLite schema upgrade to version 8 and 16 KB pages', () => {
  it('a version-7 database with 4 KB pages upgrades: change log, store id, larger pages, every memory and vector kept', async () => {
    const { path, ids, probe, before } = await version7Database();
    assert.deepEqual(facts(path), { pageSize: 4096, version: 7, changes: null, storeId: null });
    const store = createSqliteStore({ path, vectorIndex: false });
    try {
      assert.equal((await store.diagnostics()).schemaVersion, SCHEMA_VERSION);
      assert.equal((await store.getMemories(ids)).length, ids.length);
      assert.deepEqual(await store.vectorCandidates(probe, 10, { namespace: NS, now: now() }), before);
      // The triggers count a new vector.
      await insertVectors(store, NS, 1, vectorSource(8));
    } finally {
      await store.close();
    }
    const after = facts(path);
    assert.equal(after.version, SCHEMA_VERSION);
    assert.equal(after.pageSize, PAGE_SIZE);
    assert.equal(after.changes, 1);
    assert.match(after.storeId ?? '', /^[0-9a-f]{32}$/);
  });

  it('while another connection holds the old file open, it migrates but keeps its pages until a later open', async () => {
    const { path, probe, before } = await version7Database();
    const other = new Database(path);
    other.pragma('journal_mode = WAL');
    other.prepare('SELECT COUNT(*) FROM memories').get();
    try {
      const store = createSqliteStore({ path, vectorIndex: false });
      try {
        assert.deepEqual(await store.vectorCandidates(probe, 10, { namespace: NS, now: now() }), before);
      } finally {
        await store.close();
      }
      assert.deepEqual({ ...facts(path), storeId: null }, { pageSize: 4096, version: SCHEMA_VERSION, changes: 0, storeId: null });
    } finally {
      other.close();
    }
    const store = createSqliteStore({ path, vectorIndex: false });
    await store.close();
    assert.equal(facts(path).pageSize, PAGE_SIZE);
  });
});

describe('SQLite schema upgrade to version 11 (a vector table per dimension)', () => {
  it('moves the vectors of the old memories_vec table into memories_vec_<n>, every search answer kept', async () => {
    const path = join(root, `old-${++counter}.db`);
    const store = createSqliteStore({ path, vectorIndex: false });
    const next = vectorSource(11);
    const memories = await insertVectors(store, NS, 200, next);
    const probe = next();
    const before = await store.vectorCandidates(probe, 10, { namespace: NS, now: now() });
    await store.close();
    // Taken back to version 10: the same vectors in a vec0 table named without its dimension.
    const db = new Database(path);
    sqliteVec.load(db);
    const table = vectorTableName(probe.length);
    db.exec(vectorTableSql(probe.length).replace(table, 'memories_vec'));
    db.exec(`INSERT INTO memories_vec (rowid, namespace, active, kind, embedding) SELECT rowid, namespace, active, kind, embedding FROM ${table}`);
    db.exec(`DROP TABLE ${table}; ${UNDO_MIGRATION_12} DELETE FROM schema_version WHERE version >= 11`);
    db.close();
    const names = (p: string) => {
      const raw = new Database(p, { readonly: true });
      try {
        return (raw.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'memories_vec%' AND sql LIKE 'CREATE VIRTUAL%'`).all() as { name: string }[]).map((r) => r.name);
      } finally {
        raw.close();
      }
    };
    assert.deepEqual(names(path), ['memories_vec']);
    const upgraded = createSqliteStore({ path, vectorIndex: false });
    try {
      assert.equal((await upgraded.diagnostics()).schemaVersion, SCHEMA_VERSION);
      assert.deepEqual(await upgraded.vectorCandidates(probe, 10, { namespace: NS, now: now() }), before);
      assert.equal((await upgraded.getVectors(memories.map((m) => m.id))).size, memories.length);
    } finally {
      await upgraded.close();
    }
    assert.deepEqual(names(path), [table]);
  });
});
