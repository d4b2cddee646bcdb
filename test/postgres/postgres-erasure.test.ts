/**
 * Provable erasure on PostgreSQL, against a real server: the erasing transaction removes rows, postings,
 * vectors (HNSW) and event contents; VACUUM FULL then rewrites the tables and rebuilds their indexes, so the
 * erased bytes leave the table, TOAST and index files. The test reads the database's own files in the
 * cluster's data directory (base/<oid>) itself, before (the texts are there, a long one in TOAST) and after
 * (none is). A role that may not read the server's files cannot prove an erasure and is refused up front.
 */
import * as assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createUseEmbedder } from '../../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../../src/adapters/tokenizer/gpt-token-counter.js';
import { createPostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { createSqliteStore } from '../../src/adapters/sqlite/sqlite-store.js';
import { verifyCertificate } from '../../src/core/certificate.js';
import { Engine } from '../../src/core/engine.js';
import { erase } from '../../src/core/erasure.js';
import { verify } from '../../src/core/replay.js';
import { isCairnError } from '../../src/interfaces/errors.js';
import { analyse } from '../../src/core/lexical.js';
import { adminQuery, createTestDatabase, pgSkip, testStoreConfig, type TestDatabase } from '../helpers/postgres.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PUBLIC = publicKey.export({ type: 'spki', format: 'pem' }).toString();

const LONG = `Jane Doe's full support history, kept verbatim: ${Array.from({ length: 60 }, (_, i) => `visit ${i} to the Lyon shop about order ${88000 + i}`).join('; ')}.`;
const SECRET_TEXTS = [
  'Customer Jane Doe of Lyon asked for every invoice as a PDF attachment only',
  'Jane Doe prefers the Thursday maintenance window for her shop in Lyon',
  'Ticket from Jane Doe: the refund for order 88123 is still pending',
  LONG,
];

/** Every file of the database's folder in the data directory (tables, TOAST, indexes, all forks). */
function databaseFiles(db: TestDatabase): Buffer {
  const files = readdirSync(db.databaseDir).map((f) => join(db.databaseDir, f)).filter((f) => statSync(f).isFile());
  return Buffer.concat(files.map((f) => readFileSync(f)));
}

/**
 * The pieces of a text to look for: TOAST cuts a long value into chunks of about 2 KB, so a long text is
 * looked for as consecutive 900-byte pieces (any 1996 stored bytes hold one whole piece; a piece across a
 * chunk border is not contiguous, so "there" means some piece is found, "gone" that none is).
 */
function pieces(text: string): Buffer[] {
  const b = Buffer.from(text);
  if (b.length <= 900) return [b];
  return Array.from({ length: Math.floor(b.length / 900) }, (_, i) => b.subarray(i * 900, i * 900 + 900));
}

async function checkpoint(): Promise<void> {
  const c = new pg.Client({ connectionString: process.env['CAIRN_TEST_PG'] });
  await c.connect();
  await c.query('CHECKPOINT'); // dirty pages reach the files, so the "before" check sees what is stored
  await c.end();
}

describe('provable erasure on PostgreSQL', { skip: pgSkip }, () => {
  const embedder = createUseEmbedder();
  let db: TestDatabase;
  before(async () => {
    await embedder.embed(['warm up']);
    db = await createTestDatabase({ vector: true });
  });
  after(async () => db?.drop());

  const engineOn = (url: string, namespace: string) =>
    new Engine({ store: createPostgresStore(testStoreConfig(url)), embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: namespace, snapshotEvery: 2 });

  it('erases a namespace from rows, TOAST and index files; the certificate says what was checked', async () => {
    const engine = engineOn(db.url, 'acme/keep');
    const keep = await engine.save({ text: 'Deploys go out on Tuesdays after the standup', namespace: 'acme/keep' });
    const first = await engine.save({ text: SECRET_TEXTS[0] as string, namespace: 'acme/erase' });
    await engine.commitTurn({ namespace: 'acme/erase', session: 's1', turn: 0, text: SECRET_TEXTS[1] as string });
    await engine.commitTurn({ namespace: 'acme/erase', session: 's1', turn: 1, text: SECRET_TEXTS[2] as string }); // snapshot
    await engine.save({ text: LONG, namespace: 'acme/erase' });
    await engine.forget(first.id, { namespace: 'acme/erase', reason: 'test' });
    await engine.restore(first.id, { namespace: 'acme/erase' });
    assert.ok(await engine.store.getSnapshot('acme/erase'), 'a snapshot holds the data too');
    assert.ok(engine.store.erasureProof, 'a superuser may read the files: erasure can be proved');
    await checkpoint();
    const beforeBytes = databaseFiles(db);
    for (const t of SECRET_TEXTS) assert.ok(pieces(t).some((p) => beforeBytes.includes(p)), `the text is in the files before: ${t.slice(0, 40)}…`);
    assert.ok(Buffer.byteLength(LONG) > 2100, 'one text is long enough to live in TOAST');

    const cert = await engine.erase({ namespace: 'acme/erase' }, PRIVATE);
    const c = cert.certificate;
    assert.equal(c.counts['memories'], 4);
    assert.ok(c.checks.every((x) => x.passed), JSON.stringify(c.checks));
    const fileCheck = c.checks.find((x) => x.name === 'file-bytes');
    assert.match(fileCheck?.detail ?? '', /^0 of \d+ erased strings and \d+ erased terms found/u);
    assert.equal(verifyCertificate(cert, PUBLIC).valid, true);
    // What was checked, in PostgreSQL's terms, signed with the rest.
    assert.equal(c.proof.backend, 'postgres');
    assert.ok(c.proof.compaction.some((s) => /^VACUUM FULL of \d+ tables/u.test(s)), JSON.stringify(c.proof.compaction));
    for (const kind of ['table files', 'TOAST', 'index files']) {
      const scanned = c.proof.scanned.find((s) => s.what.includes(kind));
      assert.ok(scanned && scanned.files > 0 && scanned.bytes > 0, `${kind} were read: ${JSON.stringify(c.proof.scanned)}`);
    }
    assert.ok(c.proof.notCovered.some((s) => s.includes('pg_wal')), 'the certificate says the WAL is not covered');

    assert.equal((await engine.search('Jane Doe invoices PDF Lyon', { namespace: 'acme/erase' })).length, 0);
    const events = await engine.store.events('acme/erase');
    assert.ok(events.length > 0 && events.every((e) => e.type === 'erased'), 'events keep their place, not their content');
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), 'no gap');
    assert.equal((await engine.search('when do deploys go out', { namespace: 'acme/keep' }))[0]?.memory.id, keep.id, 'other namespaces are untouched');
    const scratch = createSqliteStore({ path: ':memory:' });
    assert.ok((await verify(engine.store, scratch)).ok, 'cairn verify still holds');
    await scratch.close();
    await engine.store.close();

    await checkpoint();
    const afterBytes = databaseFiles(db);
    for (const t of SECRET_TEXTS) assert.ok(pieces(t).every((p) => !afterBytes.includes(p)), `gone from the table and index files: ${t.slice(0, 40)}…`);
    assert.ok(!afterBytes.includes(Buffer.from('Jane Doe')), 'not even the name survives in dead tuples or index pages');
    assert.ok(afterBytes.includes(Buffer.from('Deploys go out on Tuesdays')), 'the kept memory is still in the files (the scan reads real data)');
  });

  /** Every value pg_stats shows for cairn's tables (most common values, histogram bounds, common elements), by column. */
  async function statValues(database: string): Promise<{ column: string; value: string }[]> {
    return adminQuery<{ column: string; value: string }>(
      database,
      `SELECT s.tablename || '.' || s.attname AS column, v AS value
         FROM pg_stats s,
              LATERAL unnest(coalesce(s.most_common_vals::text::text[], '{}') || coalesce(s.histogram_bounds::text::text[], '{}') || coalesce(s.most_common_elems::text::text[], '{}')) v
        WHERE s.schemaname = 'public'`,
    );
  }

  it('leaves no erased text or term in the planner statistics (pg_stats), and the proof looks there', async () => {
    const engine = engineOn(db.url, 'acme/stats-keep');
    const kept = ['Rotate the staging keys monthly', 'Builds cache node modules', 'Alerts page the on-call engineer', 'Deploy freeze over the holidays'];
    for (const text of kept) await engine.save({ text, namespace: 'acme/stats-keep' });
    const erased = ['Quintessa Vorbrugge approves every refund above 500 euros', 'Call Quintessa Vorbrugge before touching the ledger'];
    for (const text of erased) await engine.save({ text, namespace: 'acme/stats-erase' });
    const rare = [...new Set(analyse('Quintessa Vorbrugge'))];
    assert.equal(rare.length, 2, JSON.stringify(rare));
    // What autovacuum's auto-analyze does on a busy store: sample values land in pg_statistic.
    await adminQuery(db.name, 'ANALYZE');
    const holding = (values: { column: string; value: string }[]) =>
      [...new Set(values.filter((v) => erased.some((t) => v.value.includes(t)) || rare.includes(v.value)).map((v) => v.column))].sort();
    const before = holding(await statValues(db.name));
    assert.ok(before.includes('memories.text'), `the statistics hold the text before: ${before.join(', ')}`);
    assert.ok(before.includes('term_stats.term'), `the statistics hold the rare terms before: ${before.join(', ')}`);

    // The proof's own pg_stats check sees what the statistics hold (a kept note's term, after ANALYZE).
    const proof = engine.store.erasureProof;
    assert.ok(proof);
    const keptTerm = analyse('staging')[0] as string;
    const seen = await proof.check(['Rotate the staging keys monthly'], [], [keptTerm]);
    assert.equal(seen.found, 2, `the proof finds a kept text and a kept term in pg_stats: ${JSON.stringify(seen.scanned)}`);
    assert.ok(seen.scanned.some((s) => s.what.includes('pg_stats')), JSON.stringify(seen.scanned));

    const cert = await engine.erase({ namespace: 'acme/stats-erase' }, PRIVATE);
    const c = cert.certificate;
    assert.ok(c.checks.every((x) => x.passed), JSON.stringify(c.checks));
    assert.ok(c.proof.compaction.some((s) => /^ANALYZE/u.test(s)), JSON.stringify(c.proof.compaction));
    assert.ok(c.proof.compaction.some((s) => /VACUUM FULL pg_statistic/u.test(s)), JSON.stringify(c.proof.compaction));
    const after = holding(await statValues(db.name));
    assert.deepEqual(after, [], `no column's statistics hold the erased text or terms: ${after.join(', ')}`);
    assert.ok((await statValues(db.name)).some((v) => v.value.includes('Rotate the staging keys monthly')), 'the statistics were taken again from what is left');
    await engine.store.close();

    await checkpoint();
    const statFile = await adminQuery<{ path: string }>(db.name, `SELECT pg_relation_filepath('pg_statistic') AS path`);
    const bytes = readFileSync(join(db.dataDir, statFile[0]?.path as string));
    for (const term of rare) assert.ok(!bytes.includes(Buffer.from(term)), `pg_statistic's file holds no dead copy of ${term}`);
  });

  it('the report of a plan recorded before it kept its terms says which terms it looked for', async () => {
    const engine = engineOn(db.url, 'acme/older-erase');
    await engine.save({ text: 'Pellandra Quorvisk serialised the colour payloads', namespace: 'acme/older-erase' });
    const store = engine.store;
    const proof = store.erasureProof;
    assert.ok(proof);
    // The erasing transaction commits, then compaction fails: the pending record keeps the plan.
    const failing = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'erasureProof') return { ...proof, compact: () => Promise.reject(new Error('disk busy')) };
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    await assert.rejects(erase(failing, { scope: { namespace: 'acme/older-erase' }, privateKeyPem: PRIVATE, now: new Date().toISOString() }));
    const pending = (await store.pendingErasures()).find((p) => p.plan !== null);
    assert.ok(pending);
    const { terms: _terms, ...older } = pending.plan as Record<string, unknown>;
    await store.transaction(async (tx) => tx.putPendingErasure({ ...pending, plan: older }));
    const cert = await erase(store, { scope: { namespace: 'acme/older-erase' }, privateKeyPem: PRIVATE, now: new Date().toISOString() });
    const bytes = cert.certificate.checks.find((c) => c.name === 'file-bytes');
    assert.ok(bytes?.passed, JSON.stringify(cert.certificate.checks));
    assert.match(bytes.detail, /erased terms \(the plan predates kept terms: the erased texts' words as analysed now and before spellings were folded; a route's title, description and paths were not looked for\)/u);
    await store.close();
  });

  it('a role that cannot read the server files cannot prove an erasure and is refused before anything is erased', async () => {
    const plain = await createTestDatabase({ vector: false });
    const engine = engineOn(plain.url, 'acme/erase');
    try {
      await engine.save({ text: SECRET_TEXTS[0] as string });
      assert.equal(engine.store.erasureProof, undefined);
      assert.match(engine.store.noErasureProof ?? '', /pg_read_server_files/u);
      let caught: unknown;
      await engine.erase({ namespace: 'acme/erase' }, PRIVATE).catch((err: unknown) => (caught = err));
      assert.ok(isCairnError(caught, 'UNSUPPORTED'), String(caught));
      assert.match((caught as Error).message, /cannot prove an erasure, so nothing was erased: .*pg_read_server_files/u);
      assert.equal((await engine.list({ namespace: 'acme/erase' })).length, 1, 'nothing was erased');
    } finally {
      await engine.store.close();
      await plain.drop();
    }
  });
});
