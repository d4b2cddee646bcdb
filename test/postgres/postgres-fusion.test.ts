/**
 * Server-side hybrid recall on PostgreSQL equals core's fusion: for the same store, query and filter,
 * `fusedRecall` (one SQL statement) returns the same memories in the same order with the same per-signal
 * details as `fuseScores` (or, for rank fusion, `fuse`) run in cairn over the store's own vector and lexical candidates and its
 * per-namespace term statistics. Real server, real analysed terms; vectors built from a seeded generator.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_CALIBRATION, DEFAULT_RRF_WEIGHTS, DEFAULT_WEIGHTS, fts5Idf, fuse, fuseScores, RRF_K } from '../../src/core/fusion.js';
import { analyse, queryTerms } from '../../src/core/lexical.js';
import type { Memory, SearchResult, SignalWeights } from '../../src/interfaces/memory.js';
import type { CandidateFilter, FusedCandidate, Store } from '../../src/interfaces/store.js';
import type { PostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { makeMemory, rankingFieldsOf } from '../contract/store-contract.js';
import { pgSkip, postgresStoreFactory } from '../helpers/postgres.js';

const DIMS = 16;
const NOW = '2026-06-01T00:00:00.000Z';

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function unit(r: () => number): Float32Array {
  const v = Float32Array.from({ length: DIMS }, () => r() * 2 - 1);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

const TOPICS = [
  'PAYMENTS_V2_ENABLED gates the new checkout flow in shop/checkout/tax.py',
  'Prices are stored in cents, never as floating point numbers',
  'Deploys go out on Tuesdays after the release freeze',
  'The invoice export rounds VAT per line, not per invoice',
  'getUserName returns null for deleted accounts',
  'ERR_STOCK_DRIFT_17 means the warehouse count and the ledger disagree',
  'Retry the webhook three times with exponential backoff',
  'The staging database is reset every night at 02:00 UTC',
];

/** Same shape as Engine.search's in-process path: candidates, term statistics, fuseScores. */
async function inCairn(store: Store, vector: Float32Array | null, terms: string[], k: number, filter: CandidateFilter, weights: SignalWeights, method: 'score' | 'rrf') {
  const vec = vector && weights.vector > 0 ? await store.vectorCandidates(vector, k, filter) : [];
  const lex = terms.length > 0 && weights.lexical > 0 ? await store.lexicalCandidates(terms, k, filter) : [];
  const { documents, frequencies } = await (store as PostgresStore).termDocumentFrequencies(terms, filter.namespace);
  const lexicalScale = terms.length > 0 && weights.lexical > 0 ? terms.reduce((s, t) => s + fts5Idf(documents, frequencies.get(t) ?? 0), 0) : 0;
  const ids = [...new Set([...vec.map((h) => h.id), ...lex.map((h) => h.id)])];
  const memories = new Map((await store.getMemories(ids)).map((m) => [m.id, m]));
  const nowMs = Date.parse(filter.now);
  const ranked = {
    memories,
    vector: vec.map((h) => ({ id: h.id, raw: h.similarity })),
    lexical: lex.map((h) => ({ id: h.id, raw: h.score })),
    ageDays: (m: Memory) => (nowMs - Date.parse(m.createdAt)) / 86_400_000,
    weights,
  };
  const results = method === 'rrf' ? fuse({ ...ranked, k: RRF_K }) : fuseScores({ ...ranked, lexicalScale, calibration: DEFAULT_CALIBRATION });
  return { results, bestCosine: vec[0]?.similarity ?? null };
}

function close(a: number | null, b: number | null, what: string): void {
  if (a === null || b === null) return assert.equal(a, b, what);
  assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a)), `${what}: server ${a}, cairn ${b}`);
}

function assertSame(server: FusedCandidate[], local: SearchResult[], label: string, method: 'score' | 'rrf'): void {
  assert.deepEqual(
    server.map((r) => r.fields.id),
    local.map((r) => r.memory.id),
    `${label}: same memories in the same order`,
  );
  server.forEach((s, i) => {
    const l = local[i] as SearchResult;
    assert.deepEqual(s.fields, rankingFieldsOf(l.memory), `${label} #${i}: memory`);
    close(s.score, l.score, `${label} #${i} score`);
    close(s.scoreDetails.fused, l.scoreDetails.fused, `${label} #${i} fused`);
    close(s.scoreDetails.relevance ?? null, l.scoreDetails.relevance ?? null, `${label} #${i} relevance`);
    for (const signal of ['vector', 'lexical', 'recency'] as const) {
      const a = s.scoreDetails.signals[signal];
      const b = l.scoreDetails.signals[signal];
      assert.equal(a.rank, b.rank, `${label} #${i} ${signal} rank`);
      close(a.raw, b.raw, `${label} #${i} ${signal} raw`);
      close(a.contribution, b.contribution, `${label} #${i} ${signal} contribution`);
    }
    assert.equal(s.scoreDetails.method, method);
    assert.equal(l.scoreDetails.method, method);
  });
}

describe('PostgreSQL server-side fusion equals fusion in cairn', { skip: pgSkip }, () => {
  let store: PostgresStore;
  const r = seeded(42);
  const topicVectors = TOPICS.map(() => unit(r));

  before(async () => {
    store = await postgresStoreFactory({ vector: true })();
    // 3 namespaces × 40 memories: paraphrases of the topics (vector near the topic's), some forgotten,
    // superseded or expired, kinds and tags mixed, ages from hours to months.
    const rows: [Memory, Float32Array][] = [];
    for (const ns of ['acme/shop', 'acme/ops', 'other/repo']) {
      for (let i = 0; i < 40; i++) {
        const t = i % TOPICS.length;
        const base = topicVectors[t] as Float32Array;
        const noise = unit(r);
        const v = base.map((x, j) => x + 0.35 * (noise[j] as number));
        const n = Math.hypot(...v);
        const createdAt = new Date(Date.parse(NOW) - (1 + i * 3.7) * 86_400_000 - Math.floor(r() * 3_600_000)).toISOString();
        const m = makeMemory(ns, `${TOPICS[t]} (${ns} note ${i}${i % 5 === 0 ? ', see also the payments runbook' : ''})`, {
          createdAt,
          updatedAt: createdAt,
          kind: i % 4 === 0 ? 'decision' : 'note',
          tags: i % 3 === 0 ? ['billing'] : [],
          forgottenAt: i % 11 === 10 ? NOW : null,
          expiresAt: i % 13 === 12 ? '2026-05-01T00:00:00.000Z' : null,
          // The statement returns what ranking reads: the session, feedback and code where a memory has them.
          metadata: i % 2 === 0 ? { source: 'agent', sessionId: `session-${i % 3}` } : { source: 'cli' },
          ...(i % 7 === 3 ? { feedback: { useful: 1, wrong: i % 2, stale: 0, lastAt: createdAt } } : {}),
        });
        rows.push([m, v.map((x) => x / n)]);
      }
    }
    await store.prepareVectors({ id: 'fusion-test-16', dimensions: DIMS });
    await store.transaction(async (tx) => {
      await tx.setEmbedder({ id: 'fusion-test-16', dimensions: DIMS });
      for (const [m, v] of rows) await tx.insertMemory(m, v, analyse(m.text));
    });
    assert.equal(store.capabilities.serverSideFusion, true, 'pgvector present: the store fuses server-side');
  });
  after(async () => store?.close());

  const cases: { label: string; query: string; topic: number | null; k: number; filter?: Partial<CandidateFilter>; weights?: Partial<SignalWeights> }[] = [
    { label: 'identifier + vector', query: 'where is PAYMENTS_V2_ENABLED read', topic: 0, k: 20 },
    { label: 'paraphrase', query: 'how do we keep money amounts', topic: 1, k: 20 },
    { label: 'words only (no vector)', query: 'deploy release freeze Tuesday', topic: null, k: 10 },
    { label: 'kind and tag filter', query: 'invoice VAT rounding', topic: 3, k: 15, filter: { kinds: ['decision'], tags: ['billing'] } },
    { label: 'inactive included', query: 'webhook retry backoff', topic: 6, k: 30, filter: { includeInactive: true } },
    { label: 'vector only (lexical weight 0)', query: 'stock ledger mismatch', topic: 5, k: 12, weights: { lexical: 0 } },
    { label: 'lexical only (vector weight 0)', query: 'ERR_STOCK_DRIFT_17', topic: 5, k: 12, weights: { vector: 0 } },
    { label: 'no recency', query: 'staging database reset', topic: 7, k: 25, weights: { recency: 0 } },
  ];
  for (const method of ['score', 'rrf'] as const) {
  for (const c of cases) {
    it(`${method}: ${c.label}`, async () => {
      for (const namespace of ['acme/shop', 'other/repo']) {
        const filter: CandidateFilter = { namespace, now: NOW, ...c.filter };
        const weights = { ...(method === 'rrf' ? DEFAULT_RRF_WEIGHTS : DEFAULT_WEIGHTS), ...c.weights };
        const vector = c.topic === null ? null : (topicVectors[c.topic] as Float32Array);
        const terms = queryTerms(c.query);
        const rrf = method === 'rrf' ? { rrf: { k: RRF_K } } : {};
        const server = await store.fusedRecall({ vector, terms, k: c.k, filter, weights, calibration: DEFAULT_CALIBRATION, ...rrf });
        const local = await inCairn(store, vector, terms, c.k, filter, weights, method);
        assert.ok(local.results.length > 0, `${c.label}: the case finds something`);
        assertSame(server.results, local.results, `${c.label} in ${namespace}`, method);
        close(server.bestCosine, local.bestCosine, `${c.label}: best cosine`);
        if (terms.length > 0 && weights.lexical > 0) {
          assert.deepEqual(server.termStatistics, await (store as PostgresStore).termDocumentFrequencies(terms, namespace), `${c.label}: the statement's term statistics`);
        } else assert.equal(server.termStatistics, undefined);
        for (const res of server.results) assert.equal(res.fields.namespace, namespace, 'no result from another namespace');
      }
    });
  }
  }
});
