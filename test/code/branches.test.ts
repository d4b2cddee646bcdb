import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createGitRepository } from '../../src/adapters/git/git-repository.js';
import { createSqliteStore } from '../../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../../src/adapters/tokenizer/gpt-token-counter.js';
import { BRANCH_GRACE_DAYS } from '../../src/core/branches.js';
import { Engine } from '../../src/core/engine.js';
import type { Store } from '../../src/interfaces/store.js';
import { lines, makeRepo, type GitFixture } from './git-fixture.js';

/**
 * Two tiers in a real git repository: notes kept to a branch are recalled on it only, join the repository
 * tier when the branch merges into main, and are forgotten after the grace period when the branch is
 * deleted unmerged. Real SQLite and git; recall by keywords (the tiers do not depend on the model).
 */

const NS = 'github.com/acme/tiers';
let repo: GitFixture;
let root: string;
let store: Store;
let engine: Engine;

function engineAt(now?: Date): Engine {
  return new Engine({
    store,
    embedder: null,
    tokenCounter: createGptTokenCounter(),
    defaultNamespace: NS,
    repository: createGitRepository({ cwd: repo.dir }),
    ...(now ? { now: () => now } : {}),
  });
}

const found = async (e: Engine, query: string, id: string) => (await e.search(query)).some((r) => r.memory.id === id);

before(() => {
  root = mkdtempSync(join(tmpdir(), 'cairn-tiers-'));
  repo = makeRepo();
  repo.write('src/app.ts', lines(10, '// app'));
  repo.commit('first');
  store = createSqliteStore({ path: join(root, 'cairn.db') });
  engine = engineAt();
});

after(async () => {
  await store.close();
  repo.cleanup();
  rmSync(root, { recursive: true, force: true });
});

describe('repository and branch tiers', () => {
  let shared = '';
  let featureNote = '';
  let spikeNote = '';

  it('a note scoped to a branch is recalled on that branch only; a repository note everywhere', async () => {
    shared = (await engine.save({ text: 'Releases are tagged from main by the release workflow' })).id;
    repo.git('checkout', '-q', '-b', 'feature/invoices');
    const r = await engine.save({ text: 'Invoice numbering restarts each fiscal year on this branch', scope: 'branch' });
    featureNote = r.id;
    assert.equal(r.memory.code?.branch, 'feature/invoices');
    assert.equal(await found(engine, 'invoice numbering fiscal year', featureNote), true);
    assert.equal((await engine.context('invoice numbering fiscal year')).text.includes(featureNote), true);
    repo.git('checkout', '-q', 'main');
    assert.equal(await found(engine, 'invoice numbering fiscal year', featureNote), false);
    assert.equal((await engine.context('invoice numbering fiscal year')).text.includes(featureNote), false);
    assert.equal((await engine.brief()).memories.some((m) => m.id === featureNote), false);
    assert.equal(await found(engine, 'releases tagged release workflow', shared), true);
  });

  it('branch scope on the default branch is the repository tier', async () => {
    const r = await engine.save({ text: 'Hotfixes on main need two reviewers', scope: 'branch' });
    assert.equal(r.memory.code, undefined);
  });

  it('the per-repository default makes new notes branch-scoped', async () => {
    await engine.setDefaultScope('branch');
    assert.equal(await engine.getDefaultScope(), 'branch');
    repo.git('checkout', '-q', 'feature/invoices');
    const r = await engine.save({ text: 'Credit notes reuse the invoice sequence' });
    assert.equal(r.memory.code?.branch, 'feature/invoices');
    const repoWide = await engine.save({ text: 'Amounts are stored in cents', scope: 'repository' });
    assert.equal(repoWide.memory.code, undefined);
    await engine.setDefaultScope('repository');
  });

  it('after the branch merges into main its notes are recalled on main, and reconciling moves them to the repository tier', async () => {
    repo.write('src/invoices.ts', lines(5, '// invoices'));
    repo.commit('invoices');
    repo.git('checkout', '-q', 'main');
    assert.equal(await found(engine, 'invoice numbering fiscal year', featureNote), false, 'not merged yet');
    repo.git('merge', '-q', '--no-ff', '-m', 'merge invoices', 'feature/invoices');
    assert.equal(await found(engine, 'invoice numbering fiscal year', featureNote), true, 'merged: recalled on main');
    const report = await engine.reconcileBranches();
    assert.ok(report.promoted.includes(featureNote));
    assert.equal((await engine.get(featureNote))?.code?.branch, undefined);
    repo.git('branch', '-q', '-d', 'feature/invoices');
    assert.equal(await found(engine, 'invoice numbering fiscal year', featureNote), true, 'still recalled once the merged branch is deleted');
    assert.deepEqual((await engine.reconcileBranches()).promoted, []);
  });

  it('a branch deleted without merging hides its notes at once and drops them after the grace period, reversibly', async () => {
    repo.git('checkout', '-q', '-b', 'spike');
    spikeNote = (await engine.save({ text: 'Experiment: cache the tax table in memory', scope: 'branch' })).id;
    repo.write('src/spike.ts', lines(3, '// spike'));
    repo.commit('spike');
    repo.git('checkout', '-q', 'main');
    repo.git('branch', '-q', '-D', 'spike');
    assert.equal(await found(engine, 'cache the tax table', spikeNote), false);
    const first = await engine.reconcileBranches();
    assert.deepEqual(first.dropped, []);
    assert.deepEqual(first.waiting.map((w) => [w.branch, w.notes]), [['spike', 1]]);
    assert.equal((await engine.get(spikeNote))?.forgottenAt, null);

    const later = engineAt(new Date(Date.now() + (BRANCH_GRACE_DAYS + 1) * 86_400_000));
    const second = await later.reconcileBranches();
    assert.deepEqual(second.dropped, [spikeNote]);
    const dropped = await later.get(spikeNote);
    assert.match(dropped?.forgetReason ?? '', /branch spike was deleted without being merged/u);
    await later.restore(spikeNote);
    const report = await later.verify(createSqliteStore({ path: ':memory:' }));
    assert.equal(report.ok, true);
  });

  it('outside a repository reconciling is refused, and branch notes are not recalled', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'cairn-tiers-out-'));
    try {
      const e = new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, repository: createGitRepository({ cwd: outside }) });
      await assert.rejects(e.reconcileBranches(), /UNSUPPORTED|git repository/u);
      assert.equal(await found(e, 'cache the tax table', spikeNote), false);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
