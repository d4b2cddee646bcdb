import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The analyser remembers tokens' terms. What it remembers must not keep the analysed text alive: a token cut
 * out of a text can share the text's memory, so a note of 30 KB with one new identifier would stay in the
 * heap (erased text too) for as long as its token is remembered. Measured in a fresh process with the
 * collector exposed: many large texts, each with identifiers and long words of its own, analysed and dropped.
 */

const lexical = fileURLToPath(new URL('../src/core/lexical.js', import.meta.url));
const TEXTS = 400;
const TEXT_BYTES = 30_000;

const child = `
const { analyse, plainTerms } = await import(${JSON.stringify(lexical)});
const letters = (i) => [0, 1, 2].map((k) => String.fromCharCode(97 + (Math.floor(i / 26 ** k) % 26))).join('');
const filler = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(${TEXT_BYTES} / 27));
const note = (i) => 'Call handlePaymentRetry' + i + 'Now in src/pay' + i + '/retry.ts after the reconciliation' + letters(i) +
  ' step; see services/billing/reconciliationworker' + letters(i) + '/internal/settlementqueue' + letters(i) + '/handlers.ts. ' + filler;
// Warm up: the analyser's own code and regular expressions are not what is measured.
for (let i = 0; i < 20; i++) analyse(note(100000 + i));
globalThis.gc(); globalThis.gc();
const start = process.memoryUsage().heapUsed;
for (let i = 0; i < ${TEXTS}; i++) {
  // Each text built anew, as a note read from the store is.
  const text = note(i).slice(0);
  if (analyse(text).length === 0 || plainTerms(text).length === 0) throw new Error('no terms');
}
globalThis.gc(); globalThis.gc();
process.stdout.write(JSON.stringify({ grown: process.memoryUsage().heapUsed - start }));
`;

describe('lexical token memo', () => {
  it('keeps no analysed text alive once the text is dropped', () => {
    const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', child], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const { grown } = JSON.parse(r.stdout) as { grown: number };
    const texts = TEXTS * TEXT_BYTES;
    // What the memo may keep: a few short terms per text (well under 1 KB; with the folder and spelling terms it
    // reached 1.2 MB for the 400 texts on a loaded machine); kept texts would be 12 MB together, so a quarter of
    // that still tells the two apart.
    assert.ok(grown < texts / 4, `heap grew by ${(grown / 1e6).toFixed(1)} MB after ${TEXTS} texts of ${TEXT_BYTES / 1000} KB were dropped (${(texts / 1e6).toFixed(1)} MB in all)`);
  });
});
