/**
 * A team on one server: many MCP clients over Streamable HTTP, each with a token for its own namespace,
 * write and search at once. No write is lost, no search returns another namespace's memory, and a token
 * reaching for a namespace it does not hold is refused while the others carry on.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { cli, cliJson, createSandbox, type Sandbox } from './mcp-scenario.js';
import { connect, raw, serve, type Served } from './served.js';

const TEAMS = ['team-red', 'team-green', 'team-blue', 'team-gold'];
const CLIENTS_PER_TEAM = 4;
const WRITES_PER_CLIENT = 8;

interface Reply {
  isError?: boolean;
  structuredContent?: { id?: string; duplicate?: boolean; namespace?: string; results?: { namespace: string; text: string }[] };
  content: { type: string; text?: string }[];
}

describe('many MCP HTTP clients at once', { concurrency: false }, () => {
  let sandbox: Sandbox;
  let served: Served;
  const tokens = new Map<string, string>();
  const clients: { team: string; client: Client; n: number }[] = [];

  before(async () => {
    sandbox = createSandbox('http-concurrency');
    for (const team of TEAMS) tokens.set(team, (await cliJson<{ token: string }>(sandbox, ['token', 'create', '--namespace', team, '--scope', 'write'])).token);
    served = await serve(sandbox, ['--auth', '--rate-limit', '0', '--quiet']);
    for (const team of TEAMS)
      for (let n = 0; n < CLIENTS_PER_TEAM; n++) clients.push({ team, n, client: await connect(served.url, `${team}-agent-${n}`, tokens.get(team)) });
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.client.close().catch(() => {})));
    if (served && served.child.exitCode === null) served.child.kill('SIGKILL');
    sandbox?.remove();
  });

  it(`${TEAMS.length * CLIENTS_PER_TEAM} clients write ${WRITES_PER_CLIENT} notes each and search in between: nothing lost, nothing crosses`, async () => {
    const leaks: string[] = [];
    const failures: string[] = [];
    await Promise.all(
      clients.map(async ({ team, client, n }) => {
        for (let i = 0; i < WRITES_PER_CLIENT; i++) {
          const text = `${team} decision ${n}.${i}: the ${team.split('-')[1]} service keeps its own retry budget of ${n * 100 + i} calls`;
          const saved = (await client.callTool({ name: 'save_memory', arguments: { text } })) as Reply;
          if (saved.isError) failures.push(`${team}/${n}/${i}: ${saved.content[0]?.text}`);
          const found = (await client.callTool({ name: 'search_memory', arguments: { query: 'service retry budget decision', limit: 10 } })) as Reply;
          if (found.isError) failures.push(`${team}/${n}/${i} search: ${found.content[0]?.text}`);
          for (const r of found.structuredContent?.results ?? []) if (r.namespace !== team || !r.text.startsWith(team)) leaks.push(`${team} saw ${r.namespace}: ${r.text}`);
        }
      }),
    );
    assert.deepEqual(failures, []);
    assert.deepEqual(leaks, []);
    for (const team of TEAMS) {
      const listed = await cliJson<{ text: string; namespace: string }[] | { memories: { text: string }[] }>(sandbox, ['list', '--namespace', team, '--limit', '1000']);
      const memories = Array.isArray(listed) ? listed : listed.memories;
      assert.equal(memories.length, CLIENTS_PER_TEAM * WRITES_PER_CLIENT, `${team}: every write is stored once`);
      assert.ok(memories.every((m) => m.text.startsWith(team)));
    }
    const verify = await cli(sandbox, ['verify']);
    assert.equal(verify.code, 0, verify.stderr);
  });

  it('a token reaching into another team is refused (403) while the rest keep working, and nothing lands there', async () => {
    const red = clients.find((c) => c.team === 'team-red')?.client as Client;
    await assert.rejects(red.callTool({ name: 'save_memory', arguments: { text: 'red writes into blue', namespace: 'team-blue' } }), /403|FORBIDDEN/u);
    await assert.rejects(red.callTool({ name: 'search_memory', arguments: { query: 'retry budget', namespace: 'team-blue' } }), /403|FORBIDDEN/u);
    const direct = await raw(new URL(served.url.origin), {
      method: 'GET',
      path: '/api/search?q=retry&namespace=team-blue',
      headers: { authorization: `Bearer ${tokens.get('team-red')}` },
    });
    assert.equal(direct.status, 403);
    const ok = (await red.callTool({ name: 'search_memory', arguments: { query: 'retry budget' } })) as Reply;
    assert.notEqual(ok.isError, true);
    const blue = await cliJson<{ text: string }[] | { memories: { text: string }[] }>(sandbox, ['list', '--namespace', 'team-blue', '--limit', '1000']);
    const texts = (Array.isArray(blue) ? blue : blue.memories).map((m) => m.text);
    assert.ok(!texts.includes('red writes into blue'));
  });
});
