import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { NOTHING_RECALLED } from '../src/core/render.js';
import type { SearchResult } from '../src/interfaces/memory.js';
import type { Store } from '../src/interfaces/store.js';

/**
 * Score fusion on the real embedder and a real SQLite file: a readable relevance, a floor that says when
 * nothing matches, and the current note ranked over the one it updates. A small store of ten notes, the size
 * at which a floor is hardest (every note is a candidate of every query).
 */

const NS = 'github.com/acme/billing-api';
const NOW = new Date('2026-11-01T12:00:00.000Z');
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000).toISOString();

const NOTES = {
  vat: { text: 'Decision: tax (VAT) is rounded half-up to two decimals on each invoice line, never on the invoice total.', kind: 'decision' as const, days: 60 },
  taxProvider: { text: 'Tax rates come from the Avalara provider through TaxProviderClient in src/tax/provider.ts.', kind: 'fact' as const, days: 20 },
  money: { text: 'Money is stored as integer minor units (cents) in bigint columns; never floats.', kind: 'decision' as const, days: 200 },
  idempotency: { text: 'Every POST to /v1/charges must carry an Idempotency-Key header.', kind: 'convention' as const, days: 150 },
  ledger: { text: 'E_LEDGER_IMBALANCE means the debit and credit legs of a journal entry do not sum to zero.', kind: 'gotcha' as const, days: 45 },
  stripe: { text: 'Stripe webhooks fail signature checks when the body was parsed as JSON before verification.', kind: 'gotcha' as const, days: 90 },
  testDb: { text: 'Integration tests run against a throwaway Postgres started by scripts/test-db.sh.', kind: 'convention' as const, days: 95 },
  dunning: { text: 'Failed renewals retry on days 1, 3, 5 and 7 before the subscription is paused.', kind: 'fact' as const, days: 65 },
  deployOld: { text: 'Deploys go out on Thursdays after the 14:00 change freeze lifts.', kind: 'convention' as const, days: 170 },
  deployNew: { text: 'We moved releases: production deploys now happen every Tuesday morning, and Thursday is no longer a release day.', kind: 'convention' as const, days: 30 },
};

const OFF_TOPIC = ['recipe for sourdough bread', 'who won the 1998 world cup', 'best hiking trails in the alps', 'how do I care for a fiddle leaf fig'];

const embedder = createUseEmbedder();
const root = mkdtempSync(join(tmpdir(), 'cairn-relevance-'));
let store: Store;
let engine: Engine;
const id: Record<string, string> = {};

before(async () => {
  store = createSqliteStore({ path: join(root, 'relevance.db') });
  engine = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, now: () => NOW });
  for (const [key, n] of Object.entries(NOTES)) {
    if (key === 'deployNew') continue; // saved by the write-time test below
    id[key] = (await engine.save({ text: n.text, kind: n.kind, createdAt: daysAgo(n.days) })).id;
  }
});

after(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

function explain(results: SearchResult[]): string {
  return results.map((r, i) => `${i + 1}. ${(100 * r.score).toFixed(1)} ${r.memory.text}`).join('\n') || '(nothing)';
}

describe('score fusion', () => {
  it('"how do we round tax" puts the rounding decision first, clearly above the tax-provider fact', async () => {
    const results = await engine.search('how do we round tax');
    assert.equal(results[0]?.memory.id, id['vat'], explain(results));
    const provider = results.find((r) => r.memory.id === id['taxProvider']);
    if (provider) assert.ok((results[0] as SearchResult).score - provider.score > 0.05, `a real gap, not a tie:\n${explain(results)}`);
  });

  it('identifiers, paths and error codes still come through the floor in a ten-note store', async () => {
    for (const [query, key] of [
      ['TaxProviderClient', 'taxProvider'],
      ['E_LEDGER_IMBALANCE', 'ledger'],
      ['scripts/test-db.sh', 'testDb'],
      ['webhook signature check keeps failing', 'stripe'],
      ['journal entry legs do not add up', 'ledger'],
      ['when do we retry a card that was declined on renewal', 'dunning'],
    ] as const) {
      const results = await engine.search(query);
      assert.equal(results[0]?.memory.id, id[key], `${query}:\n${explain(results)}`);
    }
  });

  it('a paraphrase sharing no word with its note comes through the floor, first', async () => {
    // "prices" and "database" occur in no note: without related terms (related-terms.ts) only the vector
    // (cosine 0.40 to the money note) finds it; with them (the default) it stays first.
    const query = 'what type should prices have in the database';
    const wordsOnly = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, now: () => NOW, relatedTerms: null });
    const results = await wordsOnly.search(query);
    assert.equal(results[0]?.memory.id, id['money'], explain(results));
    assert.equal(results[0]?.scoreDetails.signals.lexical.raw, null, 'no lexical match: the vector alone carried it');
    const related = await engine.search(query);
    assert.equal(related[0]?.memory.id, id['money'], explain(related));
  });

  it('the relevance is 0–100 and the signals’ contributions add up to it', async () => {
    const results = await engine.search('how do we round tax');
    assert.ok(results.length > 0);
    for (const r of results) {
      const d = r.scoreDetails;
      assert.equal(d.method, 'score');
      const sum = d.signals.vector.contribution + d.signals.lexical.contribution + d.signals.recency.contribution;
      assert.ok(Math.abs(sum - (d.relevance as number)) < 1e-9, `${sum} ≠ ${d.relevance}`);
      assert.ok(Math.abs(r.score * 100 - (d.relevance as number)) < 1e-9);
      assert.ok((d.relevance as number) >= 0 && (d.relevance as number) <= 100);
    }
    // Ordered by relevance.
    for (let i = 1; i < results.length; i++) assert.ok((results[i - 1] as SearchResult).score >= (results[i] as SearchResult).score || results[i - 1]?.scoreDetails.newerThan);
  });

  it('off-topic questions return nothing, and context() says so in an explicit block', async () => {
    for (const q of OFF_TOPIC) {
      const results = await engine.search(q);
      assert.deepEqual(results, [], `${q}:\n${explain(results)}`);
      const pack = await engine.context(q);
      assert.equal(pack.memories.length + pack.routes.length, 0);
      assert.ok(pack.text.includes(NOTHING_RECALLED), pack.text);
      assert.ok(pack.tokens > 0 && pack.tokens < 60);
    }
  });

  it('context() with emptyWhenNothing (the prompt hook) gives an empty text and counts no tokens when nothing is recalled, and packs as usual otherwise', async () => {
    const tokenizer = createGptTokenCounter();
    let counted = 0;
    const counting = { id: tokenizer.id, count: (text: string) => (counted++, tokenizer.count(text)) };
    // Neither engine records recalls, so both read the same state and later tests find it as it was.
    const quiet = new Engine({ store, embedder, tokenCounter: counting, defaultNamespace: NS, now: () => NOW, countRecalls: false });
    const plainPack = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, now: () => NOW, countRecalls: false });
    for (const q of OFF_TOPIC) {
      const pack = await quiet.context(q, { emptyWhenNothing: true });
      assert.deepEqual(pack, { text: '', tokens: 0, memories: [], routes: [], omitted: 0 }, q);
    }
    assert.equal(counted, 0, 'no text was counted, so the tokenizer was never loaded');
    const found = await quiet.context('how do we round tax', { emptyWhenNothing: true });
    assert.deepEqual(found, await plainPack.context('how do we round tax'));
    assert.ok(found.memories.length > 0);
    assert.ok(counted > 0);
  });

  it('a nonsense line with one engineering word returns nothing', {
    todo: 'in a ten-note store every query word is unknown, so unknown words cannot tell "xyzzy nothing matches" from a paraphrase; they count from 50 notes (fusion.ts UNKNOWN_WORDS_MIN_DOCUMENTS), and its margin (−0.11) is that of "what is the traffic limit" in a 35-note store (−0.07 to −0.10)',
  }, async () => {
    assert.deepEqual(await engine.search('xyzzy nothing matches'), []);
  });

  it('rank fusion stays available per call, and has no floor', async () => {
    const results = await engine.search('recipe for sourdough bread', { fusion: 'rrf' });
    assert.ok(results.length > 0, 'rank fusion returns whatever matched some word');
    assert.equal(results[0]?.scoreDetails.method, 'rrf');
  });
});

describe('the current answer first', () => {
  it('a save reports the live note it likely replaces, and changes nothing', async () => {
    const r = await engine.save({ text: NOTES.deployNew.text, kind: NOTES.deployNew.kind, createdAt: daysAgo(NOTES.deployNew.days) });
    id['deployNew'] = r.id;
    assert.deepEqual(
      r.likelyReplaces?.map((l) => [l.id, l.text]),
      [[id['deployOld'], NOTES.deployOld.text]],
      JSON.stringify(r.likelyReplaces),
    );
    const old = await engine.get(id['deployOld'] as string);
    assert.equal(old?.supersededBy, null, 'nothing is replaced automatically');
    assert.equal(old?.forgottenAt, null);
  });

  it('the newer deploy note ranks above the older one it updates, without supersede', async () => {
    for (const q of ['what day do deploys go out', 'when is the weekly release']) {
      const results = await engine.search(q);
      const rank = (k: string) => results.findIndex((r) => r.memory.id === id[k]);
      assert.equal(rank('deployNew'), 0, `${q}:\n${explain(results)}`);
    }
  });

  it('an unrelated note reports nothing to replace', async () => {
    const r = await engine.save({ text: 'Invoice PDFs are rendered by a headless Chromium worker from Handlebars templates.', kind: 'fact', createdAt: daysAgo(5) });
    assert.deepEqual(r.likelyReplaces, []);
    await engine.forget(r.id);
  });

  it('supersedes in the same call replaces the old note: only the new one is recalled', async () => {
    const r = await engine.save({ text: 'Failed renewals now retry on days 1, 2, 4 and 8, then the subscription is paused.', kind: 'fact', supersedes: id['dunning'] });
    assert.equal(r.memory.supersedes, id['dunning']);
    assert.ok(!(r.likelyReplaces ?? []).some((l) => l.id === id['dunning']), 'the note it supersedes is not reported again');
    const results = await engine.search('when do we retry a declined renewal', { limit: 50 });
    assert.equal(results[0]?.memory.id, r.id, explain(results));
    assert.ok(!results.some((x) => x.memory.id === id['dunning']));
  });
});
