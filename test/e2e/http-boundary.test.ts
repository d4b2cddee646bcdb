/**
 * The HTTP surface's edges under `cairn serve --auth`, against the real bin: only the exact public routes
 * skip authentication, a body over its limit is refused (413) before it is read, and every error, wherever
 * it is raised, has the one body shape with the status of its code.
 */
import * as assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { cliJson, createSandbox, type Sandbox } from './mcp-scenario.js';
import { raw, serve, type Served } from './served.js';

/** The one error body of the HTTP surface. */
function errorCode(body: string): string {
  const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
  assert.equal(typeof parsed.error?.message, 'string', `an error body has a message: ${body}`);
  return String(parsed.error?.code);
}

/** Sends headers declaring `declared` bytes and only a first chunk; resolves with the answer or 'no answer'. */
function declaredHuge(url: URL, path: string, token: string, declared: number, waitMs: number): Promise<{ status: number; body: string } | 'no answer'> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: url.hostname,
      port: url.port,
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(declared), authorization: `Bearer ${token}`, connection: 'close' },
      agent: false,
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve('no answer');
    }, waitMs);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      if ((err as NodeJS.ErrnoException).code === 'ECONNRESET') resolve('no answer');
      else reject(err);
    });
    req.write(`{"text":"${'x'.repeat(64 * 1024)}`);
  });
}

describe('cairn serve --auth: the HTTP boundary', { concurrency: false }, () => {
  let sandbox: Sandbox;
  let served: Served;
  let base: URL;
  let admin: string;

  before(async () => {
    sandbox = createSandbox('http-boundary');
    admin = (await cliJson<{ token: string }>(sandbox, ['token', 'create', '--namespace', '*', '--scope', 'admin'])).token;
    served = await serve(sandbox, ['--auth']);
    base = new URL('/', served.url);
  });

  after(async () => {
    served.child.kill('SIGTERM');
    await served.exited;
    sandbox.remove();
  });

  it('only /api/health, /api/login and /api/logout skip authentication; any other path ending so is 401', async () => {
    assert.equal((await raw(base, { method: 'GET', path: '/api/health' })).status, 200);
    for (const [method, path] of [
      ['GET', '/api/memories/health'],
      ['DELETE', '/api/tokens/health'],
      ['GET', '/api/x/login'],
      ['POST', '/api/memories/logout'],
    ] as const) {
      const r = await raw(base, { method, path });
      assert.equal(r.status, 401, `${method} ${path} without a token: ${r.status} ${r.body}`);
      assert.equal(errorCode(r.body), 'UNAUTHORIZED');
    }
  });

  it('a body declared over the limit is refused with 413 before it arrives, and the server keeps serving', async () => {
    const r = await declaredHuge(base, '/api/memories', admin, 300 * 1024 * 1024, 5000);
    assert.notEqual(r, 'no answer', 'the server answers without waiting for 300 MB');
    if (r === 'no answer') return;
    assert.equal(r.status, 413, r.body);
    assert.equal(errorCode(r.body), 'TOO_LARGE');
    const imp = await declaredHuge(base, '/api/import', admin, 300 * 1024 * 1024, 5000);
    assert.ok(imp !== 'no answer' && imp.status === 413, `import: ${JSON.stringify(imp)}`);
    const chunked = await raw(base, { method: 'POST', path: '/api/memories', headers: { authorization: `Bearer ${admin}`, 'transfer-encoding': 'chunked', connection: 'close' }, body: JSON.stringify({ text: 'y'.repeat(5 * 1024 * 1024) }) });
    assert.equal(chunked.status, 413, 'a streamed body is counted as it arrives');
    const ok = await raw(base, { method: 'POST', path: '/api/memories', headers: { authorization: `Bearer ${admin}` }, body: JSON.stringify({ text: 'the server still takes ordinary writes after refusing large ones' }) });
    assert.equal(ok.status, 201, ok.body);
  });

  it('every error has the one body shape, with the status of its code', async () => {
    const cases: [string, string, Record<string, string>, number, string][] = [
      ['GET', '/nowhere', {}, 404, 'NOT_FOUND'],
      ['GET', '/api/nowhere', { authorization: `Bearer ${admin}` }, 404, 'NOT_FOUND'],
      ['GET', '/api/health', { host: 'evil.example' }, 403, 'FORBIDDEN'],
      ['GET', '/api/health', { origin: 'http://evil.example' }, 403, 'FORBIDDEN'],
      ['GET', '/api/memories', {}, 401, 'UNAUTHORIZED'],
      ['GET', '/api/memories?limit=abc', { authorization: `Bearer ${admin}` }, 400, 'INVALID_INPUT'],
      ['GET', '/api/memories/01JD3X0000000000000000000Z', { authorization: `Bearer ${admin}` }, 404, 'NOT_FOUND'],
    ];
    for (const [method, path, headers, status, code] of cases) {
      const r = await raw(base, { method, path, headers });
      assert.equal(r.status, status, `${method} ${path} ${JSON.stringify(headers)}: ${r.body}`);
      assert.equal(errorCode(r.body), code, `${method} ${path}`);
    }
  });

  it('input checks: a lone surrogate is refused, repeated tags count once, one deeply nested import line is rejected alone', async () => {
    const post = (path: string, body: string, type = 'application/json') => raw(base, { method: 'POST', path, headers: { authorization: `Bearer ${admin}`, 'content-type': type }, body });
    const lone = await post('/api/memories', '{"text":"a broken \\ud800 surrogate in the middle","namespace":"edge"}');
    assert.equal(lone.status, 400, lone.body);
    assert.equal(errorCode(lone.body), 'INVALID_INPUT');
    const tags = await post('/api/memories', JSON.stringify({ text: 'Twelve copies of one tag are one tag', namespace: 'edge', tags: Array(12).fill('same') }));
    assert.equal(tags.status, 201, tags.body);
    assert.deepEqual((JSON.parse(tags.body) as { memory: { tags: string[] } }).memory.tags, ['same']);
    const deep = `{"text":"deep","namespace":"edge","tags":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const lines = [JSON.stringify({ text: 'The line before the deep one is imported', namespace: 'edge' }), deep, JSON.stringify({ text: 'The line after the deep one is imported', namespace: 'edge' })];
    const imp = await post('/api/import?namespace=edge', `${lines.join('\n')}\n`, 'application/x-ndjson');
    assert.equal(imp.status, 200, imp.body.slice(0, 300));
    const counts = JSON.parse(imp.body) as { imported: number; rejected: number; errors: { line: number; message: string }[] };
    assert.deepEqual([counts.imported, counts.rejected, counts.errors[0]?.line], [2, 1, 2]);
    assert.match(counts.errors[0]?.message ?? '', /nested more than/u);
  });

  it('one definition of active: an expired memory is inactive in its view, the live count and recall', async () => {
    const auth = { authorization: `Bearer ${admin}` };
    const text = 'The staging certificate is valid until the end of this very test';
    const saved = await raw(base, { method: 'POST', path: '/api/memories', headers: auth, body: JSON.stringify({ text, namespace: 'life', expiresAt: new Date(Date.now() + 1500).toISOString() }) });
    assert.equal(saved.status, 201, saved.body);
    const id = (JSON.parse(saved.body) as { id: string }).id;
    const view = async () => (JSON.parse((await raw(base, { method: 'GET', path: `/api/memories/${id}?namespace=life`, headers: auth })).body) as { memory: { active: boolean; states: string[] } }).memory;
    assert.deepEqual([(await view()).active, (await view()).states], [true, []]);
    await new Promise((r) => setTimeout(r, 1700));
    assert.deepEqual([(await view()).active, (await view()).states], [false, ['expired']]);
    const stats = JSON.parse((await raw(base, { method: 'GET', path: '/api/stats?namespace=life', headers: auth })).body) as { counts: { live: number; expired: number }; live?: number };
    assert.deepEqual([stats.counts.live, stats.counts.expired], [0, 1]);
    const found = JSON.parse((await raw(base, { method: 'GET', path: `/api/search?namespace=life&q=${encodeURIComponent('staging certificate valid')}`, headers: auth })).body) as { results: { id: string }[] };
    assert.ok(!found.results.some((r) => r.id === id), 'recall leaves it out');
  });
});
