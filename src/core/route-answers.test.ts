import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../adapters/tokenizer/gpt-token-counter.js';
import type { Memory, SearchResult } from '../interfaces/memory.js';
import type { Store } from '../interfaces/store.js';
import { Engine } from './engine.js';
import { DEFAULT_CALIBRATION, DEFAULT_WEIGHTS, fuseScores } from './fusion.js';
import { asksWhere, weighRoutes } from './route-answers.js';

const NOW = new Date('2026-11-01T12:00:00.000Z');
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000).toISOString();

function memory(id: string, text: string, kind: Memory['kind']): Memory {
  const createdAt = daysAgo(10);
  return { id, namespace: 'acme/billing', text, kind, importance: 5, tags: [], taskId: null, metadata: {}, route: null, createdAt, updatedAt: createdAt, expiresAt: null, supersedes: null, supersededBy: null, forgottenAt: null, forgetReason: null, dedupeKey: id };
}

describe('route answers', () => {
  it('a question asks where when it says where, asks which file or folder, or names a path', () => {
    for (const q of ['where is the tax code', 'Where do webhooks get verified?', 'which file holds the tax rounding', 'what folders hold the jobs', 'src/tax/', 'shop/checkout/tax.py']) assert.ok(asksWhere(q), q);
    for (const q of ['how do we round tax', 'what is the rate limit', 'which tool runs the ui tests', 'should I add redux for this screen', 'anywhere else?']) assert.ok(!asksWhere(q), q);
  });

  it('a route counts less for a question that does not ask where, and its points still add up', () => {
    const route = memory('route', 'Tax code: rate lookup, rounding and exemptions.', 'route');
    const decision = memory('decision', 'VAT is rounded half-up on each invoice line.', 'decision');
    const fuse = () =>
      fuseScores({
        memories: new Map([route, decision].map((m) => [m.id, m])),
        vector: [{ id: 'route', raw: 0.57 }, { id: 'decision', raw: 0.49 }],
        lexical: [{ id: 'route', raw: 10 }, { id: 'decision', raw: 9.5 }],
        lexicalScale: 10,
        ageDays: () => 10,
        weights: DEFAULT_WEIGHTS,
        calibration: DEFAULT_CALIBRATION,
      });
    assert.equal(fuse()[0]?.memory.id, 'route');
    const how = weighRoutes(fuse(), 'how do we round tax', { factor: 0.9 }, 30);
    assert.deepEqual(how.map((r) => r.memory.id), ['decision', 'route']);
    for (const r of how) {
      const d = r.scoreDetails;
      const sum = d.signals.vector.contribution + d.signals.lexical.contribution + d.signals.recency.contribution;
      assert.ok(Math.abs(sum - (d.relevance as number)) < 1e-9);
      assert.ok(Math.abs(100 * r.score - sum) < 1e-9);
    }
    assert.equal(weighRoutes(fuse(), 'where is the tax code', { factor: 0.9 }, 30)[0]?.memory.id, 'route');
    assert.equal(weighRoutes(fuse(), 'how do we round tax', { factor: 1 }, 30)[0]?.memory.id, 'route');
    // Outside the window nothing changes.
    const outside = fuse();
    weighRoutes(outside, 'how do we round tax', { factor: 0.9 }, 0);
    assert.equal(outside[0]?.memory.id, 'route');
  });

  describe('through the engine (real SQLite file, real embedder)', () => {
    const NS = 'github.com/acme/billing-api';
    const root = mkdtempSync(join(tmpdir(), 'cairn-route-answers-'));
    let store: Store;
    let engine: Engine;
    const id: Record<string, string> = {};

    before(async () => {
      store = createSqliteStore({ path: join(root, 'routes.db') });
      engine = new Engine({ store, embedder: createUseEmbedder(), tokenCounter: createGptTokenCounter(), defaultNamespace: NS, now: () => NOW, countRecalls: false });
      const text = 'Tax code: rate lookup, rounding and exemptions.';
      id['route'] = (await engine.save({ text, kind: 'route', createdAt: daysAgo(5), route: { title: 'Tax calculation', description: text, paths: ['src/tax/', 'src/tax/round.ts'] } })).id;
      id['vat'] = (await engine.save({ text: 'Decision: tax (VAT) is rounded half-up to two decimals on each invoice line, never on the invoice total.', kind: 'decision', createdAt: daysAgo(60) })).id;
      for (const [t, days] of [
        ['Discounts apply before tax, not after; applying them after tax undercharges VAT.', 40],
        ['Money is stored as integer minor units (cents) in bigint columns; never floats.', 200],
        ['Every POST to /v1/charges must carry an Idempotency-Key header.', 150],
        ['Failed renewals retry on days 1, 3, 5 and 7 before the subscription is paused.', 65],
      ] as const) {
        await engine.save({ text: t, kind: 'fact', createdAt: daysAgo(days) });
      }
    });

    after(async () => {
      await store.close();
      rmSync(root, { recursive: true, force: true });
    });

    const explain = (results: SearchResult[]) => results.map((r, i) => `${i + 1}. ${(100 * r.score).toFixed(1)} ${r.memory.kind} ${r.memory.text}`).join('\n');

    it('"how do we round tax" puts the rounding decision above the tax route (which leads counted as any note); "where is the tax code" the route first', async () => {
      const how = await engine.search('how do we round tax');
      assert.equal(how[0]?.memory.id, id['vat'], explain(how));
      const asAnyNote = await new Engine({ store, embedder: createUseEmbedder(), tokenCounter: createGptTokenCounter(), defaultNamespace: NS, now: () => NOW, countRecalls: false, routeAnswers: null }).search('how do we round tax');
      assert.equal(asAnyNote[0]?.memory.id, id['route'], `counted as any note, the route leads:\n${explain(asAnyNote)}`);
      assert.ok(how.some((r) => r.memory.id === id['route']), 'the route is still recalled');
      const where = await engine.search('where is the tax code');
      assert.equal(where[0]?.memory.id, id['route'], explain(where));
      const byPath = await engine.search('src/tax/');
      assert.equal(byPath[0]?.memory.id, id['route'], explain(byPath));
    });
  });
});
