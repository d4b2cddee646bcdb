import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createSqliteStore } from '../../src/adapters/sqlite/sqlite-store.js';
import { SCHEMA_VERSION } from '../../src/adapters/sqlite/sqlite-schema.js';
import { vectorHash } from '../../src/core/checksum.js';
import { analyse } from '../../src/core/lexical.js';
import { isCairnError, type ErrorCode } from '../../src/interfaces/errors.js';
import { describeStoreContract, makeMemory } from './store-contract.js';
import { UNDO_MIGRATION_12 } from '../helpers/sqlite-downgrade.js';

const root = mkdtempSync(join(tmpdir(), 'cairn-sqlite-store-'));
after(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;
/** A fresh path in the temp folder, inside a subfolder the store must create itself. */
function freshPath(): string {
  counter++;
  return join(root, `case-${counter}`, 'cairn.db');
}

/** The committed schema (sqlite_master), read on a connection of its own. */
async function sqliteCatalog(store: { location: string }): Promise<string[]> {
  const db = new Database(store.location, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`SELECT type || ' ' || name || ' ' || COALESCE(sql, '') AS entry FROM sqlite_master ORDER BY name`).all() as { entry: string }[]).map((r) => r.entry);
  } finally {
    db.close();
  }
}

describeStoreContract('sqlite', async () => createSqliteStore({ path: freshPath() }), { catalog: sqliteCatalog });

function assertOpenFails(path: string, code: ErrorCode): void {
  assert.throws(
    () => createSqliteStore({ path }),
    (err: unknown) => {
      assert.ok(isCairnError(err), `expected a CairnError, got ${String(err)}`);
      assert.equal(err.code, code, err.message);
      return true;
    },
  );
}

/** A real cairn database with a few memories, an embedder, vectors and events; closed on return. */
async function populatedDatabase(path: string): Promise<{ ids: string[] }> {
  const store = createSqliteStore({ path });
  const memories = [makeMemory('acme/shop', 'Prices are stored in cents'), makeMemory('acme/shop', 'Deploys go out on Tuesdays')];
  await store.prepareVectors({ id: 'axis-4', dimensions: 4 });
  await store.transaction(async (tx) => {
    await tx.setEmbedder({ id: 'axis-4', dimensions: 4 });
    for (const [i, m] of memories.entries()) {
      const v = new Float32Array(4);
      v[i] = 1;
      await tx.insertMemory(m, v, analyse(m.text));
      await tx.appendEvent({ namespace: 'acme/shop', type: 'memory.saved', memoryId: m.id, payload: m, at: m.createdAt });
    }
    await tx.setSetting('acme/shop', 'weights', { vector: 2 });
  });
  await store.close();
  return { ids: memories.map((m) => m.id) };
}

describe('SQLite store, file handling', () => {
  it('reopening a file keeps memories, vectors, events, settings and the schema version', async () => {
    const path = freshPath();
    const { ids } = await populatedDatabase(path);
    const store = createSqliteStore({ path });
    try {
      const diag = await store.diagnostics();
      assert.equal(diag.schemaVersion, SCHEMA_VERSION);
      assert.equal(diag.facts['journalMode'], 'wal');
      assert.equal(diag.facts['quickCheck'], 'ok');
      assert.deepEqual(diag.failures, []);
      assert.equal(diag.facts['vectorDimensions'], 4);
      assert.deepEqual(await store.embedder(), { id: 'axis-4', dimensions: 4 });
      assert.equal((await store.getMemory(ids[1] as string))?.text, 'Deploys go out on Tuesdays');
      assert.deepEqual(await store.getSetting('acme/shop', 'weights'), { vector: 2 });
      const now = new Date().toISOString();
      assert.deepEqual(
        (await store.vectorCandidates(Float32Array.from([0, 1, 0, 0]), 1, { namespace: 'acme/shop', now })).map((h) => h.id),
        [ids[1]],
      );
      assert.deepEqual(
        (await store.lexicalCandidates(analyse('prices cents'), 5, { namespace: 'acme/shop', now })).map((h) => h.id),
        [ids[0]],
      );
      // Numbering continues where the previous process left it.
      const seq = await store.transaction((tx) => tx.appendEvent({ namespace: 'acme/shop', type: 'x', memoryId: null, payload: null, at: now }));
      assert.equal(seq, 3);
    } finally {
      await store.close();
    }
    // Reopening does not migrate again: the version table still has one row per version.
    const db = new Database(path, { readonly: true });
    try {
      const rows = db.prepare('SELECT version FROM schema_version ORDER BY version').all() as { version: number }[];
      assert.deepEqual(rows.map((r) => r.version), Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    } finally {
      db.close();
    }
  });

  it('a file that is not an SQLite database gives INTEGRITY and is left byte for byte', () => {
    const bytes = Buffer.from('# My notes\n\nThis is a markdown file someone pointed --db at.\n'.repeat(50));
    const file = join(root, `not-sqlite-${counter}.db`);
    writeFileSync(file, bytes);
    assertOpenFails(file, 'INTEGRITY');
    assert.deepEqual(readFileSync(file), bytes);
    assert.equal(existsSync(`${file}-wal`), false);
    assert.equal(existsSync(`${file}-shm`), false);
  });

  for (const cut of ['page', 'mid-page', 'header'] as const) {
    it(`a cairn database truncated (${cut}) gives INTEGRITY and is left byte for byte`, async () => {
      const source = freshPath();
      await populatedDatabase(source);
      const full = readFileSync(source);
      assert.ok(full.length >= 8192, `expected a multi-page database, got ${full.length} bytes`);
      const pageSize = full.readUInt16BE(16);
      const keep = cut === 'page' ? full.length - pageSize : cut === 'mid-page' ? full.length - 1 : 40;
      const path = join(root, `truncated-${cut}-${counter}.db`);
      const truncated = Buffer.from(full.subarray(0, keep));
      writeFileSync(path, truncated);
      assertOpenFails(path, 'INTEGRITY');
      assert.deepEqual(readFileSync(path), truncated);
    });
  }

  it('a database written by a newer cairn gives UNSUPPORTED and is not changed', async () => {
    const path = freshPath();
    await populatedDatabase(path);
    const db = new Database(path);
    db.prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)').run(SCHEMA_VERSION + 1, new Date().toISOString());
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const before = readFileSync(path);
    assert.throws(
      () => createSqliteStore({ path }),
      (err: unknown) => {
        assert.ok(isCairnError(err, 'UNSUPPORTED'), String(err));
        assert.match(err.message, new RegExp(`version ${SCHEMA_VERSION + 1}`));
        assert.ok(err.hint, 'tells the user what to do');
        return true;
      },
    );
    assert.deepEqual(readFileSync(path), before);
  });

  it('a database from before migration 9 gets its full-text rows re-analysed into the exact-term index', async () => {
    const path = freshPath();
    const texts = ['Le café ferme le lundi', 'shop/checkout/tax.py owns the VAT rounding', 'PAYMENTS_V2_ENABLED stays false'];
    const memories = texts.map((text) => makeMemory('acme/shop', text));
    const store = createSqliteStore({ path });
    await store.transaction(async (tx) => {
      for (const m of memories) await tx.insertMemory(m, null, analyse(m.text));
    });
    await store.close();
    // Back to version 8: the unicode61 table of migration 1, filled as that version did.
    const db = new Database(path);
    db.exec(`DROP TABLE memories_fts_vocab; DROP TABLE memories_fts;
      CREATE VIRTUAL TABLE memories_fts USING fts5(ns, terms, content='', contentless_delete=1, tokenize="unicode61 remove_diacritics 2 tokenchars '_./-:'");
      CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, col);
      DROP TRIGGER vector_refs_insert; DROP TRIGGER vector_refs_update_old; DROP TRIGGER vector_refs_update_new;
      DROP TRIGGER vector_refs_delete; DROP TABLE vector_refs; ${UNDO_MIGRATION_12}
      DELETE FROM schema_version WHERE version >= 9;`);
    db.close();
    const reopened = createSqliteStore({ path });
    try {
      const now = new Date().toISOString();
      for (const [i, query] of ['café lundi', 'shop/checkout/tax.py', 'payments_v2_enabled'].entries()) {
        assert.deepEqual(
          (await reopened.lexicalCandidates(analyse(query), 5, { namespace: 'acme/shop', now })).map((h) => h.id),
          [memories[i]?.id],
          `${query} finds its memory in the rebuilt index`,
        );
      }
      assert.equal((await reopened.termDocumentFrequencies(['shop/checkout/tax.py'], 'acme/shop')).frequencies.get('shop/checkout/tax.py'), 1);
      assert.equal((await reopened.diagnostics())['schemaVersion'], SCHEMA_VERSION);
    } finally {
      await reopened.close();
    }
    const after = new Database(path, { readonly: true });
    try {
      const { sql } = after.prepare(`SELECT sql FROM sqlite_master WHERE name = 'memories_fts'`).get() as { sql: string };
      assert.match(sql, /tokenize="ascii tokenchars/u);
    } finally {
      after.close();
    }
  });

  it('a database from before migration 10 counts the vector references its log already holds', async () => {
    const path = freshPath();
    const v = Float32Array.from([1, 0, 0, 0]);
    const hash = vectorHash(v);
    const store = createSqliteStore({ path });
    await store.transaction(async (tx) => {
      await tx.putVectorBlob(hash, v);
      await tx.appendEvent({ namespace: 'acme/shop', type: 'memory.reembedded', memoryId: null, payload: { id: 'x', vector: hash }, at: new Date().toISOString() });
    });
    await store.close();
    const db = new Database(path);
    db.exec(`DROP TRIGGER vector_refs_insert; DROP TRIGGER vector_refs_update_old; DROP TRIGGER vector_refs_update_new;
      DROP TRIGGER vector_refs_delete; DROP TABLE vector_refs; ${UNDO_MIGRATION_12}
      DELETE FROM schema_version WHERE version >= 10;`);
    db.close();
    const reopened = createSqliteStore({ path });
    try {
      await reopened.transaction(async (tx) => {
        assert.equal(await tx.vectorBlobReferenced(hash), true, 'the existing event is counted');
        await tx.rewriteEvent('acme/shop', 1, 'erased', { erasure: 'E1' });
        assert.equal(await tx.vectorBlobReferenced(hash), false, 'and uncounted when it is rewritten');
      });
    } finally {
      await reopened.close();
    }
  });

  it('two store instances on one file see each other’s writes and share event numbering', async () => {
    const path = freshPath();
    const a = createSqliteStore({ path });
    const b = createSqliteStore({ path });
    try {
      const m1 = makeMemory('acme/shop', 'written through a');
      const m2 = makeMemory('acme/shop', 'written through b');
      const now = new Date().toISOString();
      const writes = await Promise.all([
        a.transaction(async (tx) => {
          await tx.insertMemory(m1, null, analyse(m1.text));
          return tx.appendEvent({ namespace: 'acme/shop', type: 'memory.saved', memoryId: m1.id, payload: {}, at: now });
        }),
        b.transaction(async (tx) => {
          await tx.insertMemory(m2, null, analyse(m2.text));
          return tx.appendEvent({ namespace: 'acme/shop', type: 'memory.saved', memoryId: m2.id, payload: {}, at: now });
        }),
      ]);
      assert.deepEqual(writes.sort(), [1, 2]);
      assert.equal((await a.getMemory(m2.id))?.text, m2.text);
      assert.equal((await b.getMemory(m1.id))?.text, m1.text);
      assert.deepEqual((await a.events('acme/shop')).map((e) => e.memoryId).sort(), [m1.id, m2.id].sort());
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('term counts kept in memory follow another connection’s writes', async () => {
    const path = freshPath();
    const a = createSqliteStore({ path });
    const b = createSqliteStore({ path });
    try {
      const first = makeMemory('acme/shop', 'turbo mode for the dev server');
      await a.transaction((tx) => tx.insertMemory(first, null, analyse(first.text)));
      assert.equal((await a.termDocumentFrequencies(['turbo'])).frequencies.get('turbo'), 1);
      const second = makeMemory('acme/blog', 'turbo builds are cached');
      await b.transaction((tx) => tx.insertMemory(second, null, analyse(second.text)));
      const seen = await a.termDocumentFrequencies(['turbo']);
      assert.equal(seen.frequencies.get('turbo'), 2, 'the other connection’s write is counted');
      assert.equal(seen.documents, 2);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
