import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createSqliteStore, type SqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { mergePruned, prunedMatches, splitForPruning, type RankedRow } from '../src/adapters/sqlite/sqlite-bm25-pruning.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { makeMemory } from './contract/store-contract.js';
import { queryTerms } from '../src/core/lexical.js';
import type { CandidateFilter, LexicalHit } from '../src/interfaces/store.js';

/**
 * BM25 candidates of a query holding common terms, found from its rare-term parts (sqlite-bm25-pruning.ts), against
 * FTS5 ranking every match of the whole query on a second connection to the same real file: the same ids in the
 * same order, scores equal up to the last bits of their sum. The store holds 7,000 notes in two namespaces: common
 * words in most of them, rare identifiers in a few dozen each, repeated 1–3 times, in texts of varied length, many
 * of them copies (ties at every cut), some forgotten or expired; and a query whose best matches mostly fail the
 * filter, so that a first fetch cannot prove its answer.
 */

const NS = 'acme/shop';
const OTHER = 'acme/other';
const root = mkdtempSync(join(tmpdir(), 'cairn-pruning-'));
const path = join(root, 'store.db');
let store: SqliteStore;
let reference: Database.Database;
const quote = (t: string) => `"${t.replace(/"/g, '""')}"`;
const token = (ns: string) => 'n' + createHash('sha256').update(ns).digest('hex').slice(0, 24);

function fullRanking(terms: string[], k: number, filter: CandidateFilter): LexicalHit[] {
  return reference
    .prepare(
      `SELECT m.id AS id, -bm25(memories_fts, 0.0, 1.0) AS score FROM memories_fts f JOIN memories m ON m.rowid = f.rowid
       WHERE memories_fts MATCH @match AND m.namespace = @namespace AND m.forgotten_at IS NULL AND m.superseded_by IS NULL
         AND (m.expires_at IS NULL OR m.expires_at > @now)
       ORDER BY bm25(memories_fts, 0.0, 1.0) LIMIT @k`,
    )
    .all({ match: `ns:${quote(token(filter.namespace))} AND terms:(${terms.map(quote).join(' OR ')})`, namespace: filter.namespace, now: filter.now, k }) as LexicalHit[];
}

const RARE = Array.from({ length: 120 }, (_, i) => `widget${i}`);
const QUERIES = [
  'service config widget3',
  'widget7 service',
  'config widget11 widget12 service layer',
  'the service layer of widget40',
  'widget5 config',
  'service handler config widget90 widget91',
  'widget119 layer handler',
  'zeta service',
];

before(async () => {
  store = createSqliteStore({ path });
  const engine = new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, ingestFilter: { enabled: false } });
  const inputs = [];
  for (let i = 0; i < 7000; i++) {
    const rare = RARE[(i * 7) % RARE.length] as string;
    const words = [i % 10 < 8 ? 'service' : 'client', i % 5 < 2 ? 'config' : 'setup', i % 3 === 0 ? 'handler' : 'module', i % 4 === 0 ? 'layer' : 'part'];
    const repeat = 1 + (i % 3);
    // A tenth of the notes are copies of the first ones: equal scores.
    const n = i % 10 === 9 ? i % 50 : i;
    const text = `${words.join(' ')} ${Array(repeat).fill(rare).join(' ')} note ${n}${i % 6 === 0 ? ' with a longer tail about the shop backend and its jobs' : ''}`;
    inputs.push({ namespace: i % 9 === 0 ? OTHER : NS, text: i % 10 === 9 ? `${text} copy ${i}` : text, kind: 'fact' as const, ...(i % 17 === 0 ? { expiresAt: '2020-01-01T00:00:00.000Z' } : {}) });
  }
  // "zeta service": 400 notes holding both terms, nine in ten expired, ahead of 200 longer ones holding zeta alone.
  // The first fetch of each part passes too few of the first kind: the k-th best then comes from the second
  // kind, and the rows of the first kind not fetched yet would rank above it.
  for (let i = 0; i < 400; i++) inputs.push({ namespace: NS, text: `service zeta note z${i}`, kind: 'fact' as const, ...(i % 10 !== 0 ? { expiresAt: '2020-01-01T00:00:00.000Z' } : {}) });
  for (let i = 0; i < 200; i++) inputs.push({ namespace: NS, text: `client zeta note z${i} with more words after it`, kind: 'fact' as const });
  const saved = await engine.saveMany(inputs);
  for (const [i, r] of saved.entries()) if (i < 7000 && i % 13 === 0 && i % 9 !== 0) await engine.forget(r.id);
  reference = new Database(path, { readonly: true });
});

after(async () => {
  reference.close();
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

describe('pruned BM25 candidates on the embedded store', () => {
  const now = new Date().toISOString();

  it('equal the whole query ranked by FTS5, ids in order and scores to the last bits', async () => {
    let compared = 0;
    for (const ns of [NS, OTHER]) {
      for (const q of QUERIES) {
        for (const k of [1, 10, 40, 300]) {
          const terms = queryTerms(q);
          const want = fullRanking(terms, k, { namespace: ns, now });
          const got = await store.lexicalCandidates(terms, k, { namespace: ns, now });
          assert.deepEqual(got.map((h) => h.id), want.map((h) => h.id), `${ns} ${q} k=${k}`);
          got.forEach((h, i) => assert.ok(Math.abs(h.score - (want[i] as LexicalHit).score) <= 1e-12 * h.score, `${q} k=${k} #${i}`));
          compared += got.length;
        }
      }
    }
    assert.ok(compared > 2000, `compared ${compared} hits`);
  });

  it('prove their answer from the parts for most of these queries, at cuts inside runs of equal scores', () => {
    const rows = (reference.prepare('SELECT COUNT(*) AS n FROM memories').get() as { n: number }).n;
    const df = reference.prepare(`SELECT doc FROM memories_fts_vocab WHERE col = 'terms' AND term = ?`);
    const ranked = reference.prepare('SELECT rowid, bm25(memories_fts, 0.0, 1.0) AS rank FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?');
    let proved = 0;
    let tiedCuts = 0;
    for (const q of QUERIES) {
      const terms = queryTerms(q);
      const frequencies = new Map(terms.map((t) => [t, (df.get(t) as { doc: number } | undefined)?.doc ?? 0]));
      const split = splitForPruning(terms, frequencies, rows, rows, (t) => frequencies.get(t) ?? 0);
      if (!split) continue;
      const { rareOnly, both } = prunedMatches(split, `ns:${quote(token(NS))} AND `);
      const fetch = 40;
      const a = ranked.all(rareOnly, fetch) as RankedRow[];
      const b = ranked.all(both, fetch) as RankedRow[];
      const merged = mergePruned(a, b, fetch, split.commonBound, 10, () => true);
      if ('best' in merged) proved++;
      const last = b[b.length - 1];
      if (b.length === fetch && last && (merged as { best?: { score: number }[] }).best?.some((r) => r.score === -last.rank)) tiedCuts++;
    }
    assert.ok(proved >= 4, `proved ${proved} of ${QUERIES.length}`);
    assert.ok(tiedCuts >= 1, 'a cut inside a run of equal scores was proved');
  });
});

describe('the pruning rules', () => {
  const row = (rowid: number, score: number): RankedRow => ({ rowid, rank: -score });

  it('split off the common terms only while the rare ones outscore what they can add', () => {
    const frequencies = new Map([
      ['service', 60_000],
      ['config', 30_000],
      ['widget7', 40],
    ]);
    const split = splitForPruning(['service', 'config', 'widget7'], frequencies, 100_000, 100_000, (t) => frequencies.get(t) ?? 0);
    assert.deepEqual(split?.common, ['service', 'config']);
    assert.deepEqual(split?.rare, ['widget7']);
    // Two common terms of equal weight against one rare term that cannot outscore both.
    const even = new Map([['service', 20_000], ['config', 20_000], ['widget7', 15_000]]);
    assert.deepEqual(splitForPruning(['service', 'config', 'widget7'], even, 100_000, 100_000, (t) => even.get(t) ?? 0)?.common, ['service']);
    // A namespace of 10,000 in a store of 100,000 rows: what is common is the namespace's, the bound the store's idf.
    const inNamespace = new Map([['service', 6_000], ['widget7', 40]]);
    const split2 = splitForPruning(['service', 'widget7'], inNamespace, 10_000, 100_000, (t) => (t === 'service' ? 60_000 : 400));
    assert.deepEqual(split2?.common, ['service']);
    assert.equal(split2?.commonBound, 2.2 * 1e-6, 'the store-wide idf of a term in 60 % of the rows');
    assert.equal(splitForPruning(['service', 'widget7'], new Map([['service', 3_000], ['widget7', 40]]), 10_000, 10_000, () => 3_000), null, 'too few postings to pay');
    assert.equal(splitForPruning(['service', 'service', 'widget7'], frequencies, 100_000, 100_000, (t) => frequencies.get(t) ?? 0), null, 'a repeated term is a phrase of its own');
    const both = new Map([['service', 30_000], ['config', 30_000]]);
    assert.equal(splitForPruning(['service', 'config'], both, 100_000, 100_000, (t) => both.get(t) ?? 0), null, 'no term rare enough');
  });

  it('accept a cut only where what was left out ranks after the k-th best', () => {
    const all = () => true;
    // The k-th best (score 5, rowid 3) ties the last fetched row of a full part: rows left out have higher rowids.
    assert.ok('best' in mergePruned([row(1, 9), row(3, 5)], [row(2, 7), row(4, 5)], 2, 1, 3, all));
    // …but not when the k-th best has the higher rowid: a row left out (rowid 5, score 5) would come before it.
    assert.deepEqual(mergePruned([row(1, 9), row(6, 5)], [row(2, 7), row(4, 5)], 2, 1, 4, all), { failed: 'cut' });
    assert.deepEqual(mergePruned([row(1, 9)], [row(2, 7)], 5, 8, 2, all), { failed: 'bound' });
    assert.deepEqual(mergePruned([row(1, 9)], [row(2, 7)], 5, 1, 2, (r) => r !== 2), { failed: 'short' });
    const best = mergePruned([row(5, 4), row(1, 4)], [row(3, 4), row(2, 6)], 5, 1, 4, all);
    assert.deepEqual('best' in best && best.best.map((r) => r.rowid), [2, 1, 3, 5], 'ties by rowid');
  });
});

/**
 * Random stores (two namespaces, one matched with its namespace token and one without; rows deleted and re-indexed,
 * so FTS5's row count is not the count of what it holds; expired rows) and random queries of common and rare words:
 * each answer against FTS5 ranking the whole query as it is written. Equal ids in order, or, where rows tie within
 * the last bits of a sum written in another order, the same scores position by position and nothing left out that
 * scores above the last one.
 */
describe('pruned BM25 candidates on random stores', () => {
  const now = '2026-06-01T00:00:00.000Z';
  for (const seed of [2]) {
    it(`answer as the whole query does, seed ${seed}`, async () => {
      let state = seed;
      const rnd = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
      const dir = mkdtempSync(join(tmpdir(), 'cairn-pruning-random-'));
      const file = join(dir, 'store.db');
      const random = createSqliteStore({ path: file });
      try {
        const words = Array.from({ length: 400 }, (_, i) => `w${i}`);
        const zipf = () => words[Math.min(words.length - 1, Math.floor(Math.exp(rnd() * Math.log(words.length + 1)) - 1))] as string;
        const common = () => `c${Math.floor(rnd() * 4)}`;
        const doc = () => Array.from({ length: 1 + Math.floor(rnd() * 12) }, () => (rnd() < 0.5 ? common() : zipf()));
        const namespaces = ['small', 'big'];
        const memories = Array.from({ length: 16_000 }, (_, i) =>
          makeMemory(namespaces[rnd() < 0.35 ? 0 : 1] as string, `note ${i}`, rnd() < 0.1 ? { expiresAt: '2020-01-01T00:00:00.000Z' } : {}),
        );
        await random.transaction(async (tx) => {
          for (const m of memories) await tx.insertMemory(m, null, doc());
        });
        await random.transaction(async (tx) => {
          const gone = new Set<string>();
          for (let i = 0; i < 1500; i++) {
            const m = memories[Math.floor(rnd() * memories.length)] as (typeof memories)[number];
            if (gone.has(m.id)) continue;
            if (rnd() < 0.5) {
              gone.add(m.id);
              await tx.deleteMemory(m.id);
            } else await tx.updateMemory(m, { vector: null, terms: doc() });
          }
        });
        const db = new Database(file, { readonly: true });
        try {
          const whole = db.prepare(
            `SELECT m.id AS id, -bm25(memories_fts, 0.0, 1.0) AS score FROM memories_fts f JOIN memories m ON m.rowid = f.rowid
             WHERE memories_fts MATCH @match AND m.namespace = @ns AND m.forgotten_at IS NULL AND m.superseded_by IS NULL
               AND (m.expires_at IS NULL OR m.expires_at > @now)
             ORDER BY bm25(memories_fts, 0.0, 1.0), f.rowid LIMIT @k`,
          );
          let compared = 0;
          let exact = 0;
          for (let q = 0; q < 60; q++) {
            const terms = [...new Set(Array.from({ length: 2 + Math.floor(rnd() * 4) }, () => (rnd() < 0.4 ? common() : zipf())))];
            if (rnd() < 0.1) terms.push('absentword');
            for (const ns of namespaces) {
              for (const k of [1, 5, 20, 80]) {
                const got = await random.lexicalCandidates(terms, k, { namespace: ns, now });
                const wide = whole.all({ match: `ns:${quote(token(ns))} AND terms:(${terms.map(quote).join(' OR ')})`, ns, now, k: k + 200 }) as LexicalHit[];
                const want = wide.slice(0, k);
                const label = `${ns} ${terms.join(' ')} k=${k}`;
                compared++;
                if (JSON.stringify(got) === JSON.stringify(want)) {
                  exact++;
                  continue;
                }
                const near = (a: number, b: number) => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b));
                assert.equal(got.length, want.length, label);
                got.forEach((h, i) => assert.ok(near(h.score, (want[i] as LexicalHit).score), `${label} #${i}`));
                const scoreOf = new Map(wide.map((h) => [h.id, h.score]));
                for (const h of got) assert.ok(scoreOf.has(h.id) && near(h.score, scoreOf.get(h.id) as number), `${label}: ${h.id}`);
                const last = (got[got.length - 1] as LexicalHit).score;
                const ids = new Set(got.map((h) => h.id));
                for (const h of wide) if (h.score > last && !near(h.score, last)) assert.ok(ids.has(h.id), `${label}: left out ${h.id}`);
              }
            }
          }
          const { proved, wholeQuery } = random.lexicalPruning();
          assert.ok(proved >= 90, `answered from the parts ${proved} times (whole query ${wholeQuery})`);
          // The rest differ only where rows tie within the last bits (a split sums its common words first).
          assert.ok(exact >= compared * 0.75, `exact ${exact} of ${compared}`);
        } finally {
          db.close();
        }
      } finally {
        await random.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('sum a split query in one order: rows that differ by swapped counts tie as the whole query ties them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-pruning-order-'));
    const file = join(dir, 'store.db');
    const ordered = createSqliteStore({ path: file });
    try {
      const rows: string[][] = [];
      // A rare word before a common one in the query; pairs of rows with the counts of two rare words swapped.
      for (let i = 0; i < 30; i++) rows.push(['rone', 'rone', 'rtwo', 'cee', `x${i}`], ['rone', 'rtwo', 'rtwo', 'cee', `y${i}`]);
      for (let i = 0; i < 6000; i++) rows.push(['cee', `filler${i % 500}`, 'more']);
      await ordered.transaction(async (tx) => {
        for (const [i, terms] of rows.entries()) await tx.insertMemory(makeMemory(NS, `row ${i}`), null, terms);
      });
      const db = new Database(file, { readonly: true });
      try {
        const query = ['rone', 'rtwo', 'cee'];
        const whole = (terms: string[], k: number) =>
          db
            .prepare(`SELECT m.id AS id, -bm25(memories_fts, 0.0, 1.0) AS score FROM memories_fts f JOIN memories m ON m.rowid = f.rowid WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts, 0.0, 1.0), f.rowid LIMIT ?`)
            .all(`terms:(${terms.map(quote).join(' OR ')})`, k) as LexicalHit[];
        for (let k = 1; k <= 60; k++) {
          // "cee" is common: the split's order, common words first, is the whole query's order too.
          assert.deepEqual(await ordered.lexicalCandidates(query, k, { namespace: NS, now: new Date().toISOString() }), whole(['cee', 'rone', 'rtwo'], k), `k=${k}`);
        }
        assert.ok(ordered.lexicalPruning().proved >= 50, `answered from the parts ${ordered.lexicalPruning().proved} times`);
      } finally {
        db.close();
      }
    } finally {
      await ordered.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
