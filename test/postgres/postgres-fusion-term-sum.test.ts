/**
 * The two ways PostgreSQL's BM25 adds a memory's term weights in term order (postgres-search.ts `TermSum`:
 * a sorted sum, or one filtered sum per query term) give the same scores bit for bit, on a real server, for
 * a query with few terms and one with many (a long prompt); and the default picks each where it is cheaper.
 * With a small k both forms score only the memories whose bound reaches the k-th best seed score (the filtered form
 * bounds per query term, the sorted one per memory), and each top k is the first k of the full ranking, also under a
 * filter that drops some of the best-bounded memories. The data make the comparison able to fail: memories hold dozens of the query's terms with varied
 * frequencies and lengths, so adding the same weights in another order changes some scores' bits (checked).
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FILTERED_SUM_MAX_TERMS, lexicalCtes, termSumFor, type TermSum } from '../../src/adapters/postgres/postgres-search.js';
import { Params } from '../../src/adapters/postgres/postgres-rows.js';
import type { PostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { analyse, queryTerms } from '../../src/core/lexical.js';
import type { CandidateFilter } from '../../src/interfaces/store.js';
import { makeMemory } from '../contract/store-contract.js';
import { adminQuery, pgSkip, postgresStoreFactory } from '../helpers/postgres.js';

const NS = 'acme/shop';
const NOW = '2026-06-01T00:00:00.000Z';
const FILTER: CandidateFilter = { namespace: NS, now: NOW };

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** 240 distinct made-up words of letters only (no stop word, each its own term). */
const r = seeded(7);
const VOCAB = [...new Set(Array.from({ length: 400 }, () => Array.from({ length: 7 }, () => String.fromCharCode(97 + Math.floor(r() * 26))).join('')))].slice(0, 240);
const pick = () => VOCAB[Math.floor(r() * VOCAB.length)] as string;

describe('PostgreSQL BM25: the sorted and the filtered term sums give the same bits', { skip: pgSkip }, () => {
  let store: PostgresStore;
  let database: string;
  const few = queryTerms(VOCAB.slice(0, 5).join(' '));
  const many = queryTerms(VOCAB.slice(0, 160).join(' '));

  before(async () => {
    store = await postgresStoreFactory({ vector: true })();
    database = new URL(store.location).pathname.slice(1);
    // 300 memories of 20-120 words drawn with repeats: term frequencies 1 to ~4, dozens of query terms each.
    const texts = Array.from({ length: 300 }, () => Array.from({ length: 20 + Math.floor(r() * 100) }, pick).join(' '));
    await store.transaction(async (tx) => {
      for (const [i, text] of texts.entries()) {
        // Every third a decision: a kind filter drops memories of every bound.
        const m = makeMemory(NS, text, i % 3 === 0 ? { kind: 'decision' } : {});
        await tx.insertMemory(m, null, analyse(m.text));
      }
    });
  });
  after(async () => store?.close());

  /** Each candidate's score as its float8 bytes (hex), by memory; `edit` rewrites the statement first. */
  async function scores(terms: string[], sum: TermSum, edit: (sql: string) => string = (s) => s): Promise<Map<string, string>> {
    const p = new Params();
    const ctes = lexicalCtes(p, terms, 1000, FILTER, undefined, sum);
    const rows = await adminQuery<{ pk: string; bits: string }>(database, edit(`WITH ${ctes} SELECT lex.pk::text AS pk, encode(float8send(lex.score), 'hex') AS bits FROM lex`), p.values);
    return new Map(rows.map((x) => [x.pk, x.bits]));
  }

  it('the queries are few and many terms, and the default sums each its own way', () => {
    assert.equal(few.length, 5);
    assert.equal(many.length, 160);
    assert.equal(termSumFor(few.length), 'filtered');
    assert.equal(termSumFor(FILTERED_SUM_MAX_TERMS), 'filtered');
    assert.equal(termSumFor(FILTERED_SUM_MAX_TERMS + 1), 'sorted');
    assert.equal(termSumFor(many.length), 'sorted');
  });

  for (const [label, terms] of [['few terms', () => few], ['many terms', () => many]] as const) {
    it(`${label}: every candidate's score is bit-identical in both forms, and equals the store's`, async () => {
      const q = terms();
      const sorted = await scores(q, 'sorted');
      const filtered = await scores(q, 'filtered');
      assert.ok(sorted.size > 100, `${label}: many candidates (${sorted.size})`);
      assert.deepEqual(filtered, sorted);
      // The store's own candidates (the default form) carry the same numbers.
      const hits = await store.lexicalCandidates(q, 1000, FILTER);
      assert.equal(hits.length, sorted.size);
      const values = [...sorted.values()].map((hex) => Buffer.from(hex, 'hex').readDoubleBE(0)).sort((a, b) => b - a);
      assert.deepEqual(hits.map((h) => h.score), values);
    });
  }

  // Both forms bound: the filtered one (few terms) per term column in `lex_tf`, the sorted one (many terms) per
  // memory in `lex_ub`; at a small k each leaves memories unscored, and its top k is the first k of the full ranking
  // (k 1000: θ is then unset and every memory is scored), without a filter and with one that drops memories.
  const DECISIONS: CandidateFilter = { ...FILTER, kinds: ['decision'] };
  for (const [label, terms, bounded, bounds] of [
    ['few terms', () => few, 'filtered', 'lex_tf'],
    ['many terms', () => many, 'sorted', 'lex_ub'],
  ] as const) {
    it(`${label}, a small k: the ${bounded} form's bound leaves memories unscored, and its top k is the full ranking's, bits and order, also under a filter`, async () => {
      const top = async (sum: TermSum, k: number, filter: CandidateFilter) => {
        const p = new Params();
        const ctes = lexicalCtes(p, terms(), k, filter, undefined, sum);
        const rows = await adminQuery<{ pk: string; bits: string }>(database, `WITH ${ctes} SELECT lex.pk::text AS pk, encode(float8send(lex.score), 'hex') AS bits FROM lex ORDER BY lex.score DESC, lex.pk`, p.values);
        return rows.map((x) => `${x.pk}:${x.bits}`);
      };
      for (const filter of [FILTER, DECISIONS]) {
        const full = await top(bounded, 1000, filter);
        assert.ok(full.length > 60, `${full.length} candidates`);
        for (const k of [1, 10, 40]) {
          const label2 = `k ${k}${filter.kinds ? ', decisions only' : ''}`;
          assert.deepEqual(await top(bounded, k, filter), full.slice(0, k), label2);
          assert.deepEqual(await top(bounded === 'sorted' ? 'filtered' : 'sorted', k, filter), full.slice(0, k), `${label2}, the other form`);
          // Under the filter the seed may hold too few passing memories for θ to skip any: the answer is what counts.
          if (filter !== FILTER) continue;
          const p = new Params();
          const ctes = lexicalCtes(p, terms(), k, filter, undefined, bounded);
          const [counts] = await adminQuery<{ all: string; skipped: string }>(
            database,
            `WITH ${ctes} SELECT (SELECT count(*) FROM ${bounds})::text AS all, (SELECT count(*) FROM ${bounds} WHERE ub < (SELECT score FROM lex_theta))::text AS skipped`,
            p.values,
          );
          assert.ok(Number(counts?.skipped) > 0 && Number(counts?.skipped) < Number(counts?.all), `${label2}: some of ${counts?.all} memories skipped (${counts?.skipped})`);
        }
      }
    });
  }

  it('k 0 gives no candidates in either form', async () => {
    for (const sum of ['filtered', 'sorted'] as const) {
      const p = new Params();
      const rows = await adminQuery(database, `WITH ${lexicalCtes(p, few, 0, FILTER, undefined, sum)} SELECT lex.pk FROM lex`, p.values);
      assert.equal(rows.length, 0, sum);
    }
  });

  it('many terms: the data tell orders apart (summed in reverse term order, some scores change bits)', async () => {
    const reversed = await scores(many, 'sorted', (sql) => {
      assert.ok(sql.includes('ORDER BY d.term)'), 'the sorted form orders by term');
      return sql.replaceAll('ORDER BY d.term)', 'ORDER BY d.term DESC)');
    });
    const sorted = await scores(many, 'sorted');
    const changed = [...sorted].filter(([pk, bits]) => reversed.get(pk) !== bits).length;
    assert.ok(changed > 0, 'an order difference shows in the bits');
  });
});
