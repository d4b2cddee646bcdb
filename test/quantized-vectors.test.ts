import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CODE_RMS, QuantizedVectors, quantize } from '../src/adapters/vector-codes/quantized-vectors.js';
import { loadUsearch, type Usearch } from '../src/adapters/vector-codes/usearch.js';
import { cosine, vectorSource } from './fixtures/vector-index-data.js';

const DIMS = 64;

/** A deterministic generator of numbers in [0, 1). */
function uniform(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * Vectors of very different lengths and shapes: dense ones, and peaky ones whose few largest components are
 * about three times the others' size (their codes, scaled to the largest component, would be much shorter).
 */
function mixedVectors(count: number, seed: number): Float32Array[] {
  const r = uniform(seed);
  return Array.from({ length: count }, (_, i) => {
    const v = Float32Array.from({ length: DIMS }, () => r() * 2 - 1);
    // Peaks up to 1.8, about three times the dense components' mean size (0.58): within the codes' range.
    if (i % 3 === 0) for (let j = 0; j < 3; j++) v[Math.floor(r() * DIMS)] = (r() < 0.5 ? -1 : 1) * (1.2 + 0.6 * r());
    const length = 10 ** (r() * 6 - 3);
    return v.map((x) => x * length);
  });
}

const usearch = (): Usearch => {
  const loaded = loadUsearch();
  if ('error' in loaded) throw new Error(loaded.error);
  return loaded.usearch;
};

describe('int8 codes of the vector scans', () => {
  it('every vector, whatever its length and shape, gets codes of one length', () => {
    const want = CODE_RMS * Math.sqrt(DIMS);
    const codes = new Int8Array(DIMS);
    // Gaussian unit vectors (the common case) and the mixed set above.
    const gauss = vectorSource(5);
    for (const v of [...mixedVectors(300, 1), ...Array.from({ length: 100 }, () => gauss().map((x) => x * 3))]) {
      quantize(v, codes, 0);
      let squares = 0;
      for (const c of codes) squares += c * c;
      // Rounding moves the length by a fraction of a code; a clipped component (peaky vectors) by more, still little.
      assert.ok(Math.abs(Math.sqrt(squares) - want) / want < 0.05, `code length ${Math.sqrt(squares).toFixed(1)} against ${want.toFixed(1)}`);
    }
  });

  it('a component past the codes range is clipped to ±127, never wrapped; a zero vector gives zeros', () => {
    const v = new Float32Array(DIMS).fill(0.001);
    v[3] = 5;
    v[7] = -5;
    const codes = new Int8Array(DIMS);
    quantize(v, codes, 0);
    assert.equal(codes[3], 127);
    assert.equal(codes[7], -127);
    assert.ok(codes[0] as number >= 0, 'small components keep their sign');
    quantize(new Float32Array(DIMS), codes, 0);
    assert.deepEqual([...codes], new Array(DIMS).fill(0));
  });

  it('the scan orders rows as their cosine does, across lengths and shapes', () => {
    const u = usearch();
    const rows = mixedVectors(400, 2);
    const index = new QuantizedVectors(DIMS);
    rows.forEach((v, i) => index.set(i + 1, v));
    for (const q of mixedVectors(30, 3)) {
      const exact = rows
        .map((v, i) => ({ rowid: i + 1, c: cosine(q, v) }))
        .sort((a, b) => b.c - a.c)
        .slice(0, 10)
        .map((h) => h.rowid);
      const found = index.nearest(u, q, 20);
      // What a search rescores (at least twice what it keeps) holds the exact ten.
      assert.deepEqual(
        exact.filter((id) => !found.includes(id)),
        [],
      );
      // And the scan's own first ten are nearly the exact ten.
      const first = new Set(found.slice(0, 10));
      assert.ok(exact.filter((id) => first.has(id)).length >= 9);
    }
  });
});
