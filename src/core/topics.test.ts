import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Memory, SearchResult } from '../interfaces/memory.js';
import { analyse } from './lexical.js';
import { inverseDocumentFrequency, preferNewerOnSameTopic, termsNeedingWeights } from './topics.js';

function result(id: string, text: string, createdAt: string, kind: Memory['kind'] = 'note'): SearchResult {
  const memory = { id, text, kind, createdAt, route: null } as unknown as Memory;
  return { memory, score: 0, scoreDetails: { signals: {} as SearchResult['scoreDetails']['signals'], fused: 0, rerank: null, method: 'rrf' } };
}

/** A unit vector at `degrees` from the x axis in the plane: cos(a−b) between two of them. */
function at(degrees: number): Float32Array {
  const r = (degrees * Math.PI) / 180;
  return Float32Array.from([Math.cos(r), Math.sin(r)]);
}

describe('preferNewerOnSameTopic', () => {
  const older = result('A', 'Start the dev server with make dev', '2026-03-01T00:00:00Z');
  const newer = result('B', 'Start the dev server with pnpm dev --turbo', '2026-04-01T00:00:00Z');
  const other = result('C', 'Invoices are immutable once sent', '2026-05-01T00:00:00Z');

  it('moves the newer of two close, overlapping notes above the older', () => {
    const vectors = new Map([['A', at(0)], ['B', at(30)], ['C', at(90)]]); // cos 30° = 0.87
    const out = preferNewerOnSameTopic([older, other, newer], vectors, 10);
    assert.deepEqual(out.map((r) => r.memory.id), ['B', 'A', 'C']);
    assert.equal(out[0]?.scoreDetails.newerThan, 'A');
  });

  it('puts the newest of a three-note chain first when it reads like the middle note only', () => {
    const v1 = result('V1', 'Start the dev server with make dev', '2026-01-01T00:00:00Z');
    const v2 = result('V2', 'Start the dev server with pnpm dev', '2026-02-01T00:00:00Z');
    const v3 = result('V3', 'Start the dev server with pnpm dev --turbo', '2026-03-01T00:00:00Z');
    // v3 is close to v2 (cos 40° = 0.77) but not to v1 (cos 75° = 0.26): one pass lifts v2 over v1 only.
    const vectors = new Map([['V1', at(0)], ['V2', at(35)], ['V3', at(75)]]);
    const out = preferNewerOnSameTopic([v1, v3, v2], vectors, 10);
    assert.deepEqual(out.map((r) => r.memory.id), ['V3', 'V2', 'V1']);
    assert.equal(out[0]?.scoreDetails.newerThan, 'V2');
  });

  it('leaves notes alone when their vectors are far apart', () => {
    const vectors = new Map([['A', at(0)], ['B', at(60)], ['C', at(90)]]); // cos 60° = 0.5
    const out = preferNewerOnSameTopic([older, other, newer], vectors, 10);
    assert.deepEqual(out.map((r) => r.memory.id), ['A', 'C', 'B']);
  });

  it('leaves notes alone when their wording differs, however close the vectors', () => {
    const a = result('A', 'Database column names use snake_case', '2026-03-01T00:00:00Z');
    const b = result('B', 'Database table names are plural', '2026-04-01T00:00:00Z');
    const out = preferNewerOnSameTopic([a, b], new Map([['A', at(0)], ['B', at(10)]]), 10);
    assert.deepEqual(out.map((r) => r.memory.id), ['A', 'B']);
  });

  it('never merges different kinds, and keeps results past the window in place', () => {
    const route = result('B', 'Start the dev server with pnpm dev --turbo', '2026-04-01T00:00:00Z', 'route');
    const vectors = new Map([['A', at(0)], ['B', at(5)]]);
    assert.deepEqual(preferNewerOnSameTopic([older, route], vectors, 10).map((r) => r.memory.id), ['A', 'B']);
    assert.deepEqual(preferNewerOnSameTopic([older, other, newer], vectors, 2).map((r) => r.memory.id), ['A', 'C', 'B']);
  });

  it('weighted by rarity, words most memories share (names, "said") stop making two turns one topic', () => {
    const a = result('A', 'Caroline said, "Thanks, Melanie! Your kind words mean a lot."', '2026-03-01T00:00:00Z');
    const b = result('B', 'Caroline said, "Thanks, Melanie. It means a lot to share this with you."', '2026-04-01T00:00:00Z');
    const vectors = new Map([['A', at(0)], ['B', at(20)]]);
    const shared = analyse(a.memory.text).filter((t) => analyse(b.memory.text).includes(t));
    assert.deepEqual(termsNeedingWeights([a, b], vectors, 10).sort(), [...new Set(shared)].sort());
    assert.deepEqual(termsNeedingWeights([a, b], new Map([['A', at(0)], ['B', at(80)]]), 10), [], 'no close pair, nothing to weigh');
    // Unweighted, the overlap reaches the threshold and the newer turn jumps ahead.
    assert.deepEqual(preferNewerOnSameTopic([a, b], vectors, 10).map((r) => r.memory.id), ['B', 'A']);
    // In a conversation of 3,000 turns where every turn has "said", half name Caroline and a fifth Melanie or thanks.
    const df = new Map([
      ['said', 3000],
      ['carolin', 1500],
      ['melani', 600],
      ['thank', 600],
      ['mean', 200],
      ['lot', 250],
    ]);
    const weight = inverseDocumentFrequency(3000, df);
    assert.ok(weight('kind') > weight('thank') && weight('thank') > weight('said'));
    assert.deepEqual(preferNewerOnSameTopic([a, b], vectors, 10, weight).map((r) => r.memory.id), ['A', 'B']);
  });

  it('in a young store (fewer than 1,000 memories) the weighted overlap stays close to the plain one', () => {
    const vectors = new Map([['A', at(0)], ['B', at(30)]]);
    // Three memories, two of which share start/dev/server: every word looks common in so few.
    const df = new Map([
      ['start', 2],
      ['dev', 2],
      ['server', 2],
      ['make', 1],
      ['pnpm', 1],
      ['turbo', 1],
    ]);
    const out = preferNewerOnSameTopic([older, newer], vectors, 10, inverseDocumentFrequency(3, df));
    assert.deepEqual(out.map((r) => r.memory.id), ['B', 'A']);
  });
});
