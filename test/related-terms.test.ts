import * as assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine, type EngineConfig } from '../src/core/engine.js';
import { queryTerms } from '../src/core/lexical.js';
import { analyseGroups, createVocabulary, defaultVocabulary, rarestRelated, RELATED_MAX_TERMS, withRelated } from '../src/core/related-terms.js';
import { VOCABULARY_GROUPS } from '../src/core/vocabulary-data.js';
import { VOCABULARY_TERMS } from '../src/core/vocabulary-terms.js';
import { isCairnError } from '../src/interfaces/errors.js';
import type { Embedder } from '../src/interfaces/embedder.js';
import type { SearchResult } from '../src/interfaces/memory.js';
import type { Store } from '../src/interfaces/store.js';
import { CODING_NAMESPACES } from '../bench/coding-memory-data.js';
import { storeFactories } from './helpers/stores.js';

/**
 * Related terms (core/related-terms.ts): the lexical signal also matches a query's words through an
 * engineering vocabulary, weighed down, so a note that says "translation catalogue" is found by "i18n" by
 * word as well as by meaning; identifiers are never expanded and match exactly as before; a namespace can
 * turn it off. On every backend, with the real embedder, among the 81 notes of the benchmark's billing
 * repository.
 */

const related = (query: string) => defaultVocabulary().related(query, queryTerms(query));

describe('the vocabulary', () => {
  it('expands abbreviations and spelled-out forms both ways, stemmed like the index', () => {
    assert.ok(related('k8s upgrade').includes('kubernet'), related('k8s upgrade').join(' '));
    assert.ok(related('kubernetes upgrade').includes('k8s'));
    assert.ok(related('where does i18n happen').includes('translat'));
    assert.ok(related('the deploys are flaky').includes('intermitt'), related('the deploys are flaky').join(' '));
    // A phrase member matches when the query holds all its words.
    assert.ok(related('which environment variable holds it').includes('env'));
    assert.deepEqual(related('which environment holds it').includes('dotenv'), false);
  });

  it('knows managed Kubernetes, double charges, empty searches, per-page sizes and short forms', () => {
    const has = (query: string, term: string) => assert.ok(related(query).includes(term), `${query}: ${related(query).join(' ')}`);
    has('what kubernetes version runs in production', 'ek');
    has('which EKS version', 'kubernet');
    // A phrase member needs all its words: "charged twice" stands for idempotency, "twice" alone for nothing more.
    has('a customer was charged twice', 'idempot');
    assert.ok(!related('the job ran twice').includes('idempot'), related('the job ran twice').join(' '));
    has('searches that find nothing', 'zero-result');
    has('how many items per page', 'pagin');
    has('perf of the search api', 'latenc');
    has('where are the infra modules', 'infrastructur');
    has('the tmp dir', 'temporari');
    has('the tmp dir', 'directori');
    has('the func is slow', 'fn');
    // "specific" is not "specification": the stemmer gives both specif, so no such group is kept.
    assert.ok(!related('what specific themes').some((t) => t.startsWith('spec')), related('what specific themes').join(' '));
    // Ordinary words sharing a stem with a short form's group: definite(ly) and definition give defin/definit,
    // resolved and resolution resolv/resolut, applicable and application applic, functional and function function.
    const none = (query: string, start: string) => assert.ok(!related(query).some((t) => t.startsWith(start)), `${query}: ${related(query).join(' ')}`);
    none('is it definitely fixed', 'defin');
    none('the ruling is definitive', 'defin');
    none('the bug was resolved', 'resolut');
    none('is this applicable to staging', 'app');
    none('a functional test', 'fn');
    none('a functional test', 'func');
    none('set the model temp to 0.2', 'tmp');
  });

  it('never expands an identifier, nor a word inside one, nor adds a term the query already has', () => {
    for (const q of ['PAYMENTS_V2_ENABLED', 'shop/checkout/tax.py', 'getUserName', 'auth_token_ttl', 'ERR_DB_TIMEOUT']) assert.deepEqual(related(q), [], q);
    const terms = queryTerms('auth and authentication');
    for (const t of related('auth and authentication')) assert.ok(!terms.includes(t), t);
  });

  it('refuses a phrase that comes down to one word and a group of one', () => {
    assert.throws(() => createVocabulary('login, log in'), /"log in" gives terms \[log\]/u);
    assert.throws(() => createVocabulary('kubernetes'), /at least two members/u);
    const lines = VOCABULARY_GROUPS.split('\n').filter((l) => l.trim() !== '');
    assert.ok(lines.length >= 300, `${lines.length} groups`);
    assert.ok(defaultVocabulary().related('db', ['db']).length > 0);
  });

  it('the generated analysed vocabulary (vocabulary-terms.ts) is the committed vocabulary analysed now', () => {
    assert.deepEqual(JSON.parse(VOCABULARY_TERMS), analyseGroups(VOCABULARY_GROUPS), 'out of date: run `npm run build && node scripts/vocabulary-terms.mjs`');
  });

  it('tells a member on its own from a word of a phrase member', () => {
    const v = createVocabulary('latency, response time, p95');
    assert.equal(v.isWholeMember('latenc'), true);
    assert.equal(v.isWholeMember('p95'), true);
    // "time" is searched loose for BM25, but only a whole member covers a query word (term-coverage.ts).
    assert.ok(v.related('latency', queryTerms('latency')).includes('time'));
    assert.equal(v.isWholeMember('time'), false);
    assert.equal(defaultVocabulary().isWholeMember('vat'), true);
  });

  it('searches only related terms the namespace holds and does not hold commonly, the rarest first', () => {
    const df = new Map([['a', 1], ['b', 40], ['c', 3], ['d', 2], ['e', 5], ['f', 4], ['g', 2], ['h', 1]]);
    // 50 memories: at most 5 may hold a term; "b" is common and "x" absent.
    assert.deepEqual(rarestRelated(['x', 'b', 'c', 'a', 'e'], df, 50), ['a', 'c', 'e']);
    const kept = rarestRelated(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], df, 50);
    assert.equal(kept.length, Math.min(7, RELATED_MAX_TERMS));
    assert.deepEqual(kept.slice(0, 2).sort(), ['a', 'h']);
  });

  it('a related match stands in for a missing word and never adds to a direct one', () => {
    const own = [{ id: 'a', score: 6 }, { id: 'b', score: 2 }];
    const more = [{ id: 'c', score: 8 }, { id: 'b', score: 10 }, { id: 'a', score: 4 }];
    assert.deepEqual(withRelated(own, more, 0.5, 10), [{ id: 'a', score: 6 }, { id: 'b', score: 5 }, { id: 'c', score: 4 }]);
    assert.deepEqual(withRelated(own, more, 0.5, 2).map((h) => h.id), ['a', 'b']);
  });
});

const NOW = new Date('2026-11-01T12:00:00.000Z');
const billing = CODING_NAMESPACES[0] as (typeof CODING_NAMESPACES)[number];
const NS = billing.namespace;
const ANSWER = 'Customer-facing copy goes through the translation catalogue in locales/<lang>.json; never hard-code a string shown to a user.';
const FLAG = 'PAYMENTS_V2_ENABLED turns on the second payment flow for new accounts only.';
const explain = (results: SearchResult[]) => results.map((r, i) => `${i + 1}. ${(100 * r.score).toFixed(1)} ${r.memory.text}`).join('\n') || '(nothing)';

let embedder: Embedder;
before(() => {
  embedder = createUseEmbedder();
});

for (const factory of storeFactories()) {
  describe(`related terms in recall on ${factory.name}`, () => {
    let store: Store;
    let answerId: string;
    let flagId: string;
    const engine = (over: Partial<EngineConfig> = {}) =>
      new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, now: () => NOW, countRecalls: false, ...over });

    before(async () => {
      store = await factory.make();
      const e = engine();
      for (const note of billing.notes) {
        if (note.state || note.route) continue;
        const createdAt = new Date(NOW.getTime() - note.days * 86_400_000).toISOString();
        await e.save({ text: note.text, kind: note.kind, createdAt }).catch((err: unknown) => (isCairnError(err, 'QUARANTINED') ? null : Promise.reject(err)));
      }
      answerId = (await e.save({ text: ANSWER, kind: 'convention' })).id;
      flagId = (await e.save({ text: FLAG, kind: 'fact' })).id;
    });

    const find = (results: SearchResult[], id: string) => results.find((r) => r.memory.id === id);

    it('an abbreviation finds the note that spells it out, by word as well as by meaning', async () => {
      for (const query of ['i18n', 'where does i18n happen']) {
        const off = await engine({ relatedTerms: null }).search(query);
        const on = await engine().search(query);
        // Without the vocabulary no word of the query is in the note: it gets nothing from the lexical signal.
        assert.equal(find(off, answerId)?.scoreDetails.signals.lexical.rank ?? null, null, explain(off));
        const hit = find(on, answerId);
        assert.ok(hit && hit.scoreDetails.signals.lexical.rank !== null && hit.scoreDetails.signals.lexical.contribution > 0, explain(on));
        assert.ok(hit.score > (find(off, answerId)?.score ?? 0));
        const rankOf = (results: SearchResult[]) => results.findIndex((r) => r.memory.id === answerId);
        assert.ok(rankOf(off) === -1 || rankOf(on) < rankOf(off), `${explain(off)}\n--\n${explain(on)}`);
      }
    });

    it('a related term covers the query word it stands for', async () => {
      // "tax" is not in the decision, "VAT" is: without the vocabulary the note covers "round" alone.
      const query = 'how do we round tax';
      const vat = (results: SearchResult[]) => results.find((r) => r.memory.text.startsWith('Decision: VAT is rounded'));
      const off = vat(await engine({ relatedTerms: null }).search(query));
      const on = vat(await engine().search(query));
      assert.ok(off && on, 'the decision is recalled either way');
      const offCoverage = off.scoreDetails.signals.lexical.coverage ?? 0;
      assert.ok(offCoverage > 0 && offCoverage < 1, `coverage without the vocabulary ${offCoverage}`);
      assert.equal(on.scoreDetails.signals.lexical.coverage, 1);
      assert.ok(on.score > off.score, `${on.score} > ${off.score}`);
      // The readable score still adds up.
      const d = on.scoreDetails;
      assert.ok(Math.abs(d.signals.vector.contribution + d.signals.lexical.contribution + d.signals.recency.contribution - (d.relevance ?? 0)) < 1e-9);
    });

    it('an identifier query matches exactly as without the vocabulary', async () => {
      const off = await engine({ relatedTerms: null }).search('PAYMENTS_V2_ENABLED');
      const on = await engine().search('PAYMENTS_V2_ENABLED');
      assert.equal(on[0]?.memory.id, flagId, explain(on));
      assert.deepEqual(on.map((r) => [r.memory.id, r.score]), off.map((r) => [r.memory.id, r.score]));
    });

    it('an off-topic question still recalls nothing', async () => {
      for (const q of ['recipe for sourdough bread', 'who won the 1998 world cup']) {
        assert.deepEqual(await engine({ relatedTerms: null }).search(q), [], q);
        assert.deepEqual(await engine().search(q), [], q);
      }
    });

    it('an off-topic question whose words are in the vocabulary recalls nothing either', async () => {
      // Before, a word the namespace never uses counted as known when one of its related terms was used
      // anywhere in it, and these went from no result to ten.
      for (const q of ['merge lanes driving', 'token ring jewelry', 'dinner reservation policy', 'vault jump height']) {
        assert.ok(related(q).length > 0, `${q} expands`);
        assert.deepEqual(await engine({ relatedTerms: null }).search(q), [], q);
        assert.deepEqual((await engine().search(q)).map((r) => r.memory.text), [], q);
      }
    });

    it('a namespace turns it off and on again, and a bad weight is refused', async () => {
      const e = engine();
      assert.deepEqual(await e.getRelatedTerms(), { weight: 0.7 });
      assert.deepEqual(await e.setRelatedTerms(0), { weight: 0 });
      const off = await e.search('where does i18n happen');
      assert.equal(find(off, answerId)?.scoreDetails.signals.lexical.rank ?? null, null, explain(off));
      // Another engine on the same store reads the namespace's setting, whatever its own default.
      assert.deepEqual(await engine({ relatedTerms: { weight: 1 } }).getRelatedTerms(), { weight: 0 });
      await e.setRelatedTerms(0.5);
      assert.notEqual(find(await e.search('where does i18n happen'), answerId)?.scoreDetails.signals.lexical.rank ?? null, null);
      await assert.rejects(e.setRelatedTerms(2), (err: unknown) => isCairnError(err, 'INVALID_INPUT') && /weight: must be a number from 0 to 1/u.test((err as Error).message));
      assert.throws(() => engine({ relatedTerms: { weight: -1 } }), /relatedTerms\.weight/u);
      // The same 0–1 rule, from one place (validate.ts), for the term-coverage share.
      assert.throws(() => engine({ termCoverage: { share: 2 } }), (err: unknown) => isCairnError(err, 'INVALID_INPUT') && /termCoverage\.share: must be a number from 0 to 1/u.test((err as Error).message));
      // A stored weight is checked as it is read (a foreign or replayed log), not used as it is.
      await store.transaction((tx) => tx.setSetting(NS, 'related-terms', { weight: 5 }));
      await assert.rejects(e.search('where does i18n happen'), (err: unknown) => isCairnError(err, 'INVALID_INPUT') && /related-terms weight/u.test((err as Error).message));
      await e.setRelatedTerms(0.5);
    });
  });
}
