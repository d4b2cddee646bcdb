import * as assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { logChecksum } from '../src/core/migrate.js';
import { replayInto, stateChecksum, verify } from '../src/core/replay.js';
import type { Store } from '../src/interfaces/store.js';
import { pgSkip, storeFactories, type StoreFactory } from './helpers/stores.js';

// Replay and recovery through the Engine on every backend of test/helpers/stores.ts, with the real model:
// the same turns, forget and supersede give a state that verify proves by full replay, that recover rebuilds
// from a snapshot plus the log's tail; and the same log replayed into another backend has the same log and
// state checksums there.

const embedder = createUseEmbedder();
const NS = 'acme/shop';
const START = Date.parse('2026-05-01T12:00:00.000Z');
const TEXTS = [
  'Leave the payment module alone until the PSP migration ships.',
  'VAT is rounded per invoice line, never on the invoice total.',
  'The API allows 100 requests per minute per client.',
  'PAYMENTS_V2_ENABLED must stay false in production.',
  'shop/checkout/tax.py owns every tax computation.',
  'Release branches are cut on Tuesdays.',
  'Customer emails are never logged.',
];

/** The same history on any store: seven turns (a snapshot every three), a forget and a supersede, on a fixed clock. */
async function populate(store: Store): Promise<Engine> {
  let ms = START;
  const engine = new Engine({
    store,
    embedder,
    tokenCounter: createGptTokenCounter(),
    defaultNamespace: NS,
    snapshotEvery: 3,
    now: () => new Date((ms += 1000)),
    ingestFilter: { enabled: false },
  });
  for (const [i, text] of TEXTS.entries()) await engine.commitTurn({ session: 'monday', turn: i, text, speaker: 'user' });
  const [oldest] = await engine.list({ limit: 100 }).then((all) => all.slice(-1));
  await engine.forget(oldest!.id, { reason: 'obsolete' });
  const limit = (await engine.search('requests per minute', { limit: 1, countRecall: false }))[0]!.memory;
  await engine.supersede(limit.id, { text: 'The API allows 300 requests per minute per client.' });
  return engine;
}

const factories = storeFactories();
for (const factory of factories) describeReplay(factory);

describe('the same log on every backend', () => {
  it('replayed from the first backend into each other one, gives equal log and state checksums', async (t) => {
    const [first, ...others] = factories;
    if (!first || others.length === 0) {
      t.skip(pgSkip ?? 'only one backend is configured');
      return;
    }
    const source = await first.make();
    try {
      await populate(source);
      const want = { log: await logChecksum(source), state: await stateChecksum(source) };
      for (const other of others) {
        const target = await other.make();
        try {
          await replayInto(source, target);
          assert.deepEqual({ log: await logChecksum(target), state: await stateChecksum(target) }, want, `${first.name} and ${other.name} disagree`);
        } finally {
          await target.close();
        }
      }
    } finally {
      await source.close();
    }
  });
});
if (pgSkip) describe('replay and recovery on postgres', { skip: pgSkip }, () => {});

function describeReplay(factory: StoreFactory): void {
  describe(`replay and recovery on ${factory.name}`, () => {
    before(async () => {
      await embedder.embed(['warm up']);
    });

    it('verify replays the whole log into an empty store and proves the same state', async () => {
      const store = await factory.make();
      const scratch = await factory.make();
      try {
        await populate(store);
        const report = await verify(store, scratch);
        assert.ok(report.ok, JSON.stringify(report));
        assert.equal(report.gaps.length, 0);
        assert.equal(report.liveChecksum, report.replayedChecksum);
        assert.equal(report.memories, TEXTS.length + 1);
      } finally {
        await scratch.close();
        await store.close();
      }
    });

    it('recover rebuilds the namespace from its latest snapshot plus the tail, to the same checksum', async () => {
      const store = await factory.make();
      try {
        const engine = await populate(store);
        const before = await stateChecksum(store);
        assert.equal((await store.getSnapshot(NS))?.version, 2, 'turns 3 and 6 wrote snapshots');
        const report = await engine.recover({ all: true });
        const scope = report.scopes.find((s) => s.scope === NS);
        assert.equal(scope?.mode, 'snapshot+tail');
        assert.equal(scope?.snapshotProblem, null);
        assert.equal(report.checksum, before.checksum);
        assert.equal((await stateChecksum(store)).checksum, before.checksum);
      } finally {
        await store.close();
      }
    });
  });
}
