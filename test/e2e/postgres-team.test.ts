/**
 * A team on one PostgreSQL database: two `cairn serve --auth` processes and the CLI, all on the same real
 * server. A token created by the CLI works on both servers; a memory saved through one is found through the
 * other; a browser session opened on one is valid on the other and a logout on either ends it everywhere; a
 * token's request budget is one budget whichever process answers; a revocation by the CLI takes effect on
 * both at once.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, pgSkip, type TestDatabase } from '../helpers/postgres.js';
import { cli, createSandbox, type Sandbox } from './mcp-scenario.js';
import { raw, serve, type Served } from './served.js';

describe('a team on one PostgreSQL database', { skip: pgSkip, concurrency: false }, () => {
  let sandbox: Sandbox;
  let db: TestDatabase;
  let a: Served;
  let b: Served;
  let writer: string;

  const token = async (scope: string): Promise<string> => {
    const r = await cli(sandbox, ['token', 'create', '--scope', scope, '--namespace', 'team', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { token: string }).token;
  };
  const call = (s: Served, path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) =>
    raw(new URL(s.url.origin), {
      method: init.method ?? 'GET',
      path: `/api${path}`,
      headers: { host: s.url.host, ...(init.headers ?? {}) },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });

  before(async () => {
    db = await createTestDatabase();
    sandbox = createSandbox('pg-team');
    sandbox.env['CAIRN_EMBEDDER'] = 'none';
    sandbox.db = db.url;
    // The store exists (schema migrated, one token) before the servers start; each then opens it on its own.
    assert.equal((await cli(sandbox, ['stats'])).code, 0);
    writer = await token('write');
    [a, b] = await Promise.all([serve(sandbox, ['--auth', '--rate-limit', '6', '--namespace', 'team', '--quiet']), serve(sandbox, ['--auth', '--rate-limit', '6', '--namespace', 'team', '--quiet'])]);
  });
  after(async () => {
    for (const s of [a, b]) if (s && s.child.exitCode === null) s.child.kill('SIGTERM');
    await Promise.all([a?.exited, b?.exited]);
    sandbox?.remove();
    await db?.drop();
  });

  it('shares memories, sessions, request budgets and revocations across processes', async () => {
    const bearer = { authorization: `Bearer ${writer}` };
    const saved = await call(a, '/memories', { method: 'POST', headers: bearer, body: { text: 'Release branches are cut on Mondays from main', namespace: 'team' } });
    assert.equal(saved.status, 201, saved.body);
    const id = (JSON.parse(saved.body) as { id: string }).id;
    const found = await call(b, `/memories/${id}?namespace=team`, { headers: bearer });
    assert.equal(found.status, 200, found.body);
    assert.match(found.body, /cut on Mondays/u);

    // A browser session opened on A answers on B; a logout on B ends it on A.
    const login = await call(a, '/login', { method: 'POST', body: { token: writer } });
    assert.equal(login.status, 200, login.body);
    const cookie = String(login.headers['set-cookie']).split(';')[0] as string;
    assert.equal((await call(b, '/session', { headers: { cookie } })).status, 200);
    assert.equal((await call(b, '/logout', { method: 'POST', headers: { cookie, origin: b.url.origin } })).status, 200);
    assert.equal((await call(a, '/session', { headers: { cookie } })).status, 401);

    // One budget of 6 a minute for a fresh token, whichever server answers: 12 calls, alternating.
    const reader = await token('read');
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await call(i % 2 ? b : a, '/session', { headers: { authorization: `Bearer ${reader}` } })).status);
    assert.equal(statuses.filter((s) => s === 200).length, 6, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 6, statuses.join(','));

    // A revocation by the CLI (a third process) holds on both servers at once.
    const listed = JSON.parse((await cli(sandbox, ['token', 'list', '--json'])).stdout) as { tokens: { id: string; scope: string }[] };
    const writerId = listed.tokens.find((t) => t.scope === 'write')?.id as string;
    assert.equal((await cli(sandbox, ['token', 'revoke', writerId])).code, 0);
    for (const s of [a, b]) assert.equal((await call(s, '/session', { headers: bearer })).status, 401);
  });
});
