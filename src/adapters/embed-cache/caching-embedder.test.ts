import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCairnError } from '../../interfaces/errors.js';
import { createPoolEmbedder } from '../embed-pool/pool-embedder.js';
import { createUseEmbedder } from '../embed-use/use-embedder.js';
import { createCachingEmbedder } from './caching-embedder.js';

describe('caching embedder', () => {
  it('returns the model’s own vectors, computes each distinct text once, and evicts the least recently used', async () => {
    const inner = createUseEmbedder();
    let calls = 0;
    const counting = { ...inner, id: inner.id, dimensions: inner.dimensions, loadTimeMs: () => inner.loadTimeMs(), embed: async (t: string[]) => ((calls += t.length), inner.embed(t)) };
    const cache = createCachingEmbedder(counting, 2);
    const [a1, b1] = await cache.embed(['what is the traffic limit', 'deploys go out on Tuesdays']);
    assert.equal(calls, 2);
    const [direct] = await inner.embed(['what is the traffic limit']);
    assert.deepEqual(a1, direct, 'same vector as the wrapped model');
    const [a2] = await cache.embed(['what is the traffic limit']);
    assert.equal(calls, 2, 'a repeat costs no model call');
    assert.equal(a2, a1);
    await cache.embed(['a third text pushes out the oldest entry']);
    assert.equal(cache.size, 2);
    await cache.embed(['deploys go out on Tuesdays']); // evicted (least recently used): computed again
    assert.equal(calls, 4);
    assert.ok(b1 && b1.length === 512);
    assert.equal(cache.id, inner.id);
  });

  it('a text asked for while its model call runs shares that call: concurrent requests with one query cost one call', async () => {
    const inner = createUseEmbedder();
    const asked: string[][] = [];
    const counting = { id: inner.id, dimensions: inner.dimensions, loadTimeMs: () => inner.loadTimeMs(), embed: async (t: string[]) => (asked.push(t), inner.embed(t)) };
    const cache = createCachingEmbedder(counting, 10);
    const query = 'how do we roll back a deploy';
    const [first, second, both] = await Promise.all([cache.embed([query]), cache.embed([query]), cache.embed(['which queue holds the retries', query])]);
    assert.deepEqual(asked, [[query], ['which queue holds the retries']], 'the running text is not sent again; only the new one is');
    assert.equal(second[0], first[0], 'the same vector object, from the one call');
    assert.equal(both[1], first[0]);
    assert.deepEqual(first, await inner.embed([query]), "the model's own vector");
    assert.deepEqual([both[0]], await inner.embed(['which queue holds the retries']));
    assert.equal(cache.size, 2);
    await cache.embed([query]);
    assert.equal(asked.length, 2, 'cached once the call ended');
  });

  it('a failed call fails every request waiting on it and is not cached: the next request calls the model again', async () => {
    const pool = createPoolEmbedder({ workers: 1, workerUrl: new URL('../embed-pool/crashing-worker.fixture.js', import.meta.url) });
    try {
      const cache = createCachingEmbedder(pool, 10);
      await cache.embed(['warm the thread up']);
      const crashes = await Promise.allSettled([cache.embed(['__crash__']), cache.embed(['__crash__'])]);
      assert.deepEqual(crashes.map((c) => c.status), ['rejected', 'rejected']);
      for (const c of crashes) assert.ok(c.status === 'rejected' && isCairnError(c.reason, 'EMBEDDER_UNAVAILABLE'));
      assert.equal(pool.stats().restarts, 1, 'one model call crashed one thread, for both requests');
      assert.equal(cache.size, 1);
      const after = await Promise.allSettled([cache.embed(['__crash__'])]);
      assert.equal(after[0]?.status, 'rejected', 'asked again, not answered from a cache');
      assert.equal(pool.stats().restarts, 2);
    } finally {
      await pool.close();
    }
  });
});
