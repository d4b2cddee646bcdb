import * as assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { ulid } from '../../src/core/ids.js';
import { analyse } from '../../src/core/lexical.js';
import { readCandidates, sessionIdOf } from '../../src/core/ranked-memory.js';
import { dedupeKey } from '../../src/core/text.js';
import { CairnError, isCairnError, type ErrorCode } from '../../src/interfaces/errors.js';
import type { Memory } from '../../src/interfaces/memory.js';
import type { CandidateFilter, EmbedderInfo, RankingFields, Store } from '../../src/interfaces/store.js';
import { describeLogCases } from './store-contract-log.js';

/**
 * The contract every Store backend must pass. It talks to the store only through `Store` and `StoreTx`,
 * so any backend (the embedded SQLite store, PostgreSQL later) runs it unchanged.
 *
 * Vectors here are hand-built unit vectors in a small space, so the expected nearest-neighbour order
 * follows from geometry (cosine of known angles) rather than from a model.
 */

export interface StoreContractOptions {
  /** Cases this backend does not run, by test name, each with its reason. */
  skip?: Partial<Record<string, string>>;
  /**
   * The backend's committed schema objects (names and definitions, sorted), read on a connection of its own:
   * the DDL case compares it around transactions to prove none of them changed the schema.
   */
  catalog?: (store: Store) => Promise<string[]>;
}

/** Builds a fresh, empty store. The suite closes it at the end of each test. */
export type MakeStore = () => Promise<Store>;

const DIMS = 8;
const EMBEDDER: EmbedderInfo = { id: 'contract-axis-8', dimensions: DIMS };
/** A fixed "now" for candidate and list filters; every memory below is created before it. */
const NOW = '2026-06-01T00:00:00.000Z';
const HOUR = 3_600_000;

let clockMs = Date.parse('2026-01-01T00:00:00.000Z');

/** A complete, live memory of kind note; creation times advance one second per call so ids sort by creation. */
/** What ranking reads of a memory (RankingFields), as a store returns it. */
export function rankingFieldsOf(m: Memory): RankingFields {
  return {
    id: m.id,
    namespace: m.namespace,
    createdAt: m.createdAt,
    ...(m.metadata.sessionId !== undefined ? { sessionId: m.metadata.sessionId } : {}),
    ...(m.feedback ? { feedback: m.feedback } : {}),
    ...(m.code ? { code: m.code } : {}),
  };
}

export function makeMemory(namespace: string, text: string, over: Partial<Memory> = {}): Memory {
  clockMs += 1000;
  const createdAt = over.createdAt ?? new Date(clockMs).toISOString();
  return {
    id: ulid(Date.parse(createdAt)),
    namespace,
    text,
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
    dedupeKey: dedupeKey(namespace, text),
    ...over,
  };
}

/** Unit vector in the plane of the first two axes at `theta` radians from axis 0: cosine to axis 0 is cos(theta). */
function angle(theta: number, dims = DIMS): Float32Array {
  const v = new Float32Array(dims);
  v[0] = Math.cos(theta);
  v[1] = Math.sin(theta);
  return v;
}

/** Unit vector along axis `i`. */
function axis(i: number, dims = DIMS): Float32Array {
  const v = new Float32Array(dims);
  v[i] = 1;
  return v;
}

const QUERY = axis(0);

function filter(namespace: string, over: Partial<CandidateFilter> = {}): CandidateFilter {
  return { namespace, now: NOW, ...over };
}

async function insertAll(store: Store, rows: [Memory, Float32Array | null][], embedder: EmbedderInfo | null = EMBEDDER): Promise<void> {
  if (embedder && rows.some(([, v]) => v !== null)) await store.prepareVectors(embedder);
  await store.transaction(async (tx) => {
    if (embedder && rows.some(([, v]) => v !== null)) await tx.setEmbedder(embedder);
    for (const [m, v] of rows) await tx.insertMemory(m, v, analyse(m.text));
  });
}

async function rejectsWith(promise: Promise<unknown>, code: ErrorCode): Promise<CairnError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught !== undefined, `expected a CairnError ${code}, but the call succeeded`);
  assert.ok(isCairnError(caught), `expected a CairnError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, `expected ${code}, got ${caught.code}: ${caught.message}`);
  return caught;
}

async function countAll(store: Store, namespace?: string): Promise<number> {
  let n = 0;
  for await (const page of store.iterateMemories(namespace, 100)) n += page.length;
  return n;
}

function ids(hits: { id: string }[]): string[] {
  return hits.map((h) => h.id);
}

function assertDescending(values: number[], what: string): void {
  for (let i = 1; i < values.length; i++) {
    assert.ok((values[i - 1] as number) >= (values[i] as number), `${what} not best first at ${i}: ${values.join(', ')}`);
  }
}

export function describeStoreContract(name: string, makeStore: MakeStore, options: StoreContractOptions = {}): void {
  const skip = options.skip ?? {};
  const titles = new Set<string>();

  /** One contract case on a fresh store, closed afterwards whatever happens. */
  const test = (title: string, fn: (store: Store, t: TestContext) => Promise<void>) => {
    titles.add(title);
    const reason = skip[title];
    it(title, reason ? { skip: reason } : {}, async (t) => {
      const store = await makeStore();
      try {
        await fn(store, t);
      } finally {
        await store.close();
      }
    });
  };
  const needsVectors = (store: Store, t: TestContext): boolean => {
    if (store.capabilities.vectorSearch) return true;
    t.skip('store has no vectorSearch capability');
    return false;
  };
  const needsFullText = (store: Store, t: TestContext): boolean => {
    if (store.capabilities.fullText) return true;
    t.skip('store has no fullText capability');
    return false;
  };

  describe(`Store contract: ${name}`, () => {
    describe('memories', () => {
      test('insert then get returns every field unchanged', async (store) => {
        const full = makeMemory('acme/shop', 'Use "pnpm" — not npm — for café/ünïcode installs 🚀\nsecond line', {
          kind: 'route',
          importance: 9,
          tags: ['build', 'tooling'],
          taskId: 'JIRA-42',
          metadata: { source: 'cli', trigger: 'manual', sessionId: 's-1', origin: 'user', agent: 'claude', externalId: 'ext-9', speaker: 'ana' },
          route: { title: 'Build scripts', description: 'Where the build lives', paths: ['scripts/build.ts', 'package.json'] },
          expiresAt: '2027-01-01T00:00:00.000Z',
          supersedes: ulid(),
          supersededBy: ulid(),
          forgottenAt: '2026-02-01T00:00:00.000Z',
          forgetReason: 'obsolete',
          updatedAt: '2026-03-01T12:34:56.789Z',
        });
        const bare = makeMemory('acme/shop', 'A bare note');
        await insertAll(store, [
          [full, null],
          [bare, null],
        ]);
        assert.deepEqual(await store.getMemory(full.id), full);
        assert.deepEqual(await store.getMemory(bare.id), bare);
        await store.transaction(async (tx) => {
          assert.deepEqual(await tx.getMemory(full.id), full);
        });
        const both = await store.getMemories([bare.id, full.id, ulid()]);
        assert.deepEqual(
          both.sort((a, b) => a.id.localeCompare(b.id)),
          [full, bare].sort((a, b) => a.id.localeCompare(b.id)),
        );
      });

      test('ranking fields equal the whole memory\'s, unknown ids left out', async (store) => {
        const inSession = makeMemory('acme/shop', 'Notes from the release retro', {
          metadata: { source: 'cli', sessionId: 's-9' },
          feedback: { useful: 1, wrong: 2, stale: 0, lastAt: '2026-03-01T00:00:00.000Z' },
          code: { commit: 'abc123', anchors: [], branch: 'feature/x' },
        });
        const plain = makeMemory('acme/other', 'A plain note');
        await insertAll(store, [
          [inSession, null],
          [plain, null],
        ]);
        const wanted = [inSession.id, plain.id, ulid()];
        const expected = rankingFieldsOf;
        if (store.getRankingFields) {
          const fields = (await store.getRankingFields(wanted)).sort((a, b) => a.id.localeCompare(b.id));
          assert.deepEqual(fields.map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined))), [inSession, plain].map(expected).sort((a, b) => a.id.localeCompare(b.id)));
          assert.deepEqual(await store.getRankingFields([]), []);
        }
        // What recall reads for its candidates, with the method or (without it) whole.
        const candidates = await readCandidates(store, wanted);
        assert.deepEqual([...candidates.keys()].sort(), [inSession.id, plain.id].sort());
        for (const m of [inSession, plain]) {
          const c = candidates.get(m.id) as Memory;
          assert.deepEqual({ id: c.id, namespace: c.namespace, createdAt: c.createdAt, feedback: c.feedback, code: c.code }, { id: m.id, namespace: m.namespace, createdAt: m.createdAt, feedback: m.feedback, code: m.code });
          assert.equal(sessionIdOf(c), m.metadata.sessionId);
        }
      });

      test('lookups that find nothing return null or an empty list', async (store) => {
        assert.equal(await store.getMemory(ulid()), null);
        assert.deepEqual(await store.getMemories([]), []);
        assert.deepEqual(await store.getMemories([ulid(), ulid()]), []);
        assert.equal(await store.getSetting('acme/shop', 'weights'), null);
        assert.deepEqual(await store.events('acme/shop'), []);
        assert.deepEqual(await store.listExpired(NOW), []);
        assert.deepEqual(await store.listMemories({ namespace: 'acme/shop', limit: 10, now: NOW }), []);
        assert.equal(await countAll(store), 0);
        await store.transaction(async (tx) => {
          assert.equal(await tx.getMemory(ulid()), null);
          assert.equal(await tx.findLiveByDedupeKey('acme/shop', dedupeKey('acme/shop', 'nothing')), null);
        });
      });

      test('getMemories returns every stored id of a long list', async (store) => {
        const rows = Array.from({ length: 620 }, (_, i) => [makeMemory('acme/shop', `bulk note ${i}`), null] as [Memory, null]);
        await insertAll(store, rows);
        const wanted = rows.map(([m]) => m.id);
        const got = await store.getMemories([...wanted, ulid()]);
        assert.equal(got.length, 620);
        assert.deepEqual(new Set(got.map((m) => m.id)), new Set(wanted));
      });

      test('findLiveByDedupeKey finds only live memories of its namespace', async (store) => {
        const live = makeMemory('acme/shop', 'Prices are stored in cents');
        const forgotten = makeMemory('acme/shop', 'Old forgotten rule', { forgottenAt: '2026-02-01T00:00:00.000Z' });
        const superseded = makeMemory('acme/shop', 'Old superseded rule', { supersededBy: ulid() });
        const expired = makeMemory('acme/shop', 'Expired but not forgotten', { expiresAt: '2026-01-02T00:00:00.000Z' });
        await insertAll(store, [
          [live, null],
          [forgotten, null],
          [superseded, null],
          [expired, null],
        ]);
        await store.transaction(async (tx) => {
          assert.deepEqual(await tx.findLiveByDedupeKey('acme/shop', live.dedupeKey), live);
          assert.equal(await tx.findLiveByDedupeKey('acme/shop', forgotten.dedupeKey), null);
          assert.equal(await tx.findLiveByDedupeKey('acme/shop', superseded.dedupeKey), null);
          // "Live" means not forgotten and not superseded; expiry is a recall concern, not a dedupe one.
          assert.deepEqual(await tx.findLiveByDedupeKey('acme/shop', expired.dedupeKey), expired);
          // The same key looked up under another namespace finds nothing.
          assert.equal(await tx.findLiveByDedupeKey('acme/blog', live.dedupeKey), null);
        });
        // The read outside a transaction answers the same.
        assert.deepEqual(await store.findLiveByDedupeKey('acme/shop', live.dedupeKey), live);
        assert.equal(await store.findLiveByDedupeKey('acme/shop', forgotten.dedupeKey), null);
        assert.equal(await store.findLiveByDedupeKey('acme/shop', superseded.dedupeKey), null);
        assert.deepEqual(await store.findLiveByDedupeKey('acme/shop', expired.dedupeKey), expired);
        assert.equal(await store.findLiveByDedupeKey('acme/blog', live.dedupeKey), null);
      });

      test('a second live memory with the same dedupe key in a namespace is refused', async (store) => {
        const first = makeMemory('acme/shop', 'Tabs, not spaces');
        await insertAll(store, [[first, null]]);
        const twin = makeMemory('acme/shop', 'Tabs, not spaces');
        await rejectsWith(insertAll(store, [[twin, null]]), 'CONFLICT');
        assert.equal(await store.getMemory(twin.id), null);
        // Allowed in another namespace, and again once the first one is no longer live.
        await insertAll(store, [[makeMemory('acme/blog', 'Tabs, not spaces'), null]]);
        await store.transaction(async (tx) => {
          await tx.updateMemory({ ...first, forgottenAt: '2026-02-01T00:00:00.000Z' });
          await tx.insertMemory(twin, null, analyse(twin.text));
        });
        await store.transaction(async (tx) => {
          assert.equal((await tx.findLiveByDedupeKey('acme/shop', twin.dedupeKey))?.id, twin.id);
        });
        assert.equal(await countAll(store), 3);
      });

      test('updateMemory without index replaces the row and keeps the old index text', async (store, t) => {
        if (!needsFullText(store, t)) return;
        const m = makeMemory('acme/shop', 'Invoices are rendered with wkhtmltopdf', { tags: ['billing'] });
        await insertAll(store, [[m, null]]);
        const next: Memory = { ...m, text: 'Receipts are emailed nightly', importance: 8, tags: ['mail'], kind: 'decision', updatedAt: '2026-04-01T00:00:00.000Z' };
        await store.transaction((tx) => tx.updateMemory(next));
        assert.deepEqual(await store.getMemory(m.id), next);
        // No re-index was asked for: the full-text row still holds the original terms.
        assert.deepEqual(ids(await store.lexicalCandidates(analyse('wkhtmltopdf'), 10, filter('acme/shop'))), [m.id]);
        assert.deepEqual(await store.lexicalCandidates(analyse('receipts emailed'), 10, filter('acme/shop')), []);
        // Filters read the row, so they follow the new kind and tags at once.
        assert.deepEqual(ids(await store.lexicalCandidates(analyse('wkhtmltopdf'), 10, filter('acme/shop', { kinds: ['decision'] }))), [m.id]);
        assert.deepEqual(await store.lexicalCandidates(analyse('wkhtmltopdf'), 10, filter('acme/shop', { kinds: ['note'] })), []);
        assert.deepEqual(await store.lexicalCandidates(analyse('wkhtmltopdf'), 10, filter('acme/shop', { tags: ['billing'] })), []);
      });

      test('updateMemory without index moves a memory in and out of vector recall', async (store, t) => {
        if (!needsVectors(store, t)) return;
        const m = makeMemory('acme/shop', 'Vector follows lifecycle');
        const other = makeMemory('acme/shop', 'Some other note');
        await insertAll(store, [
          [m, angle(0.1)],
          [other, angle(1.2)],
        ]);
        await store.transaction((tx) => tx.updateMemory({ ...m, forgottenAt: '2026-02-01T00:00:00.000Z' }));
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 5, filter('acme/shop'))), [other.id]);
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 5, filter('acme/shop', { includeInactive: true }))), [m.id, other.id]);
        await store.transaction((tx) => tx.updateMemory({ ...m, kind: 'gotcha' }));
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 5, filter('acme/shop'))), [m.id, other.id]);
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 5, filter('acme/shop', { kinds: ['gotcha'] }))), [m.id]);
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 5, filter('acme/shop', { kinds: ['note'] }))), [other.id]);
      });

      test('updateMemory with index makes lexical and vector candidates follow the new text', async (store, t) => {
        const vectors = store.capabilities.vectorSearch;
        const m = makeMemory('acme/shop', 'Invoices are rendered with wkhtmltopdf');
        const other = makeMemory('acme/shop', 'Deploys go out on Tuesdays');
        await insertAll(store, [
          [m, vectors ? axis(2) : null],
          [other, vectors ? angle(0.5) : null],
        ]);
        const next: Memory = { ...m, text: 'Receipts are emailed by the nightly mailer', dedupeKey: dedupeKey('acme/shop', 'Receipts are emailed by the nightly mailer') };
        await store.transaction((tx) => tx.updateMemory(next, { vector: vectors ? angle(0.05) : null, terms: analyse(next.text) }));
        assert.deepEqual(await store.getMemory(m.id), next);
        if (store.capabilities.fullText) {
          assert.deepEqual(await store.lexicalCandidates(analyse('wkhtmltopdf invoices'), 10, filter('acme/shop')), []);
          assert.deepEqual(ids(await store.lexicalCandidates(analyse('nightly mailer'), 10, filter('acme/shop'))), [m.id]);
        }
        if (vectors) {
          const hits = await store.vectorCandidates(QUERY, 5, filter('acme/shop'));
          assert.deepEqual(ids(hits), [m.id, other.id]);
          assert.ok(Math.abs((hits[0]?.similarity ?? 0) - Math.cos(0.05)) < 1e-4);
          // The old vector is gone: nothing sits on axis 2 any more.
          const nearOld = await store.vectorCandidates(axis(2), 1, filter('acme/shop'));
          assert.ok((nearOld[0]?.similarity ?? 0) < 0.5, 'the previous vector is still indexed');
        }
        if (!vectors && !store.capabilities.fullText) t.skip('store has neither index');
      });

      test('updateMemory of an unknown id fails NOT_FOUND and writes nothing', async (store) => {
        const ghost = makeMemory('acme/shop', 'never inserted');
        await rejectsWith(
          store.transaction(async (tx) => {
            await tx.appendEvent({ namespace: 'acme/shop', type: 'memory.updated', memoryId: ghost.id, payload: {}, at: NOW });
            await tx.updateMemory(ghost);
          }),
          'NOT_FOUND',
        );
        assert.equal(await store.getMemory(ghost.id), null);
        assert.deepEqual(await store.events('acme/shop'), []);
      });

      test('deleteMemory removes the row, its full-text entry and its vector', async (store) => {
        const vectors = store.capabilities.vectorSearch;
        const gone = makeMemory('acme/shop', 'The wkhtmltopdf binary lives in vendor/');
        const kept = makeMemory('acme/shop', 'The wkhtmltopdf flags live in config/pdf.json');
        await insertAll(store, [
          [gone, vectors ? angle(0) : null],
          [kept, vectors ? angle(0.4) : null],
        ]);
        await store.transaction((tx) => tx.deleteMemory(gone.id));
        assert.equal(await store.getMemory(gone.id), null);
        assert.deepEqual(await store.getMemories([gone.id]), []);
        if (store.capabilities.fullText) {
          assert.deepEqual(ids(await store.lexicalCandidates(analyse('wkhtmltopdf'), 10, filter('acme/shop', { includeInactive: true }))), [kept.id]);
        }
        if (vectors) {
          assert.deepEqual(ids(await store.vectorCandidates(QUERY, 10, filter('acme/shop', { includeInactive: true }))), [kept.id]);
        }
        assert.equal((await store.stats(NOW)).total, 1);
        // Deleting an id that does not exist is a no-op; the same text can be stored again.
        await store.transaction((tx) => tx.deleteMemory(ulid()));
        const again = makeMemory('acme/shop', gone.text);
        await insertAll(store, [[again, vectors ? angle(0) : null]]);
        assert.equal((await store.stats(NOW)).total, 2);
      });

      test('listLikelyReplacing returns the live notes naming a given id, in the namespace and filter only', async (store) => {
        const v1 = makeMemory('acme/shop', 'Deploys go out on Thursdays');
        const v2 = makeMemory('acme/shop', 'Releases ship every Monday now', { likelyReplaces: [v1.id] });
        const other = makeMemory('acme/shop', 'Invoices are rendered with wkhtmltopdf');
        const both = makeMemory('acme/shop', 'Monday releases and PDF invoices are frozen in December', { kind: 'constraint', likelyReplaces: [other.id, v2.id] });
        const gone = makeMemory('acme/shop', 'Deploys moved to Fridays', { likelyReplaces: [v1.id], forgottenAt: NOW, forgetReason: 'wrong' });
        const stale = makeMemory('acme/shop', 'Deploys are on Wednesdays since spring', { likelyReplaces: [v1.id], expiresAt: NOW });
        const elsewhere = makeMemory('acme/blog', 'Posts go out on Mondays now', { likelyReplaces: [v1.id] });
        await insertAll(store, [v1, v2, other, both, gone, stale, elsewhere].map((m) => [m, null]), null);
        // The relation reads back as written, and a note without one has none.
        assert.deepEqual((await store.getMemory(both.id))?.likelyReplaces, [other.id, v2.id]);
        assert.equal('likelyReplaces' in ((await store.getMemory(v1.id)) as Memory), false);
        const sorted = (ms: Memory[]) => ms.map((m) => m.id).sort();
        assert.deepEqual(sorted(await store.listLikelyReplacing([v1.id], filter('acme/shop'))), [v2.id]);
        assert.deepEqual(sorted(await store.listLikelyReplacing([v1.id], filter('acme/shop', { includeInactive: true }))), [v2.id, gone.id, stale.id].sort());
        assert.deepEqual(sorted(await store.listLikelyReplacing([other.id, v2.id], filter('acme/shop'))), [both.id]);
        assert.deepEqual(sorted(await store.listLikelyReplacing([v1.id, other.id], filter('acme/shop', { kinds: ['note'] }))), [v2.id]);
        assert.deepEqual(await store.listLikelyReplacing([], filter('acme/shop')), []);
        assert.deepEqual(sorted(await store.listLikelyReplacing([v1.id], filter('acme/blog'))), [elsewhere.id]);
        // A text change keeps the relation; a purge takes the note (and what it names) out of the lookup.
        await store.transaction((tx) => tx.updateMemory({ ...v2, text: 'Releases ship every Monday' }));
        assert.deepEqual(sorted(await store.listLikelyReplacing([v1.id], filter('acme/shop'))), [v2.id]);
        await store.transaction((tx) => tx.deleteMemory(v2.id));
        assert.deepEqual(await store.listLikelyReplacing([v1.id], filter('acme/shop')), []);
      });
    });

    describe('erasures in progress', () => {
      test('a pending erasure is recorded in a transaction, replaced by id, listed oldest first, and finished', async (store) => {
        assert.deepEqual(await store.pendingErasures(), []);
        const a = { id: ulid(Date.parse(NOW)), scope: { namespace: 'acme/shop' }, plan: null, startedAt: NOW };
        const b = { id: ulid(Date.parse(NOW) + 1000), scope: { subject: 'user-42' }, plan: null, startedAt: '2026-07-01T00:00:00.000Z' };
        await store.transaction(async (tx) => {
          await tx.putPendingErasure(b);
          await tx.putPendingErasure(a);
          assert.equal((await tx.pendingErasures()).length, 2, 'visible inside the transaction');
        });
        assert.deepEqual((await store.pendingErasures()).map((e) => e.id), [a.id, b.id]);
        const plan = { ids: ['x'], texts: ['dGV4dA=='] };
        await store.transaction((tx) => tx.putPendingErasure({ ...a, plan }));
        assert.deepEqual((await store.pendingErasures())[0], { ...a, plan });
        await store.finishErasure(a.id);
        assert.deepEqual((await store.pendingErasures()).map((e) => e.id), [b.id]);
        await assert.rejects(
          store.transaction(async (tx) => {
            await tx.putPendingErasure({ ...b, id: ulid() });
            throw new CairnError('CONFLICT', 'rolled back');
          }),
        );
        assert.equal((await store.pendingErasures()).length, 1, 'a rolled-back transaction records nothing');
      });
    });

    describe('transactions and events', () => {
      test('a throw inside a transaction rolls back every write, events included', async (store) => {
        const before = makeMemory('acme/shop', 'Committed before the failure');
        await store.transaction(async (tx) => {
          await tx.insertMemory(before, null, analyse(before.text));
          await tx.appendEvent({ namespace: 'acme/shop', type: 'memory.saved', memoryId: before.id, payload: { n: 1 }, at: NOW });
        });
        const doomed = makeMemory('acme/shop', 'Written then rolled back');
        const failure = new CairnError('CONFLICT', 'deliberate failure');
        let caught: unknown;
        if (store.capabilities.vectorSearch) await store.prepareVectors(EMBEDDER);
        try {
          await store.transaction(async (tx) => {
            await tx.insertMemory(doomed, null, analyse(doomed.text));
            await tx.updateMemory({ ...before, text: 'changed inside the failed transaction', forgottenAt: NOW });
            await tx.appendEvent({ namespace: 'acme/shop', type: 'memory.saved', memoryId: doomed.id, payload: {}, at: NOW });
            await tx.appendEvent({ namespace: 'acme/blog', type: 'memory.saved', memoryId: null, payload: {}, at: NOW });
            await tx.setSetting('acme/shop', 'weights', { vector: 9 });
            if (store.capabilities.vectorSearch) await tx.setEmbedder(EMBEDDER);
            await tx.deleteMemory(before.id);
            throw failure;
          });
        } catch (err) {
          caught = err;
        }
        assert.equal(caught, failure, 'the error thrown inside comes out unchanged');
        assert.equal(await store.getMemory(doomed.id), null);
        assert.deepEqual(await store.getMemory(before.id), before);
        assert.deepEqual(
          (await store.events('acme/shop')).map((e) => e.seq),
          [1],
        );
        assert.deepEqual(await store.events('acme/blog'), []);
        assert.equal(await store.getSetting('acme/shop', 'weights'), null);
        assert.equal(await store.embedder(), null);
        if (store.capabilities.fullText) {
          assert.deepEqual(await store.lexicalCandidates(analyse('rolled back'), 10, filter('acme/shop', { includeInactive: true })), []);
          assert.deepEqual(ids(await store.lexicalCandidates(analyse('committed failure'), 10, filter('acme/shop'))), [before.id]);
        }
        const stats = await store.stats(NOW);
        assert.equal(stats.total, 1);
        assert.equal(stats.events, 1);
        // The store stays usable and numbering continues without a gap.
        const seq = await store.transaction((tx) => tx.appendEvent({ namespace: 'acme/shop', type: 'x', memoryId: null, payload: null, at: NOW }));
        assert.equal(seq, 2);
      });

      test('a plain Error thrown inside a transaction also rolls back and rejects', async (store) => {
        const doomed = makeMemory('acme/shop', 'Rolled back by a plain error');
        await assert.rejects(
          store.transaction(async (tx) => {
            await tx.insertMemory(doomed, null, analyse(doomed.text));
            await tx.appendEvent({ namespace: 'acme/shop', type: 'memory.saved', memoryId: doomed.id, payload: {}, at: NOW });
            throw new Error('boom');
          }),
        );
        assert.equal(await store.getMemory(doomed.id), null);
        assert.deepEqual(await store.events('acme/shop'), []);
      });

      test('a rolled-back setEmbedder leaves no record, so another embedder can be set later', async (store, t) => {
        if (!needsVectors(store, t)) return;
        await store.prepareVectors({ id: 'first-16', dimensions: 16 });
        const abort = new CairnError('INTERNAL', 'abort');
        await assert.rejects(
          store.transaction(async (tx) => {
            await tx.setEmbedder({ id: 'first-16', dimensions: 16 });
            throw abort;
          }),
          (err) => err === abort,
        );
        assert.equal(await store.embedder(), null);
        const m = makeMemory('acme/shop', 'Vector after a rolled-back embedder');
        await insertAll(store, [[m, angle(0)]]);
        assert.deepEqual(await store.embedder(), EMBEDDER);
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 3, filter('acme/shop'))), [m.id]);
      });

      test('transaction returns the value of its function', async (store) => {
        const value = await store.transaction(async (tx) => {
          const seq = await tx.appendEvent({ namespace: 'acme/shop', type: 't', memoryId: null, payload: null, at: NOW });
          return { seq, label: 'done' };
        });
        assert.deepEqual(value, { seq: 1, label: 'done' });
      });

      test('event sequence numbers are monotonic and gap-free per namespace, independent across namespaces', async (store) => {
        const got: Record<string, number[]> = { 'acme/shop': [], 'acme/blog': [] };
        await store.transaction(async (tx) => {
          for (let i = 0; i < 3; i++) got['acme/shop']?.push(await tx.appendEvent({ namespace: 'acme/shop', type: 'a', memoryId: null, payload: { i }, at: NOW }));
          got['acme/blog']?.push(await tx.appendEvent({ namespace: 'acme/blog', type: 'b', memoryId: null, payload: { i: 0 }, at: NOW }));
        });
        for (let i = 3; i < 5; i++) {
          await store.transaction(async (tx) => {
            got['acme/shop']?.push(await tx.appendEvent({ namespace: 'acme/shop', type: 'a', memoryId: null, payload: { i }, at: NOW }));
            got['acme/blog']?.push(await tx.appendEvent({ namespace: 'acme/blog', type: 'b', memoryId: null, payload: { i: i - 2 }, at: NOW }));
          });
        }
        assert.deepEqual(got['acme/shop'], [1, 2, 3, 4, 5]);
        assert.deepEqual(got['acme/blog'], [1, 2, 3]);
        const shop = await store.events('acme/shop');
        assert.deepEqual(shop.map((e) => e.seq), [1, 2, 3, 4, 5]);
        assert.deepEqual(shop.map((e) => e.payload), [0, 1, 2, 3, 4].map((i) => ({ i })));
        assert.ok(shop.every((e) => e.namespace === 'acme/shop' && e.type === 'a' && e.at === NOW && e.memoryId === null));
        assert.deepEqual((await store.events('acme/blog')).map((e) => e.payload), [0, 1, 2].map((i) => ({ i })));
        assert.deepEqual((await store.events('acme/shop', 2)).map((e) => e.seq), [3, 4, 5]);
        assert.deepEqual((await store.events('acme/shop', 1, 2)).map((e) => e.seq), [2, 3]);
        assert.deepEqual(await store.events('acme/shop', 5), []);
        assert.equal((await store.stats(NOW)).events, 8);
        // gseq orders every event of every namespace by commit: here shop 1-3, blog 1, then pairs.
        const all = [...shop, ...(await store.events('acme/blog'))].sort((a, b) => a.gseq - b.gseq);
        assert.equal(new Set(all.map((e) => e.gseq)).size, 8, 'gseq is unique across namespaces');
        assert.deepEqual(
          all.map((e) => `${e.namespace}#${e.seq}`),
          ['acme/shop#1', 'acme/shop#2', 'acme/shop#3', 'acme/blog#1', 'acme/shop#4', 'acme/blog#2', 'acme/shop#5', 'acme/blog#3'],
        );
      });

      test('concurrent transactions run one after another without losing or repeating a sequence number', async (store) => {
        const writers = Array.from({ length: 8 }, (_, w) =>
          store.transaction(async (tx) => {
            const seqs: number[] = [];
            for (let i = 0; i < 5; i++) {
              seqs.push(await tx.appendEvent({ namespace: 'acme/shop', type: 'c', memoryId: null, payload: { w, i }, at: NOW }));
              await new Promise((r) => setImmediate(r)); // yield so other writers get a chance to interleave
            }
            return seqs;
          }),
        );
        const results = await Promise.all(writers);
        for (const seqs of results) {
          // One transaction's events are consecutive: nothing interleaved inside it.
          assert.deepEqual(seqs, seqs.map((_, i) => (seqs[0] as number) + i));
        }
        assert.deepEqual(
          results.flat().sort((a, b) => a - b),
          Array.from({ length: 40 }, (_, i) => i + 1),
        );
      });

      test('an event payload round-trips as JSON and memoryId is kept', async (store) => {
        const payload = { text: 'quote " and \\ and ünïcode', nested: { list: [1, 2.5, null, true] } };
        const memoryId = ulid();
        await store.transaction((tx) => tx.appendEvent({ namespace: 'acme/shop', type: 'memory.saved', memoryId, payload, at: NOW }));
        const [event] = await store.events('acme/shop');
        assert.ok(event);
        const { gseq, ...rest } = event;
        assert.ok(Number.isInteger(gseq) && gseq > 0, `gseq ${gseq}`);
        assert.deepEqual(rest, { namespace: 'acme/shop', seq: 1, type: 'memory.saved', memoryId, payload, at: NOW });
      });
    });

    describe('vector candidates', () => {
      test('vectorCandidates returns the nearest memories of the namespace, best first, at most k', async (store, t) => {
        if (!needsVectors(store, t)) return;
        const thetas = [0.9, 0.1, 0.5, 1.4, 0.3, 2.5];
        const shop = thetas.map((theta, i) => [makeMemory('acme/shop', `shop note ${i}`), angle(theta)] as [Memory, Float32Array]);
        const blog = [[makeMemory('acme/blog', 'blog note exactly on the query'), angle(0)] as [Memory, Float32Array]];
        await insertAll(store, [...shop, ...blog]);
        const expected = shop
          .map(([m], i) => ({ id: m.id, similarity: Math.cos(thetas[i] as number) }))
          .sort((a, b) => b.similarity - a.similarity);
        const hits = await store.vectorCandidates(QUERY, 4, filter('acme/shop'));
        assert.deepEqual(ids(hits), ids(expected.slice(0, 4)));
        hits.forEach((h, i) => assert.ok(Math.abs(h.similarity - (expected[i]?.similarity ?? NaN)) < 1e-4, `similarity of hit ${i}: ${h.similarity}`));
        const all = await store.vectorCandidates(QUERY, 50, filter('acme/shop'));
        assert.deepEqual(ids(all), ids(expected));
        assertDescending(all.map((h) => h.similarity), 'similarity');
        // An opposite vector has negative cosine similarity.
        assert.ok((all.at(-1)?.similarity ?? 0) < 0);
        const blogHits = await store.vectorCandidates(QUERY, 50, filter('acme/blog'));
        assert.deepEqual(ids(blogHits), [blog[0]?.[0].id]);
        assert.deepEqual(await store.vectorCandidates(QUERY, 5, filter('acme/empty')), []);
      });

      test('vectorCandidates excludes forgotten, superseded and expired memories unless includeInactive', async (store, t) => {
        if (!needsVectors(store, t)) return;
        const live = makeMemory('acme/shop', 'live');
        const forgotten = makeMemory('acme/shop', 'forgotten', { forgottenAt: '2026-02-01T00:00:00.000Z' });
        const superseded = makeMemory('acme/shop', 'superseded', { supersededBy: ulid() });
        const expired = makeMemory('acme/shop', 'expired', { expiresAt: new Date(Date.parse(NOW) - HOUR).toISOString() });
        const expiring = makeMemory('acme/shop', 'expires later', { expiresAt: new Date(Date.parse(NOW) + HOUR).toISOString() });
        await insertAll(store, [
          [forgotten, angle(0)],
          [superseded, angle(0.1)],
          [expired, angle(0.2)],
          [expiring, angle(0.3)],
          [live, angle(0.6)],
        ]);
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 10, filter('acme/shop'))), [expiring.id, live.id]);
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 10, filter('acme/shop', { includeInactive: true }))), [
          forgotten.id,
          superseded.id,
          expired.id,
          expiring.id,
          live.id,
        ]);
        // Expiry is judged against the filter's `now`.
        const later = new Date(Date.parse(NOW) + 2 * HOUR).toISOString();
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 10, filter('acme/shop', { now: later }))), [live.id]);
      });

      test('vectorCandidates still finds k active memories behind many nearer inactive ones', async (store, t) => {
        if (!needsVectors(store, t)) return;
        const past = new Date(Date.parse(NOW) - HOUR).toISOString();
        const rows: [Memory, Float32Array][] = [];
        for (let i = 0; i < 60; i++) rows.push([makeMemory('acme/shop', `expired ${i}`, { expiresAt: past }), angle(0.001 * i)]);
        for (let i = 0; i < 60; i++) rows.push([makeMemory('acme/shop', `forgotten ${i}`, { forgottenAt: past }), angle(0.001 * i)]);
        const live = [makeMemory('acme/shop', 'live far'), makeMemory('acme/shop', 'live farther')];
        rows.push([live[0] as Memory, angle(1.0)], [live[1] as Memory, angle(1.2)]);
        await insertAll(store, rows);
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 2, filter('acme/shop'))), live.map((m) => m.id));
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 1, filter('acme/shop'))), [live[0]?.id]);
      });

      test('vectorCandidates finds active memories behind more inactive ones than one KNN query returns', async (store, t) => {
        if (!needsVectors(store, t)) return;
        const past = new Date(Date.parse(NOW) - HOUR).toISOString();
        const rows: [Memory, Float32Array][] = [];
        for (let i = 0; i < 4200; i++) rows.push([makeMemory('acme/shop', `expired ${i}`, { expiresAt: past }), angle(0.0001 * i)]);
        const live = [makeMemory('acme/shop', 'live one'), makeMemory('acme/shop', 'live two')];
        rows.push([live[1] as Memory, angle(1.3)], [live[0] as Memory, angle(1.1)]);
        await insertAll(store, rows);
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 5, filter('acme/shop'))), live.map((m) => m.id));
      });

      test('vectorCandidates honours kinds and tags filters', async (store, t) => {
        if (!needsVectors(store, t)) return;
        const decision = makeMemory('acme/shop', 'decision', { kind: 'decision', tags: ['db'] });
        const gotcha = makeMemory('acme/shop', 'gotcha', { kind: 'gotcha', tags: ['api', 'db'] });
        const note = makeMemory('acme/shop', 'note', { kind: 'note', tags: ['api'] });
        // Many untagged notes nearer to the query than anything tagged or of another kind.
        const crowd = Array.from({ length: 40 }, (_, i) => [makeMemory('acme/shop', `crowd ${i}`), angle(0.001 * i)] as [Memory, Float32Array]);
        await insertAll(store, [...crowd, [decision, angle(0.5)], [gotcha, angle(0.7)], [note, angle(0.9)]]);
        const f = (over: Partial<CandidateFilter>) => store.vectorCandidates(QUERY, 2, filter('acme/shop', over)).then(ids);
        assert.deepEqual(await f({ kinds: ['decision'] }), [decision.id]);
        assert.deepEqual(await f({ kinds: ['gotcha', 'decision'] }), [decision.id, gotcha.id]);
        assert.deepEqual(await f({ tags: ['db'] }), [decision.id, gotcha.id]);
        assert.deepEqual(await f({ tags: ['api'] }), [gotcha.id, note.id]);
        // Several tags mean any of them.
        assert.deepEqual(await f({ tags: ['missing', 'api'] }), [gotcha.id, note.id]);
        assert.deepEqual(await f({ kinds: ['note'], tags: ['api'] }), [note.id]);
        assert.deepEqual(await f({ tags: ['nothing-has-this'] }), []);
        assert.deepEqual(await f({ kinds: ['constraint'] }), []);
      });

      test('vectors of the wrong dimension are refused with EMBEDDER_MISMATCH', async (store, t) => {
        if (!needsVectors(store, t)) return;
        const m = makeMemory('acme/shop', 'eight dimensions');
        await insertAll(store, [[m, angle(0)]]);
        await rejectsWith(store.vectorCandidates(new Float32Array(4).fill(0.5), 3, filter('acme/shop')), 'EMBEDDER_MISMATCH');
        const wrong = makeMemory('acme/shop', 'four dimensions');
        await rejectsWith(
          store.transaction((tx) => tx.insertMemory(wrong, new Float32Array(4).fill(0.5), analyse(wrong.text))),
          'EMBEDDER_MISMATCH',
        );
        assert.equal(await store.getMemory(wrong.id), null);
      });
    });

    describe('lexical candidates', () => {
      test('lexicalCandidates stays in the namespace and returns best matches first, at most k', async (store, t) => {
        if (!needsFullText(store, t)) return;
        const strong = makeMemory('acme/shop', 'Redis cache: the redis cache evicts with LRU; redis restarts nightly');
        const weak = makeMemory('acme/shop', 'The session store is redis');
        const both = makeMemory('acme/shop', 'Cache warming runs after deploys');
        const unrelated = makeMemory('acme/shop', 'Tax rules live in shop/checkout/tax.py');
        const otherNs = makeMemory('acme/blog', 'Redis cache redis cache redis cache');
        await insertAll(store, [
          [strong, null],
          [weak, null],
          [both, null],
          [unrelated, null],
          [otherNs, null],
        ]);
        const hits = await store.lexicalCandidates(analyse('redis cache'), 10, filter('acme/shop'));
        assert.deepEqual(new Set(ids(hits)), new Set([strong.id, weak.id, both.id]), 'OR semantics, namespace confined');
        assert.equal(hits[0]?.id, strong.id);
        assert.ok(hits.every((h) => Number.isFinite(h.score) && h.score > 0), 'BM25 scores are positive, higher is better');
        assertDescending(hits.map((h) => h.score), 'BM25 score');
        assert.deepEqual(ids(await store.lexicalCandidates(analyse('redis cache'), 1, filter('acme/shop'))), [strong.id]);
        assert.deepEqual(ids(await store.lexicalCandidates(analyse('redis'), 10, filter('acme/blog'))), [otherNs.id]);
        assert.deepEqual(ids(await store.lexicalCandidates(analyse('shop/checkout/tax.py'), 10, filter('acme/shop'))), [unrelated.id]);
        assert.deepEqual(await store.lexicalCandidates([], 10, filter('acme/shop')), []);
        assert.deepEqual(await store.lexicalCandidates(analyse('kubernetes'), 10, filter('acme/shop')), []);
        assert.deepEqual(await store.lexicalCandidates(analyse('redis'), 10, filter('acme/empty')), []);
      });

      test('lexicalCandidates excludes forgotten, superseded and expired memories unless includeInactive', async (store, t) => {
        if (!needsFullText(store, t)) return;
        const live = makeMemory('acme/shop', 'flaky test in checkout live');
        const forgotten = makeMemory('acme/shop', 'flaky test in checkout forgotten', { forgottenAt: '2026-02-01T00:00:00.000Z' });
        const superseded = makeMemory('acme/shop', 'flaky test in checkout superseded', { supersededBy: ulid() });
        const expired = makeMemory('acme/shop', 'flaky test in checkout expired', { expiresAt: new Date(Date.parse(NOW) - HOUR).toISOString() });
        await insertAll(store, [
          [live, null],
          [forgotten, null],
          [superseded, null],
          [expired, null],
        ]);
        assert.deepEqual(ids(await store.lexicalCandidates(analyse('flaky checkout'), 10, filter('acme/shop'))), [live.id]);
        assert.deepEqual(
          new Set(ids(await store.lexicalCandidates(analyse('flaky checkout'), 10, filter('acme/shop', { includeInactive: true })))),
          new Set([live.id, forgotten.id, superseded.id, expired.id]),
        );
      });

      test('lexicalCandidates honours kinds and tags filters', async (store, t) => {
        if (!needsFullText(store, t)) return;
        const decision = makeMemory('acme/shop', 'postgres decision', { kind: 'decision', tags: ['db'] });
        const gotcha = makeMemory('acme/shop', 'postgres gotcha', { kind: 'gotcha', tags: ['api', 'db'] });
        const note = makeMemory('acme/shop', 'postgres note', { kind: 'note', tags: ['api'] });
        await insertAll(store, [
          [decision, null],
          [gotcha, null],
          [note, null],
        ]);
        const f = (over: Partial<CandidateFilter>) => store.lexicalCandidates(analyse('postgres'), 10, filter('acme/shop', over)).then((h) => new Set(ids(h)));
        assert.deepEqual(await f({ kinds: ['decision'] }), new Set([decision.id]));
        assert.deepEqual(await f({ kinds: ['gotcha', 'decision'] }), new Set([decision.id, gotcha.id]));
        assert.deepEqual(await f({ tags: ['db'] }), new Set([decision.id, gotcha.id]));
        assert.deepEqual(await f({ tags: ['missing', 'api'] }), new Set([gotcha.id, note.id]));
        assert.deepEqual(await f({ kinds: ['note'], tags: ['db'] }), new Set());
      });
    });

    describe('embedder record', () => {
      test('the embedder is recorded once; the same one again is accepted, another is refused', async (store, t) => {
        if (!needsVectors(store, t)) return;
        assert.equal(await store.embedder(), null);
        // Without an embedder there is nothing to search.
        assert.deepEqual(await store.vectorCandidates(QUERY, 5, filter('acme/shop')), []);
        await store.prepareVectors(EMBEDDER);
        await store.transaction((tx) => tx.setEmbedder(EMBEDDER));
        assert.deepEqual(await store.embedder(), EMBEDDER);
        await store.transaction((tx) => tx.setEmbedder({ ...EMBEDDER }));
        assert.deepEqual(await store.embedder(), EMBEDDER);
        await rejectsWith(store.transaction((tx) => tx.setEmbedder({ id: 'other-model', dimensions: DIMS })), 'EMBEDDER_MISMATCH');
        await rejectsWith(store.transaction((tx) => tx.setEmbedder({ id: EMBEDDER.id, dimensions: 16 })), 'EMBEDDER_MISMATCH');
        assert.deepEqual(await store.embedder(), EMBEDDER);
      });

      test('resetVectors drops every vector and the record; setVector fills the new index', async (store, t) => {
        if (!needsVectors(store, t)) return;
        const a = makeMemory('acme/shop', 'alpha');
        const b = makeMemory('acme/blog', 'beta');
        await insertAll(store, [
          [a, angle(0)],
          [b, angle(0)],
        ]);
        await store.transaction((tx) => tx.resetVectors());
        assert.equal(await store.embedder(), null);
        assert.deepEqual(await store.vectorCandidates(QUERY, 5, filter('acme/shop')), []);
        // Memories themselves survive a reset.
        assert.deepEqual(await store.getMemory(a.id), a);
        const next: EmbedderInfo = { id: 'contract-axis-16', dimensions: 16 };
        await store.prepareVectors(next);
        await store.transaction(async (tx) => {
          await tx.setEmbedder(next);
          await tx.setVector(a.id, axis(3, 16));
          await tx.setVector(b.id, axis(3, 16));
        });
        assert.deepEqual(await store.embedder(), next);
        const hits = await store.vectorCandidates(axis(3, 16), 5, filter('acme/shop'));
        assert.deepEqual(ids(hits), [a.id]);
        assert.ok(Math.abs((hits[0]?.similarity ?? 0) - 1) < 1e-5);
        assert.deepEqual(ids(await store.vectorCandidates(axis(3, 16), 5, filter('acme/blog'))), [b.id]);
        // setVector replaces, never duplicates.
        await store.transaction((tx) => tx.setVector(a.id, axis(5, 16)));
        assert.deepEqual(ids(await store.vectorCandidates(axis(5, 16), 5, filter('acme/shop'))), [a.id]);
        assert.ok(((await store.vectorCandidates(axis(3, 16), 5, filter('acme/shop')))[0]?.similarity ?? 1) < 0.5);
        await rejectsWith(store.vectorCandidates(QUERY, 5, filter('acme/shop')), 'EMBEDDER_MISMATCH');
      });

      test('setVector keeps the memory lifecycle: a forgotten memory stays out of recall', async (store, t) => {
        if (!needsVectors(store, t)) return;
        const live = makeMemory('acme/shop', 'live');
        const gone = makeMemory('acme/shop', 'gone', { forgottenAt: '2026-02-01T00:00:00.000Z', kind: 'gotcha' });
        await insertAll(store, [
          [live, angle(0.5)],
          [gone, angle(0)],
        ]);
        await store.transaction(async (tx) => {
          await tx.resetVectors();
          await tx.setEmbedder(EMBEDDER);
          await tx.setVector(live.id, angle(0.5));
          await tx.setVector(gone.id, angle(0));
        });
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 5, filter('acme/shop'))), [live.id]);
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 5, filter('acme/shop', { includeInactive: true, kinds: ['gotcha'] }))), [gone.id]);
      });

      test('setVector of an unknown id fails NOT_FOUND', async (store, t) => {
        if (!needsVectors(store, t)) return;
        await store.prepareVectors(EMBEDDER);
        await rejectsWith(
          store.transaction(async (tx) => {
            await tx.setEmbedder(EMBEDDER);
            await tx.setVector(ulid(), angle(0));
          }),
          'NOT_FOUND',
        );
        assert.equal(await store.embedder(), null);
      });

      test('no transaction runs DDL: vector objects come from prepareVectors, before the embedder is recorded', async (store, t) => {
        if (!needsVectors(store, t)) return;
        const catalog = options.catalog;
        if (!catalog) {
          t.skip('no catalog probe for this backend');
          return;
        }
        const empty = await catalog(store);
        // Without preparing: the transaction either refuses (naming prepareVectors) or needs nothing, and in
        // neither case changes the schema.
        const unprepared = await store.transaction((tx) => tx.setEmbedder(EMBEDDER)).then(
          () => null,
          (err: unknown) => err,
        );
        assert.deepEqual(await catalog(store), empty, 'a transaction recording an unprepared embedder changed the schema');
        if (unprepared !== null) {
          assert.ok(isCairnError(unprepared) && unprepared.code === 'INTERNAL' && /prepareVectors/.test(unprepared.message), String(unprepared));
          assert.equal(await store.embedder(), null, 'the refused record was rolled back');
        } else {
          await store.transaction((tx) => tx.resetVectors());
        }
        await store.prepareVectors(EMBEDDER);
        await store.prepareVectors({ ...EMBEDDER }); // idempotent
        const prepared = await catalog(store);
        if (JSON.stringify(prepared) !== JSON.stringify(empty)) assert.notEqual(unprepared, null, 'the backend had objects to prepare, so the unprepared record must be refused');
        const next: EmbedderInfo = { id: 'contract-axis-16', dimensions: 16 };
        await store.prepareVectors(next);
        const both = await catalog(store);
        // Record, write, reset and switch to the other prepared dimension, all inside transactions.
        const m = makeMemory('acme/shop', 'Vectors written after prepareVectors');
        await store.transaction(async (tx) => {
          await tx.setEmbedder(EMBEDDER);
          await tx.insertMemory(m, angle(0), analyse(m.text));
        });
        assert.deepEqual(await catalog(store), both, 'recording the prepared embedder changed the schema');
        await store.transaction(async (tx) => {
          await tx.resetVectors();
          await tx.setEmbedder(next);
          await tx.setVector(m.id, axis(3, 16));
        });
        assert.deepEqual(await catalog(store), both, 'switching to a prepared embedder changed the schema');
        assert.deepEqual(await store.embedder(), next);
        assert.deepEqual(ids(await store.vectorCandidates(axis(3, 16), 3, filter('acme/shop'))), [m.id]);
        // And back: the emptied table of the first dimension is still there to be used again.
        await store.transaction(async (tx) => {
          await tx.resetVectors();
          await tx.setEmbedder(EMBEDDER);
          await tx.setVector(m.id, angle(0));
        });
        assert.deepEqual(await catalog(store), both, 'switching back changed the schema');
        assert.deepEqual(ids(await store.vectorCandidates(QUERY, 3, filter('acme/shop'))), [m.id]);
      });
    });

    describe('settings, listing and stats', () => {
      test('settings round-trip as JSON per namespace and key, and can be replaced', async (store) => {
        const weights = { vector: 0.25, lexical: 1.5, recency: 0 };
        await store.transaction(async (tx) => {
          await tx.setSetting('acme/shop', 'weights', weights);
          await tx.setSetting('acme/shop', 'label', 'shop "quoted"');
          await tx.setSetting('acme/shop', 'list', [1, 'two', null]);
          await tx.setSetting('acme/blog', 'weights', { vector: 3 });
        });
        assert.deepEqual(await store.getSetting('acme/shop', 'weights'), weights);
        assert.equal(await store.getSetting('acme/shop', 'label'), 'shop "quoted"');
        assert.deepEqual(await store.getSetting('acme/shop', 'list'), [1, 'two', null]);
        assert.deepEqual(await store.getSetting('acme/blog', 'weights'), { vector: 3 });
        assert.equal(await store.getSetting('acme/blog', 'label'), null);
        assert.equal(await store.getSetting('acme/other', 'weights'), null);
        await store.transaction((tx) => tx.setSetting('acme/shop', 'weights', { vector: 1 }));
        assert.deepEqual(await store.getSetting('acme/shop', 'weights'), { vector: 1 });
        assert.deepEqual(await store.getSetting('acme/blog', 'weights'), { vector: 3 });
      });

      test('iterateMemories pages through every memory oldest first', async (store) => {
        const shop = Array.from({ length: 7 }, (_, i) => makeMemory('acme/shop', `shop ${i}`));
        const blog = Array.from({ length: 3 }, (_, i) => makeMemory('acme/blog', `blog ${i}`, { forgottenAt: i === 0 ? NOW : null }));
        // Insert out of order: paging follows ids, not insertion order.
        const all = [...shop, ...blog];
        await insertAll(store, [...all].reverse().map((m) => [m, null] as [Memory, null]));
        const pagesOf = async (ns: string | undefined, size: number) => {
          const pages: Memory[][] = [];
          for await (const page of store.iterateMemories(ns, size)) pages.push(page);
          return pages;
        };
        const shopPages = await pagesOf('acme/shop', 3);
        assert.deepEqual(shopPages.map((p) => p.length), [3, 3, 1]);
        assert.deepEqual(shopPages.flat(), shop);
        const everything = await pagesOf(undefined, 4);
        assert.deepEqual(everything.map((p) => p.length), [4, 4, 2]);
        assert.deepEqual(everything.flat().map((m) => m.id), all.map((m) => m.id).sort());
        // Inactive memories are included: iteration is for export and reindex.
        assert.deepEqual((await pagesOf('acme/blog', 10)).flat(), blog);
        assert.deepEqual(await pagesOf('acme/none', 10), []);
        // The default page size works too.
        assert.equal((await pagesOf(undefined, undefined as unknown as number)).flat().length, 10);
      });

      test('listMemories is newest first and pages with before', async (store) => {
        const shop = Array.from({ length: 9 }, (_, i) => makeMemory('acme/shop', `shop ${i}`));
        const blog = [makeMemory('acme/blog', 'blog 0')];
        await insertAll(store, [...shop, ...blog].map((m) => [m, null] as [Memory, null]));
        const newestFirst = [...shop].reverse().map((m) => m.id);
        const seen: string[] = [];
        let before: string | undefined;
        for (;;) {
          const page = await store.listMemories({ namespace: 'acme/shop', limit: 4, before, now: NOW });
          if (page.length === 0) break;
          assert.ok(page.length <= 4);
          seen.push(...page.map((m) => m.id));
          before = page.at(-1)?.id;
        }
        assert.deepEqual(seen, newestFirst);
        const everywhere = await store.listMemories({ limit: 100, now: NOW });
        assert.deepEqual(everywhere.map((m) => m.id), [...shop, ...blog].map((m) => m.id).sort().reverse());
        assert.deepEqual(await store.listMemories({ namespace: 'acme/shop', limit: 100, before: shop[0]?.id, now: NOW }), []);
      });

      test('listMemories filters by activity, kinds and tags', async (store) => {
        const past = new Date(Date.parse(NOW) - HOUR).toISOString();
        const live = makeMemory('acme/shop', 'live', { kind: 'decision', tags: ['db'] });
        const forgotten = makeMemory('acme/shop', 'forgotten', { forgottenAt: past });
        const superseded = makeMemory('acme/shop', 'superseded', { supersededBy: ulid(), tags: ['db'] });
        const expired = makeMemory('acme/shop', 'expired', { expiresAt: past, kind: 'decision' });
        const tagged = makeMemory('acme/shop', 'tagged', { tags: ['api'] });
        await insertAll(store, [live, forgotten, superseded, expired, tagged].map((m) => [m, null] as [Memory, null]));
        const list = (over: Partial<Parameters<Store['listMemories']>[0]>) =>
          store.listMemories({ namespace: 'acme/shop', limit: 50, now: NOW, ...over }).then((ms) => ms.map((m) => m.id));
        assert.deepEqual(await list({}), [tagged.id, live.id]);
        assert.deepEqual(await list({ includeInactive: true }), [tagged, expired, superseded, forgotten, live].map((m) => m.id));
        assert.deepEqual(await list({ kinds: ['decision'] }), [live.id]);
        assert.deepEqual(await list({ kinds: ['decision'], includeInactive: true }), [expired.id, live.id]);
        assert.deepEqual(await list({ tags: ['db'] }), [live.id]);
        assert.deepEqual(await list({ tags: ['db', 'api'] }), [tagged.id, live.id]);
        assert.deepEqual(await list({ limit: 1 }), [tagged.id]);
      });

      test('listExpired returns the memories whose expiry has passed, per namespace or everywhere', async (store) => {
        const hourAgo = new Date(Date.parse(NOW) - HOUR).toISOString();
        const inAnHour = new Date(Date.parse(NOW) + HOUR).toISOString();
        const shopExpired = makeMemory('acme/shop', 'expired in shop', { expiresAt: hourAgo });
        const shopAtNow = makeMemory('acme/shop', 'expires exactly now', { expiresAt: NOW });
        const shopLater = makeMemory('acme/shop', 'expires later', { expiresAt: inAnHour });
        const shopNever = makeMemory('acme/shop', 'never expires');
        const blogExpired = makeMemory('acme/blog', 'expired in blog', { expiresAt: hourAgo });
        await insertAll(store, [shopExpired, shopAtNow, shopLater, shopNever, blogExpired].map((m) => [m, null] as [Memory, null]));
        const idSet = (ms: Memory[]) => new Set(ms.map((m) => m.id));
        assert.deepEqual(idSet(await store.listExpired(NOW, 'acme/shop')), new Set([shopExpired.id, shopAtNow.id]));
        assert.deepEqual(idSet(await store.listExpired(NOW)), new Set([shopExpired.id, shopAtNow.id, blogExpired.id]));
        assert.deepEqual(idSet(await store.listExpired(NOW, 'acme/blog')), new Set([blogExpired.id]));
        // A memory expiring exactly at `now` is expired for listing and for recall alike.
        assert.deepEqual(
          (await store.listMemories({ namespace: 'acme/shop', limit: 10, now: NOW })).map((m) => m.id),
          [shopNever.id, shopLater.id],
        );
        const later = new Date(Date.parse(NOW) + 2 * HOUR).toISOString();
        assert.deepEqual(idSet(await store.listExpired(later, 'acme/shop')), new Set([shopExpired.id, shopAtNow.id, shopLater.id]));
      });

      test('stats counts live, forgotten, superseded and expired memories per namespace, and events', async (store) => {
        const past = new Date(Date.parse(NOW) - HOUR).toISOString();
        const rows: Memory[] = [
          makeMemory('acme/shop', 'live 1'),
          makeMemory('acme/shop', 'live 2', { expiresAt: new Date(Date.parse(NOW) + HOUR).toISOString() }),
          makeMemory('acme/shop', 'forgotten', { forgottenAt: past }),
          makeMemory('acme/shop', 'superseded', { supersededBy: ulid() }),
          makeMemory('acme/shop', 'expired', { expiresAt: past }),
          makeMemory('acme/blog', 'blog live'),
        ];
        await store.transaction(async (tx) => {
          for (const m of rows) await tx.insertMemory(m, null, analyse(m.text));
          for (const m of rows) await tx.appendEvent({ namespace: m.namespace, type: 'memory.saved', memoryId: m.id, payload: {}, at: NOW });
          await tx.appendEvent({ namespace: 'acme/events-only', type: 'settings.weights', memoryId: null, payload: {}, at: NOW });
        });
        const stats = await store.stats(NOW);
        assert.equal(stats.total, 6);
        assert.equal(stats.events, 7);
        const byNs = new Map(stats.namespaces.map((n) => [n.namespace, n]));
        assert.deepEqual(byNs.get('acme/shop'), { namespace: 'acme/shop', live: 2, forgotten: 1, superseded: 1, expired: 1 });
        assert.deepEqual(byNs.get('acme/blog'), { namespace: 'acme/blog', live: 1, forgotten: 0, superseded: 0, expired: 0 });
        assert.equal(byNs.has('acme/events-only'), false, 'a namespace without memories has no memory counts');
        // The same store judged later: the expiring memory has expired.
        const later = await store.stats(new Date(Date.parse(NOW) + 2 * HOUR).toISOString());
        assert.deepEqual(
          later.namespaces.find((n) => n.namespace === 'acme/shop'),
          { namespace: 'acme/shop', live: 1, forgotten: 1, superseded: 1, expired: 2 },
        );
        assert.deepEqual(await store.stats(NOW), stats, 'stats does not change the store');
      });

      test('an empty store has empty stats', async (store) => {
        assert.deepEqual(await store.stats(NOW), { namespaces: [], total: 0, events: 0 });
      });

      test('access tokens: stored by hash, listed, revoked once, touched', async (store) => {
        const token = {
          id: 'tok_aaaaaaaaaaaa',
          hash: 'a'.repeat(64),
          name: 'ci "agent"',
          namespaces: ['acme/shop', 'acme/blog'],
          scope: 'write' as const,
          createdAt: NOW,
          expiresAt: null,
          revokedAt: null,
          lastUsedAt: null,
        };
        await store.putToken(token);
        await store.putToken({ ...token, id: 'tok_bbbbbbbbbbbb', hash: 'b'.repeat(64), namespaces: ['*'], scope: 'admin', name: null });
        assert.deepEqual(await store.getTokenByHash('a'.repeat(64)), token);
        assert.equal(await store.getTokenByHash('c'.repeat(64)), null);
        await assert.rejects(store.putToken({ ...token, id: 'tok_cccccccccccc' }), 'a second token with the same hash is refused');
        assert.deepEqual((await store.listTokens()).map((t) => t.id), ['tok_aaaaaaaaaaaa', 'tok_bbbbbbbbbbbb']);
        const later = new Date(Date.parse(NOW) + HOUR).toISOString();
        assert.equal(await store.revokeToken('tok_aaaaaaaaaaaa', later), true);
        assert.equal(await store.revokeToken('tok_aaaaaaaaaaaa', new Date(Date.parse(NOW) + 2 * HOUR).toISOString()), true);
        assert.equal((await store.getTokenByHash('a'.repeat(64)))?.revokedAt, later, 'the first revocation time stays');
        assert.equal(await store.revokeToken('tok_missing', later), false);
        await store.touchToken('tok_bbbbbbbbbbbb', later);
        assert.equal((await store.getTokenByHash('b'.repeat(64)))?.lastUsedAt, later);
      });

      test('recall counts and memories per day, per namespace; deleting a memory drops its count', async (store) => {
        const a = makeMemory('acme/shop', 'first shop note', { createdAt: '2026-01-01T10:00:00.000Z' });
        const b = makeMemory('acme/shop', 'second shop note', { createdAt: '2026-01-01T11:00:00.000Z' });
        const c = makeMemory('acme/shop', 'third shop note', { createdAt: '2026-01-03T09:00:00.000Z' });
        const d = makeMemory('acme/blog', 'a blog note', { createdAt: '2026-01-02T09:00:00.000Z' });
        await store.transaction(async (tx) => {
          for (const m of [a, b, c, d]) await tx.insertMemory(m, null, ['note']);
        });
        await store.recordRecalls('acme/shop', [a.id, b.id], NOW);
        await store.recordRecalls('acme/shop', [a.id], NOW);
        await store.recordRecalls('acme/blog', [d.id], NOW);
        const stats = await store.recallStats('acme/shop', NOW, 10);
        assert.equal(stats.live, 3);
        assert.equal(stats.neverRecalled, 1);
        assert.deepEqual(stats.top.map((t) => [t.id, t.count]), [[a.id, 2], [b.id, 1]]);
        assert.deepEqual(stats.histogram, [
          { bucket: '0', memories: 1 },
          { bucket: '1', memories: 1 },
          { bucket: '2-4', memories: 1 },
          { bucket: '5-9', memories: 0 },
          { bucket: '10+', memories: 0 },
        ]);
        assert.deepEqual(await store.createdPerDay('acme/shop'), [
          { day: '2026-01-01', count: 2 },
          { day: '2026-01-03', count: 1 },
        ]);
        await store.transaction((tx) => tx.deleteMemory(a.id));
        const after = await store.recallStats('acme/shop', NOW, 10);
        assert.deepEqual(after.top.map((t) => t.id), [b.id]);
        assert.equal((await store.recallStats('acme/blog', NOW, 10)).top[0]?.count, 1);
        // One call counts each listed memory that still exists, the deleted one not again.
        await store.recordRecalls('acme/shop', [c.id, a.id, b.id], NOW);
        assert.deepEqual((await store.recallStats('acme/shop', NOW, 10)).top.map((t) => [t.id, t.count]), [[b.id, 2], [c.id, 1]]);
      });

      test('term document frequencies count indexed memories per term, across namespaces', async (store, t) => {
        if (!needsFullText(store, t)) return;
        await store.transaction(async (tx) => {
          await tx.insertMemory(makeMemory('acme/shop', 'dev server one'), null, ['start', 'dev', 'server']);
          await tx.insertMemory(makeMemory('acme/shop', 'dev server two'), null, ['start', 'dev', 'server', 'turbo']);
          await tx.insertMemory(makeMemory('acme/blog', 'tax rule'), null, ['tax', 'shop/checkout/tax.py']);
        });
        const { documents, frequencies } = await store.termDocumentFrequencies(['dev', 'turbo', 'tax', 'shop/checkout/tax.py', 'absent', 'dev']);
        assert.equal(documents, 3);
        assert.deepEqual(Object.fromEntries(frequencies), { dev: 2, turbo: 1, tax: 1, 'shop/checkout/tax.py': 1 });
        const one = (await store.listMemories({ namespace: 'acme/shop', limit: 10, now: NOW }))[0] as Memory;
        await store.transaction((tx) => tx.deleteMemory(one.id));
        const after = await store.termDocumentFrequencies(['dev']);
        assert.equal(after.documents, 2);
        assert.equal(after.frequencies.get('dev'), 1);
      });

      test('a closed store refuses work with STORE_UNAVAILABLE', async (store) => {
        await store.close();
        await rejectsWith(store.getMemory(ulid()), 'STORE_UNAVAILABLE');
        await rejectsWith(store.transaction(async () => 1), 'STORE_UNAVAILABLE');
        await store.close(); // closing twice is harmless
      });
    });

    describeLogCases({ test, makeMemory, filter, axis, rejectsWith, needsVectors, embedder: EMBEDDER, now: NOW });
  });

  // A skip must name a case that exists, so a renamed case cannot silently stay skipped.
  for (const title of Object.keys(skip)) {
    if (!titles.has(title)) throw new Error(`describeStoreContract(${name}): skip names no contract case: ${JSON.stringify(title)}`);
  }
}

