import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine, type EngineConfig } from '../src/core/engine.js';
import { stateChecksum } from '../src/core/replay.js';
import { LIKELY_LOOKUP_MAX_BATCH } from '../src/core/write-path.js';
import { dot, SAME_TOPIC_MIN_COSINE } from '../src/core/topics.js';
import type { Embedder } from '../src/interfaces/embedder.js';
import type { SearchResult } from '../src/interfaces/memory.js';
import type { Store } from '../src/interfaces/store.js';
import { CODING_NAMESPACES } from '../bench/coding-memory-data.js';
import { pgSkip } from './helpers/postgres.js';
import { storeFactories } from './helpers/stores.js';

/**
 * The write-time "likely replaces" relation (Memory.likelyReplaces) as recall uses it, on every backend with
 * the real embedder: an update worded differently from the note it updates (cosine below the same-topic
 * step's threshold) ranks first, is brought in when the candidates missed it, and a forgotten update hides
 * nothing; the relation is part of the logged state, so replay reproduces it.
 */

const NOW = new Date('2026-11-01T12:00:00.000Z');
const NS = 'acme/billing';
const OLD = 'API rate limit is 100 requests per minute per key.';
const NEW = 'We raised the API ceiling: each key may now make 300 calls a minute.';
/** Worded like the older note: only it is a candidate when each signal fetches one. */
const QUERY = 'what is the API rate limit per key';
/** A query both notes match. */
const BOTH = 'rate limit for API keys';
const billing = CODING_NAMESPACES[0] as (typeof CODING_NAMESPACES)[number];
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000).toISOString();
const explain = (results: SearchResult[]) => results.map((r, i) => `${i + 1}. ${(100 * r.score).toFixed(1)} ${r.memory.text}`).join('\n') || '(nothing)';

let embedder: Embedder;
before(() => {
  embedder = createUseEmbedder();
});

for (const factory of storeFactories()) {
  describe(`likely replaces on ${factory.name}`, () => {
    let store: Store;
    let oldId: string;
    let newId: string;
    let replaced: string[];
    const engine = (over: Partial<EngineConfig> = {}) =>
      new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, now: () => NOW, countRecalls: false, ...over });

    before(async () => {
      store = await factory.make();
      const e = engine();
      // Forty notes of the benchmark's billing repository around the chain, each at its own age.
      for (const note of billing.notes.slice(0, 40)) {
        if (note.state || note.route) continue;
        await e.save({ text: note.text, kind: note.kind, createdAt: daysAgo(note.days) });
      }
      oldId = (await e.save({ text: OLD, createdAt: daysAgo(90) })).id;
      const saved = await e.save({ text: NEW, createdAt: daysAgo(10) });
      newId = saved.id;
      replaced = saved.likelyReplaces?.map((l) => l.id) ?? [];
      assert.equal(replaced[0], oldId, 'the save reports the older note first as likely replaced');
    });
    after(async () => {
      await store?.close();
    });

    it('records the relation in the memory and its save event', async () => {
      assert.deepEqual((await store.getMemory(newId))?.likelyReplaces, replaced);
      assert.equal((await store.getMemory(oldId))?.likelyReplaces, undefined);
      const saved = (await store.events(NS)).find((e) => e.type === 'memory.saved' && e.memoryId === newId);
      assert.deepEqual((saved?.payload as { memory: { likelyReplaces?: string[] } }).memory.likelyReplaces, replaced);
    });

    it('an update worded differently (low cosine) ranks above the note it updates', async () => {
      const vectors = await store.getVectors([oldId, newId]);
      const cosine = dot(vectors.get(oldId) as Float32Array, vectors.get(newId) as Float32Array);
      assert.ok(cosine < SAME_TOPIC_MIN_COSINE, `cosine ${cosine.toFixed(3)} is below the same-topic threshold`);
      const results = await engine().search(BOTH, { limit: 5 });
      assert.equal(results[0]?.memory.id, newId, explain(results));
      assert.equal(results[0]?.scoreDetails.newerThan, oldId);
      assert.ok(results.some((r) => r.memory.id === oldId), 'the older note is still recalled');
    });

    it('brings the update in when only the older note is a candidate', async () => {
      // One candidate per signal: the query's wording finds the older note alone.
      const narrow = { candidateFactor: 1, minCandidates: 1 };
      const without = await engine({ ...narrow, likelyReplaces: null }).search(QUERY, { limit: 1 });
      assert.deepEqual(without.map((r) => r.memory.id), [oldId], explain(without));
      const results = await engine(narrow).search(QUERY, { limit: 1 });
      assert.deepEqual(results.map((r) => r.memory.id), [newId], explain(results));
      const d = results[0]?.scoreDetails;
      assert.equal(d?.newerThan, oldId);
      assert.equal(d?.signals.vector.rank, null, 'it was no vector candidate');
      const sum = (d?.signals.vector.contribution ?? 0) + (d?.signals.lexical.contribution ?? 0) + (d?.signals.recency.contribution ?? 0);
      assert.ok(Math.abs(sum - (d?.relevance ?? -1)) < 1e-9, 'its parts add up to its relevance');
    });

    it('moves the update up when its words found it but the vector pool did not reach it', async () => {
      // Two candidates per signal: the older note is the first vector and lexical candidate, the update only a
      // lexical one (measured at 10k generated notes: the newest version at rank 87, vector rank beyond the pool).
      const narrow = { candidateFactor: 1, minCandidates: 2 };
      const query = 'rate limit ceiling per key';
      const without = await engine({ ...narrow, likelyReplaces: null }).search(query, { limit: 2 });
      assert.deepEqual(without.map((r) => r.memory.id), [oldId, newId], explain(without));
      assert.equal(without[1]?.scoreDetails.signals.vector.rank, null, 'the update was no vector candidate');
      assert.ok((without[1]?.score ?? 1) < 0.45 * (without[0]?.score ?? 0), 'too far below for the same-topic step alone');
      const results = await engine(narrow).search(query, { limit: 1 });
      assert.deepEqual(results.map((r) => r.memory.id), [newId], explain(results));
      assert.equal(results[0]?.scoreDetails.newerThan, oldId);
      assert.notEqual(results[0]?.scoreDetails.signals.lexical.rank, null, 'it keeps the lexical scores it was found with');
    });

    it('a note found by its words alone brings in no update', async () => {
      // Far from both notes in meaning (cosine under the vector signal's zero): only the shared "100" finds the older.
      const words = 'grandma knits 100 scarves';
      const narrow = { candidateFactor: 1, minCandidates: 1, relevanceFloor: null };
      const without = await engine({ ...narrow, likelyReplaces: null }).search(words, { limit: 1 });
      assert.deepEqual(without.map((r) => r.memory.id), [oldId], explain(without));
      assert.equal(without[0]?.scoreDetails.signals.vector.contribution, 0, 'the older note has no vector points');
      const results = await engine(narrow).search(words, { limit: 1 });
      assert.deepEqual(results.map((r) => r.memory.id), [oldId], explain(results));
    });

    it('a forgotten update hides nothing, and a restored one leads again', async () => {
      const e = engine();
      await e.forget(newId, { reason: 'wrong' });
      try {
        const results = await e.search(BOTH, { limit: 5 });
        assert.equal(results[0]?.memory.id, oldId, explain(results));
        assert.ok(!results.some((r) => r.memory.id === newId));
        const narrow = await engine({ candidateFactor: 1, minCandidates: 1 }).search(QUERY, { limit: 1 });
        assert.deepEqual(narrow.map((r) => r.memory.id), [oldId], 'nothing forgotten is brought in');
        // Asking for inactive notes too shows the forgotten one where it falls, never above the live note it names.
        const inactive = await engine({ candidateFactor: 1, minCandidates: 1 }).search(QUERY, { limit: 1, includeInactive: true });
        assert.deepEqual(inactive.map((r) => r.memory.id), [oldId], explain(inactive));
        // With both among the first results, the recorded relation does not lift the forgotten one either.
        const both = await e.search(BOTH, { limit: 5, includeInactive: true });
        const at = (id: string) => both.findIndex((r) => r.memory.id === id);
        assert.ok(at(oldId) >= 0 && at(newId) >= 0, explain(both));
        assert.ok(at(oldId) < at(newId), explain(both));
      } finally {
        await e.restore(newId);
      }
      assert.deepEqual((await store.getMemory(newId))?.likelyReplaces, replaced);
      assert.equal((await e.search(BOTH, { limit: 5 }))[0]?.memory.id, newId);
    });

    it('a doubted update is not brought in above the note it names', async () => {
      const e = engine();
      await e.rate(newId, 'wrong');
      try {
        const narrow = await engine({ candidateFactor: 1, minCandidates: 1 }).search(QUERY, { limit: 1 });
        assert.deepEqual(narrow.map((r) => r.memory.id), [oldId], explain(narrow));
      } finally {
        await e.rate(newId, 'useful');
      }
      const again = await engine({ candidateFactor: 1, minCandidates: 1 }).search(QUERY, { limit: 1 });
      assert.deepEqual(again.map((r) => r.memory.id), [newId], 'a useful mark outweighs the wrong one');
    });

    it('a small batch records the relation against the store and its own items; a large one records none', async () => {
      const small = await engine().saveMany([{ text: 'Each API key may now make 500 calls a minute.', createdAt: daysAgo(5) }]);
      assert.ok(small[0]?.memory.likelyReplaces?.includes(newId), JSON.stringify(small[0]?.likelyReplaces));
      // Within the batch: the second item updates the first, which was not in the store when the batch began.
      const pair = await engine().saveMany([
        { text: 'Staging deploys run from the release branch every weekday at 10:00 UTC.', createdAt: daysAgo(3) },
        { text: 'Changed: staging deploys now run from the main branch every weekday at 14:00 UTC.', createdAt: daysAgo(2) },
      ]);
      const [first, second] = pair;
      assert.equal(second?.memory.likelyReplaces?.[0], first?.id, `the batch's item is the closest: ${JSON.stringify(second?.likelyReplaces)}`);
      assert.equal(first?.memory.likelyReplaces, undefined, 'the earlier item names nothing written after it');
      const bulk = await engine().saveMany(
        Array.from({ length: LIKELY_LOOKUP_MAX_BATCH + 1 }, (_, i) => ({ text: `Each API key may now make ${600 + i} calls a minute.`, createdAt: daysAgo(4) })),
      );
      assert.deepEqual(bulk.filter((r) => r.memory.likelyReplaces), []);
      for (const r of [...small, ...pair, ...bulk]) await engine().forget(r.id, { reason: 'test notes' });
    });

    it('an import records none, however few its lines', async () => {
      const e = engine();
      const text = 'Each API key may now make 700 calls a minute.';
      const counts = await e.importLines([JSON.stringify({ text, namespace: NS, createdAt: daysAgo(3) })]);
      assert.equal(counts.imported, 1, JSON.stringify(counts));
      const imported = (await e.list({ limit: 100 })).find((m) => m.text === text);
      assert.ok(imported, 'the line was imported');
      assert.equal(imported.likelyReplaces, undefined);
      await e.forget(imported.id, { reason: 'test note' });
    });

    it('replay reproduces the relation byte for byte', async () => {
      const scratch = await factory.make();
      try {
        const report = await engine().verify(scratch);
        assert.equal(report.ok, true, JSON.stringify(report));
        assert.equal(report.replayedChecksum, report.liveChecksum);
        assert.deepEqual((await scratch.getMemory(newId))?.likelyReplaces, replaced);
        // The relation is inside the checksummed state: a store without it would not match.
        assert.equal((await stateChecksum(scratch)).checksum, (await stateChecksum(store)).checksum);
      } finally {
        await scratch.close();
      }
    });
  });
}

if (pgSkip) it('likely replaces on postgres', { skip: pgSkip }, () => {});
