import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../../src/core/engine.js';
import type { Store } from '../../src/interfaces/store.js';

/** Usefulness feedback: real SQLite, the real embedding model; marks demote in recall, fill the review list and replay. */

const NS = 'github.com/acme/feedback';
let root: string;
let store: Store;
let engine: Engine;
const ids: Record<string, string> = {};

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'cairn-feedback-'));
  store = createSqliteStore({ path: join(root, 'cairn.db') });
  engine = new Engine({ store, embedder: createUseEmbedder(), tokenCounter: createGptTokenCounter(), defaultNamespace: NS });
  ids['old'] = (await engine.save({ text: 'Deploys run from the Jenkins job deploy-prod every evening' })).id;
  ids['new'] = (await engine.save({ text: 'Deploys run from GitHub Actions on every merge to main' })).id;
  ids['other'] = (await engine.save({ text: 'Integration tests need Docker running locally' })).id;
});

after(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

describe('usefulness feedback', () => {
  it('counts marks on the memory without changing its text or update time', async () => {
    const before = await engine.get(ids['old'] as string);
    const m = await engine.rate(ids['old'] as string, 'useful');
    assert.deepEqual({ ...m.feedback, lastAt: '' }, { useful: 1, wrong: 0, stale: 0, lastAt: '' });
    assert.equal(m.updatedAt, before?.updatedAt);
    assert.equal(m.text, before?.text);
  });

  it('wrong and stale marks beyond the useful ones demote the memory below one it outranked', async () => {
    const query = 'which job runs the deploys';
    const scoreOf = async () => {
      const results = await engine.search(query);
      return { results, old: results.find((r) => r.memory.id === ids['old'])?.score ?? NaN };
    };
    const before = await scoreOf();
    assert.equal(before.results[0]?.memory.id, ids['old'], 'the Jenkins note comes first before any mark');
    await engine.rate(ids['old'] as string, 'stale');
    const even = await scoreOf();
    // Scores drift by the recency signal between searches (a few 1e-9): compared with a tolerance.
    assert.ok(Math.abs(even.old - before.old) < 1e-6, 'one stale against one useful: not demoted');
    for (let i = 0; i < 3; i++) await engine.rate(ids['old'] as string, 'wrong');
    const after = await scoreOf();
    assert.ok(Math.abs(after.old - before.old / 8) < 1e-6, `three marks beyond the useful one: score ×1/8 (${before.old} → ${after.old})`);
    assert.equal(after.results[0]?.memory.id, ids['new']);
    assert.ok(after.results.some((r) => r.memory.id === ids['old']), 'demoted, not hidden');
  });

  it('a demoted memory shows the demotion as negative points: its contributions still add up to the relevance shown', async () => {
    // `old` now carries 3 wrong and 1 stale mark against 1 useful: demoted three times (×1/8).
    const results = await engine.search('which job runs the deploys');
    const doubted = results.find((r) => r.memory.id === ids['old']);
    assert.ok(doubted, 'the doubted memory is still recalled');
    assert.deepEqual(doubted.scoreDetails.feedback?.steps, 3);
    const d = doubted.scoreDetails;
    const signals = d.signals.vector.contribution + d.signals.lexical.contribution + d.signals.recency.contribution;
    assert.ok(Math.abs((d.feedback?.contribution ?? 0) + (7 / 8) * signals) < 1e-9, `the demotion takes 7/8 of ${signals} points: ${d.feedback?.contribution}`);
    for (const r of results) {
      const s = r.scoreDetails;
      const sum = s.signals.vector.contribution + s.signals.lexical.contribution + s.signals.recency.contribution + (s.feedback?.contribution ?? 0);
      assert.ok(Math.abs(sum - (s.relevance as number)) < 1e-9, `${r.memory.text}: the points add up to ${sum}, the relevance shown is ${s.relevance}`);
      assert.ok(Math.abs(r.score * 100 - (s.relevance as number)) < 1e-9, `${r.memory.text}: score ${r.score} is relevance ${s.relevance} / 100`);
      assert.equal(s.fused, r.score);
      if (r.memory.id !== ids['old']) assert.equal(s.feedback, undefined, 'undoubted memories carry no feedback term');
    }
    // Ranking unchanged by showing it: the demoted memory sits below the one it used to outrank.
    assert.ok(results.findIndex((r) => r.memory.id === ids['new']) < results.indexOf(doubted));
  });

  it('the review list holds doubted memories only; usage counts every mark', async () => {
    const review = await engine.reviewList();
    assert.deepEqual(review.map((m) => m.id), [ids['old']]);
    const usage = await engine.usage();
    assert.deepEqual(usage.feedback, { useful: 1, wrong: 3, stale: 1, rated: 1, toReview: 1 });
  });

  it('a bad verdict or an unknown memory is refused and changes nothing', async () => {
    await assert.rejects(engine.rate(ids['other'] as string, 'great' as never), /verdict: must be one of useful, wrong, stale/u);
    await assert.rejects(engine.rate('01JZZZZZZZZZZZZZZZZZZZZZZZ', 'useful'), /no memory/u);
    assert.equal((await engine.get(ids['other'] as string))?.feedback, undefined);
  });

  it('marks are events: a replay of the log gives the same state', async () => {
    const events = await store.events(NS);
    assert.equal(events.filter((e) => e.type === 'memory.rated').length, 5);
    const report = await engine.verify(createSqliteStore({ path: ':memory:' }));
    assert.equal(report.ok, true);
  });
});
