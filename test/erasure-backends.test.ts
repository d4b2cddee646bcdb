import * as assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { verifyCertificate } from '../src/core/certificate.js';
import { Engine } from '../src/core/engine.js';
import { verify } from '../src/core/replay.js';
import type { Store } from '../src/interfaces/store.js';
import { pgSkip, storeFactories, type StoreFactory } from './helpers/stores.js';

// Provable erasure through the Engine on every backend of test/helpers/stores.ts, checked through the Store
// contract only (the SQLite file bytes are read by test/erasure.test.ts, PostgreSQL's relation files by
// test/postgres/postgres-erasure.test.ts): the certificate's own checks, then independent ones.

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PUBLIC = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const embedder = createUseEmbedder();

const SECRET_TEXTS = [
  'Customer Jane Doe of Lyon asked for every invoice as a PDF attachment only',
  'Jane Doe prefers the Thursday maintenance window for her shop in Lyon',
  'Ticket from Jane Doe: the refund for order 88123 is still pending',
];

function engineOn(store: Store, namespace = 'acme/keep'): Engine {
  return new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: namespace, snapshotEvery: 2 });
}

for (const factory of storeFactories()) describeErasure(factory);
if (pgSkip) describe('provable erasure on postgres', { skip: pgSkip }, () => {});

function describeErasure(factory: StoreFactory): void {
  describe(`provable erasure on ${factory.name}`, () => {
    before(async () => {
      await embedder.embed(['warm up']);
    });

    it('erases a namespace: checks pass, the log keeps its numbering and replays, other namespaces stay', { timeout: 180_000 }, async (t) => {
      const store = await factory.make();
      try {
        const engine = engineOn(store);
        const keep = await engine.save({ text: 'Deploys go out on Tuesdays after the standup', namespace: 'acme/keep' });
        const first = await engine.save({ text: SECRET_TEXTS[0]!, namespace: 'acme/erase' });
        await engine.commitTurn({ namespace: 'acme/erase', session: 's1', turn: 0, text: SECRET_TEXTS[1]! });
        await engine.commitTurn({ namespace: 'acme/erase', session: 's1', turn: 1, text: SECRET_TEXTS[2]! }); // snapshot
        await engine.forget(first.id, { namespace: 'acme/erase', reason: 'test' });
        assert.ok(await store.getSnapshot('acme/erase'), 'a snapshot holds the data too');
        if (!store.erasureProof) {
          t.skip(`store has no erasure proof: ${store.noErasureProof ?? ''}`);
          return;
        }
        const cert = await engine.erase({ namespace: 'acme/erase' }, PRIVATE);
        const c = cert.certificate;
        assert.equal(c.counts['memories'], 3);
        assert.ok(c.checks.every((x) => x.passed), JSON.stringify(c.checks));
        assert.equal(verifyCertificate(cert, PUBLIC).valid, true);

        assert.equal((await engine.search('Jane Doe invoices PDF Lyon', { namespace: 'acme/erase' })).length, 0);
        assert.equal((await engine.list({ namespace: 'acme/erase', includeInactive: true })).length, 0);
        assert.equal(await store.getSnapshot('acme/erase'), null);
        const events = await store.events('acme/erase');
        assert.ok(events.length > 0 && events.every((e) => e.type === 'erased'), 'events keep their place, not their content');
        assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), 'no gap');
        assert.equal(await store.countLiveEventsOf([], 'acme/erase'), 0);
        assert.equal((await store.erasureProof.check(SECRET_TEXTS, [])).found, 0, 'no erased text is left in the storage');
        // The certificate quotes the backend's own account of the file check.
        assert.equal(c.version, 2);
        assert.equal(c.proof.backend, factory.name);
        assert.ok(c.proof.compaction.length > 0 && c.proof.scanned.some((x) => x.files > 0 && x.bytes > 0), JSON.stringify(c.proof));
        assert.equal(c.proof.found, 0);
        assert.match(c.checks.find((x) => x.name === 'file-bytes')?.detail ?? '', new RegExp(`\\(${factory.name}: `, 'u'));
        assert.equal((await engine.search('when do deploys go out', { namespace: 'acme/keep' }))[0]?.memory.id, keep.id);
        assert.deepEqual(await store.pendingErasures(), [], 'the erasure finished');
        const scratch = await factory.make();
        try {
          assert.ok((await verify(store, scratch)).ok, 'verify still holds');
        } finally {
          await scratch.close();
        }
      } finally {
        await store.close();
      }
    });

    it('erases a subject across namespaces and leaves everyone else', { timeout: 180_000 }, async (t) => {
      const store = await factory.make();
      try {
        const engine = engineOn(store);
        const mine = [
          await engine.save({ text: 'user-42 wants dark mode in the admin dashboard', namespace: 'acme/web', metadata: { subject: 'user-42' } }),
          await engine.save({ text: 'user-42 reported the export button freezes on Safari', namespace: 'acme/app', metadata: { subject: 'user-42' } }),
        ];
        const theirs = await engine.save({ text: 'The admin dashboard is built with Svelte', namespace: 'acme/web', metadata: { subject: 'user-7' } });
        if (!store.erasureProof) {
          t.skip(`store has no erasure proof: ${store.noErasureProof ?? ''}`);
          return;
        }
        const cert = await engine.erase({ subject: 'user-42' }, PRIVATE);
        assert.equal(cert.certificate.counts['memories'], 2);
        assert.ok(cert.certificate.checks.every((x) => x.passed), JSON.stringify(cert.certificate.checks));
        for (const m of mine) assert.equal(await engine.get(m.id, { anyNamespace: true }), null);
        assert.ok(await engine.get(theirs.id, { namespace: 'acme/web' }));
        assert.equal(await store.countLiveEventsOf(mine.map((m) => m.id), null), 0);
      } finally {
        await store.close();
      }
    });
  });
}
