/**
 * End-to-end tests of the scriptable `cairn` contract: every case spawns the real bin on temp SQLite files,
 * with HOME and the XDG folders pointing into a temp dir so nothing touches the real home.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createSqliteStore } from '../../src/adapters/sqlite/sqlite-store.js';
import { insertVectors } from '../fixtures/vector-index-data.js';
import { DEFAULT_RELATED_TERMS } from '../../src/core/related-terms.js';

// dist/test/e2e/cli.test.js → repository root
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = join(ROOT, 'bin', 'cairn.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let sandbox: string;
let home: string;

/** A controlled environment: no CAIRN_* from the caller, HOME and XDG config/cache in the sandbox. */
function baseEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    TMPDIR: join(sandbox, 'tmp'),
    ...extra,
  };
}

function cairn(args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? sandbox, env: baseEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

/** Runs cairn, expects exit 0 and nothing on stderr, parses stdout as JSON. */
async function ok<T = Record<string, unknown>>(args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Promise<T> {
  const r = await cairn(args, options);
  assert.equal(r.code, 0, `cairn ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  assert.equal(r.stderr, '', `cairn ${args.join(' ')} wrote to stderr`);
  return JSON.parse(r.stdout) as T;
}

/** Asserts the error contract: exit code, empty stdout, exactly one line on stderr. */
function assertError(r: Run, code: number, pattern: RegExp, what: string): void {
  assert.equal(r.code, code, `${what}: exit ${r.code}, stderr ${r.stderr}`);
  assert.equal(r.stdout, '', `${what}: stdout must stay empty on error`);
  assert.equal(r.stderr.endsWith('\n'), true, `${what}: stderr must end with a newline`);
  assert.equal(r.stderr.trimEnd().split('\n').length, 1, `${what}: stderr must be one line, got ${JSON.stringify(r.stderr)}`);
  assert.match(r.stderr, pattern, what);
}

/** Memories written straight into the store for the index-build case: enough that a build takes a while. */
const BULK = 10_000;

/** Seeded unit vectors of any length (a small xorshift generator, uniform components). */
function unitVectors(seed: number, dims: number): () => Float32Array {
  let s = seed >>> 0 || 1;
  return () => {
    const v = new Float32Array(dims);
    let n = 0;
    for (let i = 0; i < dims; i++) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      const x = (s >>> 0) / 2 ** 32 - 0.5;
      v[i] = x;
      n += x * x;
    }
    for (let i = 0; i < dims; i++) v[i] = (v[i] as number) / Math.sqrt(n);
    return v;
  };
}

let dbCounter = 0;
function newDb(): string {
  return join(sandbox, `db-${++dbCounter}`, 'cairn.db');
}

interface SavedJson {
  id: string;
  duplicate: boolean;
  memory: { id: string; text: string; kind: string; tags: string[]; importance: number; namespace: string; createdAt: string; supersededBy: string | null; forgottenAt: string | null };
}

interface ResultJson {
  id: string;
  text: string;
  score: number;
  kind: string;
  namespace: string;
  createdAt: string;
  importance: number;
  tags: string[];
  metadata: Record<string, string>;
  route?: { title: string; description: string; paths: string[] };
  scoreDetails: { signals: Record<'vector' | 'lexical' | 'recency', { rank: number | null; contribution: number; raw: number | null }>; fused: number; rerank: number | null };
}

interface MemoryJson {
  id: string;
  text: string;
  kind: string;
  tags: string[];
  importance: number;
  namespace: string;
  createdAt: string;
  metadata: Record<string, string>;
  route: { title: string; description: string; paths: string[] } | null;
  supersedes: string | null;
  supersededBy: string | null;
  forgottenAt: string | null;
  forgetReason: string | null;
  expiresAt: string | null;
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/u;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/u;

before(() => {
  sandbox = mkdtempSync(join(tmpdir(), 'cairn-e2e-cli-'));
  home = join(sandbox, 'home');
  mkdirSync(home);
  mkdirSync(join(sandbox, 'tmp'));
});

after(() => {
  rmSync(sandbox, { recursive: true, force: true });
});

// Each suite has its own database, so suites run side by side; the steps inside one run in order.
describe('cairn CLI end to end', { concurrency: 3 }, () => {
  describe('cairn --help and the default database path', { concurrency: false }, () => {
    it('prints help without creating a database; a real command creates the default one under HOME', async () => {
      const defaultDb = join(home, '.local', 'share', 'cairn', 'cairn.db');
      const help = await cairn(['--help']);
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, /Usage: cairn/u);
      for (const command of ['save', 'search', 'import', 'export', 'forget', 'restore', 'supersede', 'doctor', 'demo']) {
        assert.match(help.stdout, new RegExp(`\\n\\s+${command}\\b`, 'u'), `help lists ${command}`);
      }
      const saveHelp = await cairn(['save', '--help']);
      assert.equal(saveHelp.code, 0, saveHelp.stderr);
      assert.match(saveHelp.stdout, /--importance <n>/u);
      const version = await cairn(['--version']);
      assert.equal(version.code, 0);
      assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/u);
      assert.equal(existsSync(defaultDb), false, 'help must not create the database');
      assert.equal(existsSync(join(home, '.local')), false, 'help must not create the data folder');

      // The control: the path checked above really is the default, since a command without --db creates it.
      const stats = await ok<{ total: number }>(['stats', '--json']);
      assert.equal(stats.total, 0);
      assert.equal(existsSync(defaultDb), true, 'a command without --db or CAIRN_DB uses ~/.local/share/cairn/cairn.db');
    });
  });

  describe('save and search', { concurrency: false }, () => {
    const db = newDb();
    const ns = 'e2e/save-search';
    const g = ['--db', db, '--namespace', ns, '--json'];
    let vat: SavedJson;

    it('save --json returns the id and the stored memory; a repeat is a duplicate with the same id', async () => {
      vat = await ok<SavedJson>(['save', 'VAT is rounded per invoice line, never on the invoice total.', '--kind', 'decision', '--tags', 'tax,invoices', '--importance', '8', ...g]);
      assert.match(vat.id, ULID);
      assert.equal(vat.duplicate, false);
      assert.equal(vat.memory.id, vat.id);
      assert.equal(vat.memory.text, 'VAT is rounded per invoice line, never on the invoice total.');
      assert.equal(vat.memory.kind, 'decision');
      assert.deepEqual(vat.memory.tags, ['tax', 'invoices']);
      assert.equal(vat.memory.importance, 8);
      assert.equal(vat.memory.namespace, ns);
      assert.match(vat.memory.createdAt, ISO);

      const [other, , again] = await Promise.all([
        ok<SavedJson>(['save', 'Database', 'column', 'names', 'use', 'snake_case.', ...g]), // words are joined
        ok<SavedJson>(['save', 'PAYMENTS_V2_ENABLED must stay false in production.', '--kind', 'gotcha', ...g]),
        ok<SavedJson>(['save', '  vat is rounded per invoice line,   never on the invoice total ', ...g]),
      ]);
      assert.equal(other.memory.text, 'Database column names use snake_case.');
      assert.equal(other.memory.kind, 'note', 'default kind');
      assert.equal(other.memory.importance, 5, 'default importance');
      assert.deepEqual(other.memory.tags, []);
      assert.equal(again.duplicate, true);
      assert.equal(again.id, vat.id);
      const listed = await ok<{ memories: MemoryJson[] }>(['list', ...g]);
      assert.equal(listed.memories.length, 3, 'the duplicate wrote nothing');
    });

    it('search --json prints { results: [...] } with the documented fields, best first, at most --limit', async () => {
      const [r, exact, onlyGotchas, tagged] = await Promise.all([
        ok<{ results: ResultJson[] }>(['search', 'how is VAT rounded on invoices', '--limit', '2', ...g]),
        ok<{ results: ResultJson[] }>(['search', 'PAYMENTS_V2_ENABLED', '--limit', '1', ...g]),
        // The kind filter keeps the one gotcha, which says nothing of rounding: the word that finds it is its own.
        ok<{ results: ResultJson[] }>(['search', 'production flag', '--kind', 'gotcha', ...g]),
        ok<{ results: ResultJson[] }>(['search', 'line totals', '--tags', 'invoices', ...g]),
      ]);
      assert.deepEqual(Object.keys(r), ['results']);
      assert.equal(r.results.length, 2, '--limit 2 of 3 memories');
      const top = r.results[0] as ResultJson;
      assert.equal(top.id, vat.id);
      assert.equal(top.text, vat.memory.text);
      assert.equal(top.kind, 'decision');
      assert.equal(top.namespace, ns);
      assert.equal(top.createdAt, vat.memory.createdAt);
      assert.equal(top.importance, 8);
      assert.deepEqual(top.tags, ['tax', 'invoices']);
      assert.deepEqual(top.metadata, { source: 'cli', origin: 'user' });
      assert.equal(typeof top.score, 'number');
      assert.ok(top.score > 0);
      assert.ok(top.score >= (r.results[1] as ResultJson).score, 'best first');
      assert.equal(top.scoreDetails.fused, top.score);
      for (const signal of ['vector', 'lexical', 'recency'] as const) {
        assert.equal(typeof top.scoreDetails.signals[signal].contribution, 'number', `scoreDetails.signals.${signal}`);
      }
      assert.equal(top.scoreDetails.signals.lexical.rank, 1, 'the words vat, round and invoice match');

      assert.equal(exact.results.length, 1);
      assert.equal(exact.results[0]?.text, 'PAYMENTS_V2_ENABLED must stay false in production.');
      assert.deepEqual(onlyGotchas.results.map((x) => x.kind), ['gotcha']);
      assert.deepEqual(tagged.results.map((x) => x.id), [vat.id]);

      // The relevance floor's background sentences were embedded once and kept in the cache home; a later
      // process reads them and ranks as the first did (the scores' last digits move with recency, seconds later).
      assert.deepEqual(readdirSync(join(home, '.cache', 'cairn', 'vectors')).filter((f) => f.endsWith('.f32')).length, 1);
      const again = await ok<{ results: ResultJson[] }>(['search', 'how is VAT rounded on invoices', '--limit', '2', ...g]);
      assert.deepEqual(again.results.map((x) => [x.id, x.score.toFixed(4)]), r.results.map((x) => [x.id, x.score.toFixed(4)]));
    });

    it('CAIRN_DB and CAIRN_NAMESPACE choose the store and namespace; flags override them', async () => {
      const envDb = newDb();
      const env = { CAIRN_DB: envDb, CAIRN_NAMESPACE: 'e2e/from-env' };
      const [saved, overridden] = await Promise.all([
        ok<SavedJson>(['save', 'Deploys happen on Tuesdays only.', '--json'], { env }),
        // --namespace beats CAIRN_NAMESPACE, --db beats CAIRN_DB (global flags before the command work too).
        ok<SavedJson>(['--namespace', 'e2e/flag', '--db', db, 'save', 'Flags beat the environment.', '--json'], { env }),
      ]);
      assert.equal(saved.memory.namespace, 'e2e/from-env');
      assert.equal(overridden.memory.namespace, 'e2e/flag');
      assert.equal(existsSync(envDb), true, 'CAIRN_DB names the file');

      const [viaFlags, inFlagDb, inEnvDb] = await Promise.all([
        ok<MemoryJson>(['get', saved.id, '--db', envDb, '--namespace', 'e2e/from-env', '--json']),
        ok<{ memories: MemoryJson[] }>(['list', '--db', db, '--namespace', 'e2e/flag', '--json']),
        ok<{ memories: MemoryJson[] }>(['list', '--json'], { env }),
      ]);
      assert.equal(viaFlags.text, 'Deploys happen on Tuesdays only.');
      assert.deepEqual(inFlagDb.memories.map((m) => m.id), [overridden.id]);
      assert.deepEqual(inEnvDb.memories.map((m) => m.id), [saved.id], 'nothing else landed in the CAIRN_DB file');
    });
  });

  describe('import and export', { concurrency: false }, () => {
    const db = newDb();
    const ns = 'e2e/import';
    const g = ['--db', db, '--namespace', ns];

    it('import --json counts imported, duplicate and rejected lines, with line numbers; good lines are kept', async () => {
      const file = join(sandbox, 'import.jsonl');
      const lines = [
        JSON.stringify({ text: 'The checkout service times out after 30 seconds.', externalId: 'jira-101', kind: 'fact', tags: ['checkout'], importance: 7, createdAt: '2024-03-01T10:00:00.000Z' }),
        'this line is not JSON',
        JSON.stringify({ text: '' }),
        '',
        JSON.stringify({ text: 'Use pnpm, not npm, in this repository.', kind: 'convention', externalId: 'wiki-7' }),
        JSON.stringify({ text: 'A line with an unknown field.', colour: 'red' }),
        JSON.stringify({ text: 'Importance out of range.', importance: 11 }),
        JSON.stringify({ text: 'the checkout service times out after 30 seconds' }),
        JSON.stringify({ text: 'Unknown kinds are refused.', kind: 'wish' }),
        JSON.stringify({ text: 'Releases are tagged vYYYY.MM.DD.', createdAt: '2023-12-24T08:30:00.000Z' }),
      ];
      writeFileSync(file, `${lines.join('\n')}\n`);
      const counts = await ok<{ imported: number; duplicate: number; rejected: number; errors: { line: number; message: string }[] }>(['import', file, ...g, '--json']);
      assert.deepEqual(Object.keys(counts).sort(), ['duplicate', 'errors', 'imported', 'quarantined', 'rejected']);
      assert.equal(counts.imported, 3);
      assert.equal(counts.duplicate, 1);
      assert.equal(counts.rejected, 5);
      assert.deepEqual(counts.errors.map((e) => e.line), [2, 3, 6, 7, 9]);
      assert.match(counts.errors[0]?.message ?? '', /JSON/u);
      assert.match(counts.errors[1]?.message ?? '', /text/u);
      assert.match(counts.errors[2]?.message ?? '', /colour/u);
      assert.match(counts.errors[3]?.message ?? '', /importance/u);
      assert.match(counts.errors[4]?.message ?? '', /kind/u);

      const [listed, again] = await Promise.all([ok<{ memories: MemoryJson[] }>(['list', ...g, '--json']), cairn(['import', file, ...g])]);
      assert.deepEqual(listed.memories.map((m) => m.text).sort(), [
        'Releases are tagged vYYYY.MM.DD.',
        'The checkout service times out after 30 seconds.',
        'Use pnpm, not npm, in this repository.',
      ]);
      const checkout = listed.memories.find((m) => m.text.startsWith('The checkout'));
      assert.equal(checkout?.createdAt, '2024-03-01T10:00:00.000Z', 'createdAt is kept');
      assert.equal(checkout?.kind, 'fact');
      assert.equal(checkout?.importance, 7);

      // Without --json: the counts on stdout, each rejected line on stderr.
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout, 'imported 0, duplicate 4, rejected 5\n');
      assert.deepEqual(
        again.stderr.trimEnd().split('\n').map((l) => l.replace(/:.*/u, '')),
        ['line 2', 'line 3', 'line 6', 'line 7', 'line 9'],
      );
    });

    it('an externalId given at import comes back in search results', async () => {
      const r = await ok<{ results: ResultJson[] }>(['search', 'checkout timeout', '--limit', '3', ...g, '--json']);
      const hit = r.results.find((x) => x.text === 'The checkout service times out after 30 seconds.');
      assert.equal(hit?.metadata['externalId'], 'jira-101');
      assert.equal(hit?.metadata['source'], 'import');
      assert.equal(r.results.find((x) => x.text.startsWith('Use pnpm'))?.metadata['externalId'], 'wiki-7');
    });

    it('export round-trips through import into a new database', async () => {
      const [, , forgotten] = await Promise.all([
        ok(['save', 'Never log card numbers.', '--kind', 'constraint', '--tags', 'security,pci', '--importance', '10', ...g, '--json']),
        ok(['route', '--title', 'card vault', '--description', 'tokenisation of card numbers', '--paths', 'src/vault.ts,src/pci/', ...g, '--json']),
        ok<SavedJson>(['save', 'A note that is forgotten before the export.', ...g, '--json']),
      ]);
      await ok(['forget', forgotten.id, ...g, '--json']);

      const file = join(sandbox, 'export.jsonl');
      const [exported, toFile] = await Promise.all([cairn(['export', ...g]), cairn(['export', '--out', file, ...g])]);
      assert.equal(exported.code, 0, exported.stderr);
      const records = exported.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.equal(records.length, 5, 'live memories only by default');
      assert.equal(records.some((r) => r['text'] === 'A note that is forgotten before the export.'), false);
      assert.equal(toFile.code, 0, toFile.stderr);
      assert.equal(toFile.stdout, '');
      assert.equal(readFileSync(file, 'utf8'), exported.stdout, '--out writes the same lines');

      const db2 = newDb();
      const counts = await ok<{ imported: number; duplicate: number; rejected: number }>(['import', file, '--db', db2, '--namespace', ns, '--json']);
      assert.deepEqual({ imported: counts.imported, duplicate: counts.duplicate, rejected: counts.rejected }, { imported: 5, duplicate: 0, rejected: 0 });

      const shape = (m: MemoryJson) => ({ text: m.text, kind: m.kind, tags: m.tags, importance: m.importance, createdAt: m.createdAt, route: m.route, namespace: m.namespace });
      const byText = (a: { text: string }, b: { text: string }) => (a.text < b.text ? -1 : 1);
      const [original, copy, reexported] = await Promise.all([
        ok<{ memories: MemoryJson[] }>(['list', ...g, '--json']),
        ok<{ memories: MemoryJson[] }>(['list', '--db', db2, '--namespace', ns, '--json']),
        cairn(['export', '--db', db2, '--namespace', ns]),
      ]);
      assert.equal(copy.memories.length, 5);
      assert.deepEqual(copy.memories.map(shape).sort(byText), original.memories.map(shape).sort(byText));
      assert.equal(reexported.stdout, exported.stdout, 'exporting the copy gives the same lines');
    });
  });

  describe('exit codes and errors', { concurrency: false }, () => {
    const db = newDb();
    const ns = 'e2e/errors';
    const g = ['--db', db, '--namespace', ns];

    it('invalid input exits 2 with one line on stderr and nothing on stdout, and writes nothing', async () => {
      const cases: [string[], RegExp][] = [
        [['save', '   ', ...g], /text: must not be empty/u],
        [['save', '\u200b\u200b\u2060\ufeff', ...g], /text: must not be empty: it holds only invisible characters/u],
        [['save', 'too important', '--importance', '11', ...g], /importance: must be a whole number from 1 to 10/u],
        [['save', 'not a number', '--importance', 'high', ...g], /importance: must be a whole number/u],
        [['save', 'odd kind', '--kind', 'wish', ...g], /'wish' is invalid/u],
        [['save', 'bad tag', '--tags', '!nope', ...g], /tags\[0\]/u],
        [['save', 'a tag with a line break', '--tags', 'two\nlines', ...g], /tags\[0\]: "two\\nlines"/u],
        [['save', 'a date with a line break', '--expires', '2030-01-01\nlater', ...g], /expiresAt: /u],
        [['search', 'anything', '--limit', 'ten', ...g], /limit: must be a whole number/u],
        [['search', 'anything', '--limit', '0', ...g], /limit: must be a whole number from 1 to 200/u],
        [['search', 'anything', '--colour', 'red', ...g], /unknown option '--colour'/u],
        [['search', ...g], /missing required argument 'query'/u],
        [['get', ...g], /missing required argument 'id'/u],
        [['get', 'not-an-id', ...g], /id: must be a memory id/u],
        [['frobnicate', ...g], /unknown command 'frobnicate'/u],
        [['weights', '--set', 'vector=lots', ...g], /weights/u],
        [['save', 'namespace with a control character', '--db', db, '--namespace', 'a\u0007b'], /namespace: must not contain control characters/u],
        [['import', join(sandbox, 'no-such-file.jsonl'), ...g], /no-such-file\.jsonl does not exist/u],
        [['export', '--out', join(sandbox, 'no-such-folder', 'out.jsonl'), ...g], /cannot write .*no-such-folder/u],
      ];
      const runs = await Promise.all([...cases.map(([args]) => cairn(args)), cairn(['save', '', '--importance', '3', ...g, '--json'])]);
      cases.forEach(([args, pattern], i) => assertError(runs[i] as Run, 2, pattern, `cairn ${args.join(' ')}`));

      const withJson = runs[cases.length] as Run;
      assertError(withJson, 2, /^\{/u, 'save "" --json');
      const error = (JSON.parse(withJson.stderr) as { error: { code: string; field: string } }).error;
      assert.equal(error.code, 'INVALID_INPUT');
      assert.equal(error.field, 'text');

      const stats = await ok<{ total: number; events: number }>(['stats', ...g, '--json']);
      assert.deepEqual({ total: stats.total, events: stats.events }, { total: 0, events: 0 }, 'rejected input wrote nothing');
      assert.equal(existsSync(join(sandbox, 'no-such-folder')), false);
    });

    it('other failures exit 1: NOT_FOUND, CONFLICT, and a --db that is not SQLite (left byte for byte)', async () => {
      const notSqlite = join(sandbox, 'notes.txt');
      const bytes = Buffer.from('These are my precious notes, not a database.\n'.repeat(20));
      writeFileSync(notSqlite, bytes);
      const [missing, missingJson, saved, onText, saveOnText, statsOnText] = await Promise.all([
        cairn(['get', '01ARZ3NDEKTSV4RRFFQ69G5FAV', ...g]),
        cairn(['get', '01ARZ3NDEKTSV4RRFFQ69G5FAV', ...g, '--json']),
        ok<SavedJson>(['save', 'Forget me twice.', ...g, '--json']),
        cairn(['list', '--db', notSqlite, '--namespace', ns, '--json']),
        cairn(['save', 'overwrite?', '--db', notSqlite, '--namespace', ns, '--json']),
        cairn(['stats', '--db', notSqlite]),
      ]);
      assertError(missing, 1, /^cairn: no memory 01ARZ3NDEKTSV4RRFFQ69G5FAV in namespace e2e\/errors\n$/u, 'get of an unknown id');
      assertError(missingJson, 1, /^\{/u, 'get --json of an unknown id');
      assert.equal((JSON.parse(missingJson.stderr) as { error: { code: string } }).error.code, 'NOT_FOUND');

      await ok(['forget', saved.id, ...g, '--json']);
      const twice = await cairn(['forget', saved.id, ...g, '--json']);
      assertError(twice, 1, /"code":"CONFLICT"/u, 'forgetting a forgotten memory');

      assertError(onText, 1, /"code":"INTEGRITY".*not an SQLite database/u, 'list on a text file');
      assertError(saveOnText, 1, /"code":"INTEGRITY".*not an SQLite database/u, 'save on a text file');
      assertError(statsOnText, 1, /^cairn: .*not an SQLite database/u, 'stats on a text file');
      assert.deepEqual(readFileSync(notSqlite), bytes, 'the file is unchanged');
      assert.deepEqual(readdirSync(sandbox).filter((f) => f.startsWith('notes.txt')), ['notes.txt'], 'no -wal or -shm file next to it');
    });
  });

  describe('lifecycle: get, list, forget, restore, supersede, purge-expired, stats', { concurrency: false }, () => {
    const db = newDb();
    const ns = 'e2e/lifecycle';
    const g = ['--db', db, '--namespace', ns, '--json'];
    let eventsAfterFirstSave = 0;

    it('get and list show memories; forget hides one from recall and list until restore', async () => {
      const a = await ok<SavedJson>(['save', 'The staging database is reset every night at 02:00 UTC.', '--kind', 'fact', ...g]);
      eventsAfterFirstSave = (await ok<{ events: number }>(['stats', ...g])).events;
      const b = await ok<SavedJson>(['save', 'Feature branches are squashed on merge.', '--kind', 'convention', '--tags', 'git', ...g]);

      const [got, human, listed, conventions, page] = await Promise.all([
        ok<MemoryJson>(['get', a.id, ...g]),
        cairn(['get', a.id, '--db', db, '--namespace', ns]),
        ok<{ memories: MemoryJson[] }>(['list', ...g]),
        ok<{ memories: MemoryJson[] }>(['list', '--kind', 'convention', ...g]),
        ok<{ memories: MemoryJson[] }>(['list', '--limit', '1', '--before', b.id, ...g]),
      ]);
      assert.equal(got.id, a.id);
      assert.equal(got.text, 'The staging database is reset every night at 02:00 UTC.');
      assert.equal(got.kind, 'fact');
      assert.equal(got.forgottenAt, null);
      assert.equal(human.code, 0);
      assert.match(human.stdout, /The staging database is reset every night at 02:00 UTC\./u);
      assert.deepEqual(listed.memories.map((m) => m.id), [b.id, a.id], 'newest first');
      assert.deepEqual(conventions.memories.map((m) => m.id), [b.id]);
      assert.deepEqual(page.memories.map((m) => m.id), [a.id]);

      const forgot = await ok<{ id: string; forgottenAt: string }>(['forget', a.id, '--reason', 'staging was retired', ...g]);
      assert.equal(forgot.id, a.id);
      assert.match(forgot.forgottenAt, ISO);
      const [afterForget, withAll, listAfter, forgottenRecord] = await Promise.all([
        ok<{ results: ResultJson[] }>(['search', 'when is the staging database reset', ...g]),
        ok<{ results: ResultJson[] }>(['search', 'when is the staging database reset', '--all', ...g]),
        ok<{ memories: MemoryJson[] }>(['list', ...g]),
        ok<MemoryJson>(['get', a.id, ...g]),
      ]);
      assert.equal(afterForget.results.some((r) => r.id === a.id), false, 'forgotten memories leave recall');
      assert.equal(afterForget.results.some((r) => r.id === b.id), true);
      assert.equal(withAll.results[0]?.id, a.id, '--all includes forgotten memories');
      assert.deepEqual(listAfter.memories.map((m) => m.id), [b.id]);
      assert.equal(forgottenRecord.forgetReason, 'staging was retired');

      const restored = await ok<{ id: string; restored: boolean }>(['restore', a.id, ...g]);
      assert.deepEqual(restored, { id: a.id, restored: true });
      const [back, notForgotten] = await Promise.all([ok<{ results: ResultJson[] }>(['search', 'when is the staging database reset', ...g]), cairn(['restore', a.id, ...g])]);
      assert.equal(back.results[0]?.id, a.id);
      assertError(notForgotten, 1, /"code":"CONFLICT"/u, 'restoring a live memory');
    });

    it('supersede links old and new; the old one leaves recall', async () => {
      const old = await ok<SavedJson>(['save', 'The API allows 100 requests per minute per client.', '--kind', 'constraint', '--importance', '8', ...g]);
      const sup = await ok<{ id: string; supersedes: string; memory: MemoryJson }>(['supersede', old.id, 'The API allows 300 requests per minute per client.', ...g]);
      assert.equal(sup.supersedes, old.id);
      assert.match(sup.id, ULID);
      assert.equal(sup.memory.supersedes, old.id);
      assert.equal(sup.memory.kind, 'constraint', 'kind is carried over');
      assert.equal(sup.memory.importance, 8, 'importance is carried over');
      const [oldNow, r, again, unknown] = await Promise.all([
        ok<MemoryJson>(['get', old.id, ...g]),
        ok<{ results: ResultJson[] }>(['search', 'requests per minute', ...g]),
        cairn(['supersede', old.id, 'The API allows 500 requests per minute per client.', ...g]),
        cairn(['supersede', '01ARZ3NDEKTSV4RRFFQ69G5FAV', 'whatever', ...g]),
      ]);
      assert.equal(oldNow.supersededBy, sup.id);
      assert.equal(r.results[0]?.id, sup.id);
      assert.equal(r.results.some((x) => x.id === old.id), false);
      assertError(again, 1, /"code":"CONFLICT"/u, 'superseding twice');
      assertError(unknown, 1, /"code":"NOT_FOUND"/u, 'superseding an unknown id');
    });

    it('purge-expired deletes expired memories for good; stats counts every state', async () => {
      const [expired, future] = await Promise.all([
        ok<SavedJson>(['save', 'The summer sale banner stays up until August.', '--expires', '2020-08-31', ...g]),
        ok<SavedJson>(['save', 'The winter sale banner stays up until 2999.', '--expires', '2999-01-01', ...g]),
      ]);
      const [before, found] = await Promise.all([
        ok<{ total: number; events: number; namespaces: { namespace: string; live: number; forgotten: number; superseded: number; expired: number }[] }>(['stats', ...g]),
        ok<{ results: ResultJson[] }>(['search', 'sale banner', ...g]),
      ]);
      // a, b, the superseding note and the winter banner are live; the old limit is superseded; the summer banner expired.
      assert.deepEqual(before.namespaces, [{ namespace: ns, live: 4, forgotten: 0, superseded: 1, expired: 1 }]);
      assert.equal(before.total, 6);
      // Since the first save: save b, forget, restore, save + supersede (2 events), 2 saves; failed commands add none.
      assert.equal(before.events - eventsAfterFirstSave, 8);
      assert.deepEqual(found.results.filter((x) => x.text.includes('sale banner')).map((x) => x.id), [future.id], 'expired memories leave recall');

      assert.deepEqual(await ok(['purge-expired', ...g]), { purged: 1 });
      const [gone, purgedAgain, afterPurge] = await Promise.all([
        cairn(['get', expired.id, ...g]),
        ok(['purge-expired', ...g]),
        ok<{ total: number; namespaces: { expired: number }[] }>(['stats', ...g]),
      ]);
      assertError(gone, 1, /"code":"NOT_FOUND"/u, 'get of a purged memory');
      assert.deepEqual(purgedAgain, { purged: 0 });
      assert.equal(afterPurge.total, 5);
      assert.equal(afterPurge.namespaces[0]?.expired, 0);
    });
  });

  describe('weights, route, context, doctor', { concurrency: false }, () => {
    const db = newDb();
    const ns = 'e2e/tools';
    const g = ['--db', db, '--namespace', ns, '--json'];

    it('related-terms shows the default, --set persists per namespace, and a bad weight is refused', async () => {
      assert.deepEqual(await ok(['related-terms', ...g]), { weight: DEFAULT_RELATED_TERMS.weight });
      assert.deepEqual(await ok(['related-terms', '--set', '0', ...g]), { weight: 0 });
      const [stored, other] = await Promise.all([ok(['related-terms', ...g]), ok(['related-terms', '--db', db, '--namespace', 'e2e/other', '--json'])]);
      assert.deepEqual(stored, { weight: 0 }, 'a later process reads the stored setting');
      assert.deepEqual(other, { weight: DEFAULT_RELATED_TERMS.weight }, 'other namespaces keep the default');
      for (const value of ['lots', '', ' ', '0x1', '1e', 'Infinity']) {
        const bad = await cairn(['related-terms', '--set', value, ...g]);
        assert.notEqual(bad.code, 0, JSON.stringify(value));
        assert.match(bad.stderr, /INVALID_INPUT|set: expected a number from 0 to 1/u, JSON.stringify(value));
        assert.match(bad.stderr, /set: expected a number from 0 to 1/u, JSON.stringify(value));
      }
      assert.deepEqual(await ok(['related-terms', ...g]), { weight: 0 }, 'a refused value changes nothing');
      const high = await cairn(['related-terms', '--set', '2', ...g]);
      assert.notEqual(high.code, 0);
      assert.match(high.stderr, /weight: must be a number from 0 to 1/u);
      assert.deepEqual(await ok(['related-terms', '--set', '0.5', ...g]), { weight: 0.5 });
    });

    it('weights shows the defaults, --set persists per namespace, and search uses the stored weights', async () => {
      const defaults = await ok<Record<string, number>>(['weights', ...g]);
      assert.deepEqual(Object.keys(defaults).sort(), ['lexical', 'recency', 'vector']);
      const set = await ok<Record<string, number>>(['weights', '--set', 'vector=0,recency=0.5', ...g]);
      assert.deepEqual(set, { ...defaults, vector: 0, recency: 0.5 });
      const [stored, other] = await Promise.all([
        ok(['weights', ...g]),
        ok(['weights', '--db', db, '--namespace', 'e2e/other', '--json']),
        ok(['save', 'Weights are stored per namespace.', ...g]),
      ]);
      assert.deepEqual(stored, set, 'a later process reads the stored weights');
      assert.deepEqual(other, defaults, 'other namespaces keep the defaults');

      const r = await ok<{ results: ResultJson[] }>(['search', 'weights namespace', ...g]);
      const top = r.results[0] as ResultJson;
      assert.equal(top.text, 'Weights are stored per namespace.');
      assert.equal(top.scoreDetails.signals.vector.contribution, 0, 'vector weight 0 contributes nothing');
      const d = top.scoreDetails as unknown as { method: string; relevance: number; signals: Record<string, { contribution: number }> };
      assert.equal(d.method, 'score');
      assert.ok((d.signals['recency']?.contribution ?? 0) > 0, 'the stored recency weight counts');
      const sum = ['vector', 'lexical', 'recency'].reduce((a, k) => a + (d.signals[k]?.contribution ?? 0), 0);
      assert.ok(Math.abs(sum - d.relevance) < 1e-9, 'the contributions add up to the relevance');
      assert.deepEqual(await ok(['weights', '--set', `vector=${defaults['vector']},recency=${defaults['recency']}`, ...g]), defaults);
    });

    it('search --explain: a memory marked wrong shows the demotion as negative points, and the points add up to the relevance shown', async () => {
      const fb = ['--db', newDb(), '--namespace', 'e2e/feedback'];
      const [marked] = await Promise.all([
        ok<SavedJson>(['save', 'Invoices are emailed by the nightly mailer job.', ...fb, '--json']),
        ok<SavedJson>(['save', 'The mailer job retries bounced invoices twice.', ...fb, '--json']),
      ]);
      await ok(['feedback', marked.id, 'wrong', ...fb, '--json']);
      const r = await cairn(['search', 'invoice mailer job', '--explain', ...fb]);
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.split('\n').filter((l) => l.trimStart().startsWith('score relevance'));
      assert.equal(lines.length, 2, r.stdout);
      const demoted = lines.filter((l) => l.includes('− feedback'));
      assert.equal(demoted.length, 1, `exactly the marked memory is demoted:\n${r.stdout}`);
      assert.match(demoted[0] as string, /1 wrong\/stale mark beyond the useful ones: ×1\/2/u);
      for (const line of lines) {
        const m = /relevance (\d+\.\d) = vector (\d+\.\d) \+ lexical (\d+\.\d) \+ recency (\d+\.\d)(?: − feedback (\d+\.\d))? \(/u.exec(line);
        assert.ok(m, line);
        const [total = NaN, v = 0, l = 0, rec = 0, minus = 0] = m.slice(1).map((x) => Number(x ?? 0));
        assert.equal(Math.round((v + l + rec - minus) * 10) / 10, total, `the points add up to the relevance shown: ${line}`);
        // Both notes hold "invoice", "mailer" and "job": the query-term coverage is shown as a share.
        assert.match(line, /bm25 \d+\.\d\d, 100 % of the query's words/u, line);
      }
      // The JSON of the same search: the relevance equals the score, and the contributions add up to it.
      const json = await ok<{ results: ResultJson[] }>(['search', 'invoice mailer job', ...fb, '--json']);
      for (const x of json.results) {
        const d = x.scoreDetails as unknown as { relevance: number; feedback?: { contribution: number }; signals: Record<string, { contribution: number }> };
        const sum = ['vector', 'lexical', 'recency'].reduce((a, k) => a + (d.signals[k]?.contribution ?? 0), 0) + (d.feedback?.contribution ?? 0);
        assert.ok(Math.abs(sum - d.relevance) < 1e-9 && Math.abs(x.score * 100 - d.relevance) < 1e-9, JSON.stringify(x.scoreDetails));
      }
    });

    it('route saves where code lives; context packs routes and memories within the token budget', async () => {
      const fillers = join(sandbox, 'fillers.jsonl');
      writeFileSync(fillers, [0, 1, 2, 3, 4, 5].map((i) => JSON.stringify({ text: `Filler note number ${i} about the office coffee machine and its descaling schedule.` })).join('\n'));
      const [route, decision] = await Promise.all([
        ok<SavedJson & { memory: MemoryJson }>(['route', '--title', 'checkout tax', '--description', 'VAT computation for checkout', '--paths', 'shop/checkout/tax.py, shop/billing/invoice.py', ...g]),
        ok<SavedJson>(['save', 'VAT is rounded per invoice line.', '--kind', 'decision', ...g]),
        ok(['import', fillers, ...g]),
      ]);
      assert.equal(route.memory.kind, 'route');
      assert.deepEqual(route.memory.route, { title: 'checkout tax', description: 'VAT computation for checkout', paths: ['shop/checkout/tax.py', 'shop/billing/invoice.py'] });

      const [byPath, pack, big, plain] = await Promise.all([
        ok<{ results: ResultJson[] }>(['search', 'shop/billing/invoice.py', '--limit', '1', ...g]),
        ok<{ text: string; tokens: number; memories: ResultJson[]; routes: ResultJson[]; omitted: number }>(['context', 'fix VAT rounding in checkout', '--budget', '200', ...g]),
        ok<{ tokens: number; memories: ResultJson[]; routes: ResultJson[]; omitted: number }>(['context', 'fix VAT rounding in checkout', '--budget', '5000', ...g]),
        cairn(['context', 'fix VAT rounding in checkout', '--budget', '200', '--db', db, '--namespace', ns]),
      ]);
      assert.equal(byPath.results[0]?.id, route.id, 'a route is found by one of its paths');
      assert.deepEqual(byPath.results[0]?.route, route.memory.route);

      assert.ok(pack.tokens <= 200 && pack.tokens > 0, `tokens ${pack.tokens}`);
      assert.match(pack.text, /^\[cairn\] Recalled memory for "e2e\/tools"/u);
      assert.deepEqual(pack.routes.map((r) => r.id), [route.id]);
      assert.ok(pack.memories.some((m) => m.id === decision.id), 'the decision is packed');
      assert.match(pack.text, /VAT is rounded per invoice line\./u);
      assert.ok(pack.omitted > 0, 'a small budget leaves some of the 9 memories out');
      assert.equal(pack.routes.length + pack.memories.length + pack.omitted, 9);

      assert.equal(big.omitted, 0);
      assert.equal(big.memories.length + big.routes.length, 9);
      assert.ok(big.tokens > pack.tokens);

      assert.equal(plain.code, 0, plain.stderr);
      assert.equal(plain.stdout, `${pack.text}\n`, 'without --json, the packed text itself');
    });

    it('doctor --json reports versions, embedder, counts, capabilities and problems', async () => {
      const [report, stats, human] = await Promise.all([
        ok<Record<string, unknown>>(['doctor', ...g]),
        ok<{ total: number; events: number; namespaces: unknown[] }>(['stats', ...g]),
        cairn(['doctor', '--db', db, '--namespace', ns]),
      ]);
      assert.equal(report['database'], db);
      assert.equal(report['namespace'], `${ns} (from flag)`);
      assert.equal(typeof report['schemaVersion'], 'number');
      assert.ok((report['schemaVersion'] as number) >= 1);
      assert.match(String(report['sqlite']), /^3\.\d+\.\d+$/u);
      assert.equal(report['fts5'], true);
      assert.match(String(report['sqliteVec']), /^v?\d+\.\d+\.\d+/u);
      assert.equal(report['journalMode'], 'wal');
      const embedder = report['embedder'] as Record<string, unknown>;
      assert.equal(embedder['ok'], true);
      assert.equal(typeof embedder['id'], 'string');
      assert.equal(typeof embedder['dimensions'], 'number');
      assert.ok(typeof embedder['loadMs'] === 'number' && embedder['loadMs'] >= 0);
      assert.deepEqual(report['storedEmbedder'], { id: embedder['id'], dimensions: embedder['dimensions'] });
      const capabilities = report['capabilities'] as Record<string, boolean>;
      assert.equal(capabilities['vectorSearch'], true);
      assert.equal(capabilities['fullText'], true);
      assert.equal(stats.total, 9);
      assert.equal(report['memories'], stats.total);
      assert.equal(report['events'], stats.events);
      assert.equal(report['namespaces'], stats.namespaces.length);
      assert.deepEqual(report['problems'], []);

      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /problems\s+none/u);
    });
  });
});

describe('cairn CLI and the vector index build', () => {
  it('a save on a store whose index file is missing exits without waiting for the rebuild it started', async () => {
    const db = newDb();
    const ns = 'e2e/index-build';
    const g = ['--db', db, '--namespace', ns, '--json'];
    // The store and its embedder record come from the real bin; the bulk is written directly, with vectors of
    // the same embedder, so the test needs no 10,000 model calls. It sits in a namespace of its own: the rebuild
    // covers every namespace, while the save's own likely-update check stays a scan of one small namespace.
    await ok(['save', 'Invoices are rounded per line.', ...g]);
    const store = createSqliteStore({ path: db, vectorIndex: false });
    try {
      await insertVectors(store, 'e2e/index-build-bulk', BULK, unitVectors(7, 512), { id: 'use-lite-512', dimensions: 512 });
    } finally {
      await store.close();
    }
    rmSync(`${db}.usearch`, { force: true });

    const saved = await ok<SavedJson>(['save', 'Totals are rounded once per invoice.', ...g]);
    assert.equal(saved.duplicate, false);
    // The save's check started a rebuild (a namespace holds over 2,000 vectors and the file is missing). Had the
    // process waited for it, the rebuilt file would be there now; it exited first and the build went with it.
    assert.equal(existsSync(`${db}.usearch`), false, 'the process waited for the index build');

    // The same build, awaited by a process that wants it, does finish and save the file.
    const waiting = createSqliteStore({ path: db });
    try {
      await waiting.vectorCandidates(unitVectors(8, 512)(), 10, { namespace: ns, now: new Date().toISOString() });
      assert.equal(waiting.vectorIndex?.status().state, 'building');
      await waiting.vectorIndex?.whenIdle();
      assert.equal(waiting.vectorIndex?.status().builds, 1);
      assert.equal(existsSync(`${db}.usearch`), true, JSON.stringify(waiting.vectorIndex?.status()));
    } finally {
      await waiting.close();
    }
  });
});
