import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import type { Embedder } from '../src/interfaces/embedder.js';
import type { SearchResult } from '../src/interfaces/memory.js';
import type { Store } from '../src/interfaces/store.js';
import { CODING_NAMESPACES } from '../bench/coding-memory-data.js';
import { storeFactories } from './helpers/stores.js';

/**
 * An update lifts over the note it updates, not over every note it was paired with when written. The billing
 * repository of the coding-memory benchmark, saved at the notes' own ages through the real engine and
 * embedder: the 30-day grace-period update names both the 14-day grace-period note and the dunning schedule
 * as likely replaced, and a question about retrying declined cards is about the schedule.
 */

const NOW = new Date('2026-11-01T12:00:00.000Z');
const billing = CODING_NAMESPACES[0] as (typeof CODING_NAMESPACES)[number];
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000).toISOString();
const explain = (results: SearchResult[]) => results.map((r, i) => `${i + 1}. ${(100 * r.score).toFixed(1)}${r.scoreDetails.newerThan ? ' (newer)' : ''} ${r.memory.text}`).join('\n');
const textOf = (key: string) => billing.notes.find((n) => n.key === key)?.text as string;

let embedder: Embedder;
before(() => {
  embedder = createUseEmbedder();
});

for (const factory of storeFactories()) {
  describe(`an update lifts over one subject on ${factory.name}`, () => {
    let store: Store;
    let engine: Engine;
    const ids = new Map<string, string>();
    before(async () => {
      store = await factory.make();
      engine = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: billing.namespace, now: () => NOW, countRecalls: false });
      for (const note of [...billing.notes].sort((a, b) => b.days - a.days)) {
        if (note.state || note.route) continue;
        ids.set(note.key, (await engine.save({ text: note.text, kind: note.kind, createdAt: daysAgo(note.days) })).id);
      }
    });
    after(async () => {
      await store?.close();
    });

    it('the grace-period update goes above the note it replaces, and not above the dunning schedule', async () => {
      const [schedule, grace14, grace30] = ['dunning', 'grace-period@1', 'grace-period@2'].map((k) => ids.get(k) as string);
      // The write-time pairing that used to lift the update over the schedule: it names both older notes.
      const named = (await store.getMemory(grace30 as string))?.likelyReplaces ?? [];
      assert.ok(named.includes(grace14 as string) && named.includes(schedule as string), `${textOf('grace-period@2')} names ${JSON.stringify(named)}`);
      const results = await engine.search('when do we retry a card that was declined on renewal', { limit: 10 });
      const at = (id: string) => results.findIndex((r) => r.memory.id === id);
      assert.equal(results[0]?.memory.id, schedule, explain(results));
      assert.ok(at(grace30 as string) >= 0 && at(grace14 as string) >= 0, explain(results));
      assert.ok(at(grace30 as string) < at(grace14 as string), `the update still goes above the note it replaces:\n${explain(results)}`);
    });
  });
}
