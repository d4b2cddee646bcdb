/**
 * BM25's statistics on PostgreSQL, kept by triggers: after every kind of write (insert, re-index with other
 * terms, a move between namespaces, delete, clearing a namespace, a rolled-back transaction) `namespace_stats`
 * equals the count and total document length of the memories table itself, and `term_stats` equals the count
 * of each (namespace, term)'s postings, with no row for a term nothing holds any more.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createPostgresStore, type PostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { analyse } from '../../src/core/lexical.js';
import { makeMemory } from '../contract/store-contract.js';
import { createTestDatabase, pgSkip, testStoreConfig, type TestDatabase } from '../helpers/postgres.js';

describe('PostgreSQL namespace statistics', { skip: pgSkip }, () => {
  let db: TestDatabase;
  let store: PostgresStore;
  let sql: pg.Client;

  before(async () => {
    db = await createTestDatabase();
    store = createPostgresStore(testStoreConfig(db.url));
    await store.open();
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });
  after(async () => {
    await sql?.end();
    await store?.close();
    await db?.drop();
  });

  /** namespace → [documents, total length], from the trigger-kept table and from the memories themselves. */
  async function both(): Promise<{ kept: Record<string, [number, number]>; actual: Record<string, [number, number]> }> {
    const of = async (q: string) =>
      Object.fromEntries((await sql.query<{ ns: string; d: string; t: string }>(q)).rows.map((r) => [r.ns, [Number(r.d), Number(r.t)] as [number, number]]));
    return {
      kept: await of('SELECT namespace AS ns, documents AS d, total_length AS t FROM namespace_stats'),
      actual: await of('SELECT namespace AS ns, count(*) AS d, sum(doc_length) AS t FROM memories GROUP BY namespace'),
    };
  }
  /** "namespace term" → documents, from the trigger-kept table and from the postings themselves. */
  async function terms(): Promise<{ kept: Record<string, number>; actual: Record<string, number> }> {
    const of = async (q: string) => Object.fromEntries((await sql.query<{ k: string; d: string }>(q)).rows.map((r) => [r.k, Number(r.d)]));
    return {
      kept: await of(`SELECT namespace || ' ' || term AS k, documents AS d FROM term_stats`),
      actual: await of(`SELECT namespace || ' ' || term AS k, count(*) AS d FROM memory_terms GROUP BY namespace, term`),
    };
  }
  async function assertKept(label: string, expectNamespaces: number): Promise<void> {
    const { kept, actual } = await both();
    assert.deepEqual(kept, actual, label);
    assert.equal(Object.keys(kept).length, expectNamespaces, `${label}: namespaces with memories`);
    const t = await terms();
    assert.ok(Object.keys(t.actual).length > 0 || expectNamespaces === 0, `${label}: postings exist`);
    assert.deepEqual(t.kept, t.actual, `${label}: term document frequencies`);
  }

  it('follow inserts, re-indexing, moves, deletes, clearing and rollbacks', async () => {
    const a = [1, 2, 3, 4].map((i) => makeMemory('acme/shop', `note ${i} about the checkout tax rounding ${'word '.repeat(i)}`));
    const b = [1, 2].map((i) => makeMemory('acme/ops', `ops note ${i} on the deploy window`));
    await store.transaction(async (tx) => {
      for (const m of [...a, ...b]) await tx.insertMemory(m, null, analyse(m.text));
    });
    await assertKept('after inserts', 2);

    const first = a[0] as (typeof a)[number];
    await store.transaction((tx) => tx.updateMemory({ ...first, text: 'a much longer text for the first note with many more words in it' }, { vector: null, terms: analyse('a much longer text for the first note with many more words in it') }));
    await assertKept('after re-indexing with other terms', 2);

    await sql.query(`UPDATE memories SET namespace = 'acme/ops' WHERE id = $1`, [(a[1] as (typeof a)[number]).id]);
    await assertKept('after a move between namespaces', 2);

    await store.transaction((tx) => tx.deleteMemory((a[2] as (typeof a)[number]).id));
    await assertKept('after a delete', 2);

    await assert.rejects(
      store.transaction(async (tx) => {
        await tx.insertMemory(makeMemory('acme/blog', 'a post that never lands'), null, analyse('a post that never lands'));
        throw new Error('roll back');
      }),
      /roll back/u,
    );
    await assertKept('after a rolled-back insert', 2);

    await store.transaction((tx) => tx.clearProjection('acme/ops'));
    await assertKept('after clearing a namespace (its row goes with its last memory)', 1);
    const { documents, frequencies } = await store.termDocumentFrequencies(['note', 'checkout', 'deploy'], 'acme/shop');
    assert.equal(documents, 2, 'the lexical statistics read the kept count');
    const counted = async (term: string, ns: string | null) =>
      Number((await sql.query<{ n: string }>(`SELECT count(*) AS n FROM memory_terms WHERE term = $1 AND ($2::text IS NULL OR namespace = $2)`, [term, ns])).rows[0]?.n);
    assert.deepEqual(Object.fromEntries(frequencies), { note: await counted('note', 'acme/shop'), checkout: await counted('checkout', 'acme/shop') }, 'per-term counts of the namespace; none for a term it lacks');
    const all = await store.termDocumentFrequencies(['note', 'deploy']);
    assert.deepEqual(Object.fromEntries(all.frequencies), { note: await counted('note', null) }, 'store-wide counts sum the namespaces');
  });
});
