import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Memory } from '../interfaces/memory.js';
import { analyse, queryTerms } from './lexical.js';
import { clearsFloor, DEFAULT_CALIBRATION, DEFAULT_FLOOR, DEFAULT_WEIGHTS, fts5Idf, fuseScores, unknownTermShare, UNKNOWN_WORDS_MIN_DOCUMENTS } from './fusion.js';
import { applyTermCoverage, termCoverage } from './term-coverage.js';

const NOW = Date.parse('2026-06-01T00:00:00.000Z');

function memory(id: string, text: string, daysAgo: number): Memory {
  const createdAt = new Date(NOW - daysAgo * 86_400_000).toISOString();
  return { id, namespace: 'acme/billing', text, kind: 'note', importance: 5, tags: [], taskId: null, metadata: {}, route: null, createdAt, updatedAt: createdAt, expiresAt: null, supersedes: null, supersededBy: null, forgottenAt: null, forgetReason: null, dedupeKey: id };
}

describe('term coverage', () => {
  const idf = new Map([
    ['tax', 2],
    ['rate', 1],
    ['come', 1],
  ]);

  it('is the idf-weighted share of the query terms a note holds', () => {
    assert.equal(termCoverage(['tax', 'rate', 'come'], idf, new Set(['tax', 'rate', 'come', 'avalara'])), 1);
    assert.equal(termCoverage(['tax', 'rate', 'come'], idf, new Set(['tax', 'rate', 'lookup'])), 0.75);
    assert.equal(termCoverage(['tax', 'rate', 'come'], idf, new Set(['rate'])), 0.25);
    assert.equal(termCoverage([], idf, new Set(['tax'])), 0);
  });

  it('counts a word the note lacks as covered when the note holds a term related to it', () => {
    const related = new Map([['tax', ['vat', 'gst']]]);
    assert.equal(termCoverage(['tax', 'rate', 'come'], idf, new Set(['vat', 'rate']), related), 0.75);
    assert.equal(termCoverage(['tax', 'rate', 'come'], idf, new Set(['vat', 'rate'])), 0.25);
    // A related term of another word covers nothing; a held word is not counted twice.
    assert.equal(termCoverage(['tax', 'rate', 'come'], idf, new Set(['gst', 'tax']), new Map([['rate', ['vat']], ['tax', ['gst']]])), 0.5);
    // A related term found only inside an identifier or path covers nothing (scripts/test-db.sh for "database").
    assert.equal(termCoverage(['tax', 'rate', 'come'], idf, new Set(['vat', 'rate', 'scripts/vat.sh']), related, new Set(['rate'])), 0.25);
  });

  it('lifts the note holding every query word over a short note that saturates BM25, and the parts still add up', () => {
    const route = memory('route', 'Tax code: rate lookup, rounding and exemptions.', 5);
    const fact = memory('fact', 'Tax rates come from the Avalara provider through TaxProviderClient.', 20);
    const memories = new Map([route, fact].map((m) => [m.id, m]));
    const terms = queryTerms('where do tax rates come from');
    const termIdf = new Map(terms.map((t) => [t, fts5Idf(80, t === 'tax' ? 6 : 10)]));
    const scale = [...termIdf.values()].reduce((a, b) => a + b, 0);
    // Both BM25 scores are over Σ idf (a full match), as a short note's are: the lexical part saturates.
    const fused = fuseScores({ memories, vector: [{ id: 'route', raw: 0.58 }, { id: 'fact', raw: 0.55 }], lexical: [{ id: 'route', raw: scale * 1.2 }, { id: 'fact', raw: scale * 1.1 }], lexicalScale: scale, ageDays: (m) => (NOW - Date.parse(m.createdAt)) / 86_400_000, weights: DEFAULT_WEIGHTS, calibration: DEFAULT_CALIBRATION });
    assert.equal(fused[0]?.memory.id, 'route');
    const covered = applyTermCoverage(fused, { terms, idf: termIdf, termsOf: (r) => new Set(analyse(r.memory.text)), weights: DEFAULT_WEIGHTS, calibration: DEFAULT_CALIBRATION, coverage: { share: 0.5 }, window: 30 });
    assert.deepEqual(covered.map((r) => r.memory.id), ['fact', 'route']);
    assert.equal(covered[0]?.scoreDetails.signals.lexical.coverage, 1);
    assert.ok((covered[1]?.scoreDetails.signals.lexical.coverage as number) < 1);
    for (const r of covered) {
      const d = r.scoreDetails;
      const sum = d.signals.vector.contribution + d.signals.lexical.contribution + d.signals.recency.contribution;
      assert.ok(Math.abs(sum - (d.relevance as number)) < 1e-9);
      assert.ok(Math.abs(100 * r.score - sum) < 1e-9);
    }
  });

  it('share 0 leaves the fused results as they were', () => {
    const m = memory('a', 'Tax rates are cached for an hour.', 3);
    const fused = fuseScores({ memories: new Map([[m.id, m]]), vector: [{ id: 'a', raw: 0.5 }], lexical: [{ id: 'a', raw: 1 }], lexicalScale: 4, ageDays: () => 3, weights: DEFAULT_WEIGHTS, calibration: DEFAULT_CALIBRATION });
    const before = fused[0]?.score;
    applyTermCoverage(fused, { terms: ['tax'], idf: new Map([['tax', 1]]), termsOf: () => new Set(['tax']), weights: DEFAULT_WEIGHTS, calibration: DEFAULT_CALIBRATION, coverage: { share: 0 }, window: 30 });
    assert.equal(fused[0]?.score, before);
  });
});

describe('unknown words and the floor', () => {
  const idf = new Map([
    ['xyzzi', 5],
    ['noth', 1],
    ['match', 1],
  ]);

  it('counts the share of the query weight in words the namespace never uses, from a namespace of 50 memories', () => {
    const frequencies = new Map([
      ['noth', 3],
      ['match', 2],
    ]);
    assert.equal(unknownTermShare(idf, frequencies, UNKNOWN_WORDS_MIN_DOCUMENTS), 5 / 7);
    assert.equal(unknownTermShare(idf, frequencies, UNKNOWN_WORDS_MIN_DOCUMENTS - 1), 0);
    assert.equal(unknownTermShare(new Map(), frequencies, 100), 0);
  });

  it('a query mostly in unknown words must be closer to the store than to the background', () => {
    const m = memory('a', 'Zero-result queries are logged.', 1);
    const results = fuseScores({ memories: new Map([[m.id, m]]), vector: [{ id: 'a', raw: 0.36 }], lexical: [], lexicalScale: 0, ageDays: () => 1, weights: DEFAULT_WEIGHTS, calibration: DEFAULT_CALIBRATION });
    // Margin −0.03: within the ordinary margin, not enough when 0.71 of the query's weight is unknown.
    assert.equal(clearsFloor(results, DEFAULT_FLOOR, 0.36, 0.39, 0), true);
    assert.equal(clearsFloor(results, DEFAULT_FLOOR, 0.36, 0.39, 5 / 7), false);
    assert.equal(clearsFloor(results, DEFAULT_FLOOR, 0.4, 0.39, 5 / 7), true);
  });
});
