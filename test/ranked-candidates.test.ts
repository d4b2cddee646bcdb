import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { RANKED_FIELDS, readCandidates, readWhole, sessionIdOf, UNREAD_FIELDS } from '../src/core/ranked-memory.js';
import type { Memory, SearchOptions, SearchResult } from '../src/interfaces/memory.js';
import type { Store } from '../src/interfaces/store.js';

/**
 * Recall reads its candidates for ranking only (core/ranked-memory.ts) and the few it keeps whole. On a real
 * SQLite file with the real embedder, every search must give exactly what reading every candidate whole gives:
 * the same store, seen without `getRankingFields`, is the reference.
 */

const NS = 'github.com/acme/shop';
const NOW = new Date('2026-11-01T12:00:00.000Z');
const day = (n: number) => new Date(NOW.getTime() - n * 86_400_000).toISOString();

const NOTES: { text: string; kind?: 'decision' | 'gotcha' | 'fact' | 'convention'; age: number; sessionId?: string; tags?: string[] }[] = [
  { text: 'Deploys go out on Tuesdays after the 10:00 stand-up.', kind: 'decision', age: 90 },
  { text: 'Deploys go out on Thursdays now, after the 10:00 stand-up.', kind: 'decision', age: 10 },
  { text: 'The checkout service retries payment webhooks three times with backoff.', kind: 'fact', age: 60, tags: ['payments'] },
  { text: 'Payment webhooks are retried five times now, with exponential backoff.', kind: 'fact', age: 5, tags: ['payments'] },
  { text: 'Tax rates come from the Avalara provider, cached for an hour.', kind: 'fact', age: 40 },
  { text: 'Never run the migration script twice: it duplicates the invoice rows.', kind: 'gotcha', age: 30 },
  { text: 'Database column names use snake_case.', kind: 'convention', age: 200 },
  { text: 'Database table names are plural.', kind: 'convention', age: 180 },
  { text: 'We talked about the flaky checkout test; it fails when the clock passes midnight.', age: 3, sessionId: 'sess-1' },
  { text: 'The fix for the midnight test is to freeze time in the fixture.', age: 3, sessionId: 'sess-1' },
  { text: 'The staging database is reset every Sunday night.', kind: 'fact', age: 20, sessionId: 'sess-2' },
  { text: 'Ask Priya before changing the staging reset schedule.', age: 20, sessionId: 'sess-2' },
  { text: 'Invoices are rendered as PDF by the worker in workers/billing/render.ts.', kind: 'fact', age: 15 },
  { text: 'Rounding of tax amounts happens per line, not per invoice.', kind: 'decision', age: 25 },
  { text: 'The payment provider sandbox rejects amounts above 10,000 EUR.', kind: 'gotcha', age: 12, tags: ['payments'] },
  { text: 'Feature flag PAYMENTS_V2_ENABLED switches the new checkout.', kind: 'fact', age: 8 },
];

const QUERIES = [
  'when do deploys go out',
  'payment webhook retries',
  'where do tax rates come from',
  'flaky checkout test midnight',
  'staging database reset',
  'invoice rounding',
  'database naming convention',
  'PAYMENTS_V2_ENABLED',
  'something nobody wrote about at all',
];

const OPTIONS: SearchOptions[] = [
  {},
  { limit: 3 },
  { limit: 40 },
  { limit: 50 },
  { includeInactive: true, limit: 20 },
  { kinds: ['fact', 'gotcha'] },
  { tags: ['payments'] },
  { fusion: 'rrf' },
  { weights: { recency: 0 } },
  { weights: { vector: 0 } },
];

const embedder = createUseEmbedder();
const tokenCounter = createGptTokenCounter();
const root = mkdtempSync(join(tmpdir(), 'cairn-ranked-'));
let store: Store;
/** The same store, with no way to read candidates for ranking only: recall reads them whole. */
let whole: Store;
let ranked: Engine;
let reference: Engine;
const ids: string[] = [];

before(async () => {
  store = createSqliteStore({ path: join(root, 'ranked.db') });
  whole = new Proxy(store, { get: (target, key, receiver) => (key === 'getRankingFields' ? undefined : Reflect.get(target, key, receiver)) });
  ranked = new Engine({ store, embedder, tokenCounter, defaultNamespace: NS, now: () => NOW, countRecalls: false });
  reference = new Engine({ store: whole, embedder, tokenCounter, defaultNamespace: NS, now: () => NOW, countRecalls: false });
  for (const n of NOTES) {
    const metadata = { source: 'test', ...(n.sessionId ? { sessionId: n.sessionId } : {}) };
    const saved = await ranked.save({ text: n.text, kind: n.kind ?? 'note', tags: n.tags ?? [], createdAt: day(n.age), metadata });
    ids.push(saved.id);
  }
  // Enough notes sharing the queries' words that many candidates lie beyond the windows read whole, some in a
  // session, some doubted: their ranking fields alone must rank them as their whole rows would.
  const subjects = ['deploy', 'payment webhook', 'tax rate', 'checkout test', 'staging database', 'invoice', 'database table', 'feature flag'];
  const details = ['is owned by the platform team', 'was discussed in the retro', 'needs a runbook entry', 'broke once in March', 'is documented in the wiki', 'has an alert in Grafana', 'changed with the last release', 'is reviewed every quarter', 'came up during onboarding', 'waits for the security review'];
  const fillers = subjects.flatMap((subject, i) =>
    details.map((detail, j) => ({
      text: `The ${subject} ${detail} (ticket OPS-${100 + i * 10 + j}).`,
      createdAt: day(30 + i * 10 + j),
      metadata: { source: 'test', ...(j % 3 === 0 ? { sessionId: `fill-${j % 4}` } : {}) },
    })),
  );
  const filled = await ranked.saveMany(fillers);
  for (const r of filled.filter((_, i) => i % 9 === 4)) await ranked.rate(r.id, 'wrong');
  // Metadata whose text holds the word sessionId without the key, feedback that demotes, a forgotten note.
  ids.push((await ranked.save({ text: 'Tax exemptions are stored per customer.', createdAt: day(2), metadata: { source: 'test', externalId: 'sessionId' } })).id);
  await ranked.rate(ids[4] as string, 'wrong');
  await ranked.rate(ids[4] as string, 'stale');
  await ranked.forget(ids[6] as string);
});

after(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

describe('recall reads candidates for ranking only', () => {
  it('every search (and context pack) gives the results, scores and explanations of reading every candidate whole', async () => {
    let compared = 0;
    for (const q of QUERIES) {
      for (const options of OPTIONS) {
        const got = await ranked.search(q, options);
        const want = await reference.search(q, options);
        assert.deepStrictEqual(got, want, `${q} ${JSON.stringify(options)}`);
        compared += got.length;
      }
    }
    assert.ok(compared > 100, `searches returned ${compared} results in all`);
    for (const q of QUERIES) assert.deepStrictEqual(await ranked.context(q), await reference.context(q), `context of ${q}`);
  });

  it('returned memories are whole, as getMemory reads them', async () => {
    for (const q of QUERIES.slice(0, 4)) {
      for (const options of [{}, { weights: { recency: 0 } }, { limit: 50 }, { fusion: 'rrf', weights: { recency: 0 } }, { weights: { vector: 0, recency: 0 } }] as SearchOptions[]) {
        const results: SearchResult[] = await ranked.search(q, options);
        assert.ok(results.length > 0, q);
        for (const r of results) assert.deepStrictEqual(r.memory, await store.getMemory(r.memory.id));
      }
    }
  });

  it('the session, feedback and time of a candidate are read for ranking; other fields throw until it is read whole', async () => {
    const candidates = await readCandidates(store, [ids[8] as string, ids[4] as string, 'no-such-id']);
    assert.equal(candidates.size, 2);
    const session = candidates.get(ids[8] as string);
    const doubted = candidates.get(ids[4] as string);
    assert.ok(session && doubted);
    assert.equal(session.createdAt, day(3));
    assert.equal(session.namespace, NS);
    assert.deepEqual(doubted.feedback, (await store.getMemory(ids[4] as string))?.feedback);
    assert.equal(session.feedback, undefined);
    assert.throws(() => session.text, /before reading it whole/);
    assert.throws(() => session.metadata, /before reading it whole/);
    assert.throws(() => doubted.kind, /before reading it whole/);
    // Every field a whole memory has and ranking does not read throws: the list is Memory's own fields.
    const wholeDoubted = (await store.getMemory(ids[4] as string)) as Memory;
    const full = { ...wholeDoubted, code: null, likelyReplaces: null, feedback: null }; // the optional fields too
    const ranking = new Set<string>(RANKED_FIELDS);
    assert.deepEqual([...UNREAD_FIELDS].sort(), Object.keys(full).filter((k) => !ranking.has(k)).sort());
    // What the store's RankingFields carry (but the session, metadata's) is what ranking reads, each as the whole memory has it.
    const [fields] = (await store.getRankingFields?.([wholeDoubted.id])) ?? [];
    for (const key of Object.keys(fields ?? {})) assert.ok(key === 'sessionId' || ranking.has(key), key);
    for (const field of RANKED_FIELDS) assert.deepEqual((doubted as unknown as Record<string, unknown>)[field], (wholeDoubted as unknown as Record<string, unknown>)[field], field);
    for (const field of UNREAD_FIELDS) assert.throws(() => (doubted as unknown as Record<string, unknown>)[field], new RegExp(`read ${field} of candidate`, 'u'), field);
    assert.equal(sessionIdOf(session), 'sess-1');
  });

  it('readWhole reads the first n in full and drops one removed meanwhile by another process', async () => {
    const expiring = (await ranked.save({ text: 'The holiday banner expires after New Year.', createdAt: day(1), expiresAt: new Date(NOW.getTime() + 86_400_000).toISOString() })).id;
    const order = [expiring, ids[0] as string, ids[1] as string, ids[2] as string];
    const candidates = await readCandidates(store, order);
    const results = order.map((id, i) => ({ memory: candidates.get(id), score: 1 - i / 10 }) as SearchResult);
    // Another connection to the file purges the expired note between reading for ranking and reading whole.
    const other = createSqliteStore({ path: join(root, 'ranked.db') });
    try {
      const later = new Engine({ store: other, embedder, tokenCounter, defaultNamespace: NS, now: () => new Date(NOW.getTime() + 2 * 86_400_000) });
      assert.equal(await later.purgeExpired(), 1);
    } finally {
      await other.close();
    }
    const read = await readWhole(store, results, 2);
    assert.deepEqual(read.map((r) => r.memory.id), order.slice(1));
    assert.deepStrictEqual(read[0]?.memory, await store.getMemory(ids[0] as string));
    assert.deepStrictEqual(read[1]?.memory, await store.getMemory(ids[1] as string));
    assert.throws(() => read[2]?.memory.text, /before reading it whole/);
  });
});
