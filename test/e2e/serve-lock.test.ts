/**
 * A long-lived server never blocks its event loop on another process's lock: while this test holds the
 * database's write lock, `cairn serve` keeps answering /api/health at once, and the write it was sent
 * lands as soon as the lock is released.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { cli, createSandbox, type Sandbox } from './mcp-scenario.js';
import { raw, serve, type Served } from './served.js';

const HOLD_MS = 2500;

describe('cairn serve while another process holds the write lock', () => {
  let sandbox: Sandbox;
  let served: Served;
  let base: URL;
  before(async () => {
    sandbox = createSandbox('serve-lock');
    sandbox.env['CAIRN_EMBEDDER'] = 'none';
    assert.equal((await cli(sandbox, ['save', 'A note so the database exists', '--namespace', 'lock'])).code, 0);
    served = await serve(sandbox, ['--quiet']);
    base = new URL('/', served.url);
  });
  after(async () => {
    served.child.kill('SIGTERM');
    await served.exited;
    sandbox.remove();
  });

  it('keeps answering, and the waiting write lands after the lock is released', async () => {
    const holder = new Database(sandbox.db);
    holder.exec('BEGIN IMMEDIATE');
    const heldAt = Date.now();
    const write = raw(base, { method: 'POST', path: '/api/memories', body: JSON.stringify({ text: 'Written while another process held the lock', namespace: 'lock' }) });
    await new Promise((r) => setTimeout(r, 300)); // the write is now waiting for the lock
    const slowest: number[] = [];
    while (Date.now() - heldAt < HOLD_MS - 300) {
      const t = Date.now();
      const health = await raw(base, { method: 'GET', path: '/api/health' });
      assert.equal(health.status, 200);
      slowest.push(Date.now() - t);
      await new Promise((r) => setTimeout(r, 100));
    }
    holder.exec('COMMIT');
    holder.close();
    // Generous: an answer within a second while the lock is held (a blocked loop answers only after it).
    assert.ok(Math.max(...slowest) < 1000, `health answered in at most ${Math.max(...slowest)} ms while the lock was held`);
    const written = await write;
    assert.equal(written.status, 201, written.body);
  });
});
