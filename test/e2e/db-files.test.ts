/**
 * What cairn does with the database file it is pointed at, against the real bin: another program's SQLite
 * file is refused without a byte written; a URL scheme without a backend is refused rather than made into a folder; a
 * database this process may not write (a read-only folder) still answers reads, and an import into it or
 * onto a full disk (a file-size limit) stops with exit 1 and one line.
 */
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { BIN, NO_MODEL, useSandbox, type Sandbox } from './mcp-scenario.js';
import { spawnSync } from 'node:child_process';

function run(sandbox: Sandbox, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: sandbox.cwd, env: sandbox.env, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Root may write anything: the read-only cases run as nobody then, and as this user otherwise. */
const asReader = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

function seedLines(n: number, ns: string): string {
  return `${Array.from({ length: n }, (_, i) => JSON.stringify({ text: `Imported line ${i} of the storage failure case, with words to take some room ${i}`, namespace: ns })).join('\n')}\n`;
}

const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('the database file', () => {
  const sandbox = useSandbox('db-files', NO_MODEL);

  it("refuses another program's SQLite file without writing a byte", () => {
    const cases: [string, string][] = [
      ['unrelated.db', 'CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES (\'ada\');'],
      ['lookalike.db', 'CREATE TABLE memories (id TEXT PRIMARY KEY, text TEXT); INSERT INTO memories VALUES (\'1\', \'not cairn\');'],
    ];
    for (const [name, sql] of cases) {
      const path = join(sandbox.dir, name);
      const db = new Database(path);
      db.exec(sql);
      db.close();
      const before = digest(path);
      for (const args of [['stats'], ['save', 'a note that must not land in another program’s file']]) {
        const r = run(sandbox, [...args, '--db', path]);
        assert.notEqual(r.code, 0, `${name} ${args[0]}: ${r.stdout}`);
        assert.match(r.stderr, /another program's SQLite database .*left it untouched/u, r.stderr);
        assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
      }
      assert.equal(digest(path), before, `${name} is byte for byte what it was`);
      assert.ok(!existsSync(`${path}-wal`), `${name} was not switched to WAL`);
    }
  });

  it('refuses a URL scheme it has no backend for instead of creating a folder named after it', () => {
    for (const args of [['stats', '--db', 'mongodb://cairn:secret@db.internal/cairn'], ['stats']]) {
      const env = args.length === 1 ? { ...sandbox.env, CAIRN_DB: 'mysql://db.internal/cairn' } : sandbox.env;
      const r = spawnSync(process.execPath, [BIN, ...args], { cwd: sandbox.cwd, env, encoding: 'utf8' });
      assert.notEqual(r.status, 0, r.stdout);
      assert.match(r.stderr, /scheme is not supported/u);
      assert.ok(!r.stderr.includes('secret'), 'the password in the URL is not echoed');
    }
    assert.deepEqual(readdirSync(sandbox.cwd), [], 'nothing was created in the working directory');
  });

  it('reads a database in a read-only folder; writes and imports there fail with exit 1 and one line', () => {
    const dir = join(sandbox.dir, 'readonly');
    mkdirSync(dir);
    const db = join(dir, 'cairn.db');
    const saved = run(sandbox, ['save', 'The release checklist lives in docs/release.md', '--namespace', 'ro', '--db', db]);
    assert.equal(saved.code, 0, saved.stderr);
    const seed = join(sandbox.dir, 'seed.jsonl');
    writeFileSync(seed, seedLines(200, 'ro'));
    for (const p of [sandbox.dir, sandbox.cwd, seed]) chmodSync(p, 0o755);
    for (const p of [sandbox.env['HOME'] as string, sandbox.env['TMPDIR'] as string]) chmodSync(p, 0o777);
    chmodSync(db, 0o444);
    chmodSync(dir, 0o555);
    const as = (args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args, '--db', db], { cwd: sandbox.cwd, env: sandbox.env, encoding: 'utf8', ...asReader });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    try {
      for (const args of [['list', '--namespace', 'ro'], ['search', 'release checklist', '--namespace', 'ro'], ['verify'], ['stats']]) {
        const r = as(args);
        assert.equal(r.code, 0, `${args[0]} of a read-only database: ${r.stderr}`);
        if (args[0] !== 'verify' && args[0] !== 'stats') assert.match(r.stdout, /release checklist/u);
      }
      const imported = as(['import', seed]);
      assert.equal(imported.code, 1, `import into a read-only database: ${imported.stdout}`);
      assert.equal(imported.stderr.trim().split('\n').length, 1, `one line: ${imported.stderr}`);
      assert.match(imported.stderr, /import stopped at line 1 .*read-only/u);
      const save = as(['save', 'a write that cannot land', '--namespace', 'ro']);
      assert.equal(save.code, 1);
      assert.match(save.stderr, /read-only/u);
    } finally {
      chmodSync(dir, 0o755);
      chmodSync(db, 0o644);
    }
    assert.deepEqual(readdirSync(dir), ['cairn.db'], 'nothing was written beside it');
  });

  it('an import onto a full disk stops with exit 1 and one line', () => {
    const db = join(sandbox.dir, 'full.db');
    const seed = join(sandbox.dir, 'full.jsonl');
    const saved = run(sandbox, ['save', 'A first note before the disk fills', '--namespace', 'full', '--db', db]);
    assert.equal(saved.code, 0, saved.stderr);
    writeFileSync(seed, seedLines(800, 'full'));
    // A file-size limit makes every write past it fail as a full disk does (ENOSPC/EFBIG, SQLITE_FULL/IOERR).
    const r = spawnSync('bash', ['-c', 'ulimit -f 400; trap "" XFSZ; exec "$0" "$@"', process.execPath, BIN, 'import', seed, '--db', db], { cwd: sandbox.cwd, env: sandbox.env, encoding: 'utf8' });
    assert.equal(r.status, 1, `import onto a full disk: ${r.stdout}${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
    assert.match(r.stderr, /^cairn: import stopped at line \d+ \(\d+ imported before it\)/u);
    const verified = run(sandbox, ['verify', '--db', db]);
    assert.equal(verified.code, 0, `what was imported before the failure is intact: ${verified.stdout}`);
  });

  it('doctor exits 1 when the integrity check fails', () => {
    const db = join(sandbox.dir, 'damaged.db');
    const seed = join(sandbox.dir, 'damaged.jsonl');
    writeFileSync(seed, seedLines(50, 'damaged'));
    assert.equal(run(sandbox, ['import', seed, '--db', db]).code, 0);
    assert.equal(run(sandbox, ['doctor', '--db', db]).code, 0, 'a sound database passes');
    // Damage one page that ordinary reads never touch (the index of task ids, empty here).
    const raw = new Database(db);
    const { rootpage } = raw.prepare(`SELECT rootpage FROM sqlite_master WHERE name = 'memories_task'`).get() as { rootpage: number };
    const pageSize = raw.pragma('page_size', { simple: true }) as number;
    raw.close();
    const fd = openSync(db, 'r+');
    writeSync(fd, Buffer.alloc(pageSize, 0x41), 0, pageSize, (rootpage - 1) * pageSize);
    closeSync(fd);
    const r = run(sandbox, ['doctor', '--db', db]);
    assert.match(r.stdout, /database integrity check/u);
    assert.equal(r.code, 1, 'a failed integrity check is a failure');
  });
});
