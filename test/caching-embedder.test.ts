import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCachingEmbedder } from '../src/adapters/embed-cache/caching-embedder.js';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';

const inner = createUseEmbedder();

function same(a: Float32Array | undefined, b: Float32Array | undefined): void {
  assert.ok(a instanceof Float32Array, 'a vector, not undefined');
  assert.ok(b instanceof Float32Array);
  assert.deepEqual(Array.from(a as Float32Array), Array.from(b as Float32Array));
}

describe('caching embedder: a cached text evicted while a call waits', () => {
  it('a hit evicted by the vectors of the same call is still returned, and never cached as undefined', async () => {
    const cached = createCachingEmbedder(inner, 1);
    const [alone] = await cached.embed(['reindex the vectors']);
    // 'migrate the schema' is embedded by this call; remembering it evicts the cached text before the call resumes.
    const [hit, fresh] = await cached.embed(['reindex the vectors', 'migrate the schema']);
    same(hit, alone);
    assert.ok(fresh instanceof Float32Array);
    same((await cached.embed(['reindex the vectors']))[0], alone);
  });

  it('concurrent calls evicting a hit during a shared call: every caller gets vectors', async () => {
    const cached = createCachingEmbedder(inner, 2);
    const [a] = await cached.embed(['flaky test on ci']);
    const first = cached.embed(['rotate the api keys']); // the shared call
    const sharing = cached.embed(['flaky test on ci', 'rotate the api keys']); // a hit plus the shared call
    const evicting = cached.embed(['bump node to 20', 'pin the lockfile']); // fills the cache meanwhile
    const [[k1], [hit, k2], [n, l]] = await Promise.all([first, sharing, evicting]);
    same(hit, a);
    same(k2, k1);
    assert.ok(n instanceof Float32Array && l instanceof Float32Array);
    for (const text of ['flaky test on ci', 'rotate the api keys', 'bump node to 20', 'pin the lockfile']) {
      const [v] = await cached.embed([text]);
      assert.ok(v instanceof Float32Array, `${text} gives a vector after the race`);
    }
    same((await cached.embed(['flaky test on ci']))[0], a);
  });
});
