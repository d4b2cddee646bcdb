import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore, type SqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { analyse } from '../src/core/lexical.js';
import type { Memory } from '../src/interfaces/memory.js';

/**
 * The SQLite store keeps term counts and ranking fields across searches. On a real file with the real embedder,
 * after every kind of write (a save, a batch, a text update, a forget, a rating, a purge, a transaction rolled
 * back, another process's commit) they must equal what a fresh connection to the file reads.
 */

const BIG = 'github.com/acme/shop';
const SMALL = 'github.com/acme/tools';
const NOW = new Date('2026-11-01T12:00:00.000Z');
const TERMS = [...new Set(analyse('deploy deploys staging database webhook payment retries invoice zebra quokka tuesday thursday'))];

const embedder = createUseEmbedder();
const tokenCounter = createGptTokenCounter();
const root = mkdtempSync(join(tmpdir(), 'cairn-read-caches-'));
const file = join(root, 'caches.db');
let store: SqliteStore;
let engine: Engine;

/** What a new connection to the file counts: nothing cached. */
async function fresh<T>(read: (s: SqliteStore) => Promise<T>): Promise<T> {
  const other = createSqliteStore({ path: file, vectorIndex: false });
  try {
    return await read(other);
  } finally {
    await other.close();
  }
}

const counts = (s: SqliteStore) =>
  Promise.all([s.termDocumentFrequencies(TERMS, BIG), s.termDocumentFrequencies(TERMS, SMALL), s.termDocumentFrequencies(TERMS)]).then((all) =>
    all.map(({ documents, frequencies }) => ({ documents, frequencies: Object.fromEntries([...frequencies].sort()) })),
  );

async function assertCountsFresh(after: string): Promise<void> {
  assert.deepEqual(await counts(store), await fresh(counts), `term counts after ${after}`);
}

before(async () => {
  store = createSqliteStore({ path: file });
  engine = new Engine({ store, embedder, tokenCounter, defaultNamespace: BIG, now: () => NOW, countRecalls: false });
  await engine.saveMany([
    { text: 'Deploys go out on Tuesdays after the stand-up.' },
    { text: 'The staging database is reset every Sunday.' },
    { text: 'Payment webhooks are retried three times.' },
    { text: 'Invoices are rendered by the billing worker.' },
  ]);
  await engine.save({ namespace: SMALL, text: 'The deploy script lives in tools/deploy.sh.' });
});

after(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

describe('SQLite read caches follow every write', () => {
  it('term counts: kept across writes of this connection and updated exactly, dropped for another process', async () => {
    await assertCountsFresh('opening');
    const saved = await engine.save({ text: 'Deploys go out on Thursdays now; the zebra dashboard shows them.' });
    await assertCountsFresh('a save');
    await engine.saveMany([{ text: 'A quokka retries the payment webhook.' }, { namespace: SMALL, text: 'The zebra tool formats invoices.' }]);
    await assertCountsFresh('a batch in two namespaces');
    await engine.update(saved.id, { text: 'Deploys go out on Wednesdays; the staging database follows.' });
    await assertCountsFresh('a text update');
    await engine.forget(saved.id);
    await assertCountsFresh('a forget');
    await engine.rate((await engine.list({ limit: 1 }))[0]?.id as string, 'wrong');
    await assertCountsFresh('a rating');
    const expiring = await engine.save({ text: 'The zebra banner expires tomorrow.', expiresAt: new Date(NOW.getTime() + 86_400_000).toISOString() });
    await assertCountsFresh('a save that expires');
    const later = new Engine({ store, embedder, tokenCounter, defaultNamespace: BIG, now: () => new Date(NOW.getTime() + 2 * 86_400_000) });
    assert.equal(await later.purgeExpired(), 1);
    assert.equal(await store.getMemory(expiring.id), null);
    await assertCountsFresh('a purge');
    const memory: Memory = { ...(await store.getMemory(saved.id) as Memory), id: '01JZZZZZZZZZZZZZZZZZZZZZZZ', dedupeKey: 'rolled-back' };
    await assert.rejects(
      store.transaction(async (tx) => {
        await tx.insertMemory(memory, null, ['zebra', 'quokka', 'axolotl']);
        // Reads on this connection now see the uncommitted row: what they count must not outlive the rollback.
        assert.equal((await store.termDocumentFrequencies(['axolotl'], BIG)).frequencies.get('axolotl'), 1);
        assert.equal((await store.getRankingFields([memory.id])).length, 1);
        throw new Error('rolled back on purpose');
      }),
      /rolled back on purpose/,
    );
    await assertCountsFresh('a transaction rolled back');
    assert.deepEqual(await store.getRankingFields([memory.id]), []);
    assert.deepEqual(await store.termDocumentFrequencies(['axolotl'], BIG), await fresh((s) => s.termDocumentFrequencies(['axolotl'], BIG)));
    const other = createSqliteStore({ path: file, vectorIndex: false });
    try {
      await new Engine({ store: other, embedder, tokenCounter, defaultNamespace: BIG, now: () => NOW }).save({ text: 'Another process notes the zebra deploy on Tuesday.' });
    } finally {
      await other.close();
    }
    await assertCountsFresh("another process's save");
  });

  it('ranking fields: a rating, a forget or another process changes what the next read gives', async () => {
    const ids = (await engine.list({ limit: 50, includeInactive: true })).map((m) => m.id);
    const ranking = async (s: SqliteStore) => (await s.getRankingFields(ids)).sort((a, b) => (a.id < b.id ? -1 : 1));
    assert.deepEqual(await ranking(store), await fresh(ranking));
    await engine.rate(ids[0] as string, 'stale');
    await engine.rate(ids[1] as string, 'useful');
    assert.deepEqual(await ranking(store), await fresh(ranking));
    assert.equal((await store.getRankingFields([ids[0] as string]))[0]?.feedback?.stale, 1);
    const other = createSqliteStore({ path: file, vectorIndex: false });
    try {
      await new Engine({ store: other, embedder, tokenCounter, defaultNamespace: BIG, now: () => NOW }).rate(ids[2] as string, 'wrong');
    } finally {
      await other.close();
    }
    assert.deepEqual(await ranking(store), await fresh(ranking));
    assert.equal((await store.getRankingFields([ids[2] as string]))[0]?.feedback?.wrong, 1);
  });

  it('ranking fields: a search while this connection has a write transaction open sees the same rows as its results', async () => {
    const saved = await engine.save({ text: 'Backups of the quokka database run every night at two.' });
    const query = 'when do backups of the quokka database run';
    const options = { weights: { lexical: 0 } };
    const found = (results: Awaited<ReturnType<Engine['search']>>) => results.find((r) => r.memory.id === saved.id);
    // Warm the cache with the committed fields.
    assert.equal(found(await engine.search(query, options))?.scoreDetails.feedback, undefined);
    assert.equal((await store.getRankingFields([saved.id]))[0]?.feedback, undefined);
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let opened = (): void => {};
    const open = new Promise<void>((resolve) => (opened = resolve));
    const tx = store.transaction(async (t) => {
      const memory = (await t.getMemory(saved.id)) as Memory;
      await t.updateMemory({ ...memory, feedback: { useful: 0, wrong: 3, stale: 0, lastAt: NOW.toISOString() } });
      opened();
      await gate; // like an embedding awaited inside a batch's transaction
      throw new Error('rolled back on purpose');
    });
    await open;
    try {
      // The uncommitted rating is what the whole row shows, so the ranking must use it too: demoted.
      assert.equal((await store.getRankingFields([saved.id]))[0]?.feedback?.wrong, 3);
      const during = found(await engine.search(query, options));
      assert.equal(during?.memory.feedback?.wrong, 3);
      assert.ok(during?.scoreDetails.feedback, 'the wrong ratings the result shows demote it');
    } finally {
      release();
      await assert.rejects(tx, /rolled back on purpose/);
    }
    // After the rollback neither the cache nor a search keeps the uncommitted rating.
    assert.equal((await store.getRankingFields([saved.id]))[0]?.feedback, undefined);
    assert.equal(found(await engine.search(query, options))?.scoreDetails.feedback, undefined);
  });
});
