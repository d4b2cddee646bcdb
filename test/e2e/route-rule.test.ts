/**
 * One route rule: the same route saved from the CLI and from MCP (the real bin over real stdio) is one live
 * memory, because its text comes from one definition in core.
 */
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, callOk, cliJson, NO_MODEL, useSandbox } from './mcp-scenario.js';

describe('routes from the CLI and from MCP', () => {
  const sandbox = useSandbox('route-rule', NO_MODEL);

  it('are one memory', async () => {
    const route = { title: 'checkout tax', description: 'VAT rules and rounding', paths: ['shop/checkout/tax.py', 'shop/checkout/rates.json'] };
    const fromCli = await cliJson<{ id: string; duplicate: boolean }>(sandbox, ['route', '--title', route.title, '--description', route.description, '--paths', route.paths.join(','), '--namespace', 'routes']);
    assert.equal(fromCli.duplicate, false);
    const client = new Client({ name: 'route-rule', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--db', sandbox.db], cwd: sandbox.cwd, env: sandbox.env, stderr: 'ignore' }));
    try {
      const fromMcp = await callOk(client, 'route_create', { ...route, namespace: 'routes' });
      assert.equal(fromMcp.structured['id'], fromCli.id, 'the same route is the same memory');
      assert.equal(fromMcp.structured['duplicate'], true);
    } finally {
      await client.close();
    }
    const listed = await cliJson<{ memories: unknown[] }>(sandbox, ['list', '--namespace', 'routes', '--kind', 'route']);
    assert.equal(listed.memories.length, 1);
  });
});
