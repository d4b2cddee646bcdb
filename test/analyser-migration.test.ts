import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { stemmer } from 'stemmer';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createPostgresStore } from '../src/adapters/postgres/postgres-store.js';
import { SCHEMA_VERSION as PG_SCHEMA_VERSION } from '../src/adapters/postgres/postgres-schema.js';
import { nsToken } from '../src/adapters/sqlite/sqlite-rows.js';
import { SCHEMA_VERSION } from '../src/adapters/sqlite/sqlite-schema.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { analyse, createAnalyser, queryTerms, STOP_WORDS } from '../src/core/lexical.js';
import type { Store } from '../src/interfaces/store.js';
import { createTestDatabase, insertRawMemory, migrateTestDatabaseTo, pgSkip, testStoreConfig } from './helpers/postgres.js';

/**
 * The analyser's terms changed (British spellings folded, spelling.ts; folders with their trailing slash,
 * lexical.ts). A store written by the analyser before holds the old terms; opening it with this cairn
 * re-analyses every memory (SQLite migration 13, PostgreSQL step 7), so a query in one spelling finds a note
 * in the other, and "deploy/" finds the note naming the folder, on a store written before the change too.
 */

const NS = 'acme/shop';
const BRITISH = 'bigint amounts do not survive JSON.stringify; serialise money through toWire() which turns them into strings.';
const FOLDER = 'Deployments are GitOps through Argo CD watching the deploy/ folder.';
const VERB = 'Services deploy with the shared chart charts/service.';
const TEXTS = [BRITISH, FOLDER, VERB];
/** The terms the analyser before the change gave: Porter stems of the words as written, no folder terms. */
const OLD = createAnalyser({ stopWords: STOP_WORDS, stem: stemmer });
const oldTerms = (text: string) => OLD.analyse(text).filter((t) => !t.endsWith('/'));
const now = () => new Date().toISOString();

/** What the two queries find, lexically: ids in rank order. */
async function found(store: Store): Promise<{ serialize: string[]; folder: string[] }> {
  const filter = { namespace: NS, now: now() };
  const ids = async (q: string) => (await store.lexicalCandidates(queryTerms(q), 10, filter)).map((h) => h.id);
  return { serialize: await ids('how to serialize a bigint'), folder: await ids('deploy/') };
}

describe('re-analysis of a SQLite store written by the analyser before', () => {
  const root = mkdtempSync(join(tmpdir(), 'cairn-reanalyse-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('migration 13 re-indexes every memory: the other spelling and the folder are found', async () => {
    assert.notDeepEqual(oldTerms(BRITISH), analyse(BRITISH), 'the analyser changed the terms of the British note');
    const path = join(root, 'old.db');
    const store = createSqliteStore({ path, vectorIndex: false });
    const engine = new Engine({ store, embedder: createUseEmbedder(), tokenCounter: createGptTokenCounter(), defaultNamespace: NS, countRecalls: false });
    const ids = [];
    for (const text of TEXTS) ids.push((await engine.save({ text })).id);
    await store.close();
    // Taken back to version 12: the full-text rows hold the old terms.
    const db = new Database(path);
    for (const [i, text] of TEXTS.entries()) {
      const { rowid } = db.prepare('SELECT rowid FROM memories WHERE id = ?').get(ids[i]) as { rowid: number };
      db.prepare('DELETE FROM memories_fts WHERE rowid = ?').run(rowid);
      db.prepare('INSERT INTO memories_fts (rowid, ns, terms) VALUES (?, ?, ?)').run(rowid, nsToken(NS), oldTerms(text).join(' '));
    }
    db.exec('DELETE FROM schema_version WHERE version >= 13');
    const matches = (term: string) => (db.prepare('SELECT count(*) AS n FROM memories_fts WHERE terms MATCH ?').get(`"${term}"`) as { n: number }).n;
    assert.deepEqual([matches('serial'), matches('serialis'), matches('deploy/')], [0, 1, 0], 'the old terms, as the analyser before wrote them');
    db.close();

    const upgraded = createSqliteStore({ path, vectorIndex: false });
    try {
      assert.equal((await upgraded.diagnostics()).schemaVersion, SCHEMA_VERSION);
      const after = await found(upgraded);
      assert.deepEqual(after.serialize, [ids[0]], 'the British note is found by the American spelling');
      assert.equal(after.folder[0], ids[1], 'the note naming the folder comes first');
      const { frequencies } = await upgraded.termDocumentFrequencies(['deploy/', 'serial', 'serialis'], NS);
      assert.deepEqual([frequencies.get('deploy/'), frequencies.get('serial'), frequencies.get('serialis') ?? 0], [1, 1, 0]);
    } finally {
      await upgraded.close();
    }
  });
});

describe('re-analysis of a PostgreSQL store written by the analyser before', { skip: pgSkip }, () => {
  it('step 7 replaces every memory\'s postings and document length; the statistics follow', async () => {
    const db = await createTestDatabase();
    const sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    try {
      await migrateTestDatabaseTo(sql, 6);
      for (const [i, text] of TEXTS.entries()) {
        const terms = oldTerms(text);
        const postings: Record<string, number> = {};
        for (const t of terms) postings[t] = (postings[t] ?? 0) + 1;
        await insertRawMemory(sql, `m${i}`, text, terms.length + 1, postings);
      }
      const store = createPostgresStore(testStoreConfig(db.url));
      try {
        await store.open();
        assert.equal((await sql.query<{ v: number }>('SELECT max(version) AS v FROM schema_version')).rows[0]?.v, PG_SCHEMA_VERSION);
        const after = await found(store);
        assert.deepEqual(after.serialize, ['m0'], 'the British note is found by the American spelling');
        assert.equal(after.folder[0], 'm1', 'the note naming the folder comes first');
        for (const [i, text] of TEXTS.entries()) {
          const terms = analyse(text);
          const { rows } = await sql.query<{ term: string; tf: number; doc_length: number }>(
            'SELECT t.term, t.tf, m.doc_length FROM memory_terms t JOIN memories m ON m.pk = t.memory_pk WHERE m.id = $1 ORDER BY t.term',
            [`m${i}`],
          );
          const expected = [...new Set(terms)].sort().map((t) => ({ term: t, tf: terms.filter((x) => x === t).length, doc_length: terms.length + 1 }));
          assert.deepEqual(rows.sort((a, b) => (a.term < b.term ? -1 : 1)), expected, `postings of m${i} are the analyser's, as SQLite indexes them`);
        }
        const ns = (await sql.query('SELECT namespace, documents::int, total_length::int FROM namespace_stats')).rows;
        const nsActual = (await sql.query('SELECT namespace, count(*)::int AS documents, sum(doc_length)::int AS total_length FROM memories GROUP BY namespace')).rows;
        assert.deepEqual(ns, nsActual, 'namespace_stats');
        const stats = (await sql.query('SELECT term, documents::int FROM term_stats ORDER BY term')).rows;
        const counted = (await sql.query('SELECT term, count(*)::int AS documents FROM memory_terms GROUP BY term ORDER BY term')).rows;
        assert.deepEqual(stats, counted, 'term_stats');
      } finally {
        await store.close();
      }
    } finally {
      await sql.end();
      await db.drop();
    }
  });
});
