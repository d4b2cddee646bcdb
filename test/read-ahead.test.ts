import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { VectorReads } from '../src/core/read-ahead.js';
import { isCairnError } from '../src/interfaces/errors.js';
import type { Embedder } from '../src/interfaces/embedder.js';
import type { Store } from '../src/interfaces/store.js';
import { storeFactories } from './helpers/stores.js';

/**
 * Reads a search starts before it knows it needs them (core/read-ahead.ts): the related terms and the embedder
 * record beside the namespace's weights, the recency step's vectors beside the reads of the first results. A read
 * started ahead and not needed fails nothing and is never reported as an unhandled rejection; one that is needed
 * fails the search as before; the vectors read ahead answer as the store does, and only the rest are read later.
 */

const NS = 'github.com/acme/read-ahead';
const NOTES = [
  'Customer-facing copy goes through the translation catalogue in locales/<lang>.json.',
  'Deploys go out on Thursdays after the release train is cut.',
  'The billing worker retries a failed charge three times with exponential backoff.',
  'Invoices are rendered to PDF by the render service on port 8081.',
  'VAT is rounded per line, half up, before the invoice total is summed.',
];

let embedder: Embedder;
before(() => {
  embedder = createUseEmbedder();
});

for (const factory of storeFactories()) {
  describe(`reads ahead on ${factory.name}`, () => {
    let store: Store;
    let engine: Engine;
    const ids: string[] = [];

    before(async () => {
      store = await factory.make();
      engine = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, ingestFilter: { enabled: false } });
      for (const text of NOTES) ids.push((await engine.save({ text, kind: 'decision' })).memory.id);
    });
    after(async () => {
      await store.close();
    });

    it('a read started ahead and not needed fails nothing; one that is needed fails the search', async () => {
      const unhandled: unknown[] = [];
      const record = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', record);
      try {
        // A stored related-terms weight out of range fails as it is read; with the lexical signal off, it is not needed.
        await store.transaction((tx) => tx.setSetting(NS, 'related-terms', { weight: 5 }));
        await engine.setWeights({ lexical: 0 });
        const results = await engine.search('how is VAT rounded on invoices');
        assert.equal(results[0]?.memory.text, NOTES[4]);
        await engine.setWeights({ lexical: 1 });
        await assert.rejects(engine.search('how is VAT rounded on invoices'), (err: unknown) => isCairnError(err, 'INVALID_INPUT') && /related-terms weight/u.test((err as Error).message));
        await new Promise((resolve) => setImmediate(resolve));
        assert.deepEqual(unhandled, []);
      } finally {
        process.off('unhandledRejection', record);
        await engine.setRelatedTerms(0.5);
      }
      assert.equal((await engine.search('how is VAT rounded on invoices'))[0]?.memory.text, NOTES[4]);
    });

    it('vectors read ahead answer as the store does, and only the ones not read ahead are read later', async () => {
      const asked: string[][] = [];
      const counted: Store = Object.create(store, {
        getVectors: { value: (list: string[]) => (asked.push([...list]), store.getVectors(list)) },
      }) as Store;
      const direct = await store.getVectors(ids);
      assert.equal(direct.size, ids.length);

      const reads = new VectorReads(counted);
      reads.readAhead(ids.slice(0, 3));
      const got = await reads.get([ids[4] as string, ids[0] as string, ids[2] as string, 'no-such-memory']);
      assert.deepEqual(asked, [ids.slice(0, 3), [ids[4], 'no-such-memory']]);
      assert.deepEqual([...got.keys()], [ids[4], ids[0], ids[2]]);
      for (const [id, v] of got) assert.deepEqual([...v], [...(direct.get(id) as Float32Array)], id);

      // Everything asked for read ahead: no second read.
      asked.length = 0;
      const all = new VectorReads(counted);
      all.readAhead(ids);
      assert.equal((await all.get(ids.slice(1, 4))).size, 3);
      assert.deepEqual(asked, [ids]);
      // Nothing read ahead: one read, as the store answers.
      asked.length = 0;
      assert.equal((await new VectorReads(counted).get(ids)).size, ids.length);
      assert.deepEqual(asked, [ids]);
    });
  });
}
