/**
 * `cairn serve` end to end: the real bin serves Streamable HTTP on a free loopback port; official SDK
 * clients call every tool, several clients write at once, and the Host/Origin guard refuses other sites.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callOk, cli, cliJson, createSandbox, describeMcpTools, TOOLS, type Harness, type Sandbox } from './mcp-scenario.js';
import { connect, raw, serve, type Served } from './served.js';

const LIST_TOOLS = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

describe('cairn serve (Streamable HTTP)', { concurrency: false }, () => {
  let sandbox: Sandbox;
  let served: Served;
  let client: Client;

  before(async () => {
    sandbox = createSandbox('mcp-http');
    served = await serve(sandbox);
    client = await connect(served.url, 'e2e-http-agent');
  });

  after(async () => {
    await client?.close().catch(() => {});
    if (served && served.child.exitCode === null) served.child.kill('SIGKILL');
    sandbox?.remove();
  });

  it('listens on loopback at /mcp', () => {
    assert.equal(served.url.hostname, '127.0.0.1');
    assert.equal(served.url.pathname, '/mcp');
  });

  describeMcpTools((): Harness => ({ client, clientName: 'e2e-http-agent', sandbox }));

  it('several HTTP clients writing and searching at once lose no write, each recorded as its own agent', async () => {
    const clients = await Promise.all([1, 2, 3, 4].map((i) => connect(served.url, `agent-${i}`)));
    try {
      const writes = clients.flatMap((c, i) =>
        Array.from({ length: 10 }, (_, j) =>
          callOk(c, 'memory_store', { content: `Agent ${i + 1} learned fact number ${j}: queue ${i}-${j} drains every ${j + 2} seconds`, category: 'fact', importance: 3, tags: [], namespace: 'e2e/http-parallel' }),
        ),
      );
      const searches = clients.map((c) => callOk(c, 'search_memory', { query: 'how often does the queue drain', namespace: 'e2e/http-parallel' }));
      const replies = await Promise.all([...writes, ...searches]);
      const stored = replies.slice(0, 40).map((r) => r.structured);
      assert.equal(new Set(stored.map((s) => s['id'])).size, 40);
      stored.forEach((s, k) => assert.equal(s['memory'].metadata.agent, `agent-${Math.floor(k / 10) + 1}`));
      const listed = await cliJson<{ memories: { id: string }[] }>(sandbox, ['list', '--namespace', 'e2e/http-parallel', '--limit', '100']);
      assert.equal(listed.memories.length, 40);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('a request without a session is served statelessly; an unknown session is 404; other paths are 404', async () => {
    const stateless = await raw(served.url, { body: LIST_TOOLS });
    assert.equal(stateless.status, 200, stateless.body);
    assert.equal((JSON.parse(stateless.body) as { result: { tools: unknown[] } }).result.tools.length, TOOLS.length);
    const unknown = await raw(served.url, { body: LIST_TOOLS, headers: { 'mcp-session-id': 'no-such-session' } });
    assert.equal(unknown.status, 404);
    const other = await raw(served.url, { method: 'GET', path: '/nothing-here' });
    assert.equal(other.status, 404);
    const notJson = await raw(served.url, { body: '{nope' });
    assert.equal(notJson.status, 400);
  });

  it('refuses a foreign Host (DNS rebinding) and a cross-site Origin', async () => {
    const rebinding = await raw(served.url, { body: LIST_TOOLS, headers: { host: `attacker.example:${served.url.port}` } });
    assert.equal(rebinding.status, 403);
    const crossSite = await raw(served.url, { body: LIST_TOOLS, headers: { origin: 'https://attacker.example' } });
    assert.equal(crossSite.status, 403);
    const sameSite = await raw(served.url, { body: LIST_TOOLS, headers: { origin: `http://127.0.0.1:${served.url.port}` } });
    assert.equal(sameSite.status, 200);
    const localhost = await raw(served.url, { body: LIST_TOOLS, headers: { host: `localhost:${served.url.port}` } });
    assert.equal(localhost.status, 200);
  });

  it('a port in use fails with one line on stderr and exit 2', async () => {
    const r = await cli(sandbox, ['serve', '--port', served.url.port]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^cairn: cannot listen on 127\.0\.0\.1:\d+: the address is in use\n$/u);
  });

  it('SIGTERM stops the server cleanly with a session still open', async () => {
    const started = Date.now();
    served.child.kill('SIGTERM');
    assert.equal(await served.exited, 0, served.stderr());
    assert.ok(Date.now() - started < 10_000);
  });
});
