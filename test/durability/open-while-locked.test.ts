import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createSqliteStore } from '../../src/adapters/sqlite/sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-open-locked-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Another process that takes the whole file for 150–300 ms at a time, leaving it free for 1–5 ms between: in
 * WAL mode with exclusive locking, even readers wait. Each hold is longer than the store's 100 ms busy timeout,
 * so any step of an open that is not retried fails "locked".
 */
const LOCKER = `
const Database = require(process.argv[2]);
const path = process.argv[1];
const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
process.stdout.write('ready\\n');
for (;;) {
  const db = new Database(path);
  db.pragma('busy_timeout = 10000');
  db.pragma('locking_mode = EXCLUSIVE');
  db.exec('BEGIN EXCLUSIVE');
  process.stdout.write('held\\n');
  pause(150 + Math.random() * 150);
  db.exec('COMMIT');
  db.close();
  pause(1 + Math.random() * 4);
}
`;

describe('opening a database another process keeps locking', () => {
  it('waits for the lock at every step of the open instead of failing "locked"', { timeout: 120_000 }, async () => {
    const path = join(dir, 'cairn.db');
    await createSqliteStore({ path }).close();

    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const locker = spawn(process.execPath, ['-e', LOCKER, path, driver], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let holds = 0;
    locker.stdout.setEncoding('utf8').on('data', (d: string) => (holds += d.split('held').length - 1));
    locker.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    after(() => locker.kill('SIGKILL'));
    await new Promise<void>((resolve, reject) => {
      locker.stdout.once('data', () => resolve());
      locker.once('exit', (code) => reject(new Error(`the locking process exited ${code}: ${stderr}`)));
    });

    const failures: string[] = [];
    const holdsBefore = holds;
    for (let i = 0; i < 20; i++) {
      try {
        const store = createSqliteStore({ path });
        try {
          assert.equal((await store.stats(new Date().toISOString())).total, 0);
        } finally {
          await store.close();
        }
      } catch (err) {
        failures.push((err as Error).message);
      }
      await new Promise((resolve) => setImmediate(resolve)); // lets the other process's lines in
    }
    assert.equal(locker.exitCode, null, `the locking process stopped: ${stderr}`);
    assert.deepEqual(failures, [], `${failures.length} of 20 opens failed`);
    assert.ok(holds - holdsBefore >= 10, `the other process held the file ${holds - holdsBefore} times during the opens`);
  });
});
