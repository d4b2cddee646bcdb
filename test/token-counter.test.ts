/**
 * The token counter (adapters/tokenizer): its compact rank table and counting give the tokenizer package's own
 * counts (gpt-tokenizer's countTokens, cl100k_base, with special tokens as ordinary text) on real text — this
 * repository's README and sources cut into lines and paragraphs, the coding-memory notes — and on awkward input
 * (mixed scripts, emoji, NUL, lone surrogates, long runs, 32 KB); the table is kept in its folder and read back,
 * and a damaged table file is built again.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { CODING_NAMESPACES } from '../bench/coding-memory-data.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const COUNTER_MODULE = new URL('../src/adapters/tokenizer/gpt-token-counter.js', import.meta.url).href;
/** A process that counts its stdin with the counter module given, keeping its table in the folder given. */
const COUNT_STDIN = `const [url, dir] = process.argv.slice(1);
const { createGptTokenCounter } = await import(url);
let text = '';
for await (const chunk of process.stdin) text += chunk;
process.stdout.write(String(await createGptTokenCounter({ tableDir: dir }).count(text)));`;
const root = mkdtempSync(join(tmpdir(), 'cairn-token-counter-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** What the package counts, special tokens taken as ordinary text. */
const reference = (text: string) => countTokens(text, { disallowedSpecial: new Set() });

function sourceTexts(): string[] {
  const files = [join(ROOT, 'README.md'), ...['src/core', 'src/surfaces/cli'].flatMap((dir) => readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.ts')).map((f) => join(ROOT, dir, f)))];
  const out: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    out.push(...text.split('\n'), ...text.split('\n\n'));
  }
  return out;
}

function awkwardTexts(): string[] {
  const scripts = ['VAT 税 НДС ضريبة מס 🧾', 'naïve café — “quoted” ‘single’ … ½ × ÷ →', '한국어 日本語 ไทย देवनागरी', '👩‍👩‍👧‍👦🏳️‍🌈🇫🇷 e\u0301 Z\u0351\u0363a\u0367l\u036Bgo'];
  const seeded = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const random = seeded(7);
  const randomText = (n: number) => String.fromCodePoint(...Array.from({ length: n }, () => [0x20 + Math.floor(random() * 95), 0x400 + Math.floor(random() * 255), 0x4e00 + Math.floor(random() * 2000), 0x1f600 + Math.floor(random() * 80), 0x0a][Math.floor(random() * 5)] as number));
  return [
    '',
    ' ',
    '\n\n\n',
    'a',
    '<|endoftext|> then <|fim_prefix|><|im_start|>',
    'NUL\u0000in\u0000the middle',
    'lone \uD800 surrogate \uDC00 and a pair \uD83D\uDE00',
    '\uD800',
    // Lone surrogates where the cl100k tokens holding U+FFFD would stand: "�", "��", " �", ".�", "�s", …
    '\uD800\uD800 \uD800 .\uD800 \uD800s \uD800t \uDFFF\uDFFF\uDFFF\uDFFF \uD800\uD800\uD800\uD800',
    'x'.repeat(5000),
    ' '.repeat(300) + 'indented',
    '1234567890123456789 3.14159 0xDEADBEEF 1e-9',
    // Byte-order marks, where eight cl100k tokens the package never produces would stand (U+FEFF before "namespace",
    // "using", "//", "#", a line break), alone and inside words.
    '\uFEFFnamespace \uFEFFusing x\uFEFF// \uFEFF#\n\uFEFF\n\n\uFEFF/*\n \uFEFF\uFEFF"" a\uFEFFb \uFEFF',
    "it's they're we'll I'd you've DON'T",
    'a'.repeat(32 * 1024),
    ...scripts,
    scripts.join(' ').repeat(200),
    ...Array.from({ length: 200 }, (_, i) => randomText(1 + i * 3)),
    // Words with byte-order marks before and after them (the package decodes bytes with a decoder that drops a
    // leading one before looking them up).
    ...Array.from({ length: 3000 }, () => {
      const words = ['namespace', 'using', 'the', 'x', ' ', '\n', '//', '#', 'é', '日本', '1', '""', '/*', 'ing', '.'];
      let text = '';
      for (let j = 1 + Math.floor(random() * 6); j > 0; j--) text += (random() < 0.4 ? '\uFEFF' : '') + words[Math.floor(random() * words.length)] + (random() < 0.2 ? '\uFEFF' : '');
      return text;
    }),
  ];
}

describe('the token counter', () => {
  it('gives the tokenizer package\'s counts on real and awkward text', async () => {
    const counter = createGptTokenCounter({ tableDir: join(root, 'counts') });
    const texts = [...sourceTexts(), ...CODING_NAMESPACES.flatMap((ns) => ns.notes.map((n) => n.text)), ...awkwardTexts()];
    assert.ok(texts.length > 5000, `${texts.length} texts`);
    let total = 0;
    for (const text of texts) {
      const count = await counter.count(text);
      assert.equal(count, reference(text), JSON.stringify(text.slice(0, 120)));
      total += count;
    }
    assert.ok(total > 100_000, `${total} tokens`);
  });

  it('a memory holding a special token\'s text is recalled into context (counting it used to throw)', async () => {
    for (const tableDir of [undefined, join(root, 'counts')]) {
      const store = createSqliteStore({ path: join(root, `special-${tableDir ? 'table' : 'package'}.db`), vectorIndex: false });
      const engine = new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter({ tableDir }), defaultNamespace: 'github.com/acme/shop' });
      try {
        const text = 'Prompt templates must escape <|endoftext|> before sending; the tokenizer reads it as a special token.';
        await engine.save({ text });
        const pack = await engine.context('how do prompt templates escape special tokens');
        assert.ok(pack.text.includes('<|endoftext|>'), pack.text);
        assert.ok(pack.tokens > 0 && pack.tokens <= 1000);
      } finally {
        await store.close();
      }
    }
  });

  it('counts a special token\'s text as ordinary text instead of refusing it', async () => {
    assert.throws(() => countTokens('<|endoftext|>'), /special token/u);
    assert.equal(await createGptTokenCounter({ tableDir: join(root, 'counts') }).count('<|endoftext|>'), reference('<|endoftext|>'));
    assert.equal(await createGptTokenCounter().count('<|endoftext|>'), reference('<|endoftext|>'), 'without a table, the package counts it as text');
    assert.ok(reference('<|endoftext|>') > 1);
  });

  it('keeps its table in the folder given, a later process reads it back, and a damaged one is built again', async () => {
    const dir = join(root, 'tables');
    const sample = readFileSync(join(ROOT, 'README.md'), 'utf8').slice(0, 20_000);
    // Each count in a process of its own, as hooks are: a process loads the table once.
    const counted = () => Number(execFileSync(process.execPath, ['--input-type=module', '-e', COUNT_STDIN, COUNTER_MODULE, dir], { input: sample, encoding: 'utf8' }));
    assert.equal(counted(), reference(sample));
    const [name, ...others] = readdirSync(dir);
    assert.ok(name, 'a table file');
    assert.deepEqual(others, [], 'one file, no partial left');
    assert.match(name, /^cl100k_base-\d+\.\d+\.\d+-t\d+\.bpe$/u);
    const file = join(dir, name);
    const size = statSync(file).size;
    assert.ok(size > 500_000, `${size} bytes`);
    // Read back: a second counter's answer is the same, and the file is untouched.
    const before = statSync(file).mtimeMs;
    assert.equal(counted(), reference(sample));
    assert.equal(statSync(file).mtimeMs, before);
    // Cut short (a disk filled up, say): not taken, built again.
    writeFileSync(file, readFileSync(file).subarray(0, size - 1000));
    assert.equal(counted(), reference(sample));
    assert.equal(statSync(file).size, size);
    // Whole but altered (one byte of a token): not taken either (the file ends with its SHA-256).
    const altered = readFileSync(file);
    altered[size - 5000] = (altered[size - 5000] as number) ^ 0xff;
    writeFileSync(file, altered);
    assert.equal(counted(), reference(sample));
    assert.deepEqual(readFileSync(file).subarray(size - 5000, size - 4999), Buffer.from([(altered[size - 5000] as number) ^ 0xff]));
    // A folder that cannot be made (a file stands in its way): the package counts, nothing is written.
    const blocked = join(root, 'not-a-folder');
    writeFileSync(blocked, '');
    assert.equal(Number(execFileSync(process.execPath, ['--input-type=module', '-e', COUNT_STDIN, COUNTER_MODULE, join(blocked, 'tables')], { input: sample, encoding: 'utf8' })), reference(sample));
  });
});
