/**
 * An HNSW index built by an older cairn (pgvector's defaults, ef_construction 64) keeps its parameters: every
 * connection searches with ef_search 800, which over that build finds about 0.8 of the true ten, not 0.97.
 * `cairn doctor` (the store's diagnostics) names such an index and the online rebuild; the rebuild it names
 * gives the index the current parameters, and the note goes. A real server (CAIRN_TEST_PG).
 */
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hnswIndexName, hnswIndexSql } from '../../src/adapters/postgres/postgres-schema.js';
import { createPostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { hnswIndexState, pgSkip, seedVectorsWithoutIndex, testStoreConfig, useTestDatabase } from '../helpers/postgres.js';

const DIMS = 32;

describe('PostgreSQL HNSW index built with older parameters', { skip: pgSkip }, () => {
  const t = useTestDatabase();

  it('doctor names it and the rebuild, which gives it the current parameters', async () => {
    const { db, sql } = t;
    await seedVectorsWithoutIndex(db.url, sql, DIMS, 300);
    // As an older cairn built it: the same index without the WITH clause.
    const old = hnswIndexSql(DIMS).replace(/ WITH \([^)]*\)/u, '');
    assert.doesNotMatch(old, /ef_construction/u);
    await sql.query(old);
    assert.equal(await hnswIndexState(sql, DIMS), 'valid');
    const store = createPostgresStore(testStoreConfig(db.url));
    try {
      await store.open();
      const notes = (await store.diagnostics()).notes;
      const note = notes.find((n) => n.includes('ef_construction 64'));
      assert.ok(note, JSON.stringify(notes));
      const rebuild = /rebuild it online with: (.*)$/u.exec(note)?.[1] ?? '';
      assert.match(rebuild, new RegExp(`REINDEX INDEX CONCURRENTLY ${hnswIndexName(DIMS)};$`, 'u'));
      // The named rebuild, statement by statement (CONCURRENTLY runs outside a transaction block).
      for (const statement of rebuild.split(';').map((x) => x.trim()).filter(Boolean)) await sql.query(statement);
      const { rows } = await sql.query<{ def: string }>('SELECT pg_get_indexdef(to_regclass($1)) AS def', [hnswIndexName(DIMS)]);
      assert.match(rows[0]?.def ?? '', /ef_construction='?200'?/u);
      assert.equal(await hnswIndexState(sql, DIMS), 'valid');
      assert.deepEqual((await store.diagnostics()).notes.filter((n) => /ef_construction/u.test(n)), [], 'rebuilt: no note');
    } finally {
      await store.close();
    }
  });

  it('an index this version builds gets no such note', async () => {
    const { db, sql } = t;
    await sql.query(`DROP INDEX ${hnswIndexName(DIMS)}`);
    await sql.query(hnswIndexSql(DIMS));
    const store = createPostgresStore(testStoreConfig(db.url));
    try {
      await store.open();
      assert.deepEqual((await store.diagnostics()).notes.filter((n) => /ef_construction/u.test(n)), []);
    } finally {
      await store.close();
    }
  });
});
