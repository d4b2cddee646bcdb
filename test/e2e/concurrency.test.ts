/**
 * Several OS processes write one SQLite file at once: library writers (one transaction per save), a
 * `cairn import`, and searchers reading meanwhile. Afterwards every write is there exactly once, event
 * sequence numbers are gap-free per namespace, racing saves of one text made one memory, and no process
 * failed or let a lock error through.
 */
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Engine, createSqliteStore, createGptTokenCounter } from '../../src/index.js';

// dist/test/e2e/concurrency.test.js → repository root
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = join(ROOT, 'bin', 'cairn.js');
const LIBRARY = pathToFileURL(join(ROOT, 'dist', 'src', 'index.js')).href;

const WRITERS = 4;
const SAVES_PER_WRITER = 60; // distinct memories, alternating between the two namespaces
const SHARED_TEXTS = 6; // every writer saves each of these too, all at the same moment
const IMPORT_LINES = 60;
const SEARCHERS = 2;
const NS_A = 'race/alpha';
const NS_B = 'race/beta';

/** Waits at a barrier so all writers start together, then saves one memory per transaction. */
const WRITER_SCRIPT = `
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const [library, db, dir, name, saves, shared, nsA, nsB] = process.argv.slice(2);
const { Engine, createSqliteStore, createUseEmbedder, createGptTokenCounter } = await import(library);
const store = createSqliteStore({ path: db });
const engine = new Engine({ store, embedder: createUseEmbedder(), tokenCounter: createGptTokenCounter(), defaultNamespace: nsA });
await engine.embedder.embed(['warm up the model before the race']);
writeFileSync(join(dir, 'ready-' + name), '');
while (!existsSync(join(dir, 'go'))) await new Promise((r) => setTimeout(r, 5));
const out = { distinct: [], shared: [], startedAt: Date.now(), endedAt: 0 };
const everyShared = Math.floor(Number(saves) / Number(shared));
for (let i = 0; i < Number(saves); i++) {
  if (i % everyShared === 0 && i / everyShared < Number(shared)) {
    const j = i / everyShared;
    const r = await engine.save({ text: 'Shared decision number ' + j + ': every process saves this same note.', namespace: nsA });
    out.shared.push({ j, id: r.id, duplicate: r.duplicate });
  }
  const namespace = i % 2 === 0 ? nsA : nsB;
  const r = await engine.save({ text: 'Writer ' + name + ' note ' + i + ' records a distinct fact about module ' + (i * 7 + name.length) + '.', namespace, tags: ['writer-' + name] });
  out.distinct.push({ i, id: r.id, namespace, duplicate: r.duplicate });
}
out.endedAt = Date.now();
await store.close();
process.stdout.write(JSON.stringify(out));
`;

/** Searches in a loop while the writers write, until told to stop. */
const SEARCHER_SCRIPT = `
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const [library, db, dir, name, nsA] = process.argv.slice(2);
const { Engine, createSqliteStore, createUseEmbedder, createGptTokenCounter } = await import(library);
const store = createSqliteStore({ path: db });
const engine = new Engine({ store, embedder: createUseEmbedder(), tokenCounter: createGptTokenCounter(), defaultNamespace: nsA });
await engine.embedder.embed(['warm up the model before the race']);
writeFileSync(join(dir, 'ready-' + name), '');
while (!existsSync(join(dir, 'go'))) await new Promise((r) => setTimeout(r, 5));
let searches = 0;
let maxResults = 0;
const namespaces = new Set();
while (!existsSync(join(dir, 'stop')) || searches < 5) {
  const results = await engine.search('distinct fact about a module', { namespace: nsA, limit: 20 });
  for (const r of results) namespaces.add(r.memory.namespace);
  maxResults = Math.max(maxResults, results.length);
  searches++;
  await new Promise((r) => setTimeout(r, 25)); // leave the CPU to the writers between searches
}
await store.close();
process.stdout.write(JSON.stringify({ searches, maxResults, namespaces: [...namespaces] }));
`;

interface Exit {
  label: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Every process this file started, so a failed run kills the ones still waiting at the barrier. */
const children: ChildProcess[] = [];

function run(label: string, args: string[], env: NodeJS.ProcessEnv): Promise<Exit> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ label, code, stdout, stderr }));
  });
}

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface WriterOut {
  distinct: { i: number; id: string; namespace: string; duplicate: boolean }[];
  shared: { j: number; id: string; duplicate: boolean }[];
  startedAt: number;
  endedAt: number;
}

let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'cairn-e2e-race-'));
});

after(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('many processes, one database file', () => {
  it('keeps every write, dedupes racing saves, numbers events without gaps and never surfaces a lock error', async (t) => {
    const db = join(dir, 'race.db'); // does not exist yet: the processes also race to create the schema
    const home = join(dir, 'home');
    const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '', HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_DATA_HOME: join(home, '.local', 'share') };
    const writerFile = join(dir, 'writer.mjs');
    const searcherFile = join(dir, 'searcher.mjs');
    writeFileSync(writerFile, WRITER_SCRIPT);
    writeFileSync(searcherFile, SEARCHER_SCRIPT);
    const importFile = join(dir, 'import.jsonl');
    const importTexts = Array.from({ length: IMPORT_LINES }, (_, i) => `Imported note ${i} about deployment step ${i * 3}.`);
    writeFileSync(importFile, importTexts.map((text) => JSON.stringify({ text })).join('\n'));

    const writerNames = Array.from({ length: WRITERS }, (_, w) => `w${w}`);
    const searcherNames = Array.from({ length: SEARCHERS }, (_, s) => `s${s}`);
    const writers = writerNames.map((name) => run(name, [writerFile, LIBRARY, db, dir, name, String(SAVES_PER_WRITER), String(SHARED_TEXTS), NS_A, NS_B], env));
    const searchers = searcherNames.map((name) => run(name, [searcherFile, LIBRARY, db, dir, name, NS_A], env));
    await waitFor(() => [...writerNames, ...searcherNames].every((n) => existsSync(join(dir, `ready-${n}`))), 'every process to load its model');
    writeFileSync(join(dir, 'go'), '');
    // The CLI import starts with the race and commits its batch while the writers are saving.
    const importer = run('cairn import', [BIN, 'import', importFile, '--db', db, '--namespace', NS_B, '--json'], env);
    const writerExits = await Promise.all([...writers, importer]);
    writeFileSync(join(dir, 'stop'), '');
    const exits = [...writerExits, ...(await Promise.all(searchers))];

    for (const e of exits) {
      assert.equal(e.code, 0, `${e.label} exited ${e.code}: ${e.stderr}`);
      assert.doesNotMatch(e.stderr, /SQLITE_BUSY|SQLITE_LOCKED|database is locked|locked/iu, `${e.label} let a lock error through`);
      assert.equal(e.stderr, '', `${e.label} wrote to stderr`);
    }

    const outs = writerExits.slice(0, WRITERS).map((e) => JSON.parse(e.stdout) as WriterOut);
    const lastStart = Math.max(...outs.map((o) => o.startedAt));
    const firstEnd = Math.min(...outs.map((o) => o.endedAt));
    assert.ok(lastStart < firstEnd, `the writers wrote at the same time (last start ${lastStart}, first end ${firstEnd})`);
    const counts = JSON.parse((writerExits[WRITERS] as Exit).stdout) as { imported: number; duplicate: number; rejected: number };
    assert.deepEqual({ imported: counts.imported, duplicate: counts.duplicate, rejected: counts.rejected }, { imported: IMPORT_LINES, duplicate: 0, rejected: 0 });
    for (const s of exits.slice(WRITERS + 1)) {
      const r = JSON.parse(s.stdout) as { searches: number; maxResults: number; namespaces: string[] };
      assert.ok(r.searches >= 5, `${s.label} searched ${r.searches} times`);
      assert.ok(r.maxResults > 0, `${s.label} saw memories appear`);
      assert.ok(r.namespaces.every((n) => n === NS_A), `${s.label} saw only its namespace`);
    }

    const store = createSqliteStore({ path: db });
    try {
      const engine = new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: NS_A });
      const [inA, inB] = await Promise.all([
        engine.list({ namespace: NS_A, limit: 10_000, includeInactive: true }),
        engine.list({ namespace: NS_B, limit: 10_000, includeInactive: true }),
      ]);

      // Every distinct save is there, once, under the id its writer was given.
      const half = SAVES_PER_WRITER / 2;
      assert.equal(inA.length, WRITERS * half + SHARED_TEXTS);
      assert.equal(inB.length, WRITERS * half + IMPORT_LINES);
      const byId = new Map([...inA, ...inB].map((m) => [m.id, m]));
      for (const [w, out] of outs.entries()) {
        assert.equal(out.distinct.length, SAVES_PER_WRITER);
        for (const d of out.distinct) {
          assert.equal(d.duplicate, false);
          const m = byId.get(d.id);
          assert.equal(m?.namespace, d.namespace, `writer ${w} save ${d.i} is stored in its namespace`);
          assert.match(m?.text ?? '', new RegExp(`^Writer w${w} note ${d.i} `, 'u'));
        }
      }
      const imported = inB.filter((m) => m.text.startsWith('Imported note')).map((m) => Date.parse(m.createdAt));
      t.diagnostic(`writers wrote from ${lastStart - Math.min(...outs.map((o) => o.startedAt))} ms to ${Math.max(...outs.map((o) => o.endedAt)) - lastStart} ms after the last one started; the import committed ${Math.min(...imported) - lastStart} ms after it`);
      assert.deepEqual(inB.filter((m) => m.text.startsWith('Imported note')).map((m) => m.text).sort(), [...importTexts].sort());

      // The same text saved by every writer at the same moment is one memory, which every writer was told.
      for (let j = 0; j < SHARED_TEXTS; j++) {
        const stored = inA.filter((m) => m.text.startsWith(`Shared decision number ${j}:`));
        assert.equal(stored.length, 1, `shared text ${j} is stored once`);
        const reports = outs.map((o) => o.shared.find((s) => s.j === j));
        assert.ok(reports.every((r) => r?.id === stored[0]?.id), `every writer got the id of shared text ${j}`);
        assert.equal(reports.filter((r) => r?.duplicate === false).length, 1, `exactly one writer created shared text ${j}`);
      }

      // One memory.saved event per memory, numbered 1..N without gaps in each namespace.
      for (const [ns, memories] of [[NS_A, inA], [NS_B, inB]] as const) {
        const events = await store.events(ns, 0, 100_000);
        assert.deepEqual(events.map((e) => e.seq), Array.from({ length: events.length }, (_, i) => i + 1), `${ns}: seq is 1..N`);
        const saved = events.filter((e) => e.type === 'memory.saved');
        assert.equal(saved.length, events.length, `${ns}: only saves happened`);
        assert.deepEqual(saved.map((e) => e.memoryId).sort(), memories.map((m) => m.id).sort(), `${ns}: one event per memory`);
      }
      const storeWide = await store.events('', 0, 100_000); // store-wide events, e.g. the embedder record
      assert.deepEqual(storeWide.map((e) => e.seq), Array.from({ length: storeWide.length }, (_, i) => i + 1), 'store-wide seq is 1..N');
    } finally {
      await store.close();
    }
  });
});
