import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
});
