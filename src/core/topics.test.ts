import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Memory, SearchResult } from '../interfaces/memory.js';
import { analyse } from './lexical.js';
import { DEFAULT_RECORDED_UPDATE, inverseDocumentFrequency, preferNewerOnSameTopic, termsNeedingWeights } from './topics.js';

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

describe('preferNewerOnSameTopic: one subject per update', () => {
  // Scores and write-time relations as recall sees them (score fusion): the update names two older notes.
  const scored = (r: SearchResult, score: number, likelyReplaces?: string[]): SearchResult => {
    r.score = score;
    if (likelyReplaces) r.memory.likelyReplaces = likelyReplaces;
    return r;
  };
  const schedule = () => scored(result('S', 'Failed renewals retry on days 1, 3, 5 and 7 before the subscription is paused.', '2026-08-01T00:00:00Z'), 0.45);
  const grace14 = () => scored(result('G1', 'Unpaid subscriptions are cancelled after a 14 day grace period.', '2026-06-01T00:00:00Z'), 0.24);
  const grace30 = () => scored(result('G2', 'The grace period for unpaid subscriptions is 30 days now (was 14).', '2026-10-01T00:00:00Z'), 0.29, ['G1', 'S']);

  it('an update that names two older notes is lifted over the one it shares its wording with, not over the other', () => {
    const vectors = new Map([['S', at(-40)], ['G1', at(30)], ['G2', at(0)]]); // S and G1: cos 70° = 0.34, two subjects
    const out = preferNewerOnSameTopic([schedule(), grace14(), grace30()], vectors, 10, () => 1, new Map(), null, DEFAULT_RECORDED_UPDATE);
    assert.deepEqual(out.map((r) => r.memory.id), ['S', 'G2', 'G1']);
    assert.equal(out[1]?.scoreDetails.newerThan, 'G1');
  });

  it('without the note it replaces among the results, the update is lifted over the other note it names', () => {
    const vectors = new Map([['S', at(-40)], ['G2', at(0)]]);
    const out = preferNewerOnSameTopic([schedule(), grace30()], vectors, 10, () => 1, new Map(), null, DEFAULT_RECORDED_UPDATE);
    assert.deepEqual(out.map((r) => r.memory.id), ['G2', 'S']);
  });

  it('two older versions of one chain do not hold the newest back: it goes above both', () => {
    const v1 = scored(result('V1', 'The service runs on Python 3.10.', '2026-01-01T00:00:00Z'), 0.83);
    const v2 = scored(result('V2', 'We upgraded the service to Python 3.11 for the speedups.', '2026-03-01T00:00:00Z'), 0.46, ['V1']);
    // The newest shares more of its wording with v1 than with v2, and names both.
    const v3 = scored(result('V3', 'The service runtime is Python 3.12 since the base image bump.', '2026-05-01T00:00:00Z'), 0.45, ['V2', 'V1']);
    const vectors = new Map([['V1', at(0)], ['V2', at(25)], ['V3', at(20)]]);
    const out = preferNewerOnSameTopic([v1, v2, v3], vectors, 10, () => 1, new Map(), null, DEFAULT_RECORDED_UPDATE);
    assert.deepEqual(out.map((r) => r.memory.id), ['V3', 'V2', 'V1']);
  });
});
