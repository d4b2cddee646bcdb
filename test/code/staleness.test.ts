import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createGitRepository } from '../../src/adapters/git/git-repository.js';
import { createUseEmbedder } from '../../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../../src/core/engine.js';
import type { CodeRepository } from '../../src/interfaces/code.js';
import type { Store } from '../../src/interfaces/store.js';
import { lines, makeRepo, type GitFixture } from './git-fixture.js';

/**
 * Code anchors and staleness in a real git repository: a route to a file that is then renamed, a note on a
 * file that is deleted, one on a file that is rewritten, and one on a file nobody touches. Real SQLite,
 * the real embedding model, the real git.
 */

const NS = 'github.com/acme/shop';
const embedder = createUseEmbedder();
let repo: GitFixture;
let root: string;
let store: Store;
let engine: Engine;
const ids: Record<string, string> = {};
let removalCommit = '';
let writtenAt = '';

function open(repository: CodeRepository | null, file = 'cairn.db'): { store: Store; engine: Engine } {
  const s = createSqliteStore({ path: join(root, file) });
  return { store: s, engine: new Engine({ store: s, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, repository }) };
}

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'cairn-stale-'));
  repo = makeRepo();
  repo.write('shop/checkout/tax.py', 'def vat_rounding(amount):\n    return round(amount, 2)\n' + lines(40, '# tax rule'));
  repo.write('shop/legacy/export.py', lines(30, '# export'));
  repo.write('shop/cart.py', 'def cart_total(items):\n    return sum(items)\n' + lines(30, '# cart'));
  repo.write('shop/stable.py', lines(20, '# stable'));
  writtenAt = repo.commit('first');
  ({ store, engine } = open(createGitRepository({ cwd: repo.dir })));
  ids['route'] = (await engine.saveRoute({ title: 'checkout tax', description: 'VAT rounding of checkout totals', paths: ['shop/checkout/tax.py'] })).id;
  ids['legacy'] = (await engine.save({ text: 'The nightly CSV export to the accounting system is written by shop/legacy/export.py' })).id;
  ids['cart'] = (await engine.save({ text: 'Cart totals are summed by `cart_total` in shop/cart.py:1-2, before discounts' })).id;
  ids['stable'] = (await engine.save({ text: 'Stock levels are checked in shop/stable.py before an order is accepted', anchors: [{ path: 'shop/stable.py', lines: [3, 9] }] })).id;
  ids['plain'] = (await engine.save({ text: 'Use pnpm, not npm, to install dependencies' })).id;

  mkdirSync(join(repo.dir, 'shop/billing'));
  repo.git('mv', 'shop/checkout/tax.py', 'shop/billing/tax.py');
  repo.commit('move tax to billing');
  repo.git('rm', '-q', 'shop/legacy/export.py');
  removalCommit = repo.commit('drop the legacy export');
  repo.write('shop/cart.py', 'def basket_sum(lines):\n    return sum(l.price for l in lines)\n' + lines(35, '# basket'));
  repo.commit('rewrite the cart');
});

after(async () => {
  await store.close();
  repo.cleanup();
  rmSync(root, { recursive: true, force: true });
});

describe('code anchors at write time', () => {
  it('a route anchors to its paths and records the commit it was written at', async () => {
    const m = await engine.get(ids['route'] as string);
    assert.deepEqual(m?.code, { commit: writtenAt, anchors: [{ path: 'shop/checkout/tax.py' }] });
  });

  it('paths with a line range and identifiers named in a note are anchored when they exist', async () => {
    const m = await engine.get(ids['cart'] as string);
    assert.deepEqual(m?.code?.anchors, [
      { path: 'shop/cart.py', lines: [1, 2] },
      { path: 'shop/cart.py', symbol: 'cart_total' },
    ]);
  });

  it('a note that names no file of the repository gets no anchors', async () => {
    const m = await engine.get(ids['plain'] as string);
    assert.equal(m?.code, undefined);
  });

  it('an explicit anchor is kept as given; a path that does not exist is not anchored from text', async () => {
    const m = await engine.get(ids['stable'] as string);
    assert.deepEqual(m?.code?.anchors, [{ path: 'shop/stable.py', lines: [3, 9] }]);
    const r = await engine.save({ text: 'Refunds are handled in shop/refunds/missing.py (planned)' });
    assert.equal(r.memory.code, undefined);
  });

  it('bad anchors are refused with the field named, and nothing is stored', async () => {
    await assert.rejects(engine.save({ text: 'x marks', anchors: [{ path: '../outside.py' }] }), /anchors\[0\]\.path/u);
    await assert.rejects(engine.save({ text: 'x marks', anchors: [{ path: 'a.py', lines: [5, 2] }] }), /anchors\[0\]\.lines/u);
    assert.equal((await engine.list()).some((m) => m.text === 'x marks'), false);
  });
});

describe('staleness at recall', () => {
  it('a renamed file marks its route "moved to <new path>" in search and context', async () => {
    const [hit] = await engine.search('where is VAT rounding done', { kinds: ['route'], limit: 1 });
    assert.equal(hit?.memory.id, ids['route']);
    assert.deepEqual(hit?.stale, [{ status: 'moved', path: 'shop/checkout/tax.py', newPath: 'shop/billing/tax.py', reason: 'moved to shop/billing/tax.py' }]);
    const pack = await engine.context('VAT rounding at checkout');
    assert.match(pack.text, /\[stale: shop\/checkout\/tax\.py moved to shop\/billing\/tax\.py\]/u);
  });

  it('a deleted file is "file removed in <commit>" naming the commit that removed it', async () => {
    const results = await engine.search('nightly CSV export accounting');
    const hit = results.find((r) => r.memory.id === ids['legacy']);
    assert.equal(hit?.stale?.[0]?.status, 'removed');
    assert.equal(hit?.stale?.[0]?.commit, removalCommit);
    assert.equal(hit?.stale?.[0]?.reason, `file removed in ${removalCommit.slice(0, 10)}`);
  });

  it('a file rewritten since the memory was written is "code changed since"', async () => {
    const results = await engine.search('cart totals summed before discounts');
    const hit = results.find((r) => r.memory.id === ids['cart']);
    const reasons = hit?.stale?.map((s) => s.reason) ?? [];
    assert.ok(reasons.some((r) => r.startsWith(`code changed since ${writtenAt.slice(0, 10)}`)), reasons.join(' | '));
    assert.ok(reasons.some((r) => r.includes('cart_total is no longer in shop/cart.py')), reasons.join(' | '));
  });

  it('an untouched file and an unanchored note carry no mark', async () => {
    const results = await engine.search('stock levels checked before an order');
    const stable = results.find((r) => r.memory.id === ids['stable']);
    assert.ok(stable);
    assert.equal(stable.stale, undefined);
    const plain = (await engine.search('pnpm install dependencies')).find((r) => r.memory.id === ids['plain']);
    assert.equal(plain?.stale, undefined);
  });

  it('a file deleted in the working tree but not committed is marked too', async () => {
    const { rmSync: rm } = await import('node:fs');
    rm(join(repo.dir, 'shop/stable.py'));
    try {
      const hit = (await engine.search('stock levels checked before an order')).find((r) => r.memory.id === ids['stable']);
      assert.equal(hit?.stale?.[0]?.reason, 'file removed (not committed yet)');
    } finally {
      repo.git('checkout', '--', 'shop/stable.py');
    }
  });

  it('a route whose file moved is updated in one call; the new version is not stale and the log still replays', async () => {
    const r = await engine.followMoves(ids['route'] as string);
    assert.equal(r.supersedes, ids['route']);
    assert.deepEqual(r.memory.route?.paths, ['shop/billing/tax.py']);
    assert.equal(r.memory.code?.commit, repo.head());
    const [hit] = await engine.search('where is VAT rounding done', { kinds: ['route'], limit: 1 });
    assert.equal(hit?.memory.id, r.memory.id);
    assert.equal(hit?.stale, undefined);
    await assert.rejects(engine.followMoves(r.memory.id), /none of the files/u);
    const report = await engine.verify(createSqliteStore({ path: ':memory:' }));
    assert.equal(report.ok, true);
    assert.equal(report.liveChecksum, report.replayedChecksum);
  });
});

describe('staleness as HEAD moves on', () => {
  it('commits after a search are applied to the cached history: a later rename and a later deletion are seen, with the deleting commit', async () => {
    await engine.search('stock levels checked before an order'); // the history since the memories' commit is cached now
    mkdirSync(join(repo.dir, 'shop/stock'));
    repo.git('mv', 'shop/stable.py', 'shop/stock/stable.py');
    repo.git('rm', '-q', 'shop/cart.py');
    const gone = repo.commit('move stock, drop the cart');
    const stable = (await engine.search('stock levels checked before an order')).find((r) => r.memory.id === ids['stable']);
    assert.deepEqual(stable?.stale?.map((m) => m.reason), ['moved to shop/stock/stable.py']);
    const cart = (await engine.search('cart totals summed before discounts')).find((r) => r.memory.id === ids['cart']);
    assert.ok(cart?.stale?.every((m) => m.status === 'removed' && m.commit === gone), JSON.stringify(cart?.stale));
  });
});

describe('line counts as HEAD moves on', () => {
  it('a file rewritten over two commits, searched in between, is counted as git counts it since the memory was written', async () => {
    repo.write('shop/notes.py', lines(40, '# note'));
    const at = repo.commit('notes');
    const id = (await engine.save({ text: 'Release notes are generated by shop/notes.py from the changelog' })).id;
    const find = async () => (await engine.search('release notes generated from the changelog')).find((r) => r.memory.id === id);
    assert.equal((await find())?.stale, undefined);
    repo.write('shop/notes.py', lines(15, '# note') + lines(10, '# changed'));
    repo.commit('rewrite part of the notes');
    await find();
    repo.write('shop/notes.py', lines(5, '# note') + lines(30, '# rewritten'));
    repo.commit('rewrite most of the notes');
    const [added, deleted] = repo.git('diff', '--numstat', at, 'HEAD', '--', 'shop/notes.py').split('\t').map(Number);
    const reason = (await find())?.stale?.[0]?.reason;
    assert.equal(reason, `code changed since ${at.slice(0, 10)} (${added} lines added, ${deleted} removed of 40)`);
  });
});

describe('without git', () => {
  it('outside a repository nothing is anchored and nothing is marked', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'cairn-nogit-'));
    const o = open(createGitRepository({ cwd: outside }), 'outside.db');
    try {
      const r = await o.engine.save({ text: 'Taxes live in shop/billing/tax.py' });
      assert.equal(r.memory.code, undefined);
      const [hit] = await o.engine.search('taxes');
      assert.equal(hit?.stale, undefined);
    } finally {
      await o.store.close();
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('with no git executable, recall in a repository still works and marks nothing', async () => {
    const o = open(createGitRepository({ cwd: repo.dir, gitPath: join(root, 'no-such-git') }));
    try {
      const [hit] = await o.engine.search('where is VAT rounding done', { kinds: ['route'], limit: 1 });
      assert.ok(hit);
      assert.equal(hit.stale, undefined);
    } finally {
      await o.store.close();
    }
  });
});
