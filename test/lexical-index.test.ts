import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { erasedTermsLeft, lexicalIndexComplete, lexicalIndexProblem } from '../src/adapters/sqlite/sqlite-lexical-index.js';
import { createSqliteStore, type SqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { analyse, queryTerms } from '../src/core/lexical.js';
import type { CandidateFilter, LexicalHit } from '../src/interfaces/store.js';

/**
 * The impact-ordered side index of the embedded store's full-text table, through real SQLite files: written in
 * the full-text row's transactions (a writer killed mid-write leaves it complete), never read when emptied or
 * dropped and rebuilt on the next open, found stale by `verify`'s check and rebuilt, built when a store without
 * it is opened with it and then kept by every writer, and left with no erased term after an erasure. Whatever its state, the BM25
 * candidates equal FTS5's own ranking.
 */

const NS = 'acme/shop';
const root = mkdtempSync(join(tmpdir(), 'cairn-lexidx-'));
after(() => { if (!process.env['KEEP_LEXIDX']) rmSync(root, { recursive: true, force: true }); });
const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'lexical-index-writer.js');
const WORDS = ['cache', 'invalidation', 'checkout', 'retry', 'webhook', 'ledger', 'migration', 'index', 'queue', 'refund'];
const QUERIES = ['cache invalidation', 'checkout retry webhook', 'ledger', 'migration index cache queue refund', 'absent words'];

function engineOn(store: SqliteStore): Engine {
  return new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, ingestFilter: { enabled: false } });
}

/** A store of `n` notes in NS (and a tenth as many elsewhere), some rewritten, forgotten and superseded. */
async function populate(path: string, n: number): Promise<void> {
  const store = createSqliteStore({ path, vectorIndex: false, lexicalIndex: {} });
  try {
    const engine = engineOn(store);
    const inputs = Array.from({ length: n }, (_, i) => {
      const a = WORDS[i % WORDS.length] as string;
      const b = WORDS[(i * 7 + 3) % WORDS.length] as string;
      return { namespace: i % 10 === 0 ? 'acme/other' : NS, text: i % 3 === 0 ? `${a} ${a} ${b} note ${i}` : `${a} ${b} note ${i} on the shop's service layer and its ${b}`, kind: 'fact' as const };
    });
    const saved = await engine.saveMany(inputs);
    for (const [i, r] of saved.entries()) {
      if (i % 10 === 0) continue; // acme/other's notes stay as written
      if (i % 17 === 0) await engine.update(r.id, { text: `${WORDS[i % 4]} rewritten ${i}` });
      else if (i % 19 === 0) await engine.forget(r.id);
      else if (i % 23 === 0) await engine.supersede(r.id, { namespace: inputs[i]!.namespace, text: `replacement ${i} for the ledger`, kind: 'fact' });
    }
  } finally {
    await store.close();
  }
}

/** Every query's candidates at several k from both paths of stores on the same file: FTS5 and the side index. */
async function assertSameLists(path: string): Promise<number> {
  const fts = createSqliteStore({ path, vectorIndex: false });
  const indexed = createSqliteStore({ path, vectorIndex: false, lexicalIndex: { minDocuments: 0 } });
  let compared = 0;
  try {
    const now = new Date().toISOString();
    const filters: CandidateFilter[] = [{ namespace: NS, now }, { namespace: NS, now, includeInactive: true }, { namespace: 'acme/other', now }];
    for (const filter of filters) {
      for (const q of QUERIES) {
        for (const k of [1, 10, 100, 1000]) {
          const want: LexicalHit[] = await fts.lexicalCandidates(queryTerms(q), k, filter);
          assert.deepEqual(await indexed.lexicalCandidates(queryTerms(q), k, filter), want, `${q} k=${k} ${filter.namespace}`);
          compared += want.length;
        }
      }
    }
  } finally {
    await fts.close();
    await indexed.close();
  }
  return compared;
}

function raw<T>(path: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const complete = (db: Database.Database) => lexicalIndexComplete((sql) => db.prepare(sql), (db.prepare('SELECT COUNT(*) AS n FROM memories').get() as { n: number }).n);

describe('the lexical side index on real SQLite files', () => {
  const path = join(root, 'store.db');

  it('is written with every full-text row: complete, entry by entry equal to FTS5, the same candidates', async () => {
    await populate(path, 1500);
    raw(path, (db) => {
      assert.ok(complete(db));
      assert.equal(lexicalIndexProblem(db), null);
      const c = db.prepare('SELECT docs, postings FROM lexical_counts').get() as { docs: number; postings: number };
      assert.equal(c.docs, (db.prepare('SELECT COUNT(*) AS n FROM memories').get() as { n: number }).n);
      assert.ok(c.postings > c.docs * 3, JSON.stringify(c));
    });
    assert.ok((await assertSameLists(path)) > 500);
  });

  it('emptied: never read (FTS5 answers), rebuilt when the store is next opened', async () => {
    raw(path, (db) => db.exec('DELETE FROM lexical_postings'));
    raw(path, (db) => assert.ok(!complete(db)));
    const indexed = createSqliteStore({ path, vectorIndex: false, lexicalIndex: { minDocuments: 0 } });
    // Open repaired it: the rebuilt index is read again.
    raw(path, (db) => {
      assert.ok(complete(db));
      assert.equal(lexicalIndexProblem(db), null);
    });
    await indexed.close();
    assert.ok((await assertSameLists(path)) > 500);
  });

  it('emptied under an open store: its searches fall back to FTS5 and stay equal', async () => {
    const fts = createSqliteStore({ path, vectorIndex: false });
    const indexed = createSqliteStore({ path, vectorIndex: false, lexicalIndex: { minDocuments: 0 } });
    try {
      raw(path, (db) => db.exec('DELETE FROM lexical_docs'));
      const now = new Date().toISOString();
      for (const q of QUERIES) {
        const want = await fts.lexicalCandidates(queryTerms(q), 50, { namespace: NS, now });
        assert.deepEqual(await indexed.lexicalCandidates(queryTerms(q), 50, { namespace: NS, now }), want, q);
      }
    } finally {
      await fts.close();
      await indexed.close();
    }
    raw(path, (db) => assert.ok(!complete(db)));
    await createSqliteStore({ path, vectorIndex: false, lexicalIndex: {} }).close();
    raw(path, (db) => assert.ok(complete(db), 'reopening rebuilt it'));
  });

  it('stale with its counts intact: verify finds it and rebuilds it', async () => {
    raw(path, (db) => {
      const doc = (db.prepare('SELECT doc FROM lexical_postings LIMIT 1').get() as { doc: number }).doc;
      db.prepare('UPDATE lexical_postings SET impact = impact - 1 WHERE doc = ?').run(doc);
      assert.ok(complete(db), 'the counts cannot see this');
      assert.match(lexicalIndexProblem(db) ?? '', /postings differ/);
    });
    raw(path, (db) => {
      db.prepare(`UPDATE lexical_docs SET terms = json_set(terms, '$.' || (SELECT key FROM json_each(terms) LIMIT 1), 9) WHERE rowid = (SELECT MIN(rowid) FROM lexical_docs)`).run();
      assert.match(lexicalIndexProblem(db) ?? '', /terms differ/);
    });
    const store = createSqliteStore({ path, vectorIndex: false, lexicalIndex: {} });
    try {
      const first = await store.checkLexicalIndex();
      assert.equal(first.status, 'rebuilt', first.detail);
      const second = await store.checkLexicalIndex();
      assert.equal(second.status, 'consistent', second.detail);
    } finally {
      await store.close();
    }
    assert.ok((await assertSameLists(path)) > 500);
  });

  it('is built when a store without it is first opened with it, and kept by writers that do not ask for it', async () => {
    raw(path, (db) => db.exec(`DROP TABLE lexical_postings; DROP TABLE lexical_docs; DROP TABLE lexical_counts; DELETE FROM meta WHERE key = 'lexical_avgdl'`));
    await createSqliteStore({ path, vectorIndex: false }).close();
    raw(path, (db) => assert.equal(db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'lexical_counts'`).get(), undefined, 'not made unless asked for'));
    await createSqliteStore({ path, vectorIndex: false, lexicalIndex: {} }).close();
    raw(path, (db) => {
      assert.ok(complete(db));
      assert.equal(lexicalIndexProblem(db), null);
    });
    // A store opened without the option writes through it all the same.
    const plain = createSqliteStore({ path, vectorIndex: false });
    try {
      const engine = engineOn(plain);
      const saved = await engine.saveMany(Array.from({ length: 40 }, (_, i) => ({ text: `ledger queue note ${i} written later`, kind: 'fact' as const })));
      await engine.update(saved[0]!.id, { text: 'ledger rewritten later' });
      await engine.forget(saved[1]!.id);
    } finally {
      await plain.close();
    }
    raw(path, (db) => {
      assert.ok(complete(db));
      assert.equal(lexicalIndexProblem(db), null);
    });
    assert.ok((await assertSameLists(path)) > 500);
  });

  it('a writer killed in the middle of its writes leaves it complete and equal to FTS5', { timeout: 180_000 }, async () => {
    const crash = join(root, 'crash.db');
    for (let i = 0; i < 4; i++) {
      const child = spawn(process.execPath, [FIXTURE, crash, NS, String(i + 1)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      await new Promise<void>((resolve, reject) => {
        const started = Date.now();
        const tick = () => {
          if (out.split('\n').length > 3) return resolve();
          if (child.exitCode !== null) return reject(new Error(`writer exited: ${err}`));
          if (Date.now() - started > 60_000) return reject(new Error('writer too slow'));
          setTimeout(tick, 5);
        };
        tick();
      });
      await new Promise((r) => setTimeout(r, Math.random() * 150));
      child.kill('SIGKILL');
      const { signal } = await new Promise<{ signal: string | null }>((r) => child.once('exit', (_c, s) => r({ signal: s })));
      assert.equal(signal, 'SIGKILL', err);
      // Read before any store opens it (an open would repair): what the killed writer left.
      raw(crash, (db) => {
        assert.ok(complete(db), `after kill ${i}`);
        assert.equal(lexicalIndexProblem(db), null, `after kill ${i}`);
      });
    }
    assert.ok((await assertSameLists(crash)) > 100);
  });

  it('holds no erased term after an erasure, and the proof says it looked', async () => {
    const erasePath = join(root, 'erase.db');
    const store = createSqliteStore({ path: erasePath, vectorIndex: false, lexicalIndex: {} });
    const engine = engineOn(store);
    const secret = 'Customer Zorbulon of Quimperlé asked for every invoice by carrier pigeon';
    await engine.save({ namespace: 'acme/erase', text: secret });
    await engine.save({ namespace: NS, text: 'Deploys go out on Tuesdays after the standup' });
    const erased = analyse(secret).filter((t) => t.startsWith('zorbulon') || t.startsWith('quimperl') || t.startsWith('pigeon'));
    assert.equal(erased.length, 3, erased.join(' '));
    raw(erasePath, (db) => assert.equal(erasedTermsLeft((sql) => db.prepare(sql), erased), 3, 'the check finds terms that are there'));
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const cert = await engine.erase({ namespace: 'acme/erase' }, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    await store.close();
    const bytes = cert.certificate.checks.find((c) => c.name === 'file-bytes');
    assert.ok(bytes?.passed, JSON.stringify(cert.certificate.checks));
    assert.ok((cert.certificate.proof.termsSearched ?? 0) >= 3, JSON.stringify(cert.certificate.proof));
    raw(erasePath, (db) => {
      assert.equal(erasedTermsLeft((sql) => db.prepare(sql), erased), 0);
      assert.ok(complete(db));
      assert.equal(lexicalIndexProblem(db), null);
    });
  });
});
