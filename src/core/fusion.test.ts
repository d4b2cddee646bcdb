import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCairnError } from '../interfaces/errors.js';
import { SIGNALS, type Memory, type SignalWeights } from '../interfaces/memory.js';
import { DEFAULT_WEIGHTS, fuse, resolveWeights, RRF_K, type FuseInput } from './fusion.js';

const NOW = Date.parse('2026-06-01T00:00:00.000Z');
const DAY = 86_400_000;

function memory(id: string, daysAgo: number): Memory {
  const createdAt = new Date(NOW - daysAgo * DAY).toISOString();
  return {
    id,
    namespace: 'acme/shop',
    text: `memory ${id}`,
    kind: 'note',
    importance: 5,
    tags: [],
    taskId: null,
    metadata: {},
    route: null,
    createdAt,
    updatedAt: createdAt,
    expiresAt: null,
    supersedes: null,
    supersededBy: null,
    forgottenAt: null,
    forgetReason: null,
    dedupeKey: id,
  };
}

function input(memories: Memory[], over: Partial<FuseInput>): FuseInput {
  return {
    memories: new Map(memories.map((m) => [m.id, m])),
    vector: [],
    lexical: [],
    ageDays: (m) => (NOW - Date.parse(m.createdAt)) / DAY,
    weights: { vector: 1, lexical: 1, recency: 1 },
    k: RRF_K,
    ...over,
  };
}

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-12, `${what}: ${a} ≠ ${b}`);

describe('fuse', () => {
  it('RRF_K is 60', () => {
    assert.equal(RRF_K, 60);
  });

  it('scores each memory Σ weight / (k + rank) over the signals that found it', () => {
    const a = memory('A', 30);
    const b = memory('B', 20);
    const c = memory('C', 10);
    const d = memory('D', 1); // in the map but found by no signal
    const weights: SignalWeights = { vector: 0.7, lexical: 1.3, recency: 0.2 };
    const results = fuse(
      input([a, b, c, d], {
        vector: [
          { id: 'A', raw: 0.9 },
          { id: 'X', raw: 0.8 }, // vanished between candidate query and fetch: takes no rank
          { id: 'B', raw: 0.7 },
        ],
        lexical: [
          { id: 'B', raw: 5 },
          { id: 'C', raw: 3 },
        ],
        weights,
      }),
    );
    // Recency ranks the union of matches newest first: C, B, A.
    const expected: Record<string, number> = {
      A: 0.7 / 61 + 0.2 / 63,
      B: 0.7 / 62 + 1.3 / 61 + 0.2 / 62,
      C: 1.3 / 62 + 0.2 / 61,
    };
    assert.deepEqual(
      results.map((r) => r.memory.id),
      ['B', 'C', 'A'],
    );
    for (const r of results) {
      close(r.score, expected[r.memory.id] as number, `score of ${r.memory.id}`);
      assert.equal(r.scoreDetails.fused, r.score);
      const sum = SIGNALS.reduce((s, sig) => s + r.scoreDetails.signals[sig].contribution, 0);
      close(sum, r.score, `sum of contributions of ${r.memory.id}`);
      assert.equal(r.scoreDetails.rerank, null);
    }
    const byId = new Map(results.map((r) => [r.memory.id, r.scoreDetails.signals]));
    assert.deepEqual(byId.get('A')?.vector, { rank: 1, contribution: 0.7 / 61, raw: 0.9 });
    assert.deepEqual(byId.get('A')?.lexical, { rank: null, contribution: 0, raw: null });
    assert.deepEqual(byId.get('A')?.recency, { rank: 3, contribution: 0.2 / 63, raw: 30 });
    assert.deepEqual(byId.get('B')?.vector, { rank: 2, contribution: 0.7 / 62, raw: 0.7 });
    assert.deepEqual(byId.get('B')?.lexical, { rank: 1, contribution: 1.3 / 61, raw: 5 });
    assert.deepEqual(byId.get('C')?.vector, { rank: null, contribution: 0, raw: null });
    assert.deepEqual(byId.get('C')?.lexical, { rank: 2, contribution: 1.3 / 62, raw: 3 });
    assert.deepEqual(byId.get('C')?.recency, { rank: 1, contribution: 0.2 / 61, raw: 10 });
    assert.ok(!byId.has('D'), 'recency never brings in a memory no other signal found');
    assert.ok(!byId.has('X'));
  });

  it('uses the given k', () => {
    const [r] = fuse(input([memory('A', 1)], { lexical: [{ id: 'A', raw: 1 }], weights: { vector: 1, lexical: 2, recency: 0 }, k: 10 }));
    close(r?.score ?? NaN, 2 / 11, 'score');
  });

  it('a recency weight of 0 leaves recency out of the details', () => {
    const results = fuse(input([memory('A', 3), memory('B', 1)], { vector: [{ id: 'A', raw: 0.5 }, { id: 'B', raw: 0.4 }], weights: { vector: 1, lexical: 1, recency: 0 } }));
    assert.deepEqual(results.map((r) => r.memory.id), ['A', 'B']);
    for (const r of results) assert.deepEqual(r.scoreDetails.signals.recency, { rank: null, contribution: 0, raw: null });
  });

  it('equal values in a signal share a rank (1, 1, 3), so list order decides nothing', () => {
    const weights = { vector: 0.5, lexical: 1, recency: 0 };
    const results = fuse(
      input([memory('A', 40), memory('B', 10), memory('C', 5)], {
        lexical: [
          { id: 'A', raw: 3.25 },
          { id: 'B', raw: 3.25 },
          { id: 'C', raw: 1 },
        ],
        weights,
      }),
    );
    const lexical = new Map(results.map((r) => [r.memory.id, r.scoreDetails.signals.lexical]));
    assert.deepEqual([lexical.get('A')?.rank, lexical.get('B')?.rank, lexical.get('C')?.rank], [1, 1, 3]);
    close(lexical.get('A')?.contribution ?? NaN, 1 / 61, 'A');
    close(lexical.get('B')?.contribution ?? NaN, 1 / 61, 'B');
    close(lexical.get('C')?.contribution ?? NaN, 1 / 63, 'C');
    // Equal scores: the newer memory first, whatever order the backend returned them in.
    assert.deepEqual(results.map((r) => r.memory.id), ['B', 'A', 'C']);
  });

  it('a tie in one signal leaves the decision to the others', () => {
    const older = memory('OLD', 40);
    const newer = memory('NEW', 10);
    const results = fuse(
      input([older, newer], {
        lexical: [
          { id: 'OLD', raw: 3.25 },
          { id: 'NEW', raw: 3.25 },
        ],
        vector: [
          { id: 'NEW', raw: 0.59 },
          { id: 'OLD', raw: 0.57 },
        ],
        weights: { vector: 0.5, lexical: 1, recency: 0 },
      }),
    );
    assert.deepEqual(results.map((r) => r.memory.id), ['NEW', 'OLD']);
  });

  it('recency reorders matches of equal relevance: the newer one wins', () => {
    const old = memory('OLD', 40);
    const fresh = memory('NEW', 2);
    // Each is first in one signal with equal weights; only recency separates them.
    const results = fuse(input([old, fresh], { vector: [{ id: 'OLD', raw: 0.8 }], lexical: [{ id: 'NEW', raw: 4 }], weights: { vector: 1, lexical: 1, recency: 0.1 } }));
    assert.deepEqual(results.map((r) => r.memory.id), ['NEW', 'OLD']);
    close((results[0]?.score ?? 0) - (results[1]?.score ?? 0), 0.1 / 61 - 0.1 / 62, 'margin');
  });

  it('breaks exact ties toward the newer memory', () => {
    const results = fuse(
      input([memory('OLD', 40), memory('NEW', 2)], { vector: [{ id: 'OLD', raw: 0.8 }], lexical: [{ id: 'NEW', raw: 4 }], weights: { vector: 1, lexical: 1, recency: 0 } }),
    );
    assert.equal(results[0]?.score, results[1]?.score);
    assert.deepEqual(results.map((r) => r.memory.id), ['NEW', 'OLD']);
  });

  it('ages are never negative (a creation time slightly in the future counts as now)', () => {
    const [r] = fuse(input([memory('F', -1)], { lexical: [{ id: 'F', raw: 1 }] }));
    assert.equal(r?.scoreDetails.signals.recency.raw, 0);
  });

  it('no candidates, no results', () => {
    assert.deepEqual(fuse(input([memory('A', 1)], {})), []);
  });
});

describe('resolveWeights', () => {
  const base: SignalWeights = { vector: 1, lexical: 2, recency: 3 };

  it('overrides only the given signals and never changes the base', () => {
    assert.deepEqual(resolveWeights(base, { lexical: 0.5 }), { vector: 1, lexical: 0.5, recency: 3 });
    assert.deepEqual(resolveWeights(base, { vector: 0, recency: 100 }), { vector: 0, lexical: 2, recency: 100 });
    assert.deepEqual(resolveWeights(base, { vector: undefined }), base);
    assert.deepEqual(resolveWeights(base, undefined), base);
    assert.notEqual(resolveWeights(base, undefined), base, 'a copy');
    assert.deepEqual(base, { vector: 1, lexical: 2, recency: 3 });
  });

  for (const [label, override, field] of [
    ['an unknown signal', { semantic: 1 }, 'weights.semantic'],
    ['a negative weight', { vector: -0.1 }, 'weights.vector'],
    ['a weight over 100', { lexical: 100.5 }, 'weights.lexical'],
    ['NaN', { recency: Number.NaN }, 'weights.recency'],
    ['Infinity', { vector: Number.POSITIVE_INFINITY }, 'weights.vector'],
    ['a string', { vector: '1' }, 'weights.vector'],
    ['null', { lexical: null }, 'weights.lexical'],
  ] as const) {
    it(`refuses ${label} with INVALID_INPUT naming the field`, () => {
      assert.throws(
        () => resolveWeights(base, override as unknown as Partial<SignalWeights>),
        (err: unknown) => isCairnError(err, 'INVALID_INPUT') && err.field === field && err.message.startsWith(field),
      );
    });
  }

  it('the default weights are valid weights for every signal', () => {
    assert.deepEqual(Object.keys(DEFAULT_WEIGHTS).sort(), [...SIGNALS].sort());
    assert.deepEqual(resolveWeights(DEFAULT_WEIGHTS, { ...DEFAULT_WEIGHTS }), DEFAULT_WEIGHTS);
    assert.ok(SIGNALS.some((s) => DEFAULT_WEIGHTS[s] > 0));
  });
});
