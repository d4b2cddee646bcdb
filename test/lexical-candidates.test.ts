import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createSqliteStore, type SqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { queryTerms } from '../src/core/lexical.js';
import type { CandidateFilter, LexicalHit } from '../src/interfaces/store.js';

/**
 * The embedded store's BM25 candidates against the statement they replace, run on a second connection to the
 * same real file: FTS5 ranking the join of every match with the memories it filters on. Same ids, same order,
 * the same scores to the bit, for filters that leave out many of the best matches (forgotten, superseded,
 * expired, other kinds and tags), ties (notes of equal length and term counts), a namespace holding most of the
 * store (matched without its token) and one that does not. Term document frequencies against counting the
 * matches, in a store of two namespaces and in one of a single namespace after texts were changed.
 */

const NS = 'acme/shop';
const OTHER = 'acme/other';
const root = mkdtempSync(join(tmpdir(), 'cairn-lexical-'));
const path = join(root, 'store.db');
let store: SqliteStore;
let reference: Database.Database;

/** Memories of the namespace holding each term, counted by FTS5 on the reference connection. */
function countedFrequencies(db: Database.Database, terms: string[], namespace: string): Map<string, number> {
  const token = 'n' + createHash('sha256').update(namespace).digest('hex').slice(0, 24);
  const count = db.prepare('SELECT COUNT(*) AS n FROM memories_fts WHERE memories_fts MATCH ?');
  const out = new Map<string, number>();
  for (const t of terms) {
    const n = (count.get(`ns:"${token}" AND terms:"${t}"`) as { n: number }).n;
    if (n > 0) out.set(t, n);
  }
  return out;
}

/** The statement ranking every match joined with memories (filters as filterSql writes them). */
function joinedRanking(terms: string[], k: number, filter: CandidateFilter): LexicalHit[] {
  const quote = (t: string) => `"${t.replace(/"/g, '""')}"`;
  const token = 'n' + createHash('sha256').update(filter.namespace).digest('hex').slice(0, 24);
  const where = ['memories_fts MATCH @match', 'm.namespace = @namespace'];
  const params: Record<string, unknown> = { match: `ns:${quote(token)} AND terms:(${terms.map(quote).join(' OR ')})`, namespace: filter.namespace, k };
  if (!filter.includeInactive) {
    where.push('m.forgotten_at IS NULL AND m.superseded_by IS NULL AND (m.expires_at IS NULL OR m.expires_at > @now)');
    params['now'] = filter.now;
  }
  if (filter.kinds?.length) where.push(`m.kind IN (${filter.kinds.map((kind, i) => ((params[`kind${i}`] = kind), `@kind${i}`)).join(', ')})`);
  if (filter.tags?.length) {
    where.push(`EXISTS (SELECT 1 FROM json_each(m.tags) t WHERE t.value IN (${filter.tags.map((tag, i) => ((params[`tag${i}`] = tag), `@tag${i}`)).join(', ')}))`);
  }
  return reference
    .prepare(
      `SELECT m.id AS id, -bm25(memories_fts, 0.0, 1.0) AS score FROM memories_fts f JOIN memories m ON m.rowid = f.rowid
       WHERE ${where.join(' AND ')} ORDER BY bm25(memories_fts, 0.0, 1.0) LIMIT @k`,
    )
    .all(params) as LexicalHit[];
}

before(async () => {
  store = createSqliteStore({ path });
  const engine = new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, ingestFilter: { enabled: false } });
  const words = ['cache', 'invalidation', 'checkout', 'retry', 'webhook', 'ledger', 'migration', 'index'];
  const inputs = [];
  for (let i = 0; i < 1200; i++) {
    const a = words[i % words.length] as string;
    const b = words[(i * 3 + 1) % words.length] as string;
    // Many notes of the same shape score the same: ties at every cut.
    const text = i % 2 === 0 ? `${a} ${a} ${b} note ${i}` : `${a} ${b} note ${i} about the shop service layer`;
    inputs.push({
      namespace: i % 7 === 0 ? OTHER : NS,
      text,
      kind: i % 4 === 0 ? ('decision' as const) : ('fact' as const),
      tags: i % 3 === 0 ? ['backend'] : ['frontend'],
      ...(i % 11 === 0 ? { expiresAt: '2020-01-01T00:00:00.000Z' } : {}),
    });
  }
  const saved = await engine.saveMany(inputs);
  // The best-scoring notes (a word twice) are mostly left out by the default filter: the first fetch holds
  // too few that pass and has to widen.
  for (const [i, r] of saved.entries()) {
    if (i % 2 === 0 && i % 10 !== 0 && i % 7 !== 0) await engine.forget(r.id);
  }
  for (const [i, r] of saved.entries()) {
    if (i % 13 === 1 && i % 2 === 1 && i % 7 !== 0) await engine.supersede(r.id, { namespace: NS, text: `replacement ${i} for the ledger rules`, kind: 'fact' });
  }
  reference = new Database(path, { readonly: true });
});

after(async () => {
  reference.close();
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

describe('BM25 candidates on the embedded store', () => {
  const now = new Date().toISOString();
  const filters: [string, CandidateFilter][] = [
    ['default filter', { namespace: NS, now }],
    ['inactive included', { namespace: NS, now, includeInactive: true }],
    ['one kind', { namespace: NS, now, kinds: ['decision'] }],
    ['two kinds and a tag', { namespace: NS, now, kinds: ['decision', 'fact'], tags: ['backend'] }],
    ['another namespace', { namespace: OTHER, now }],
  ];
  const queries = ['cache invalidation', 'checkout retry webhook', 'ledger', 'migration index cache', 'nothing matches this'];
  for (const [name, filter] of filters) {
    it(`equals the joined ranking, ${name}`, async () => {
      let compared = 0;
      for (const q of queries) {
        for (const k of [1, 5, 40, 300, 2000]) {
          const terms = queryTerms(q);
          const want = joinedRanking(terms, k, filter);
          const got = await store.lexicalCandidates(terms, k, filter);
          assert.deepEqual(got, want, `${q} k=${k}`);
          compared += got.length;
        }
      }
      assert.ok(compared > 200, `compared ${compared} hits`);
    });
  }

  it('has ties and widens past the first fetch', async () => {
    const want = joinedRanking(queryTerms('cache'), 2000, { namespace: NS, now });
    const scores = want.map((h) => h.score);
    assert.ok(new Set(scores).size < scores.length / 4, 'many hits share a score');
    const all = joinedRanking(queryTerms('cache'), 2000, { namespace: NS, now, includeInactive: true });
    // Among the best k + 64 of every match, fewer than k = 40 pass the default filter.
    const passing = new Set(want.map((h) => h.id));
    assert.ok(all.slice(0, 104).filter((h) => passing.has(h.id)).length < 40);
  });
});

describe('term document frequencies on the embedded store', () => {
  const terms = queryTerms('cache invalidation checkout ledger replacement layer absent');
  const term = (word: string) => queryTerms(word)[0] as string;

  it('equal the counted matches in each of two namespaces', async () => {
    for (const ns of [NS, OTHER]) {
      const { frequencies } = await store.termDocumentFrequencies(terms, ns);
      assert.ok(frequencies.size >= 4, `${ns}: ${[...frequencies.keys()].join(" ")}`);
      assert.deepEqual([...frequencies].sort(), [...countedFrequencies(reference, terms, ns)].sort(), ns);
    }
  });

  it('equal the counted matches in a store of one namespace after texts changed', async () => {
    const single = createSqliteStore({ path: join(root, 'single.db') });
    try {
      const engine = new Engine({ store: single, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, ingestFilter: { enabled: false } });
      const saved = await engine.saveMany(Array.from({ length: 300 }, (_, i) => ({ text: `cache ledger note ${i} on the checkout layer`, kind: 'fact' as const })));
      // Changing a text deletes its full-text row and writes another: the counts must follow.
      for (const [i, r] of saved.entries()) if (i % 3 === 0) await engine.update(r.id, { text: `invalidation note ${i}` });
      for (const [i, r] of saved.entries()) if (i % 3 === 1) await engine.forget(r.id);
      const db = new Database(join(root, 'single.db'), { readonly: true });
      try {
        const { documents, frequencies } = await single.termDocumentFrequencies(terms, NS);
        assert.equal(documents, 300);
        assert.deepEqual([...frequencies].sort(), [...countedFrequencies(db, terms, NS)].sort());
        assert.equal(frequencies.get(term('cache')), 200);
        assert.equal(frequencies.get(term('invalidation')), 100);
      } finally {
        db.close();
      }
    } finally {
      await single.close();
    }
  });
});
