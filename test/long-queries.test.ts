import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { MAX_QUERY_POSTINGS, MAX_QUERY_TERMS } from '../src/core/recall.js';
import { queryTerms } from '../src/core/lexical.js';

/**
 * A long query (a pasted prompt) in a large namespace is searched by its rarest terms; in a small one, by all of
 * them. Lexical only (no embedder), on a real SQLite file: which memories are candidates shows which terms ran.
 */

/** A made-up word of letters only, one per number (`prefix` then base-26 letters, then "q"), kept whole by the analyser. */
const word = (prefix: string, n: number): string => {
  let letters = '';
  for (let x = n; ; x = Math.floor(x / 26) - 1) {
    letters = String.fromCharCode(97 + (x % 26)) + letters;
    if (x < 26) break;
  }
  return `${prefix}${letters}q`;
};
const WORDS = Array.from({ length: 80 }, (_, i) => word('z', i));
const RARE = 'quokkaq';
/** Every word, then the rare one: 81 terms, the rare one last. */
const QUERY = `${WORDS.join(' ')} ${RARE}`;
const MARKERS = Array.from({ length: MAX_QUERY_TERMS }, (_, i) => word('r', i));
const BIG = 'github.com/acme/big';
const SMALL = 'github.com/acme/small';

describe('long queries', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-long-queries-'));
  const engine = new Engine({ store: createSqliteStore({ path: join(dir, 'cairn.db') }), embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: BIG });
  const ids: Record<string, string> = {};

  before(async () => {
    assert.deepEqual(queryTerms(QUERY), [...WORDS, RARE], 'each word is one term');
    // The big namespace: 2,800 notes of 20 of the words each (a quarter of the notes hold each word: 56,000
    // postings of the query's terms in all, over MAX_QUERY_POSTINGS, and every word rare enough to count in BM25).
    // The small one: 12 such notes.
    for (const [namespace, count] of [
      [BIG, 2800],
      [SMALL, 12],
    ] as const) {
      const notes = Array.from({ length: count }, (_, i) => ({ namespace, text: `${WORDS.slice((i % 4) * 20, (i % 4) * 20 + 20).join(' ')} ${word('y', i)}` }));
      for (let i = 0; i < notes.length; i += 100) await engine.saveMany(notes.slice(i, i + 100));
      // A decoy with all but the first sixteen words (twice: it scores above every other note when all the terms are
      // searched), and the one memory holding the rare word.
      ids[`${namespace} decoy`] = (await engine.save({ namespace, text: `${WORDS.slice(16).join(' ')} ${WORDS.slice(16).join(' ')}` })).id;
      ids[`${namespace} target`] = (await engine.save({ namespace, text: `The ${RARE} report lives in docs/reports.` })).id;
    }
    // For the related-terms case: sixteen markers of one rare word each, and 100 notes about the database (3.5 % of
    // the namespace, few enough for "database" to be a related term of "db" if it were not a query word).
    await engine.saveMany(MARKERS.map((m) => ({ namespace: BIG, text: `Marker ${m} for the long query.` })));
    await engine.saveMany(Array.from({ length: 100 }, (_, i) => ({ namespace: BIG, text: `The database ${word('d', i)} holds rows.` })));
  });

  after(async () => {
    await engine.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`in a large namespace, a query of more than ${MAX_QUERY_TERMS} terms searches its ${MAX_QUERY_TERMS} rarest`, async () => {
    assert.ok(2800 * 20 > MAX_QUERY_POSTINGS);
    const found = await engine.search(QUERY, { namespace: BIG, limit: 200, countRecall: false });
    // The rare word and the fifteen first words (held 700 times; the others 701 times, with the decoy) ran: every
    // result holds one of them, and the decoy, which holds none but 64 of the other terms, is no candidate (searched
    // by every term, it comes first).
    const ran = new Set([RARE, ...WORDS.slice(0, 15)]);
    assert.equal(found.length, 200);
    for (const r of found) assert.ok(r.memory.text.split(/\s+/u).some((w) => ran.has(w)), r.memory.text);
    assert.ok(!found.some((r) => r.memory.id === ids[`${BIG} decoy`]), 'the decoy is not searched for');
  });

  it('a query word the cut leaves out does not come back as a related term of another', async () => {
    // "db" is held by no memory (kept), "database" by 100 and every word by 700: the sixteen markers are the rarest.
    // "database" is in the vocabulary's group of "db", but it is a word of the query: it is not searched at all.
    const found = await engine.search(`${MARKERS.join(' ')} database db ${WORDS.join(' ')}`, { namespace: BIG, limit: 200, countRecall: false });
    assert.deepEqual(found.map((r) => r.memory.text).sort(), MARKERS.map((m) => `Marker ${m} for the long query.`).sort());
  });

  it('in a small namespace the same query searches every term', async () => {
    const found = await engine.search(QUERY, { namespace: SMALL, limit: 200, countRecall: false });
    assert.equal(found[0]?.memory.id, ids[`${SMALL} decoy`], 'the decoy holds most of the terms and comes first');
    assert.ok(found.some((r) => r.memory.id === ids[`${SMALL} target`]));
  });
});
