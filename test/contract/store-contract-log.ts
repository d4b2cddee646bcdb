import * as assert from 'node:assert/strict';
import { describe, type TestContext } from 'node:test';
import { vectorHash } from '../../src/core/checksum.js';
import { ulid } from '../../src/core/ids.js';
import { analyse } from '../../src/core/lexical.js';
import type { Memory } from '../../src/interfaces/memory.js';
import type { QuarantineEntry } from '../../src/interfaces/quarantine.js';
import type { CandidateFilter, EmbedderInfo, SnapshotRecord, Store } from '../../src/interfaces/store.js';
import { isCairnError, type CairnError, type ErrorCode } from '../../src/interfaces/errors.js';

/**
 * The contract cases of the log, snapshots, vector blobs, the quarantine, the erasure operations and the
 * report: the parts of Store and StoreTx the engine reaches through replay, recovery, erasure and the
 * ingest filter. Run by describeStoreContract (store-contract.ts) on every backend, with its helpers.
 */
export interface ContractKit {
  test: (title: string, fn: (store: Store, t: TestContext) => Promise<void>) => void;
  makeMemory: (namespace: string, text: string, over?: Partial<Memory>) => Memory;
  filter: (namespace: string, over?: Partial<CandidateFilter>) => CandidateFilter;
  axis: (i: number) => Float32Array;
  rejectsWith: (promise: Promise<unknown>, code: ErrorCode) => Promise<CairnError>;
  needsVectors: (store: Store, t: TestContext) => boolean;
  embedder: EmbedderInfo;
  now: string;
}

function snapshotOf(scope: string, seq: number, bytes: number[]): Omit<SnapshotRecord, 'version'> {
  return {
    scope,
    seq,
    blob: Uint8Array.from(bytes),
    blobSha256: `sha-${bytes.join('-')}`,
    checksum: `state-${seq}`,
    engineVersion: 3,
    createdAt: '2026-05-01T00:00:00.000Z',
  };
}

function entry(id: string, over: Partial<QuarantineEntry> = {}): QuarantineEntry {
  return {
    id,
    hash: 'a'.repeat(64),
    score: 0.9731,
    pass: 'direct',
    anchor: 'seed:exfiltrate',
    tricks: ['base64'],
    reasons: ['tells the agent to send secrets out'],
    op: 'save',
    namespace: 'acme/shop',
    source: 'mcp',
    agent: 'claude',
    status: 'held',
    attempts: 1,
    createdAt: '2026-05-01T00:00:00.000Z',
    lastAttemptAt: '2026-05-01T00:00:00.000Z',
    decidedAt: null,
    reason: null,
    memoryIds: [],
    ...over,
  };
}

const SECOND = 1000;

export function describeLogCases(kit: ContractKit): void {
  const { test, makeMemory, now: NOW } = kit;
  const at = (i: number) => new Date(Date.parse(NOW) + i * SECOND).toISOString();

  describe('log, settings and vector blobs', () => {
    test('iterateEvents pages the whole log in commit order across scopes and resumes after a position', async (store) => {
      const order: [string, number][] = [];
      for (const [i, scope] of ['acme/shop', 'acme/blog', '', 'acme/shop', 'acme/blog'].entries()) {
        const seq = await store.transaction((tx) => tx.appendEvent({ namespace: scope, type: `t${i}`, memoryId: null, payload: { i }, at: at(i) }));
        order.push([scope, seq]);
      }
      const pages: number[] = [];
      const seen: [string, number][] = [];
      let lastGseq = 0;
      for await (const page of store.iterateEvents(0, 2)) {
        pages.push(page.length);
        for (const e of page) {
          assert.ok(e.gseq > lastGseq, 'global positions increase in commit order');
          lastGseq = e.gseq;
          seen.push([e.namespace, e.seq]);
        }
      }
      assert.deepEqual(seen, order);
      assert.deepEqual(pages, [2, 2, 1]);
      const all = [];
      for await (const page of store.iterateEvents()) all.push(...page);
      const third = all[2];
      assert.ok(third);
      const rest = [];
      for await (const page of store.iterateEvents(third.gseq)) rest.push(...page.map((e) => e.type));
      assert.deepEqual(rest, ['t3', 't4'], 'resuming after a position misses nothing and repeats nothing');
      assert.deepEqual(await store.scopes(), [
        { scope: '', events: 1, lastSeq: 1 },
        { scope: 'acme/blog', events: 2, lastSeq: 2 },
        { scope: 'acme/shop', events: 2, lastSeq: 2 },
      ]);
    });

    test('lastSeq and countEvents see the transaction’s own events', async (store) => {
      await store.transaction(async (tx) => {
        assert.equal(await tx.lastSeq('acme/shop'), 0, 'a scope without events is at 0');
        assert.equal(await tx.countEvents('acme/shop', 'turn.committed'), 0);
        await tx.appendEvent({ namespace: 'acme/shop', type: 'turn.committed', memoryId: null, payload: {}, at: NOW });
        await tx.appendEvent({ namespace: 'acme/shop', type: 'memory.saved', memoryId: null, payload: {}, at: NOW });
        await tx.appendEvent({ namespace: 'acme/shop', type: 'turn.committed', memoryId: null, payload: {}, at: NOW });
        await tx.appendEvent({ namespace: 'acme/blog', type: 'turn.committed', memoryId: null, payload: {}, at: NOW });
        assert.equal(await tx.lastSeq('acme/shop'), 3);
        assert.equal(await tx.countEvents('acme/shop', 'turn.committed'), 2);
        assert.equal(await tx.countEvents('acme/blog', 'turn.committed'), 1);
      });
      await store.transaction(async (tx) => assert.equal(await tx.lastSeq('acme/shop'), 3, 'committed'));
    });

    test('settings are listed by key, inside and outside a transaction, per namespace', async (store) => {
      await store.transaction(async (tx) => {
        await tx.setSetting('acme/shop', 'weights', { vector: 1, lexical: 2 });
        await tx.setSetting('acme/shop', 'default-scope', 'branch');
        await tx.setSetting('acme/blog', 'weights', { vector: 3 });
        assert.deepEqual(await tx.settingsOf('acme/shop'), [
          { key: 'default-scope', value: 'branch' },
          { key: 'weights', value: { vector: 1, lexical: 2 } },
        ]);
      });
      assert.deepEqual((await store.listSettings('acme/shop')).map((s) => s.key), ['default-scope', 'weights']);
      assert.deepEqual(await store.listSettings('acme/blog'), [{ key: 'weights', value: { vector: 3 } }]);
      assert.deepEqual(await store.listSettings('acme/none'), []);
    });

    test('vector blobs: stored once by content hash, read inside and outside, referenced, deleted', async (store) => {
      const v = Float32Array.from([0.25, -0.5, 0.125, 1, 0, 0, 0, 0]);
      const hash = vectorHash(v);
      assert.equal(await store.getVectorBlob(hash), null);
      await store.transaction(async (tx) => {
        await tx.putVectorBlob(hash, v);
        await tx.putVectorBlob(hash, v); // idempotent
        assert.deepEqual(await tx.getVectorBlob(hash), v);
        assert.equal(await tx.vectorBlobReferenced(hash), false, 'no event or memory refers to it yet');
      });
      assert.deepEqual(await store.getVectorBlob(hash), v);
      await store.transaction(async (tx) => {
        await tx.appendEvent({ namespace: 'acme/shop', type: 'memory.reembedded', memoryId: null, payload: { vector: hash }, at: NOW });
        assert.equal(await tx.vectorBlobReferenced(hash), true, 'an event payload refers to it');
      });
      await store.transaction(async (tx) => {
        const [e] = await store.events('acme/shop');
        await tx.rewriteEvent('acme/shop', e?.seq ?? 1, 'erased', { reason: 'test' });
        assert.equal(await tx.vectorBlobReferenced(hash), false, 'the rewritten event no longer refers to it');
        await tx.deleteVectorBlob(hash);
        await tx.deleteVectorBlob(hash); // idempotent
      });
      assert.equal(await store.getVectorBlob(hash), null);
    });

    test('a memory’s indexed vector counts as a reference to its blob', async (store, t) => {
      if (!kit.needsVectors(store, t)) return;
      const v = kit.axis(2);
      const m = makeMemory('acme/shop', 'a memory holding a vector');
      await store.prepareVectors(kit.embedder);
      await store.transaction(async (tx) => {
        await tx.setEmbedder(kit.embedder);
        await tx.putVectorBlob(vectorHash(v), v);
        await tx.insertMemory(m, v, analyse(m.text));
        assert.equal(await tx.vectorBlobReferenced(vectorHash(v)), true);
        assert.deepEqual(await tx.memoriesOf('acme/shop'), [{ memory: m, vectorHash: vectorHash(v) }]);
      });
      const vectors = await store.getVectors([m.id, ulid()]);
      assert.deepEqual([...vectors.keys()], [m.id], 'ids without a vector are absent');
      assert.deepEqual(vectors.get(m.id), v);
      // Every float32 comes back exactly, not only an axis's 0s and 1s.
      const w = Float32Array.from({ length: v.length }, (_, i) => Math.sin(i + 1) / (i + 3));
      const n = makeMemory('acme/shop', 'a memory holding an uneven vector');
      await store.transaction((tx) => tx.insertMemory(n, w, analyse(n.text)));
      assert.deepEqual((await store.getVectors([n.id])).get(n.id), w);
    });

    test('rewriteEvent replaces type and payload in place, clears the memory id, keeps the numbering', async (store) => {
      const m = makeMemory('acme/shop', 'to be erased');
      await store.transaction(async (tx) => {
        await tx.appendEvent({ namespace: 'acme/shop', type: 'memory.saved', memoryId: m.id, payload: { memory: m }, at: at(0) });
        await tx.appendEvent({ namespace: 'acme/shop', type: 'memory.forgotten', memoryId: m.id, payload: { id: m.id }, at: at(1) });
        await tx.appendEvent({ namespace: 'acme/blog', type: 'memory.saved', memoryId: null, payload: {}, at: at(2) });
      });
      assert.equal(await store.countLiveEventsOf([m.id], null), 2);
      assert.equal(await store.countLiveEventsOf([], 'acme/blog'), 1);
      assert.equal(await store.countLiveEventsOf([m.id], 'acme/blog'), 3);
      const gseqBefore = (await store.events('acme/shop')).map((e) => e.gseq);
      await store.transaction(async (tx) => {
        await tx.rewriteEvent('acme/shop', 1, 'erased', { erasure: 'E1' });
        await tx.rewriteEvent('acme/shop', 2, 'erased', { erasure: 'E1' });
      });
      const after = await store.events('acme/shop');
      assert.deepEqual(
        after.map((e) => [e.seq, e.type, e.memoryId, e.payload]),
        [
          [1, 'erased', null, { erasure: 'E1' }],
          [2, 'erased', null, { erasure: 'E1' }],
        ],
      );
      assert.deepEqual(after.map((e) => e.gseq), gseqBefore, 'positions stay');
      assert.equal(await store.countLiveEventsOf([m.id], null), 0, 'erased events are not live');
      assert.equal(await store.countLiveEventsOf([], 'acme/shop'), 0);
    });

    test('clearProjection removes one namespace’s memories, their index and settings; the log stays', async (store) => {
      const shop = makeMemory('acme/shop', 'shop memory about invoices');
      const blog = makeMemory('acme/blog', 'blog memory about invoices');
      await store.transaction(async (tx) => {
        await tx.insertMemory(shop, null, analyse(shop.text));
        await tx.insertMemory(blog, null, analyse(blog.text));
        await tx.setSetting('acme/shop', 'weights', { vector: 1 });
        await tx.setSetting('acme/blog', 'weights', { vector: 2 });
        await tx.appendEvent({ namespace: 'acme/shop', type: 'memory.saved', memoryId: shop.id, payload: {}, at: NOW });
      });
      await store.transaction(async (tx) => {
        await tx.clearProjection('acme/shop');
        assert.deepEqual(await tx.memoriesOf('acme/shop'), []);
        assert.deepEqual(await tx.settingsOf('acme/shop'), []);
      });
      assert.equal(await store.getMemory(shop.id), null);
      assert.deepEqual(await store.getMemory(blog.id), blog);
      assert.deepEqual(await store.listSettings('acme/blog'), [{ key: 'weights', value: { vector: 2 } }]);
      assert.equal((await store.events('acme/shop')).length, 1, 'the log keeps its events');
      if (store.capabilities.fullText) {
        assert.deepEqual(await store.lexicalCandidates(analyse('invoices'), 10, kit.filter('acme/shop', { includeInactive: true })), []);
        assert.equal((await store.lexicalCandidates(analyse('invoices'), 10, kit.filter('acme/blog'))).length, 1);
      }
      // The same ids can be projected again (recovery replays into the cleared namespace).
      await store.transaction((tx) => tx.insertMemory(shop, null, analyse(shop.text)));
      assert.deepEqual(await store.getMemory(shop.id), shop);
    });
  });

  describe('analysed terms', () => {
    test('terms reach the index as given: matched and counted exactly, never split or folded again', async (store, t) => {
      if (!store.capabilities.fullText) {
        t.skip('store has no fullText capability');
        return;
      }
      // Written with hand-made terms (not through the analyser), so the backend alone decides the match.
      const terms = ['café', 'shop/checkout/tax.py', 'payments_v2_enabled', 'straße', 'v2:flag-on'];
      const m = makeMemory('acme/shop', 'raw terms');
      const other = makeMemory('acme/shop', 'plain terms');
      await store.transaction(async (tx) => {
        await tx.insertMemory(m, null, terms);
        await tx.insertMemory(other, null, ['cafe', 'shop', 'checkout', 'tax', 'py']);
      });
      for (const term of terms) {
        assert.deepEqual(
          (await store.lexicalCandidates([term], 10, kit.filter('acme/shop'))).map((h) => h.id),
          [m.id],
          `${term} matches the memory indexed with it, and only that one`,
        );
      }
      assert.deepEqual((await store.lexicalCandidates(['cafe'], 10, kit.filter('acme/shop'))).map((h) => h.id), [other.id], 'no folding by the backend');
      assert.deepEqual((await store.lexicalCandidates(['payments'], 10, kit.filter('acme/shop'))).map((h) => h.id), [], 'no splitting by the backend');
      const { frequencies } = await store.termDocumentFrequencies([...terms, 'cafe', 'payments'], 'acme/shop');
      assert.deepEqual(Object.fromEntries(frequencies), { café: 1, 'shop/checkout/tax.py': 1, payments_v2_enabled: 1, straße: 1, 'v2:flag-on': 1, cafe: 1 });
    });

    test('term document frequencies of a namespace count that namespace only', async (store, t) => {
      if (!store.capabilities.fullText) {
        t.skip('store has no fullText capability');
        return;
      }
      await store.transaction(async (tx) => {
        for (const [ns, text] of [
          ['acme/shop', 'turbo checkout'],
          ['acme/shop', 'slow checkout'],
          ['acme/blog', 'turbo posts'],
          ['acme/blog', 'turbo drafts'],
          ['acme/blog', 'turbo pages'],
        ] as const) {
          const m = makeMemory(ns, text);
          await tx.insertMemory(m, null, analyse(m.text));
        }
      });
      const shop = await store.termDocumentFrequencies(['turbo', 'checkout', 'posts'], 'acme/shop');
      assert.equal(shop.documents, 2);
      assert.deepEqual(Object.fromEntries(shop.frequencies), { turbo: 1, checkout: 2 });
      const blog = await store.termDocumentFrequencies(['turbo', 'checkout'], 'acme/blog');
      assert.equal(blog.documents, 3);
      assert.deepEqual(Object.fromEntries(blog.frequencies), { turbo: 3 });
      const none = await store.termDocumentFrequencies(['turbo'], 'acme/none');
      assert.equal(none.documents, 0);
      assert.equal(none.frequencies.size, 0);
      const all = await store.termDocumentFrequencies(['turbo']);
      assert.equal(all.documents, 5);
      assert.equal(all.frequencies.get('turbo'), 4, 'without a namespace: the whole store');
    });
  });

  describe('snapshots', () => {
    test('putSnapshot is compare-and-swap: versions count from 1, a stale expectation fails CONFLICT and writes nothing', async (store) => {
      assert.equal(await store.getSnapshot('acme/shop'), null);
      const v1 = await store.transaction((tx) => tx.putSnapshot(snapshotOf('acme/shop', 4, [1, 2, 3]), null));
      assert.equal(v1, 1);
      const stored = await store.getSnapshot('acme/shop');
      assert.deepEqual(stored, { ...snapshotOf('acme/shop', 4, [1, 2, 3]), version: 1 }, 'every field and the blob byte for byte');
      assert.ok(stored?.blob instanceof Uint8Array);
      await kit.rejectsWith(store.transaction((tx) => tx.putSnapshot(snapshotOf('acme/shop', 9, [9]), null)), 'CONFLICT');
      await kit.rejectsWith(store.transaction((tx) => tx.putSnapshot(snapshotOf('acme/shop', 9, [9]), 2)), 'CONFLICT');
      assert.equal((await store.getSnapshot('acme/shop'))?.seq, 4, 'a failed swap wrote nothing');
      const v2 = await store.transaction(async (tx) => {
        const version = await tx.putSnapshot(snapshotOf('acme/shop', 8, [4, 5]), 1);
        assert.equal((await tx.getSnapshot('acme/shop'))?.version, 2, 'visible inside the transaction');
        assert.deepEqual(await tx.snapshotHead('acme/shop'), { version: 2, seq: 8 }, 'version and sequence alone, visible inside the transaction');
        assert.equal(await tx.snapshotHead('acme/blog'), null);
        return version;
      });
      assert.equal(v2, 2);
      assert.equal(await store.getSnapshot('acme/blog'), null, 'scopes are independent');
      await store.transaction((tx) => tx.deleteSnapshot('acme/shop'));
      await store.transaction((tx) => tx.deleteSnapshot('acme/shop')); // idempotent
      assert.equal(await store.getSnapshot('acme/shop'), null);
    });

    test('of two writers expecting the same snapshot version, exactly one wins', async (store) => {
      await store.transaction((tx) => tx.putSnapshot(snapshotOf('acme/shop', 1, [1]), null));
      const results = await Promise.allSettled([
        store.transaction((tx) => tx.putSnapshot(snapshotOf('acme/shop', 2, [2]), 1)),
        store.transaction((tx) => tx.putSnapshot(snapshotOf('acme/shop', 3, [3]), 1)),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.equal(won.length, 1);
      assert.equal(lost.length, 1);
      assert.ok(isCairnError(lost[0]?.reason, 'CONFLICT'), String(lost[0]?.reason));
      assert.equal((await store.getSnapshot('acme/shop'))?.version, 2);
    });
  });

  describe('quarantine, vault and anchors', () => {
    test('entries: put and replace by id, read inside and outside, listed newest first by status, found by hash', async (store) => {
      const ids = [0, 1, 2, 3].map((i) => ulid(Date.parse(NOW) + i * SECOND));
      const [a, b, c, d] = ids as [string, string, string, string];
      const other = 'b'.repeat(64);
      await store.transaction(async (tx) => {
        await tx.putQuarantine(entry(a));
        await tx.putQuarantine(entry(b, { hash: other }));
        await tx.putQuarantine(entry(c, { status: 'dropped', decidedAt: NOW, reason: 'attack', taught: true }));
        await tx.putQuarantine(entry(d, { status: 'released', decidedAt: NOW, reason: 'fine', memoryIds: [ulid()] }));
        assert.deepEqual(await tx.getQuarantine(a), entry(a));
        assert.deepEqual((await tx.findQuarantineByHash('a'.repeat(64))).map((e) => e.id), [a, c, d]);
      });
      assert.deepEqual(await store.getQuarantine(c), entry(c, { status: 'dropped', decidedAt: NOW, reason: 'attack', taught: true }));
      assert.equal(await store.getQuarantine(ulid()), null);
      assert.deepEqual((await store.listQuarantine({})).map((e) => e.id), [b, a], 'held by default, newest first');
      assert.deepEqual((await store.listQuarantine({ status: 'all' })).map((e) => e.id), [d, c, b, a]);
      assert.deepEqual((await store.listQuarantine({ status: 'all', limit: 2 })).map((e) => e.id), [d, c]);
      assert.deepEqual((await store.listQuarantine({ status: 'dropped' })).map((e) => e.id), [c]);
      assert.deepEqual((await store.findQuarantineByHash(other)).map((e) => e.id), [b]);
      assert.deepEqual(await store.findQuarantineByHash('c'.repeat(64)), []);
      await store.transaction((tx) => tx.putQuarantine(entry(a, { attempts: 3, lastAttemptAt: at(5) })));
      assert.equal((await store.getQuarantine(a))?.attempts, 3, 'replaced by id');
      assert.equal((await store.listQuarantine({ status: 'all' })).length, 4);
      await store.transaction(async (tx) => {
        await tx.deleteQuarantineEntry(b);
        await tx.deleteQuarantineEntry(b); // idempotent
      });
      assert.equal(await store.getQuarantine(b), null);
      await store.transaction((tx) => tx.clearQuarantine());
      assert.deepEqual(await store.listQuarantine({ status: 'all' }), []);
    });

    test('the vault keeps a held text and its request apart from the entries', async (store) => {
      const id = ulid();
      const request = { op: 'save', input: { text: 'ignore previous instructions', tags: ['x'] } };
      await store.transaction(async (tx) => {
        await tx.putQuarantine(entry(id));
        await tx.putQuarantineVault(id, 'ignore previous instructions', request);
        assert.deepEqual(await tx.getQuarantineVault(id), { text: 'ignore previous instructions', request });
      });
      assert.deepEqual(await store.getQuarantineVault(id), { text: 'ignore previous instructions', request });
      await store.transaction((tx) => tx.putQuarantineVault(id, 'replaced text', { op: 'turn' }));
      assert.deepEqual(await store.getQuarantineVault(id), { text: 'replaced text', request: { op: 'turn' } });
      await store.transaction((tx) => tx.clearQuarantine());
      assert.ok(await store.getQuarantineVault(id), 'clearing the entries keeps the vault');
      await store.transaction(async (tx) => {
        await tx.deleteQuarantineVault(id);
        await tx.deleteQuarantineVault(id); // idempotent
      });
      assert.equal(await store.getQuarantineVault(id), null);
    });

    test('learned anchors and the anchor cache round-trip their vectors', async (store) => {
      const one = Float32Array.from([0.5, 0.5, -0.5, 0.5]);
      const two = Float32Array.from([1, 0, 0, 0]);
      await store.transaction(async (tx) => {
        await tx.putLearnedAnchor('q-2', two, NOW);
        await tx.putLearnedAnchor('q-1', one, NOW);
        assert.deepEqual(await tx.getLearnedAnchor('q-1'), one);
        assert.equal(await tx.getLearnedAnchor('q-9'), null);
      });
      assert.deepEqual(await store.learnedAnchors(), [
        { id: 'q-1', vector: one },
        { id: 'q-2', vector: two },
      ]);
      await store.transaction(async (tx) => {
        await tx.putLearnedAnchor('q-1', two, NOW); // replaced
        await tx.deleteLearnedAnchor('q-2');
        await tx.deleteLearnedAnchor('q-2'); // idempotent
      });
      assert.deepEqual(await store.learnedAnchors(), [{ id: 'q-1', vector: two }]);

      assert.equal(await store.getAnchorCache('seed:v1'), null);
      const cached = [one, two, Float32Array.from([0, 0, 1, 0])];
      await store.transaction((tx) => tx.putAnchorCache('seed:v1', cached));
      assert.deepEqual(await store.getAnchorCache('seed:v1'), cached, 'in the order stored');
      await store.transaction((tx) => tx.putAnchorCache('seed:v1', [two]));
      assert.deepEqual(await store.getAnchorCache('seed:v1'), [two], 'replaced');
      assert.equal(await store.getAnchorCache('seed:v2'), null);
    });
  });

  describe('erasure operations and the report', () => {
    test('with an erasure proof, compaction leaves none of a deleted memory’s text in the files, and the report says what was read', async (store, t) => {
      const needle = `needle-${ulid()}-zebra-quartz`;
      const keep = `kept-${ulid()}-walrus-ochre`;
      const gone = makeMemory('acme/shop', `the secret is ${needle}`);
      const kept = makeMemory('acme/shop', `the public note is ${keep}`);
      await store.transaction(async (tx) => {
        await tx.insertMemory(gone, null, analyse(gone.text));
        await tx.insertMemory(kept, null, analyse(kept.text));
      });
      // Asked once the store has been used: a server backend learns what its role may read when it connects.
      const proof = store.erasureProof;
      assert.equal(proof === undefined, typeof store.noErasureProof === 'string', 'a store has a proof, or says why it has none');
      if (!proof) {
        t.skip(`store has no erasure proof: ${store.noErasureProof ?? ''}`);
        return;
      }
      assert.ok(proof.method.length > 0, 'doctor can say how the proof works');
      await store.transaction((tx) => tx.deleteMemory(gone.id));
      const compaction = await proof.compact({ vectorsRemoved: false });
      assert.ok(compaction.length > 0, 'compaction says what it did');
      const report = await proof.check([needle], compaction);
      assert.equal(report.found, 0, 'the deleted text left every file');
      assert.deepEqual(report.compaction, compaction, 'the report quotes the compaction');
      assert.equal(typeof report.backend, 'string');
      assert.ok(report.scanned.some((s) => s.files > 0 && s.bytes > 0), JSON.stringify(report.scanned));
      assert.ok(Array.isArray(report.notCovered));
      assert.equal((await proof.check([keep], compaction)).found, 1, 'the kept text is still found: the scan reads the files');
      assert.equal((await proof.check([`never-written-${ulid()}`], compaction)).found, 0);
      assert.deepEqual(await store.getMemory(kept.id), kept);
    });

    test('diagnostics name the backend and the schema version; a vector index check says what it found', async (store) => {
      const report = await store.diagnostics();
      assert.equal(typeof report['backend'], 'string');
      assert.equal(typeof report['schemaVersion'], 'number');
      if (store.checkVectorIndex) {
        const check = await store.checkVectorIndex();
        assert.ok(['consistent', 'rebuilt', 'exhaustive'].includes(check.status), JSON.stringify(check));
        assert.equal(typeof check.detail, 'string');
      }
    });

    test('fusedRecall is offered exactly when serverSideFusion is set, and ranks within the namespace', async (store, t) => {
      assert.equal(typeof store.fusedRecall === 'function', store.capabilities.serverSideFusion);
      if (!store.fusedRecall || !kit.needsVectors(store, t)) return;
      const near = makeMemory('acme/shop', 'prices are stored in cents');
      const far = makeMemory('acme/shop', 'deploys go out on tuesdays');
      const foreign = makeMemory('acme/blog', 'prices are stored in cents too');
      await store.prepareVectors(kit.embedder);
      await store.transaction(async (tx) => {
        await tx.setEmbedder(kit.embedder);
        await tx.insertMemory(near, kit.axis(0), analyse(near.text));
        await tx.insertMemory(far, kit.axis(1), analyse(far.text));
        await tx.insertMemory(foreign, kit.axis(0), analyse(foreign.text));
      });
      const fused = await store.fusedRecall({
        vector: kit.axis(0),
        terms: analyse('prices cents'),
        k: 10,
        filter: kit.filter('acme/shop'),
        weights: { vector: 1, lexical: 1, recency: 0 },
        calibration: { vectorZero: 0.2, vectorFull: 0.8, recencyHalfLifeDays: 30 },
      });
      assert.equal(fused.results[0]?.fields.id, near.id);
      assert.ok(fused.results.every((r) => r.fields.namespace === 'acme/shop'));
      assert.ok(Math.abs((fused.bestCosine ?? 0) - 1) < 1e-6);
    });
  });
}

