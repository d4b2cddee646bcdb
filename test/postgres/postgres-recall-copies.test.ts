/**
 * Search copies of a long-lived process on PostgreSQL (postgres-recall-copies.ts): once a namespace's copy is
 * loaded, the fused statement rescores the memories the copy proposes instead of walking the HNSW index and
 * scanning the postings, and answers exactly what the same statement answers without a copy, while another
 * process (another store on the same database) saves, forgets, supersedes and re-tags memories. A proposal
 * that does not stand (the log moved on, or too few proposed memories pass the filter) makes the search run
 * again in full. Real server, real embedder, real analysed terms.
 */
import * as assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../../src/adapters/embed-use/use-embedder.js';
import { proposedOrFull, RecallCopies } from '../../src/adapters/postgres/postgres-recall-copies.js';
import { arrayRowsOf, Params, vectorLiteral, type ArrayRows } from '../../src/adapters/postgres/postgres-rows.js';
import { REANALYSIS_MARK, SCHEMA_VERSION } from '../../src/adapters/postgres/postgres-schema.js';
import type { Proposals } from '../../src/adapters/postgres/postgres-recall-copy.js';
import { fusedRecallSql, vectorCandidatesSql } from '../../src/adapters/postgres/postgres-search.js';
import { createPostgresStore, type PostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { createGptTokenCounter } from '../../src/adapters/tokenizer/gpt-token-counter.js';
import { DEFAULT_CALIBRATION, DEFAULT_WEIGHTS } from '../../src/core/fusion.js';
import { Engine } from '../../src/core/engine.js';
import { queryTerms } from '../../src/core/lexical.js';
import type { Embedder } from '../../src/interfaces/embedder.js';
import type { FusedRecall, FusedRecallRequest } from '../../src/interfaces/store.js';
import { openEngine } from '../../src/surfaces/open-engine.js';
import { createTestDatabase, pgSkip, testStoreConfig, type TestDatabase } from '../helpers/postgres.js';

const NS = 'github.com/acme/shop';
const OTHER_NS = 'github.com/acme/ops';
const SUBJECTS = [
  'The checkout reads PAYMENTS_V2_ENABLED before it loads shop/checkout/tax.py',
  'Money is kept as integer cents; floats are refused at the API boundary',
  'Releases ship every Tuesday once the freeze is lifted',
  'VAT on the invoice export is rounded line by line',
  'getUserName gives null when the account was deleted',
  'ERR_STOCK_DRIFT_17 is raised when warehouse and ledger counts differ',
  'Webhook calls are retried three times, backing off exponentially',
  'Every night at 02:00 UTC the staging database is wiped',
  'Redis caches search results for five minutes',
  'At start the mobile app fetches its feature flags from the config service',
];
const QUERIES = [
  'where is PAYMENTS_V2_ENABLED read',
  'how do we keep money amounts',
  'which day do deploys happen',
  'VAT rounding on invoices',
  'ERR_STOCK_DRIFT_17',
  'webhook retries',
  'when is staging wiped',
  'how long are search results cached',
];

function sameResults(a: FusedRecall, b: FusedRecall, label: string): void {
  assert.deepEqual(
    a.results.map((r) => r.fields.id),
    b.results.map((r) => r.fields.id),
    `${label}: the same memories in the same order`,
  );
  a.results.forEach((r, i) => {
    const o = b.results[i];
    assert.deepEqual(r.fields, o?.fields, `${label} #${i}: the same memory`);
    assert.equal(r.score, o?.score, `${label} #${i}: the same score, to the bit`);
    assert.deepEqual(r.scoreDetails, o?.scoreDetails, `${label} #${i}: the same details`);
  });
  assert.equal(a.bestCosine, b.bestCosine, `${label}: the same best cosine`);
  assert.deepEqual(a.termStatistics, b.termStatistics, `${label}: the same term statistics`);
}

describe('PostgreSQL search copies of a long-lived process', { skip: pgSkip }, () => {
  let db: TestDatabase;
  let embedder: Embedder;
  /** The long-lived process's store, with copies. */
  let copied: PostgresStore;
  /** The same database without copies: what the statement answers in full. */
  let plain: PostgresStore;
  /** Another process writing to the same database. */
  let writer: Engine;
  let writerStore: PostgresStore;
  const now = () => new Date().toISOString();

  before(async () => {
    db = await createTestDatabase({ vector: true });
    embedder = createUseEmbedder();
    writerStore = createPostgresStore(testStoreConfig(db.url));
    writer = new Engine({ store: writerStore, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, ingestFilter: { enabled: false } });
    for (const ns of [NS, OTHER_NS]) {
      for (let i = 0; i < 60; i++) {
        const subject = SUBJECTS[i % SUBJECTS.length] as string;
        await writer.save({
          text: `${subject} (note ${i} of ${ns}${i % 7 === 0 ? ', see the payments runbook' : ''})`,
          namespace: ns,
          kind: i % 4 === 0 ? 'decision' : 'fact',
          tags: i % 3 === 0 ? ['billing'] : ['ops'],
          ...(i % 13 === 12 ? { expiresAt: '2026-01-01T00:00:00.000Z' } : {}),
        });
      }
    }
    copied = createPostgresStore(testStoreConfig(db.url, { recallCopies: true }));
    plain = createPostgresStore(testStoreConfig(db.url));
  });
  after(async () => {
    await copied?.close();
    await plain?.close();
    await writerStore?.close();
    await db?.drop();
  });

  const request = async (query: string, filter: Partial<FusedRecallRequest['filter']> = {}, over: Partial<FusedRecallRequest> = {}): Promise<FusedRecallRequest> => {
    const [vector] = await embedder.embed([query]);
    return { vector: vector as Float32Array, terms: queryTerms(query), k: 30, filter: { namespace: NS, now: now(), ...filter }, weights: DEFAULT_WEIGHTS, calibration: DEFAULT_CALIBRATION, ...over };
  };

  /** Each set of copies loads the copy of `req`'s namespace (its first proposal starts the load). */
  const loadCopies = async (req: FusedRecallRequest, ...all: RecallCopies[]): Promise<void> => {
    for (const copies of all) {
      await copies.propose(req);
      await copies.settled();
    }
  };
  const PROPOSAL_FILTERS: Partial<FusedRecallRequest['filter']>[] = [{}, { kinds: ['decision'] }, { tags: ['billing'] }];
  /** Two sets of copies propose the same for every query under each of PROPOSAL_FILTERS. */
  const sameProposals = async (a: RecallCopies, b: RecallCopies, label: string): Promise<void> => {
    for (const query of QUERIES) {
      for (const filter of PROPOSAL_FILTERS) {
        const req = await request(query, filter);
        assert.deepEqual(await a.propose(req), await b.propose(req), `${label}: ${query} ${JSON.stringify(filter)}`);
      }
    }
  };

  /** Every query, with several filters and with and without related terms and a vector, on both stores. */
  const compareAll = async (label: string): Promise<void> => {
    const filters: Partial<FusedRecallRequest['filter']>[] = [{}, { kinds: ['decision'] }, { tags: ['billing'] }, { includeInactive: true }, { namespace: OTHER_NS }];
    for (const query of QUERIES) {
      for (const filter of filters) {
        const req = await request(query, filter);
        sameResults(await copied.fusedRecall(req), await plain.fusedRecall(req), `${label}: ${query} ${JSON.stringify(filter)}`);
      }
      const related = await request(query, {}, { related: { terms: ['cache', 'flag', 'retry'], k: 20, weight: 0.7 } });
      sameResults(await copied.fusedRecall(related), await plain.fusedRecall(related), `${label}: ${query} with related terms`);
      const lexicalOnly = await request(query, {}, { vector: null });
      sameResults(await copied.fusedRecall(lexicalOnly), await plain.fusedRecall(lexicalOnly), `${label}: ${query} without a vector`);
    }
  };

  it('loads a copy in the background at the first search, then answers from it what the full statement answers', async () => {
    const first = await request(QUERIES[0] as string);
    sameResults(await copied.fusedRecall(first), await plain.fusedRecall(first), 'first search, before any copy');
    assert.equal(copied.recallCopiesStatus()?.without, 1, 'the first search found no copy and searched in full');
    assert.equal(await copied.recallCopiesSettled(), true);
    await copied.fusedRecall(await request(QUERIES[1] as string, { namespace: OTHER_NS }));
    assert.equal(await copied.recallCopiesSettled(), true);
    const loaded = copied.recallCopiesStatus();
    assert.deepEqual(loaded?.namespaces.map((n) => [n.namespace, n.memories, n.vectors]).sort(), [
      [OTHER_NS, 60, 60],
      [NS, 60, 60],
    ]);
    await compareAll('loaded');
    const status = copied.recallCopiesStatus();
    // 7 searches a query (a search that returns nothing has no row to say so, hence 6).
    assert.ok((status?.stood ?? 0) >= QUERIES.length * 6, `the comparisons were answered from proposals (${JSON.stringify(status)})`);
    assert.equal(status?.fellBack, 0, 'no proposal fell back while nothing was written');
  });

  it("follows another process's saves, forgets, supersedes, tag changes and expiries through the log", async () => {
    const before = copied.recallCopiesStatus()?.position ?? 0;
    const added = await writer.save({ text: 'Webhook deliveries are signed with HMAC-SHA256 using WEBHOOK_SIGNING_KEY_V3', kind: 'decision', tags: ['billing'] });
    const listed = await writer.list({ namespace: NS, limit: 200 });
    const victim = listed.find((m) => m.text.startsWith('Webhook calls are retried')) as { id: string };
    await writer.forget(victim.id, { reason: 'test' });
    const old = listed.find((m) => m.text.startsWith('Redis caches search results')) as { id: string };
    await writer.supersede(old.id, { text: 'Redis caches search results for ten minutes since the 2026-12 change' });
    const expiring = await writer.save({ text: 'The CDN purge token PURGE_TOKEN_EU rotates every hour', kind: 'fact', expiresAt: new Date(Date.now() + 1500).toISOString() });
    assert.equal((await copied.fusedRecall(await request('PURGE_TOKEN_EU rotation'))).results[0]?.fields.id, expiring.id, 'found before it expires');
    await new Promise((r) => setTimeout(r, 1600));
    const afterExpiry = (await copied.fusedRecall(await request('PURGE_TOKEN_EU rotation'))).results.map((r) => r.fields.id);
    assert.ok(!afterExpiry.includes(expiring.id), 'an expired note is not recalled (no event marks an expiry)');
    await compareAll('after writes');
    const status = copied.recallCopiesStatus();
    assert.ok((status?.position ?? 0) > before, 'the copies followed the log');
    const found = await copied.fusedRecall(await request('WEBHOOK_SIGNING_KEY_V3 signed deliveries'));
    assert.equal(found.results[0]?.fields.id, added.id, "another process's new note is found first by its identifier");
    const ids = (await copied.fusedRecall(await request('webhook retries', {}, { k: 200 }))).results.map((r) => r.fields.id);
    assert.ok(!ids.includes(victim.id), 'a forgotten note is not recalled');
    assert.ok(!ids.includes(old.id), 'a superseded note is not recalled');
  });

  it('a proposal that does not stand makes the search run again in full: a log moved on, or proposed memories the filter drops', async () => {
    const req = await request('how do we keep money amounts', { kinds: ['decision'] });
    const expected = await plain.fusedRecall(req);
    const position = copied.recallCopiesStatus()?.position ?? 0;
    const pks = await pksOf(db, NS, 'fact', req.filter.now);
    const sql = (p: Params, proposals?: Proposals) => fusedRecallSql(p, req, { storage: 'pgvector', dimensions: 512 }, proposals);
    const statements: { proposed: boolean; rows: number }[] = [];
    const counts: boolean[] = [];
    const run = async (proposals: Proposals) => {
      statements.length = 0;
      counts.length = 0;
      return proposedOrFull(
        async (text, values) => {
          const result = await arrayQuery(db, text, values);
          statements.push({ proposed: text.includes('fresh AS'), rows: result.rows.length });
          return result;
        },
        proposals,
        sql,
        (stood) => counts.push(stood),
      ).then(idsOf);
    };
    const need = 1;
    assert.ok(expected.results.length > 0, 'the case finds something');
    // Memories of the wrong kind proposed (a copy that got the filter wrong): the statement ranks them without
    // reading their rows, finds that those it would return fail the filter, and the search runs in full.
    const wrongKind = await run({ position, schema: SCHEMA_VERSION, vector: { pks, need }, lexical: { pks, need, postings: await postingsOf(db, pks, req.terms) } });
    assert.deepEqual(counts, [false], 'the statement says its proposal did not stand');
    assert.ok((statements[0]?.rows ?? 0) > 0, 'it ranked the wrong-kind memories');
    assert.deepEqual(statements.slice(1), [{ proposed: false, rows: expected.results.length }]);
    assert.deepEqual(wrongKind, expected.results.map((r) => r.fields.id));
    // One wrong memory among right ones is enough when it is returned: the right decisions, one fact added.
    const decisions = await pksOf(db, NS, 'decision', req.filter.now);
    const oneWrong = [...decisions, pks[0] as number];
    await run({ position, schema: SCHEMA_VERSION, vector: { pks: oneWrong, need }, lexical: { pks: oneWrong, need: 0, postings: await postingsOf(db, oneWrong, req.terms) } });
    assert.deepEqual(counts, [false], 'a returned memory of the wrong kind makes the proposal not stand');
    // A stale position: the proposal is not taken even though it names real candidates.
    const all = await pksOf(db, NS, 'decision', req.filter.now);
    // (No decision note holds a word of the query, so the lexical proposal needs none to pass.)
    const allPostings = await postingsOf(db, all, req.terms);
    const stale = await run({ position: position - 1, schema: SCHEMA_VERSION, vector: { pks: all, need }, lexical: { pks: all, need: 0, postings: allPostings } });
    assert.deepEqual(counts, [false], 'the statement says its proposal did not stand');
    assert.deepEqual(statements.map((x) => x.proposed), [true, false]);
    assert.deepEqual(stale, expected.results.map((r) => r.fields.id));
    // Every passing memory proposed at the right position: the proposal stands, with the same answer, in one statement.
    const fresh = await run({ position, schema: SCHEMA_VERSION, vector: { pks: all, need }, lexical: { pks: all, need: 0, postings: allPostings } });
    assert.deepEqual(counts, [true]);
    assert.deepEqual(statements.map((x) => x.proposed), [true]);
    assert.deepEqual(fresh, expected.results.map((r) => r.fields.id));
  });

  it('the vector search over a proposal stands only when the memories it returns pass the filter', async () => {
    const req = await request('how do we keep money amounts', { kinds: ['decision'] });
    const vector = req.vector as Float32Array;
    const k = 5;
    const expected = await plain.vectorCandidates(vector, k, req.filter);
    assert.ok(expected.length > 0, 'the case finds something');
    const position = copied.recallCopiesStatus()?.position ?? 0;
    const sql = (p: Params, proposals?: Proposals) => vectorCandidatesSql(p, vectorLiteral(vector, 'pgvector'), k, req.filter, { storage: 'pgvector', dimensions: 512 }, proposals);
    const counts: boolean[] = [];
    const run = async (pks: number[]) => {
      counts.length = 0;
      return idsOf(await proposedOrFull((text, values) => arrayQuery(db, text, values), { position, schema: SCHEMA_VERSION, vector: { pks, need: 1 } }, sql, (stood) => counts.push(stood)));
    };
    const decisions = await pksOf(db, NS, 'decision', req.filter.now);
    assert.deepEqual(await run(decisions), expected.map((h) => h.id), 'every passing memory proposed: the same answer');
    assert.deepEqual(counts, [true], 'from the proposal');
    const facts = await pksOf(db, NS, 'fact', req.filter.now);
    assert.deepEqual(await run([...decisions, ...facts]), expected.map((h) => h.id), 'memories of the wrong kind proposed: the same answer');
    assert.deepEqual(counts, [false], 'in full, the proposal having returned a memory of the wrong kind');
  });

  it('a re-analysis of the postings (no events) drops the copies; none is read while it runs, and it is read anew after', async () => {
    const req = await request('VAT rounding on invoices');
    sameResults(await copied.fusedRecall(req), await plain.fusedRecall(req), 'before');
    assert.ok((copied.recallCopiesStatus()?.namespaces.length ?? 0) > 0);
    // What a re-analysis does to a memory: its postings rewritten in place, with no event. Here a term the
    // copy does not know, under the mark a re-analysis holds while it runs.
    await query(db, `INSERT INTO meta (key, value) VALUES ($1, '0')`, [REANALYSIS_MARK]);
    const [target] = (await query(db, `SELECT pk FROM memories WHERE namespace = $1 AND text LIKE 'VAT on the invoice export%' ORDER BY pk LIMIT 1`, [NS])).rows as { pk: string }[];
    await query(db, `INSERT INTO memory_terms (namespace, term, memory_pk, tf) VALUES ($1, $2, $3, 3)`, [NS, queryTerms('vatrounding')[0], target?.pk]);
    const during = await request('vatrounding');
    const answered = await copied.fusedRecall(during);
    sameResults(answered, await plain.fusedRecall(during), 'while the re-analysis runs');
    assert.equal((await copied.getMemory(answered.results[0]?.fields.id ?? ''))?.text.startsWith('VAT on the invoice export'), true, 'the rewritten postings are searched');
    assert.deepEqual(copied.recallCopiesStatus()?.namespaces, [], 'the copies were dropped');
    await copied.recallCopiesSettled();
    assert.deepEqual(copied.recallCopiesStatus()?.namespaces, [], 'and none is read while the mark is there');
    await query(db, 'DELETE FROM meta WHERE key = $1', [REANALYSIS_MARK]);
    await copied.fusedRecall(during);
    await copied.recallCopiesSettled();
    const stoodBefore = copied.recallCopiesStatus()?.stood ?? 0;
    sameResults(await copied.fusedRecall(during), await plain.fusedRecall(during), 'after, from a copy read anew');
    assert.equal(copied.recallCopiesStatus()?.stood, stoodBefore + 1, 'the new copy answered');
  });

  it('a namespace larger than the bound gets no copy and is searched in full', async () => {
    const small = new RecallCopies(await plain.open(), 512, undefined, 59);
    const req = await request('webhook retries');
    assert.equal(await small.propose(req), null);
    await small.settled();
    assert.deepEqual(small.status().tooLarge, [NS], 'more than 59 memories: no copy');
    assert.deepEqual(small.status().namespaces, []);
    assert.equal(await small.propose(req), null, 'and no second load is started');
    assert.deepEqual(small.status().loading, []);
    await small.close();
  });

  it('the store\'s copyMaxMemories bounds its copies, and 0 keeps none', async () => {
    const req = await request('webhook retries');
    const bounded = createPostgresStore(testStoreConfig(db.url, { recallCopies: true, copyMaxMemories: 59 }));
    const none = createPostgresStore(testStoreConfig(db.url, { recallCopies: true, copyMaxMemories: 0 }));
    try {
      for (const store of [bounded, none]) {
        sameResults(await store.fusedRecall(req), await plain.fusedRecall(req), 'searched in full');
        await store.recallCopiesSettled();
      }
      assert.deepEqual(bounded.recallCopiesStatus()?.tooLarge, [NS], '60 memories, bound 59: no copy');
      assert.equal(none.recallCopiesStatus(), null, 'no copies kept at all');
    } finally {
      await bounded.close();
      await none.close();
    }
  });

  it('a namespace scanned in the worker thread gets the proposals of a scan on this thread, also after changes', async () => {
    const pool = await plain.open();
    // Every namespace in the worker (from one vector), against none.
    const inWorker = new RecallCopies(pool, 512, undefined, undefined, 1);
    const here = new RecallCopies(pool, 512, undefined, undefined, Number.POSITIVE_INFINITY);
    const compare = (label: string) => sameProposals(inWorker, here, label);
    const req = await request('webhook retries');
    await loadCopies(req, inWorker, here);
    // The first scan sends the worker its copy of the codes (and scans here); later ones wait for it to hold it.
    await inWorker.propose(req);
    for (let i = 0; i < 200 && inWorker.status().scanWorker.namespaces.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(inWorker.status().scanWorker.namespaces, [NS], 'the worker holds the namespace');
    const scansBefore = inWorker.status().scanWorker.scans;
    await compare('worker copy');
    assert.ok(inWorker.status().scanWorker.scans >= scansBefore + QUERIES.length * PROPOSAL_FILTERS.length, 'the vector proposals were scanned in the worker');
    // Changes follow the copy into the worker: new, replaced and forgotten vectors.
    await writer.save({ text: 'Webhook deliveries are signed with WEBHOOK_SIGNING_KEY_V4 since the audit', namespace: NS, kind: 'decision', tags: ['billing'] });
    const victim = (await writer.list({ namespace: NS, limit: 200 })).find((m) => m.text.startsWith('VAT on the invoice export')) as { id: string };
    await writer.forget(victim.id, { reason: 'test' });
    await compare('after changes');
    const found = await inWorker.propose(await request('WEBHOOK_SIGNING_KEY_V4 signed webhook deliveries'));
    assert.ok(found?.vector?.pks.length, 'a vector proposal');
    assert.equal(inWorker.status().scanWorker.state, 'running');
    assert.equal(inWorker.status().scanWorker.reason, null);
    await inWorker.close();
    await here.close();
    assert.equal(inWorker.status().scanWorker.state, 'off');
  });

  it('a namespace with coarse lists (built in a worker from a snapshot of its codes) proposes what a full scan proposes, also after changes', async () => {
    const pool = await plain.open();
    // Lists from 20 vectors; the lists' probe (at least 40,000 rows) then holds the whole namespace, so their
    // proposals must be the full scan's exactly.
    const listed = new RecallCopies(pool, 512, undefined, undefined, Number.POSITIVE_INFINITY, 20);
    const full = new RecallCopies(pool, 512, undefined, undefined, Number.POSITIVE_INFINITY);
    const compare = (label: string) => sameProposals(listed, full, label);
    const req = await request('webhook retries');
    await loadCopies(req, listed, full);
    assert.deepEqual(listed.status().coarseLists, [], 'no lists before the copy searched');
    // This proposal starts the build (answered by the full scan); settled() waits for it and its install.
    await listed.propose(req);
    await listed.settled();
    assert.equal(listed.status().coarseBuild, 'idle');
    const [lists] = listed.status().coarseLists;
    assert.equal(lists?.namespace, NS);
    const vectors = listed.status().namespaces.find((n) => n.namespace === NS)?.vectors;
    assert.equal(lists?.vectors, vectors, 'every vector of the namespace is in a list');
    await compare('lists');
    assert.ok((listed.status().coarseLists[0]?.searches ?? 0) >= QUERIES.length * PROPOSAL_FILTERS.length, 'the vector proposals came from the lists');
    assert.deepEqual(full.status().coarseLists, [], 'below the bound: no lists');
    // Changes follow the copy into its lists: new, replaced and forgotten vectors.
    await writer.save({ text: 'Webhook deliveries carry WEBHOOK_SIGNING_KEY_V5 signatures since the second audit', namespace: NS, kind: 'decision', tags: ['billing'] });
    const victim = (await writer.list({ namespace: NS, limit: 200 })).find((m) => m.text.startsWith('Money is kept')) as { id: string };
    await writer.forget(victim.id, { reason: 'test' });
    await compare('after changes');
    assert.equal(listed.status().coarseLists[0]?.vectors, listed.status().namespaces.find((n) => n.namespace === NS)?.vectors, 'the lists follow the codes');
    await listed.close();
    await full.close();
  });

  it('coarse lists one process built are kept in the database and taken by the next, which places what changed since; damaged, they are built anew; an erasure drops them', async () => {
    const pool = await plain.open();
    await query(db, 'DELETE FROM recall_lists', []);
    const lists = (copies: RecallCopies) => copies.status().coarseLists.find((l) => l.namespace === NS);
    const vectorsOf = (copies: RecallCopies) => copies.status().namespaces.find((n) => n.namespace === NS)?.vectors;
    const open = async (label: string): Promise<RecallCopies> => {
      const copies = new RecallCopies(pool, 512, undefined, undefined, Number.POSITIVE_INFINITY, 20);
      const req = await request('webhook retries');
      await loadCopies(req, copies);
      await copies.propose(req); // starts a build when none was taken
      await copies.settled();
      assert.equal(lists(copies)?.vectors, vectorsOf(copies), `${label}: every vector of the namespace is in a list`);
      return copies;
    };
    const full = new RecallCopies(pool, 512, undefined, undefined, Number.POSITIVE_INFINITY);
    await loadCopies(await request('webhook retries'), full);

    const first = await open('first');
    assert.deepEqual(first.status().savedLists, { built: 1, taken: 0, saved: 1, lastProblem: 'no saved lists' });
    const saved = (await query(db, 'SELECT namespace, dimensions FROM recall_lists', [])).rows;
    assert.deepEqual(saved, [{ namespace: NS, dimensions: 512 }]);
    // Changes after the save: the next process places them again from the log.
    await writer.save({ text: 'Webhook retries back off to six hours once the partner API returns 429 twice', namespace: NS, kind: 'decision', tags: ['billing'] });
    const victim = (await writer.list({ namespace: NS, limit: 200 })).find((m) => m.text.startsWith('Webhook')) as { id: string };
    await writer.forget(victim.id, { reason: 'test' });
    const second = await open('second');
    assert.deepEqual(second.status().savedLists, { built: 0, taken: 1, saved: 0, lastProblem: null });
    await sameProposals(second, full, 'saved lists');

    // Damaged bytes are never taken.
    await query(db, "UPDATE recall_lists SET body = overlay(body placing '\\x01020304'::bytea from 9)", []);
    const third = await open('third');
    assert.equal(third.status().savedLists.taken, 0);
    assert.equal(third.status().savedLists.built, 1);
    assert.match(third.status().savedLists.lastProblem ?? '', /damaged \(checksum\)/u);
    await sameProposals(third, full, 'lists built anew');

    // An erasure empties the table; a build from before it is never taken.
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await writer.save({ text: 'A note that is erased with its namespace', namespace: 'acme/erased-lists' });
    assert.equal((await query(db, 'SELECT namespace FROM recall_lists', [])).rows.length, 1, 'the third build was saved');
    await writer.erase({ namespace: 'acme/erased-lists' }, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    assert.deepEqual((await query(db, 'SELECT namespace FROM recall_lists', [])).rows, []);
    const fourth = await open('after the erasure');
    assert.deepEqual(fourth.status().savedLists, { built: 1, taken: 0, saved: 1, lastProblem: 'no saved lists' });
    for (const copies of [first, second, third, fourth, full]) await copies.close();
  });

  it('a store keeps no copies unless asked (what short commands open)', async () => {
    await plain.fusedRecall(await request('webhook retries'));
    assert.equal(plain.recallCopiesStatus(), null);
  });
});

/** A statement's rows as arrays, as the store reads search statements. */
async function arrayQuery(db: TestDatabase, sql: string, values: unknown[]): Promise<ArrayRows> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return arrayRowsOf(await client.query({ text: sql, values, rowMode: 'array' }));
  } finally {
    await client.end();
  }
}

/** The `id` column of rows read as arrays. */
function idsOf({ rows, columns }: ArrayRows): unknown[] {
  const at = columns.get('id') as number;
  return rows.map((r) => r[at]);
}

async function query(db: TestDatabase, sql: string, values: unknown[]): Promise<{ rows: unknown[] }> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return await client.query(sql, values);
  } finally {
    await client.end();
  }
}

/** The postings of `pks` for `terms`, as a copy would propose them. */
async function postingsOf(db: TestDatabase, pks: number[], terms: string[]): Promise<{ pks: number[]; terms: string[]; tfs: number[]; lengths: number[] }> {
  const { rows } = await query(
    db,
    'SELECT d.memory_pk, d.term, d.tf, m.doc_length FROM memory_terms d JOIN memories m ON m.pk = d.memory_pk WHERE d.memory_pk = ANY($1::bigint[]) AND d.term = ANY($2::text[]) ORDER BY d.memory_pk, d.term',
    [pks, terms],
  );
  const typed = rows as { memory_pk: string; term: string; tf: number; doc_length: number }[];
  return { pks: typed.map((r) => Number(r.memory_pk)), terms: typed.map((r) => r.term), tfs: typed.map((r) => r.tf), lengths: typed.map((r) => r.doc_length) };
}

/** The memories of a kind that pass a search's filter at `now` (current, not expired), as a copy proposes them. */
async function pksOf(db: TestDatabase, namespace: string, kind: string, now: string): Promise<number[]> {
  const { rows } = await query(
    db,
    'SELECT pk FROM memories WHERE namespace = $1 AND kind = $2 AND forgotten_at IS NULL AND superseded_by IS NULL AND (expires_at IS NULL OR expires_at > $3) ORDER BY pk',
    [namespace, kind, now],
  );
  return (rows as { pk: string }[]).map((r) => Number(r.pk));
}

describe('composition root: search copies only in long-lived processes on PostgreSQL', { skip: pgSkip }, () => {
  let db: TestDatabase;
  let dir: string;
  before(async () => {
    db = await createTestDatabase({ vector: true });
    dir = mkdtempSync(join(tmpdir(), 'cairn-pg-copies-'));
  });
  after(async () => {
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serve and mcp search from copies; every other command searches in full', async () => {
    const environment = { env: { HOME: dir, XDG_CONFIG_HOME: dir, XDG_CACHE_HOME: dir, XDG_DATA_HOME: dir }, cwd: dir };
    const copies = async (longLived: boolean) => {
      const opened = await openEngine({ db: db.url, namespace: 'ns' }, { longLived }, environment);
      try {
        await opened.engine.save({ text: 'the deploy worker retries three times before paging', kind: 'fact' });
        await opened.engine.search('deploy worker retries');
        const store = opened.engine.store as PostgresStore;
        await store.recallCopiesSettled();
        const found = await opened.engine.search('deploy worker retries');
        assert.match(found[0]?.memory.text ?? '', /deploy worker retries/u);
        return store.recallCopiesStatus();
      } finally {
        await opened.close();
      }
    };
    assert.equal(await copies(false), null);
    const long = await copies(true);
    assert.equal(long?.namespaces[0]?.namespace, 'ns');
    assert.ok((long?.stood ?? 0) >= 1, `the second search was answered from the copy (${JSON.stringify(long)})`);
  });
});
