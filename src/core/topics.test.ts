import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Memory, SearchResult } from '../interfaces/memory.js';
import { preferNewerOnSameTopic } from './topics.js';

function result(id: string, text: string, createdAt: string, kind: Memory['kind'] = 'note'): SearchResult {
  const memory = { id, text, kind, createdAt, route: null } as unknown as Memory;
  return { memory, score: 0, scoreDetails: { signals: {} as SearchResult['scoreDetails']['signals'], fused: 0, rerank: null } };
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
});
