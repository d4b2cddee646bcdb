/**
 * `cairn mcp` end to end: the official SDK client spawns the real bin over real stdio, on a temp SQLite file
 * with the real embedder, and calls every tool. stdout must carry nothing but protocol messages.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, callOk, createSandbox, describeMcpTools, type Harness, type Sandbox } from './mcp-scenario.js';

describe('cairn mcp (stdio)', { concurrency: false }, () => {
  let sandbox: Sandbox;
  let client: Client;
  let transport: StdioClientTransport;
  let stderr = '';
  const transportErrors: Error[] = [];
  let initializeMs = 0;

  before(async () => {
    sandbox = createSandbox('mcp-stdio');
    transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--db', sandbox.db], cwd: sandbox.cwd, env: sandbox.env, stderr: 'pipe' });
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    client = new Client({ name: 'e2e-stdio-agent', version: '1.0.0' });
    client.onerror = (err) => transportErrors.push(err);
    const started = performance.now();
    await client.connect(transport);
    initializeMs = performance.now() - started;
  });

  after(async () => {
    await client?.close();
    sandbox?.remove();
  });

  it('answers initialize without loading the embedding model', async () => {
    // Spawning node and opening SQLite is all initialize costs; the model loads on the first embed.
    assert.ok(initializeMs < 15_000, `initialize took ${Math.round(initializeMs)} ms`);
    assert.equal(client.getServerVersion()?.name, 'cairn');
    const first = performance.now();
    await callOk(client, 'search_memory', { query: 'anything at all' }); // empty store: nothing to embed against
    assert.ok(performance.now() - first < 15_000);
  });

  describeMcpTools((): Harness => ({ client, clientName: 'e2e-stdio-agent', sandbox }));

  it('stdout carried only protocol messages and the server logged nothing at the default level', () => {
    assert.deepEqual(transportErrors.map((e) => e.message), []);
    assert.equal(stderr, '');
  });

  it('exits cleanly when the client closes stdin', async () => {
    const pid = transport.pid;
    assert.ok(pid);
    await client.close();
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      try {
        process.kill(pid, 0);
      } catch {
        return; // gone
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail('cairn mcp still running 10 s after stdin closed');
  });
});
