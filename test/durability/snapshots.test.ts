import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createSqliteStore } from '../../src/adapters/sqlite/sqlite-store.js';
import { createUseEmbedder } from '../../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../../src/core/engine.js';
import { stateChecksum, verify } from '../../src/core/replay.js';
import { sha256Hex } from '../../src/core/text.js';
import { isCairnError } from '../../src/interfaces/errors.js';
import { repoRoot } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-snapshots-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const embedder = createUseEmbedder();
const NS = 'acme/shop';
const bin = join(repoRoot, 'bin', 'cairn.js');

function open(path: string, snapshotEvery = 10): Engine {
  return new Engine({ store: createSqliteStore({ path }), embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, snapshotEvery });
}

const TEXTS = [
  'Leave the payment module alone until the PSP migration ships.',
  'VAT is rounded per invoice line, never on the invoice total.',
  'The API allows 100 requests per minute per client.',
  'Database column names use snake_case.',
  'PAYMENTS_V2_ENABLED must stay false in production.',
  'ERR_STOCK_DRIFT_17 means the warehouse count and the ledger disagree.',
  'Release branches are cut on Tuesdays.',
  'shop/checkout/tax.py owns every tax computation.',
  'Feature flags live in config/flags.yaml.',
  'Integration tests need the local PostgreSQL on port 5433.',
  'Invoices are immutable once sent; corrections are credit notes.',
  'Customer emails are never logged.',
];

/** A database with 12 committed turns (snapshots at turns 5 and 10), a forget and a supersede. */
async function populated(name: string): Promise<string> {
  const path = join(dir, name);
  const engine = open(path, 5);
  for (const [i, text] of TEXTS.entries()) await engine.commitTurn({ session: 'monday', turn: i, text, speaker: 'user' });
  const [first] = await engine.list({ limit: 1 });
  await engine.forget(first!.id, { reason: 'test' });
  await engine.save({ text: 'The API allows 300 requests per minute per client.', supersedes: (await engine.search('requests per minute', { limit: 1 }))[0]!.memory.id });
  await engine.store.close();
  return path;
}

function rawDb(path: string): Database.Database {
  return new Database(path);
}

describe('turn commits', () => {
  before(async () => {
    await embedder.embed(['warm up']);
  });

  it('reports event_seq, items added, dedupe updates and snapshots every N turns', async () => {
    const engine = open(join(dir, 'turns.db'), 3);
    const r1 = await engine.commitTurn({ session: 's1', turn: 0, text: 'We keep money in integer cents everywhere.' });
    assert.deepEqual([r1.eventSeq, r1.itemsAdded, r1.deduplicated, r1.snapshot], [1, 1, false, false]);
    const r2 = await engine.commitTurn({ session: 's1', turn: 1, text: 'Queues are drained before deploys.' });
    assert.equal(r2.eventSeq, 3);
    const r3 = await engine.commitTurn({ session: 's1', turn: 2, text: 'we keep money in integer cents everywhere' });
    assert.equal(r3.itemsAdded, 0);
    assert.equal(r3.deduplicated, true, 'a repeat becomes an update of the existing memory');
    assert.deepEqual(r3.itemIds, r1.itemIds);
    assert.equal(r3.snapshot, true, 'third turn writes a snapshot');
    assert.equal(r3.snapshotVersion, 1);
    const snap = await engine.store.getSnapshot(NS);
    assert.equal(snap?.seq, 6);
    assert.equal((await engine.stats()).total, 2);
    const found = await engine.search('how are amounts of money stored', { limit: 1 });
    assert.equal(found[0]?.memory.id, r1.itemIds[0]);
    await engine.store.close();
  });

  it('spaces snapshots out as the log grows (snapshotGrowth), and recovery from the last one gives the same state', async () => {
    const path = join(dir, 'growth.db');
    const engine = new Engine({ store: createSqliteStore({ path }), embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, snapshotEvery: 1, snapshotGrowth: 0.5 });
    const snapshotTurns: number[] = [];
    for (const [i, text] of TEXTS.entries()) {
      const r = await engine.commitTurn({ session: 'tuesday', turn: i, text, speaker: 'user' });
      assert.equal(r.eventSeq, 2 * i + 1, 'each turn is two events: the turn and its one memory');
      if (r.snapshot) snapshotTurns.push(i + 1);
    }
    // A snapshot at seq s is followed by the next one once the log has grown by half of s: seqs 2, 4, 6, 10, 16, 24.
    assert.deepEqual(snapshotTurns, [1, 2, 3, 5, 8, 12]);
    assert.equal((await engine.store.getSnapshot(NS))?.seq, 24);
    const zero = new Engine({ store: createSqliteStore({ path: join(dir, 'growth-zero.db') }), embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, snapshotEvery: 1, snapshotGrowth: 0 });
    let every = 0;
    for (const [i, text] of TEXTS.slice(0, 4).entries()) if ((await zero.commitTurn({ session: 'tuesday', turn: i, text })).snapshot) every++;
    assert.equal(every, 4, 'growth 0: a snapshot every snapshotEvery turns, as before');
    await zero.store.close();
    await engine.commitTurn({ session: 'tuesday', turn: 12, text: 'Staging is reset every night at 02:00 UTC.', speaker: 'user' });
    const before = await stateChecksum(engine.store);
    const report = await engine.recover({ all: true });
    const scope = report.scopes.find((s) => s.scope === NS)!;
    assert.equal(scope.mode, 'snapshot+tail');
    assert.equal(scope.snapshotSeq, 24);
    assert.equal(report.checksum, before.checksum);
    assert.throws(() => new Engine({ store: engine.store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, snapshotGrowth: -1 }), (e: unknown) => isCairnError(e) && e.code === 'INVALID_INPUT');
    await engine.store.close();
  });

  it('writes nothing when the turn is invalid', async () => {
    const engine = open(join(dir, 'bad-turn.db'));
    await engine.commitTurn({ session: 's', turn: 0, text: 'A first valid turn.' });
    const before = await engine.stats();
    for (const bad of [
      { session: '', turn: 1, text: 'x' },
      { session: 's', turn: -1, text: 'x' },
      { session: 's', turn: 1, text: '   ' },
      { session: 's', turn: 1, text: 'ok', items: [{ text: 'y', importance: 11 }] },
    ]) {
      await assert.rejects(engine.commitTurn(bad), (err: unknown) => isCairnError(err, 'INVALID_INPUT'));
    }
    assert.deepEqual(await engine.stats(), before);
    await engine.store.close();
  });
});

describe('snapshots and recovery', () => {
  it('recover from a valid snapshot plus the tail gives the same state', async () => {
    const path = await populated('recover-ok.db');
    const store = createSqliteStore({ path });
    const before = await stateChecksum(store);
    const engine = new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: NS });
    const report = await engine.recover({ all: true });
    const scope = report.scopes.find((s) => s.scope === NS)!;
    assert.equal(scope.mode, 'snapshot+tail');
    assert.equal(scope.snapshotSeq, 20);
    assert.equal(scope.snapshotProblem, null);
    assert.equal(report.checksum, before.checksum);
    const scratch = createSqliteStore({ path: ':memory:' });
    assert.ok((await verify(store, scratch)).ok);
    await scratch.close();
    await store.close();
  });

  it('detects flipped snapshot bytes as storage corruption and rebuilds from the log', async () => {
    const path = await populated('flip.db');
    const db = rawDb(path);
    const row = db.prepare('SELECT blob FROM snapshots WHERE scope = ?').get(NS) as { blob: Buffer };
    const blob = Buffer.from(row.blob);
    const at = Math.floor(blob.length / 2);
    blob[at] = (blob[at] ?? 0) ^ 0xff;
    db.prepare('UPDATE snapshots SET blob = ? WHERE scope = ?').run(blob, NS);
    db.close();

    const store = createSqliteStore({ path });
    const scratch = createSqliteStore({ path: ':memory:' });
    const expected = (await verify(store, scratch)).replayedChecksum;
    const engine = new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: NS });
    const report = await engine.recover({ all: true });
    const scope = report.scopes.find((s) => s.scope === NS)!;
    assert.equal(scope.snapshotProblem, 'storage-corruption');
    assert.equal(scope.mode, 'full-replay');
    assert.equal(report.checksum, expected, 'rebuilt state equals a replay of the log');
    assert.equal(await store.getSnapshot(NS), null, 'the bad snapshot is discarded');
    await scratch.close();
    await store.close();
  });

  it('tells a version mismatch and a checksum mismatch apart from storage corruption', async () => {
    for (const [name, mutate, problem] of [
      ['version.db', (s: Record<string, unknown>) => (s['engineVersion'] = 999), 'version-mismatch'],
      [
        'logic.db',
        (s: Record<string, unknown>) => {
          const mems = s['memories'] as { memory: { text: string } }[];
          mems[0]!.memory.text = 'tampered';
        },
        'checksum-mismatch',
      ],
    ] as const) {
      const path = await populated(name);
      const db = rawDb(path);
      const row = db.prepare('SELECT blob FROM snapshots WHERE scope = ?').get(NS) as { blob: Buffer };
      const state = JSON.parse(gunzipSync(row.blob).toString('utf8')) as Record<string, unknown>;
      mutate(state);
      const blob = gzipSync(JSON.stringify(state));
      // the stored hash is made to match, so only the deeper check can notice
      db.prepare('UPDATE snapshots SET blob = ?, blob_sha256 = ? WHERE scope = ?').run(blob, sha256Hex(blob), NS);
      db.close();
      const store = createSqliteStore({ path });
      const engine = new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: NS });
      const before = await stateChecksum(store);
      const report = await engine.recover({ all: true });
      assert.equal(report.scopes.find((s) => s.scope === NS)?.snapshotProblem, problem, name);
      assert.equal(report.checksum, before.checksum);
      await store.close();
    }
  });

  it('verify notices a projection that drifted from the log, and recover repairs it', async () => {
    const path = await populated('drift.db');
    const db = rawDb(path);
    db.prepare("UPDATE memories SET text = 'silently edited' WHERE id = (SELECT MIN(id) FROM memories)").run();
    db.close();
    const store = createSqliteStore({ path });
    const scratch = createSqliteStore({ path: ':memory:' });
    const report = await verify(store, scratch);
    assert.equal(report.ok, false);
    assert.notEqual(report.liveChecksum, report.replayedChecksum);
    await scratch.close();
    const engine = new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: NS });
    await engine.store.transaction(async (tx) => tx.deleteSnapshot(NS)); // the snapshot holds the old text too
    const rec = await engine.recover({ all: true });
    assert.equal(rec.checksum, report.replayedChecksum);
    await store.close();
  });

  it('verify reports a gap in a sequence and exits 1 from the CLI', async () => {
    const path = await populated('gap.db');
    const db = rawDb(path);
    db.prepare('DELETE FROM events WHERE namespace = ? AND seq = 3').run(NS);
    db.close();
    const r = spawnSync(process.execPath, [bin, 'verify', '--db', path, '--json'], { encoding: 'utf8', env: { ...process.env, HOME: dir } });
    assert.equal(r.status, 1, r.stderr);
    const report = JSON.parse(r.stdout) as { ok: boolean; gaps: { scope: string; missing: number[] }[] };
    assert.equal(report.ok, false);
    assert.deepEqual(report.gaps, [{ scope: NS, missing: [3] }]);
  });

  it('cairn verify and recover report what they did; a damaged database file is a clear error', async () => {
    const path = await populated('cli.db');
    const env = { ...process.env, HOME: dir };
    const v = spawnSync(process.execPath, [bin, 'verify', '--db', path], { encoding: 'utf8', env });
    assert.equal(v.status, 0, v.stderr);
    assert.match(v.stdout, /replayed \d+ events/u);
    assert.match(v.stdout, /byte-identical/u);
    const rec = spawnSync(process.execPath, [bin, 'recover', '--db', path, '--json'], { encoding: 'utf8', env });
    assert.equal(rec.status, 0, rec.stderr);
    assert.ok((JSON.parse(rec.stdout) as { eventsReplayed: number }).eventsReplayed > 0);

    for (const [name, damage] of [
      ['truncated.db', (p: string) => truncateSync(p, Math.floor(statSync(p).size / 3))],
      ['garbage.db', (p: string) => writeFileSync(p, 'this is not a database at all, just text\n'.repeat(200))],
    ] as const) {
      const target = join(dir, name);
      copyFileSync(path, target);
      damage(target);
      const bytes = readFileSync(target);
      const r = spawnSync(process.execPath, [bin, 'verify', '--db', target], { encoding: 'utf8', env });
      assert.equal(r.status, 1, `${name}: ${r.stdout} ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${name}: one line, no stack trace: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /\bat .*\.js:\d+/u);
      assert.deepEqual(readFileSync(target), bytes, `${name}: the file is left untouched`);
    }
  });
});
