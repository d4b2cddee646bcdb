import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';

/**
 * A save's likely updates when its namespace is large enough for the neighbour graph (the write-time check then
 * asks the graph, not the whole namespace): the real embedder on a real SQLite file, with the index thresholds
 * lowered so that a namespace of 60 notes takes the graph's path.
 */

const NS = 'github.com/acme/billing-api';
const NOW = new Date('2026-11-01T12:00:00.000Z');
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000).toISOString();
const COMPONENTS = ['The invoice renderer', 'The billing cron job', 'The webhook receiver', 'The ledger service', 'The tax module', 'The refund worker', 'The customer portal', 'The admin dashboard'];
const FACTS = [
  'writes its logs to stdout as JSON lines',
  'reads its settings from config/billing.yaml at startup',
  'is owned by the payments team',
  'retries failed HTTP calls three times with exponential backoff',
  'runs in its own Kubernetes namespace',
  'exports Prometheus metrics on port 9464',
  'is written in TypeScript with strict mode on',
];
const DEPLOY_OLD = 'Deploys go out on Thursdays after the 14:00 change freeze lifts.';
const DEPLOY_NEW = 'We moved releases: production deploys now happen every Tuesday morning, and Thursday is no longer a release day.';
const DUNNING_OLD = 'Failed renewals retry on days 1, 3, 5 and 7 before the subscription is paused.';

const root = mkdtempSync(join(tmpdir(), 'cairn-likely-graph-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('likely updates through the neighbour graph', () => {
  it('a save in a namespace with a graph still reports the note it probably replaces, and not a forgotten one', async () => {
    const store = createSqliteStore({ path: join(root, 'graph.db'), vectorIndex: { minVectors: 40, graphMinVectors: 40, neighbourGraphs: true } });
    const engine = new Engine({ store, embedder: createUseEmbedder(), tokenCounter: createGptTokenCounter(), defaultNamespace: NS, now: () => NOW });
    try {
      const fillers = COMPONENTS.flatMap((c) => FACTS.map((f) => ({ text: `${c} ${f}.`, kind: 'fact' as const, createdAt: daysAgo(100) })));
      const saved = await engine.saveMany([...fillers, { text: DEPLOY_OLD, kind: 'convention', createdAt: daysAgo(170) }, { text: DUNNING_OLD, kind: 'fact', createdAt: daysAgo(65) }]);
      const deployOld = saved.at(-2)?.id as string;
      const dunningOld = saved.at(-1)?.id as string;
      // The first saves bring the quantised index up and start the namespace's graph; both are built in workers.
      await engine.save({ text: 'The invoice renderer caches fonts in /var/cache/invoices.', kind: 'fact' });
      await store.vectorIndex?.whenIdle();
      await engine.save({ text: 'The ledger service keeps a nightly snapshot in the audit bucket.', kind: 'fact' });
      await store.vectorIndex?.whenIdle();
      const before = store.vectorIndex?.status().graphs;
      assert.equal(before?.builds, 1, JSON.stringify(before));
      assert.equal(before?.searches, 0, 'until the graph is in, the scan answers');

      const r = await engine.save({ text: DEPLOY_NEW, kind: 'convention', createdAt: daysAgo(30) });
      assert.deepEqual(r.likelyReplaces?.map((l) => [l.id, l.text]), [[deployOld, DEPLOY_OLD]], JSON.stringify(r.likelyReplaces));
      const graphs = store.vectorIndex?.status().graphs;
      assert.equal(graphs?.state, 'ready', JSON.stringify(graphs));
      assert.ok((graphs?.searches ?? 0) > 0, 'the graph answered the write-time check');
      // The notes saved after the graph's snapshot were added from the change log before it answered (the
      // check runs before the new note's own write, so it is not among them).
      assert.equal(graphs?.namespaces[NS], fillers.length + 2 + 2, JSON.stringify(graphs));

      // A forgotten note leaves the graph with its codes: a later update of it does not report it.
      await engine.forget(dunningOld);
      const dunning = await engine.save({ text: 'Failed renewals now retry on days 1, 2, 4 and 8, then the subscription is paused.', kind: 'fact' });
      assert.ok(!(dunning.likelyReplaces ?? []).some((l) => l.id === dunningOld), JSON.stringify(dunning.likelyReplaces));
      assert.equal(store.vectorIndex?.status().graphs.builds, 1, 'followed, not rebuilt');
    } finally {
      await store.close();
    }
  });
});
