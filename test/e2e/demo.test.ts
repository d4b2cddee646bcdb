/** `cairn demo`, run as a user would: it must exit 0 and report every recall correct. */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// dist/test/e2e/demo.test.js → repository root
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = join(ROOT, 'bin', 'cairn.js');

let sandbox: string;

before(() => {
  sandbox = mkdtempSync(join(tmpdir(), 'cairn-e2e-demo-'));
  mkdirSync(join(sandbox, 'home'));
  mkdirSync(join(sandbox, 'tmp'));
});

after(() => {
  rmSync(sandbox, { recursive: true, force: true });
});

describe('cairn demo', () => {
  it('exits 0, reports all recalls correct, and removes its temporary database', async () => {
    const home = join(sandbox, 'home');
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'] ?? '',
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_DATA_HOME: join(home, '.local', 'share'),
      TMPDIR: join(sandbox, 'tmp'), // the demo's own database goes here
    };
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolvePromise, reject) => {
      const child = spawn(process.execPath, [BIN, 'demo'], { cwd: sandbox, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    });

    const summary = /^(\d+)\/(\d+) recalls correct\.$/mu.exec(r.stdout);
    assert.ok(summary, `the demo prints a summary line:\n${r.stdout}\n${r.stderr}`);
    const [, passed, total] = summary;
    const misses = r.stdout.split('\n').filter((l) => /^\s*MISS\b/u.test(l));
    assert.deepEqual(misses, [], `every recall is correct:\n${r.stdout}`);
    assert.equal(passed, total, `${passed}/${total} recalls correct`);
    assert.ok(Number(total) >= 5, 'the demo checks at least five recalls');
    assert.equal((r.stdout.match(/^\s*ok\s/gmu) ?? []).length, Number(total), 'one ok line per recall');
    assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
    assert.equal(r.stderr, '');
    assert.deepEqual(readdirSync(join(sandbox, 'tmp')), [], 'the demo cleans up its temporary database');
    assert.deepEqual(readdirSync(home), [], 'the demo touches nothing in HOME');
  });
});
