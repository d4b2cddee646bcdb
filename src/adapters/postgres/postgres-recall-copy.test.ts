import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CandidateFilter } from '../../interfaces/store.js';
import { buildCoarse } from '../vector-codes/coarse-build.js';
import { loadUsearch } from '../vector-codes/usearch.js';
import { NamespaceCopy, type CopyRow } from './postgres-recall-copy.js';
import { cosine } from '../../../test/fixtures/vector-index-data.js';

/**
 * A namespace copy's proposals against the same rankings computed plainly over the rows it should hold, after
 * many puts, replacements and removals (slots reused, posting lists compacted). Real usearch kernel.
 */

const DIMS = 24;
const NOW = '2026-06-01T00:00:00.000Z';
const WORDS = ['deploy', 'cache', 'invoice', 'vat', 'queue', 'retry', 'flag', 'token', 'ledger', 'stock', 'redis', 'webhook'];

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function makeRow(r: () => number, pk: number): CopyRow {
  const terms = [...new Set(Array.from({ length: 1 + Math.floor(r() * 5) }, () => WORDS[Math.floor(r() * WORDS.length)] as string))].sort();
  const vector = Float32Array.from({ length: DIMS }, () => r() * 2 - 1);
  return {
    pk,
    id: `m${pk}`,
    kind: r() < 0.3 ? 'decision' : 'fact',
    tags: r() < 0.4 ? ['billing'] : [],
    current: r() > 0.1,
    expiresAt: r() < 0.1 ? '2026-01-01T00:00:00.000Z' : null,
    docLength: terms.length + 1 + Math.floor(r() * 10),
    terms,
    tfs: terms.map(() => 1 + Math.floor(r() * 3)),
    vector,
  };
}

function passes(row: CopyRow, filter: Omit<CandidateFilter, 'namespace' | 'now'>): boolean {
  if (!filter.includeInactive && (!row.current || (row.expiresAt !== null && !(row.expiresAt > NOW)))) return false;
  if (filter.kinds && !(filter.kinds as string[]).includes(row.kind)) return false;
  if (filter.tags && !row.tags.some((t) => filter.tags?.includes(t))) return false;
  return true;
}

/** BM25 as the statement computes it, over `rows`. */
function bm25(rows: CopyRow[], terms: string[]): Map<number, number> {
  const n = rows.length;
  const avgdl = rows.reduce((s, r) => s + r.docLength, 0) / n;
  const out = new Map<number, number>();
  for (const term of terms) {
    const df = rows.filter((r) => r.terms.includes(term)).length;
    const raw = Math.log((n - df + 0.5) / (df + 0.5));
    const idf = raw > 0 ? raw : 1e-6;
    for (const row of rows) {
      const i = row.terms.indexOf(term);
      if (i < 0) continue;
      const tf = row.tfs[i] as number;
      out.set(row.pk, (out.get(row.pk) ?? 0) + (idf * (tf * 2.2)) / (tf + 1.2 * (1 - 0.75 + (0.75 * row.docLength) / avgdl)));
    }
  }
  return out;
}

describe('PostgreSQL namespace copy (proposals)', () => {
  const loaded = loadUsearch();
  it('proposes what a plain ranking of the rows it holds gives, after replacements and removals', { skip: 'error' in loaded ? loaded.error : false }, () => {
    const usearch = 'usearch' in loaded ? loaded.usearch : (undefined as never);
    const r = seeded(7);
    const copy = new NamespaceCopy(DIMS);
    const held = new Map<number, CopyRow>();
    let next = 1;
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 400; i++) {
        const row = makeRow(r, next++);
        copy.put(row);
        held.set(row.pk, row);
      }
      // Replace some (new terms and vector under the same key), remove others: slots are reused, lists compacted.
      for (const pk of [...held.keys()]) {
        const x = r();
        if (x < 0.15) {
          const row = { ...makeRow(r, pk), id: `m${pk}` };
          copy.put(row);
          held.set(pk, row);
        } else if (x < 0.45) {
          copy.remove(pk);
          held.delete(pk);
        }
      }
      assert.equal(copy.size(), held.size);
      const rows = [...held.values()];
      const filters: Omit<CandidateFilter, 'namespace' | 'now'>[] = [{}, { kinds: ['decision'] }, { tags: ['billing'] }, { includeInactive: true }];
      for (const filter of filters) {
        const full: CandidateFilter = { namespace: 'ns', now: NOW, ...filter };
        for (const terms of [['deploy'], ['cache', 'redis'], ['vat', 'invoice', 'ledger', 'nothing']]) {
          const k = 20;
          const proposal = copy.proposeLexical(terms, k, k + 10, full);
          const scores = bm25(rows, terms);
          const expected = [...scores].filter(([pk]) => passes(held.get(pk) as CopyRow, filter)).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
          assert.deepEqual(proposal.pks, expected.slice(0, k + 10).map(([pk]) => pk), `round ${round} ${terms.join(' ')} ${JSON.stringify(filter)}`);
          assert.equal(proposal.need, Math.min(k, expected.length));
        }
        const query = Float32Array.from({ length: DIMS }, () => r() * 2 - 1);
        const proposal = copy.proposeVector(usearch, query, 10, 40, full);
        const passing = rows.filter((row) => passes(row, filter));
        const exact = passing.map((row) => [row.pk, cosine(query, row.vector as Float32Array)] as const).sort((a, b) => b[1] - a[1]);
        assert.equal(proposal.need, Math.min(10, passing.length));
        assert.ok(proposal.pks.every((pk) => passes(held.get(pk) as CopyRow, filter)), 'only passing memories are proposed');
        const top = exact.slice(0, 10).map(([pk]) => pk);
        assert.ok(top.every((pk) => proposal.pks.includes(pk)), `round ${round}: the exact ten are among the 40 proposed (${JSON.stringify(filter)})`);
      }
    }
  });

  it('keeps each memory\'s terms and postings through churn: every row replaced many times, terms dropped and reused', () => {
    const r = seeded(11);
    const copy = new NamespaceCopy(DIMS);
    const held = new Map<number, CopyRow>();
    // Rare terms (one memory each) come and go, so term numbers are freed and reused; replacing every row again
    // and again leaves most of the terms' arena stale, so it is packed.
    const rare = (pk: number, round: number) => [`t${pk}x${round}`];
    for (let round = 0; round < 12; round++) {
      for (let pk = 1; pk <= 300; pk++) {
        if (round > 0 && r() < 0.2) {
          copy.remove(pk);
          held.delete(pk);
          continue;
        }
        const base = makeRow(r, pk);
        const terms = [...base.terms, ...rare(pk, round)].sort();
        const row = { ...base, terms, tfs: terms.map(() => 1 + Math.floor(r() * 4)) };
        copy.put(row);
        held.set(pk, row);
      }
      const rows = [...held.values()];
      const filter: CandidateFilter = { namespace: 'ns', now: NOW, includeInactive: true };
      const pk0 = rows[Math.floor(r() * rows.length)] as CopyRow;
      for (const terms of [['deploy', 'queue'], [...rare(pk0.pk, round), 'cache'], [`t1x${round - 1}`]]) {
        const proposal = copy.proposeLexical(terms, 50, 400, filter);
        const scores = bm25(rows, terms);
        const expected = [...scores].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([pk]) => pk);
        assert.deepEqual(proposal.pks, expected, `round ${round} ${terms.join(' ')}`);
        const postings = { pks: [] as number[], terms: [] as string[], tfs: [] as number[], lengths: [] as number[] };
        for (const pk of expected) {
          const row = held.get(pk) as CopyRow;
          row.terms.forEach((term, i) => {
            if (!terms.includes(term)) return;
            postings.pks.push(pk);
            postings.terms.push(term);
            postings.tfs.push(row.tfs[i] as number);
            postings.lengths.push(row.docLength);
          });
        }
        assert.deepEqual(proposal.postings, postings, `round ${round}: the proposed memories' postings of the query terms`);
      }
      assert.equal(copy.size(), held.size);
      for (const row of rows) assert.equal(copy.pkOf(row.id), row.pk);
    }
  });

  it('coarse lists built from an older snapshot hold exactly the vectors held at their install, and follow later changes', { skip: 'error' in loaded ? loaded.error : false }, () => {
    const usearch = 'usearch' in loaded ? loaded.usearch : (undefined as never);
    const r = seeded(5);
    const copy = new NamespaceCopy(DIMS);
    for (let pk = 1; pk <= 400; pk++) copy.put(makeRow(r, pk));
    const snapshot = copy.snapshotForLists();
    // While the build runs: rows replaced, removed and added.
    for (let pk = 1; pk <= 60; pk++) copy.put(makeRow(r, pk));
    for (let pk = 61; pk <= 90; pk++) copy.remove(pk);
    for (let pk = 401; pk <= 450; pk++) copy.put(makeRow(r, pk));
    assert.equal(copy.coarseLists(), null);
    copy.installLists(usearch, buildCoarse(usearch, snapshot.keys, snapshot.data, DIMS, 8, 1));
    assert.equal(copy.coarseLists()?.size(), 420, 'the 400 of the snapshot, less 30 removed, and 50 added since');
    for (let pk = 91; pk <= 140; pk++) copy.remove(pk);
    for (let pk = 451; pk <= 470; pk++) copy.put(makeRow(r, pk));
    assert.equal(copy.coarseLists()?.size(), 390);
    assert.equal(copy.codes.size(), 390);
  });
});

