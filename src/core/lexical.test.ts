import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyse, plainTerms, queryTerms } from './lexical.js';

/** True when every term of `query` is among the indexed terms of `doc`: an OR query of them would hit it on each. */
function coveredBy(query: string, doc: string): boolean {
  const indexed = new Set(analyse(doc));
  const terms = queryTerms(query);
  return terms.length > 0 && terms.every((t) => indexed.has(t));
}

describe('lexical analysis', () => {
  describe('identifiers are findable whole and by their parts', () => {
    const cases: { doc: string; whole: string; parts: string[] }[] = [
      { doc: 'Feature flag PAYMENTS_V2_ENABLED switches the new checkout.', whole: 'PAYMENTS_V2_ENABLED', parts: ['payments', 'v2', 'enabled'] },
      { doc: 'The nightly job fails with ERR_STOCK_DRIFT_17 when counts differ.', whole: 'ERR_STOCK_DRIFT_17', parts: ['stock drift', '17', 'err'] },
      { doc: 'Tax rules live in shop/checkout/tax.py, not in the templates.', whole: 'shop/checkout/tax.py', parts: ['checkout', 'tax', 'shop', 'py'] },
      { doc: 'Python modules use snake_case names.', whole: 'snake_case', parts: ['snake', 'case'] },
      { doc: 'Call getUserName before rendering the header.', whole: 'getUserName', parts: ['user name', 'get', 'user'] },
      { doc: 'The HTTPServer wrapper retries twice.', whole: 'HTTPServer', parts: ['http', 'server'] },
    ];
    for (const { doc, whole, parts } of cases) {
      it(`${whole}`, () => {
        const terms = analyse(doc);
        assert.ok(terms.includes(whole.toLowerCase()), `the whole identifier is one term: ${terms.join(' ')}`);
        // The whole identifier as a query: its first term is the exact compound, and every term it yields hits.
        assert.equal(queryTerms(whole)[0], whole.toLowerCase());
        assert.ok(coveredBy(whole, doc), `query ${whole} must hit the note`);
        // Case does not matter, except that an all-lower-case camelCase name has lost the boundaries of its parts.
        if (!/\p{Ll}\p{Lu}/u.test(whole)) assert.ok(coveredBy(whole.toLowerCase(), doc), 'case does not matter');
        for (const part of parts) assert.ok(coveredBy(part, doc), `query "${part}" must hit the note: ${terms.join(' ')}`);
      });
    }

    it('a trailing full stop or surrounding punctuation is not part of the identifier', () => {
      assert.ok(analyse('Set PAYMENTS_V2_ENABLED.').includes('payments_v2_enabled'));
      assert.ok(analyse('see (shop/checkout/tax.py), then').includes('shop/checkout/tax.py'));
      assert.ok(analyse('`ERR_STOCK_DRIFT_17`!').includes('err_stock_drift_17'));
      assert.ok(!analyse('Set PAYMENTS_V2_ENABLED.').some((t) => t.endsWith('.')));
    });

    it('a different identifier sharing parts is not the same whole term', () => {
      const doc = analyse('ERR_STOCK_DRIFT_18 is the retry variant');
      assert.ok(!doc.includes('err_stock_drift_17'));
      assert.ok(doc.includes('err_stock_drift_18'));
    });

    it('plain words are not turned into compounds', () => {
      assert.deepEqual(
        analyse('Deploy review').filter((t) => t.includes('_') || t.includes('/')),
        [],
      );
      assert.equal(analyse('deploy').length, 1);
    });

    it('a folder written with its trailing slash is a term of its own, besides its parts', () => {
      assert.deepEqual(queryTerms('deploy/'), ['deploy/', 'deploi']);
      assert.deepEqual(analyse('watching the deploy/ folder'), ['watch', 'deploy/', 'deploi', 'folder']);
      assert.deepEqual(queryTerms('src/tax/'), ['src/tax/', 'src/tax', 'src', 'tax']);
      // Without the slash, as before: the word alone, or the path whole and by its parts.
      assert.ok(!analyse('Services deploy with src/tax/provider.ts').some((t) => t.endsWith('/')));
      // The folder's last part still counts as its plain word (shared wording, query-term coverage).
      assert.deepEqual(plainTerms('pushed to deploy/ today'), ['push', 'deploi', 'todai']);
      assert.deepEqual(plainTerms('the src/tax/ folder'), ['tax', 'folder']);
      assert.deepEqual(plainTerms('the getUser/ folder'), ['folder'], 'a camelCase folder is an identifier');
    });

    it("a URL's host and path are no folder", () => {
      const terms = analyse('see http://host/ and https://example.com/docs/ or the a/b/ folder');
      assert.deepEqual(terms.filter((t) => t.endsWith('/')), ['a/b/']);
      assert.ok(terms.includes('host') && terms.includes('example.com/docs'));
    });
  });

  describe('stemming', () => {
    it('inflections of a word share one term', () => {
      for (const group of [
        ['request', 'requests', 'requested', 'requesting'],
        ['deploy', 'deploys', 'deployed', 'deploying'],
        ['run', 'runs', 'running'],
        ['cache', 'caches', 'caching', 'cached'],
      ]) {
        const stems = new Set(group.map((w) => analyse(w).join(' ')));
        assert.equal(stems.size, 1, `${group.join('/')} → ${[...stems].join(', ')}`);
      }
    });

    it('parts of identifiers are stemmed like words, so a plain word finds them', () => {
      assert.ok(coveredBy('payment enabled', 'PAYMENTS_V2_ENABLED'));
      assert.ok(coveredBy('drifting stocks', 'ERR_STOCK_DRIFT_17'));
    });

    it('different words stay different', () => {
      assert.notDeepEqual(analyse('cache'), analyse('catch'));
      assert.notDeepEqual(analyse('deploy'), analyse('develop'));
    });

    it('numbers are kept as they are', () => {
      assert.deepEqual(analyse('100 requests'), ['100', analyse('request')[0]]);
    });
  });

  describe('stop words and normalisation', () => {
    it('function words are dropped and topic words kept', () => {
      const terms = analyse('What is the limit of the API for a client?');
      for (const stop of ['is', 'the', 'of', 'a']) assert.ok(!terms.includes(stop), `${stop} should be dropped: ${terms.join(' ')}`);
      for (const word of ['limit', 'api', 'client']) assert.ok(terms.includes(analyse(word)[0] as string), `${word} kept`);
    });

    it('a query of stop words only has no terms', () => {
      assert.deepEqual(queryTerms('it is the'), []);
      assert.deepEqual(queryTerms('   '), []);
      assert.deepEqual(queryTerms('?!…'), []);
    });

    it('a stop word inside an identifier is kept as part of the identifier', () => {
      const terms = analyse('IS_THE_FLAG_ON');
      assert.equal(terms[0], 'is_the_flag_on');
      assert.ok(terms.includes(analyse('flag')[0] as string));
    });

    it('full-width and compatibility characters fold to their plain form; case folds', () => {
      assert.deepEqual(analyse('ＡＰＩ Limit'), analyse('api limit'));
      assert.deepEqual(analyse('ERR_STOCK_DRIFT_17'), analyse('err_stock_drift_17'));
      assert.deepEqual(analyse('Café naïve Ångström'), analyse('cafe naive angstrom'));
    });

    it('terms contain only characters the full-text index keeps in one token', () => {
      const terms = analyse('Edge: "quotes", (parens), [brackets], {braces}, a+b=c, x*y, #hash @at ~tilde');
      for (const t of terms) assert.match(t, /^[\p{L}\p{N}_./:-]+$/u, t);
    });
  });

  describe('analyse and queryTerms', () => {
    it('terms are remembered per token without changing them: a caller editing the list, or the memo starting over, changes nothing', () => {
      const text = 'Call getUserName in shop/checkout/tax.py; requests retry twice (OPS-1000, felix).';
      const first = analyse(text);
      assert.deepEqual(first, ['call', 'getusername', 'get', 'user', 'name', 'shop/checkout/tax.py', 'shop', 'checkout', 'tax', 'py', 'request', 'retri', 'twice', 'ops-1000', 'op', '1000', 'felix']);
      first.splice(0, first.length, 'edited');
      assert.deepEqual(analyse(text), ['call', 'getusername', 'get', 'user', 'name', 'shop/checkout/tax.py', 'shop', 'checkout', 'tax', 'py', 'request', 'retri', 'twice', 'ops-1000', 'op', '1000', 'felix']);
      // More distinct tokens than the memo keeps (50,000): it starts over and still gives the same terms.
      const many = Array.from({ length: 50_100 }, (_, i) => `Tok${i}Part`);
      const terms = analyse(many.join(' '));
      assert.equal(terms.length, many.length * 3);
      assert.deepEqual(terms.slice(0, 3), ['tok0part', 'tok0', 'part']);
      assert.deepEqual(analyse(text), analyse(`${text}`));
      assert.deepEqual(analyse('Tok7Part'), ['tok7part', 'tok7', 'part']);
    });

    it('analyse keeps repeats in order (term frequency counts); queryTerms keeps each term once', () => {
      const terms = analyse('cache miss, cache hit, cache');
      const cache = analyse('cache')[0];
      assert.equal(terms.filter((t) => t === cache).length, 3);
      assert.deepEqual(queryTerms('cache miss, cache hit, cache'), [...new Set(terms)]);
    });
  });
});
