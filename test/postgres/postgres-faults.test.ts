/**
 * Faults of a PostgreSQL-backed memory, against a real server: no server at start, a missing database, an
 * unknown role, a wrong password, a schema newer than the code (each: exit 1 and one line naming the cause,
 * through the real bin), and a connection lost in the middle of a write (through a real TCP relay that is
 * cut): the write fails with STORE_UNAVAILABLE and leaves nothing behind; reads retry a bounded number of
 * times and then fail clearly; once the server is reachable again the same store works.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createPostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { analyse } from '../../src/core/lexical.js';
import { isCairnError } from '../../src/interfaces/errors.js';
import { makeMemory } from '../contract/store-contract.js';
import { BIN, NO_MODEL, useSandbox } from '../e2e/mcp-scenario.js';
import { createTestDatabase, pgSkip, testStoreConfig, type TestDatabase } from '../helpers/postgres.js';

const ADMIN = process.env['CAIRN_TEST_PG'] ?? '';

function urlWith(base: string, over: { user?: string; password?: string; database?: string; port?: string }): string {
  const u = new URL(base);
  if (over.user !== undefined) u.username = over.user;
  if (over.password !== undefined) u.password = over.password;
  if (over.database !== undefined) u.pathname = `/${over.database}`;
  if (over.port !== undefined) u.port = over.port;
  return u.toString();
}

describe('PostgreSQL faults', { skip: pgSkip }, () => {
  const sandbox = useSandbox('pg-faults', NO_MODEL);
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => db?.drop());

  const cairn = (args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, ...args], { cwd: sandbox.cwd, env: sandbox.env, encoding: 'utf8', timeout: 60_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const assertOneLine = (r: { code: number | null; stderr: string }, pattern: RegExp, what: string) => {
    assert.equal(r.code, 1, `${what}: exit 1 (stderr: ${r.stderr})`);
    assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: one line: ${r.stderr}`);
    assert.match(r.stderr, pattern, what);
  };

  it('no server at start: one line naming host and port, exit 1', () => {
    const r = cairn(['stats', '--db', 'postgres://cairn:hunter2@127.0.0.1:1/cairn']);
    assertOneLine(r, /no PostgreSQL server answers at 127\.0\.0\.1:1\/cairn/u, 'server down');
    assert.ok(!r.stderr.includes('hunter2'), 'the password is never printed');
  });

  it('a missing database and an unknown role are told apart', () => {
    assertOneLine(cairn(['stats', '--db', urlWith(ADMIN, { database: 'cairn_no_such_database' })]), /the database does not exist .*createdb/u, 'missing database');
    assertOneLine(cairn(['stats', '--db', urlWith(db.url, { user: 'cairn_no_such_role' })]), /refused the login: role "cairn_no_such_role" does not exist/u, 'unknown role');
  });

  it('a wrong password is named as such', async (t) => {
    // The cluster trusts local logins; one role gets password authentication through a pg_hba.conf line.
    const hba = `${db.dataDir}/pg_hba.conf`;
    let original: string;
    try {
      original = readFileSync(hba, 'utf8');
      writeFileSync(hba, original);
    } catch (err) {
      t.skip(`cannot edit ${hba} to require a password (${(err as Error).message})`);
      return;
    }
    const admin = new pg.Client({ connectionString: ADMIN });
    await admin.connect();
    try {
      await admin.query(`DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'cairn_test_pw') THEN CREATE ROLE cairn_test_pw LOGIN PASSWORD 'right-one'; END IF; END $$`);
      writeFileSync(hba, `host all cairn_test_pw 127.0.0.1/32 scram-sha-256\n${original}`);
      await admin.query('SELECT pg_reload_conf()');
      await new Promise((r) => setTimeout(r, 300));
      const r = cairn(['stats', '--db', urlWith(db.url, { user: 'cairn_test_pw', password: 'wrong-one' })]);
      assertOneLine(r, /wrong password for the database user/u, 'wrong password');
      assert.ok(!r.stderr.includes('wrong-one'), 'the password is never printed');
    } finally {
      writeFileSync(hba, original);
      await admin.query('SELECT pg_reload_conf()');
      await admin.end();
    }
  });

  it('a schema newer than this cairn is refused with a hint, and left untouched', async () => {
    const store = createPostgresStore(testStoreConfig(db.url));
    await store.open();
    await store.close();
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query(`INSERT INTO schema_version (version, applied_at) VALUES (99, 'future')`);
    const r = cairn(['stats', '--db', db.url]);
    assertOneLine(r, /schema is version 99, newer than this cairn understands .*upgrade cairn/u, 'newer schema');
    const { rows } = await c.query('SELECT max(version) AS v FROM schema_version');
    assert.equal(rows[0].v, 99, 'the schema version is as it was');
    await c.query('DELETE FROM schema_version WHERE version = 99');
    await c.end();
  });

  describe('connection lost mid-run (a TCP relay to the server is cut)', () => {
    let relay: Server | null = null;
    let sockets: Socket[] = [];
    let port = 0;
    const target = new URL(ADMIN);
    const startRelay = (p = 0) =>
      new Promise<void>((resolve) => {
        relay = createServer((s) => {
          const up = connect(Number(target.port), target.hostname);
          sockets.push(s, up);
          s.pipe(up).pipe(s);
          s.on('error', () => up.destroy());
          up.on('error', () => s.destroy());
        });
        relay.listen(p, '127.0.0.1', () => {
          port = (relay?.address() as { port: number }).port;
          resolve();
        });
      });
    const cutRelay = () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        sockets = [];
        relay?.close(() => resolve());
        relay = null;
      });
    after(async () => cutRelay());

    it('a write cut halfway leaves nothing; reads retry, then fail clearly; the store recovers', async () => {
      const fresh = await createTestDatabase();
      await startRelay();
      const store = createPostgresStore(testStoreConfig(urlWith(fresh.url, { port: String(port) })));
      try {
        const first = makeMemory('faults', 'Written before the cut: the pool reaches the server');
        await store.transaction(async (tx) => {
          await tx.insertMemory(first, null, analyse(first.text));
          await tx.appendEvent({ namespace: 'faults', type: 'memory.saved', memoryId: first.id, payload: first, at: first.createdAt });
        });
        const turn = makeMemory('faults', 'A turn cut in the middle must not be half written');
        let caught: unknown;
        try {
          await store.transaction(async (tx) => {
            await tx.insertMemory(turn, null, analyse(turn.text));
            await cutRelay();
            await tx.appendEvent({ namespace: 'faults', type: 'turn.committed', memoryId: turn.id, payload: turn, at: turn.createdAt });
          });
        } catch (err) {
          caught = err;
        }
        assert.ok(isCairnError(caught, 'STORE_UNAVAILABLE'), `lost connection → STORE_UNAVAILABLE, got ${String(caught)}`);
        assert.match((caught as Error).message, /rolled it back, nothing of it was written/u);

        const t0 = Date.now();
        let readError: unknown;
        await store.getMemory(first.id).catch((err: unknown) => (readError = err));
        assert.ok(isCairnError(readError, 'STORE_UNAVAILABLE'), `unreachable server → STORE_UNAVAILABLE, got ${String(readError)}`);
        assert.match((readError as Error).message, /no PostgreSQL server answers/u);
        assert.ok(Date.now() - t0 < 15_000, 'the retries are bounded');

        await startRelay(port);
        assert.equal((await store.getMemory(first.id))?.text, first.text, 'the store works again once the server is reachable');
        assert.equal(await store.getMemory(turn.id), null, 'the cut turn left no memory');
        assert.deepEqual((await store.events('faults')).map((e) => e.seq), [1], 'and no event: the sequence goes on without a gap');
        const seq = await store.transaction((tx) => tx.appendEvent({ namespace: 'faults', type: 'memory.saved', memoryId: null, payload: {}, at: turn.createdAt }));
        assert.equal(seq, 2);
      } finally {
        await store.close();
        await fresh.drop();
      }
    });
  });

  it('the store never creates a local folder for a server database', () => {
    assert.ok(!existsSync(`${sandbox.cwd}/postgres:`), 'no folder named after the scheme');
  });
});
