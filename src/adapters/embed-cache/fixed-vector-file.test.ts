import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { EmbedOptions } from '../../interfaces/embedder.js';
import { createUseEmbedder } from '../embed-use/use-embedder.js';
import { keepFixedVectors } from './fixed-vector-file.js';

const model = createUseEmbedder();
/** The real model, counting the texts it is asked to embed. */
function counted(): { embedder: typeof model; calls: () => number } {
  let calls = 0;
  const embedder = Object.assign(Object.create(model) as typeof model, {
    embed: async (texts: string[], _options?: EmbedOptions) => ((calls += texts.length), model.embed(texts)),
  });
  return { embedder, calls: () => calls };
}

const dir = mkdtempSync(join(tmpdir(), 'cairn-fixed-vectors-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SENTENCES = ['How long should bread dough rise before baking?', 'The rules of tennis scoring explained simply', 'What is the capital city of Canada?'];

describe('fixed vectors kept between processes', () => {
  it('a fixed batch is embedded once: a later embedder on the same folder reads the same bits without a model call', async () => {
    const folder = join(dir, 'once');
    const first = counted();
    const made = await keepFixedVectors(first.embedder, folder).embed(SENTENCES, { fixed: true });
    assert.equal(first.calls(), 3);
    assert.equal(readdirSync(folder).length, 1, 'one file for the batch');
    const file = join(folder, readdirSync(folder)[0] as string);
    assert.equal(statSync(file).size, 3 * 512 * 4 + 32, 'the vectors and their checksum');

    const later = counted(); // as in the next process
    const read = await keepFixedVectors(later.embedder, folder).embed(SENTENCES, { fixed: true });
    assert.equal(later.calls(), 0, 'no model call');
    assert.deepEqual(read, made, 'bit for bit the vectors the model gave');
    assert.deepEqual(read, await model.embed(SENTENCES));
  });

  it('only fixed batches are kept, and a changed text or order is another file', async () => {
    const folder = join(dir, 'which');
    const c = counted();
    const kept = keepFixedVectors(c.embedder, folder);
    await kept.embed(['a user query about deploys']);
    await kept.embed(['a user query about deploys'], {});
    assert.throws(() => readdirSync(folder), /ENOENT/u, 'a batch that is not fixed leaves nothing on disk');
    await kept.embed(SENTENCES, { fixed: true });
    await kept.embed([...SENTENCES].reverse(), { fixed: true });
    await kept.embed([...SENTENCES.slice(0, 2), 'What is the capital city of France?'], { fixed: true });
    assert.equal(readdirSync(folder).length, 3);
    const reversed = await keepFixedVectors(counted().embedder, folder).embed([...SENTENCES].reverse(), { fixed: true });
    assert.deepEqual(reversed, await model.embed([...SENTENCES].reverse()), 'each file answers its own batch in its order');
  });

  it('a file cut short or altered is not used: the batch is embedded again and the file written anew', async () => {
    const folder = join(dir, 'damaged');
    await keepFixedVectors(model, folder).embed(SENTENCES, { fixed: true });
    const file = join(folder, readdirSync(folder)[0] as string);
    const good = readFileSync(file);
    const expected = await model.embed(SENTENCES);

    writeFileSync(file, good.subarray(0, good.length - 100));
    const afterCut = counted();
    assert.deepEqual(await keepFixedVectors(afterCut.embedder, folder).embed(SENTENCES, { fixed: true }), expected);
    assert.equal(afterCut.calls(), 3, 'embedded again');
    assert.deepEqual(readFileSync(file), good, 'and written anew');

    const flipped = Buffer.from(good);
    flipped[10] = (flipped[10] as number) ^ 0x40;
    writeFileSync(file, flipped);
    const afterFlip = counted();
    assert.deepEqual(await keepFixedVectors(afterFlip.embedder, folder).embed(SENTENCES, { fixed: true }), expected, 'never the altered vector');
    assert.equal(afterFlip.calls(), 3);
  });

  it('a folder that cannot be created still answers, from the model, and leaves no temporary file', async () => {
    writeFileSync(join(dir, 'a-file'), '');
    const blocked = join(dir, 'a-file', 'vectors'); // a folder under a file: mkdir fails, for root too
    assert.deepEqual(await keepFixedVectors(model, blocked).embed(SENTENCES, { fixed: true }), await model.embed(SENTENCES));
    assert.deepEqual(readdirSync(dir).sort(), ['a-file', 'damaged', 'once', 'which']);
  });
});
