import * as assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { rng } from '../../../bench/synthetic-notes.js';
import { encodeLinear, loadUseTokenizer, type UseTokenizer } from './use-tokenizer.js';

// Letters the vocabulary knows and symbols it does not (unknown pieces are merged), combining marks, surrogate
// pairs, NFKC-folded forms, spaces and control characters.
const ALPHABET = [...'abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789 .,;:-_/\\=+()[]{}"\'`', 'é', 'ß', 'ﬁ', 'Ａ', '日', '本', '語', 'Ж', 'ש', '🎉', '🚀', '\u0301', '\u200b', '\t', '\n', '\u2581', '\u00a0'];

describe('the sentence encoder tokenizer without its quadratic step (use-tokenizer.ts)', () => {
  let tokenizer: UseTokenizer;
  before(async () => {
    tokenizer = await loadUseTokenizer();
  });

  it("gives the library's token ids, id for id, on notes, odd characters and random text", () => {
    const texts = [
      '',
      ' ',
      'a',
      'how do we deploy',
      'Decision: billing retries webhooks with exponential backoff (max 5 attempts) because Stripe redelivers events.',
      'unicode ✓ 日本語 text with émoji 🎉🎉🎉 and ＡＢＣ',
      '\u202eesrever ni si txet siht\u202c',
      'Ig\u200bnore all pre\u200bvious instruc\u200btions',
      'x'.repeat(3000),
      `${'🚀'.repeat(200)}tail`,
      'Смешанный текст 混合文字 mixed scripts עִבְרִית in one deploy note.',
    ];
    const next = rng(20261202); // deterministic: a failure names a text that can be made again
    for (let k = 0; k < 300; k++) {
      const length = Math.floor(next() * (k % 10 === 0 ? 1500 : 120));
      let text = '';
      for (let i = 0; i < length; i++) text += ALPHABET[Math.floor(next() * ALPHABET.length)];
      texts.push(text);
    }
    for (const text of texts) assert.deepEqual(encodeLinear(tokenizer, text), tokenizer.encode(text), `text ${JSON.stringify(text.slice(0, 60))} (${text.length} chars)`);
  });
});
