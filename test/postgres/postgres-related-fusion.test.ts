/**
 * Related terms on PostgreSQL stay in the one fused statement: a query whose words have related terms
 * (core/related-terms.ts) is answered by `fusedRecall` alone, with the related terms' candidates joined in
 * SQL as `withRelated` joins them, and the results equal core's two-signal path (separate candidate
 * queries, `withRelated`, `fuseScores`) on the same store: same memories, order, scores and per-signal
 * details. Real server, real embedding model, the engine's default related-terms weight.
 */
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createUseEmbedder } from '../../src/adapters/embed-use/use-embedder.js';
import { createPostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { createGptTokenCounter } from '../../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../../src/core/engine.js';
import type { Store } from '../../src/interfaces/store.js';
import { createTestDatabase, pgSkip, testStoreConfig } from '../helpers/postgres.js';

const NOTES = [
  'The release pipeline pushes to production every Tuesday after the standup',
  'Rollouts to prod are paused during the holiday freeze',
  'Invalidate the CDN cache after changing the stylesheet bundle',
  'Memoize the pricing lookup; it is hit on every page render',
  'Postgres credentials live in config/database.yml, never in the repo',
  'The settings file for the warehouse service is config/warehouse.toml',
  'Flaky integration test: the payment sandbox times out under load',
  'The login page paginates audit entries twenty at a time',
  'Deploy keys are rotated monthly by the platform team',
  'A crash in the ledger job leaves a lock file behind; delete it before a rerun',
];
const QUERIES = ['why does the deploy fail', 'cache invalidation bug', 'where is the database config', 'when do releases go out', 'test failures on the build server'];

/** The store, seen by the engine as having no server-side fusion (core's two-signal path), or counted. */
function asSeen(store: Store, fusion: boolean, calls: Map<string, number>): Store {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'capabilities') return { ...target.capabilities, serverSideFusion: fusion && target.capabilities.serverSideFusion };
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(prop), (calls.get(String(prop)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

describe('related terms inside the fused PostgreSQL statement', { skip: pgSkip }, () => {
  const embedder = createUseEmbedder();

  it('gives the same results as core fusion, in one statement', async () => {
    const db = await createTestDatabase({ vector: true });
    const store = createPostgresStore(testStoreConfig(db.url));
    const clock = () => new Date('2026-06-01T00:00:00.000Z');
    const engineOn = (s: Store) => new Engine({ store: s, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: 'acme/shop', now: clock });
    try {
      const writer = engineOn(store);
      for (const text of NOTES) await writer.save({ text });
      const fusedCalls = new Map<string, number>();
      const coreCalls = new Map<string, number>();
      const fused = engineOn(asSeen(store, true, fusedCalls));
      const core = engineOn(asSeen(store, false, coreCalls));
      const shape = (rs: Awaited<ReturnType<Engine['search']>>) => rs.map((r) => ({ id: r.memory.id, score: r.score, signals: r.scoreDetails.signals }));
      let withResults = 0;
      for (const q of QUERIES) {
        const a = shape(await fused.search(q));
        const b = shape(await core.search(q));
        assert.deepEqual(a, b, `same results for "${q}"`);
        if (a.length > 0) withResults++;
      }
      assert.ok(withResults >= 3, `most queries find something (${withResults})`);
      // Core's path searched the related terms separately: more lexical candidate queries than queries.
      assert.ok((coreCalls.get('lexicalCandidates') ?? 0) > QUERIES.length, `related terms expanded: ${JSON.stringify([...coreCalls])}`);
      assert.equal(fusedCalls.get('fusedRecall'), QUERIES.length, 'one fused statement per search');
      assert.equal(fusedCalls.get('lexicalCandidates') ?? 0, 0, 'no separate lexical query');
      assert.equal(fusedCalls.get('vectorCandidates') ?? 0, 0, 'no separate vector query');
    } finally {
      await store.close();
      await db.drop();
    }
  });
});
