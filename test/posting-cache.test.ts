import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSqliteStore, type SqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { queryTerms } from '../src/core/lexical.js';
import type { MemoryInput } from '../src/interfaces/memory.js';
import { QUIET_SEARCHES } from '../src/adapters/sqlite/sqlite-postings.js';

/**
 * BM25 from the posting lists kept in memory (sqlite-postings.ts) against FTS5 scoring every match, on two
 * connections to one real file: the same ids in the same order with scores equal to the last bit, and the same
 * namespace document frequencies, before and after writes of the caching connection (new rows appended to its
 * lists, deletes and re-indexed notes dropping them) and of the other connection (seen through data_version).
 * The store holds 3,000 notes over three namespaces, one of them most of the store (matched without its token):
 * common words in most notes, terms repeated up to three times, copies (ties at every cut), expired and
 * forgotten notes (rows the filter leaves out).
 */

const MAIN = 'acme/shop';
const SMALL = 'acme/docs';
const TINY = 'acme/tiny';
const root = mkdtempSync(join(tmpdir(), 'cairn-postings-'));
const path = join(root, 'store.db');
let plain: SqliteStore;
let cached: SqliteStore;
let small: SqliteStore;
let plainEngine: Engine;
let cachedEngine: Engine;
const engineOf = (store: SqliteStore) => new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: MAIN, ingestFilter: { enabled: false } });

const WORDS = ['service', 'config', 'handler', 'worker', 'queue', 'deploy', 'token', 'cache', 'retry', 'layer'];
const QUERIES = ['service config', 'worker queue retry', 'deploy token cache handler', 'layer', 'service service config', 'widget3 worker', 'cache invalidation of the queue', 'nothing-here-at-all'];

function note(i: number): MemoryInput {
  const words = [0, 1, 2, 3].map((j) => WORDS[(i * (j + 3) + j * j) % WORDS.length] as string);
  const repeat = 1 + (i % 3);
  const text = `${words.join(' ')} ${Array(repeat).fill(`widget${i % 40}`).join(' ')} ${i % 7 === 0 ? words[0] : ''} note ${i % 10 === 9 ? i % 50 : i}`;
  const namespace = i % 10 < 7 ? MAIN : i % 10 < 9 ? SMALL : TINY;
  return { namespace, text, kind: 'fact', ...(i % 17 === 0 ? { expiresAt: '2020-01-01T00:00:00.000Z' } : {}) };
}

async function assertSame(label: string): Promise<number> {
  const now = new Date().toISOString();
  let compared = 0;
  for (const namespace of [MAIN, SMALL, TINY]) {
    for (const q of QUERIES) {
      const terms = queryTerms(q);
      for (const k of [1, 10, 300]) {
        const filter = { namespace, now };
        const want = await plain.lexicalCandidates(terms, k, filter);
        const got = await cached.lexicalCandidates(terms, k, filter);
        assert.deepEqual(got, want, `${label}: ${namespace} "${q}" k=${k}`);
        compared += got.length;
      }
      assert.deepEqual(await cached.termDocumentFrequencies(terms, namespace), await plain.termDocumentFrequencies(terms, namespace), `${label}: counts of "${q}" in ${namespace}`);
    }
  }
  return compared;
}

before(async () => {
  plain = createSqliteStore({ path, vectorIndex: false });
  plainEngine = engineOf(plain);
  const saved = await plainEngine.saveMany(Array.from({ length: 3000 }, (_, i) => note(i)));
  for (const [i, r] of saved.entries()) if (i % 13 === 0) await plainEngine.forget(r.id, { namespace: note(i).namespace });
  cached = createSqliteStore({ path, vectorIndex: false, postingCache: true });
  cachedEngine = engineOf(cached);
  // Lists of at most 300 postings: the common terms are scored by FTS5, the rare ones from the lists.
  small = createSqliteStore({ path, vectorIndex: false, postingCache: { maxPostings: 300 } });
});

after(async () => {
  await Promise.all([plain.close(), cached.close(), small.close()]);
  rmSync(root, { recursive: true, force: true });
});

describe('BM25 from kept posting lists', () => {
  it('ranks as FTS5 does, ids in order and scores to the last bit, and counts as it does', async () => {
    assert.ok((await assertSame('first read')) > 3000);
    // Read again from the kept lists.
    await assertSame('kept lists');
  });

  it('appends the rows its own connection saves, in every namespace', async () => {
    await cachedEngine.saveMany([
      { namespace: MAIN, text: 'service config service config widget3 a note saved through the caching connection', kind: 'fact' },
      { namespace: SMALL, text: 'worker queue retry retry retry', kind: 'fact' },
      { namespace: TINY, text: 'layer layer deploy token', kind: 'fact' },
      ...Array.from({ length: 200 }, (_, i) => note(5000 + i)),
    ]);
    await assertSame('after its own saves');
  });

  it('drops its lists when its own connection deletes or re-indexes notes', async () => {
    const [first] = await cachedEngine.list({ namespace: SMALL, limit: 1 });
    assert.ok(first);
    await cachedEngine.update(first.id, { text: 'cache invalidation rules for the deploy worker' }, { namespace: SMALL });
    await assertSame('after an update of the text');
    assert.ok((await cachedEngine.purgeExpired({ all: true })) > 0);
    await assertSame('after a purge');
  });

  it('reads new lists after a bulk transaction switched its temporary files (which drops temporary tables)', async () => {
    await cached.transaction(async () => undefined, { bulk: true });
    await cachedEngine.save({ namespace: MAIN, text: 'retry queue handler after the bulk transaction', kind: 'fact' });
    await assertSame('after a bulk transaction');
    // Terms no search read before: their lists are read through the temporary table now.
    const terms = queryTerms('bulk transaction');
    const filter = { namespace: MAIN, now: new Date().toISOString() };
    const got = await cached.lexicalCandidates(terms, 10, filter);
    assert.equal(got.length, 1);
    assert.deepEqual(got, await plain.lexicalCandidates(terms, 10, filter));
  });

  it('sees what another connection wrote', async () => {
    await plainEngine.saveMany([
      { namespace: MAIN, text: 'deploy token cache handler handler from the other connection', kind: 'fact' },
      ...Array.from({ length: 50 }, (_, i) => note(7000 + i)),
    ]);
    await assertSame('after another connection saved');
    const [one] = await plainEngine.list({ namespace: MAIN, limit: 1 });
    assert.ok(one);
    await plainEngine.update(one.id, { text: 'layer layer layer' });
    await assertSame('after another connection re-indexed a note');
  });

  it('leaves the searches right after another connection wrote to FTS5, then reads lists again', async () => {
    const terms = queryTerms('service config');
    const filter = { namespace: MAIN, now: new Date().toISOString() };
    for (let i = 0; i <= QUIET_SEARCHES; i++) await cached.lexicalCandidates(terms, 10, filter);
    const before = cached.lexicalPostings();
    await plainEngine.save({ namespace: MAIN, text: 'service config written while the other connection was quiet', kind: 'fact' });
    for (let i = 0; i < QUIET_SEARCHES + 3; i++) assert.deepEqual(await cached.lexicalCandidates(terms, 10, filter), await plain.lexicalCandidates(terms, 10, filter));
    const after = cached.lexicalPostings();
    assert.ok(before && after);
    assert.equal(after.leftToFts5 - before.leftToFts5, QUIET_SEARCHES);
    assert.equal(after.scored - before.scored, 3);
  });

  it('leaves a term with more postings than it may keep to FTS5, with the same answer', async () => {
    const now = new Date().toISOString();
    for (const q of QUERIES) {
      const terms = queryTerms(q);
      for (const namespace of [MAIN, SMALL]) {
        const filter = { namespace, now };
        assert.deepEqual(await small.lexicalCandidates(terms, 50, filter), await plain.lexicalCandidates(terms, 50, filter), `${namespace} "${q}"`);
        assert.deepEqual(await small.termDocumentFrequencies(terms, namespace), await plain.termDocumentFrequencies(terms, namespace));
      }
    }
  });
});
