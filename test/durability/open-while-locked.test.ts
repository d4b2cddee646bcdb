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
    let onHold: (() => void) | undefined;
    locker.stdout.setEncoding('utf8').on('data', (d: string) => {
      const seen = d.split('held').length - 1;
      holds += seen;
      if (seen > 0 && onHold) {
        const resolve = onHold;
        onHold = undefined;
        resolve();
      }
    });
    locker.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    after(() => locker.kill('SIGKILL'));
    const exited = new Promise<never>((_, reject) =>
      locker.once('exit', (code) => reject(new Error(`the locking process exited ${code}: ${stderr}`))),
    );
    /** Resolves when the other process next reports that it holds the file (it then keeps it 150–300 ms). */
    const nextHold = () => Promise.race([new Promise<void>((resolve) => (onHold = resolve)), exited]);

    // Each open starts while the other process holds the file, so every one of them meets the lock: opening
    // back to back instead can starve the other process (its busy handler sleeps between tries and may keep
    // missing the gaps), and then nothing is tested.
    const failures: string[] = [];
    const holdsBefore = holds;
    for (let i = 0; i < 20; i++) {
      await nextHold();
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
    }
    assert.equal(locker.exitCode, null, `the locking process stopped: ${stderr}`);
    assert.deepEqual(failures, [], `${failures.length} of 20 opens failed`);
    assert.ok(holds - holdsBefore >= 20, `the other process held the file ${holds - holdsBefore} times during the opens`);
  });
});
