/**
 * Bad input through every write surface, against the real bin with the real embedding model (so the
 * ingest filter runs): the CLI's `save` and `import`, the HTTP API and MCP over HTTP. Each text is stored,
 * held (QUARANTINED, naming the quarantine id and the reasons) or refused with INVALID_INPUT; no surface
 * crashes, the server keeps serving, and `cairn verify` proves nothing was lost.
 */
import * as assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, cli, createSandbox, type Sandbox } from './mcp-scenario.js';
import { BAD, heldId } from './bad-inputs.js';
import { connect, raw, serve, type Served } from './served.js';

/** The outcome of one write, from its surface's own error shape. */
type Outcome = 'stored' | 'QUARANTINED' | 'INVALID_INPUT';

describe('bad input on every write surface never crashes the filter', { concurrency: false }, () => {
  let sandbox: Sandbox;
  let served: Served;
  let client: Client;

  before(async () => {
    sandbox = createSandbox('bad-input');
    served = await serve(sandbox);
    client = await connect(served.url, 'bad-input');
  });

  after(async () => {
    await client.close();
    served.child.kill('SIGTERM');
    await served.exited;
    sandbox.remove();
  });

  it('HTTP API and MCP over HTTP: each bad text is stored, held with its id and reasons, or refused; both keep serving', async () => {
    const outcomes: Record<string, [Outcome, Outcome]> = {};
    const held: string[] = [];
    for (const [label, text] of BAD) {
      const api = await raw(served.url, { method: 'POST', path: '/api/memories', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text }) });
      let viaApi: Outcome;
      if (api.status === 201 || api.status === 200) viaApi = 'stored';
      else {
        const err = (JSON.parse(api.body) as { error: { code: string; message: string } }).error;
        assert.ok(err.code === 'QUARANTINED' || err.code === 'INVALID_INPUT', `${label} via API: ${api.status} ${api.body.slice(0, 300)}`);
        if (err.code === 'QUARANTINED') held.push(heldId(`${label} via API`, err.message));
        viaApi = err.code as Outcome;
      }
      // The same text again through MCP, in another namespace (so it is not a duplicate of the API's save).
      let viaMcp: Outcome = 'stored';
      try {
        const r = await call(client, 'save_memory', { text, namespace: 'bad-input/mcp' });
        if (r.isError) {
          const code = /QUARANTINED|INVALID_INPUT/u.exec(r.text)?.[0];
          assert.ok(code, `${label} via MCP: ${r.text.slice(0, 300)}`);
          if (code === 'QUARANTINED') held.push(heldId(`${label} via MCP`, r.text));
          viaMcp = code as Outcome;
        }
      } catch (err) {
        // The tool's input schema refuses it before the tool runs: a JSON-RPC invalid-params error.
        assert.match(String(err), /-32602.*(?:NUL|surrogate|bytes; the limit)/u, `${label} via MCP: ${String(err).slice(0, 300)}`);
        viaMcp = 'INVALID_INPUT';
      }
      outcomes[label] = [viaApi, viaMcp];
    }
    // The surfaces agree, and the cases whose outcome is certain have it.
    for (const [label, [a, m]] of Object.entries(outcomes)) assert.equal(a, m, `${label}: API ${a}, MCP ${m}`);
    assert.deepEqual(outcomes['NUL'], ['INVALID_INPUT', 'INVALID_INPUT']);
    assert.deepEqual(outcomes['lone surrogate'], ['INVALID_INPUT', 'INVALID_INPUT']);
    assert.deepEqual(outcomes['over 32 KB'], ['INVALID_INPUT', 'INVALID_INPUT']);
    assert.deepEqual(outcomes['emoji'], ['stored', 'stored']);
    assert.deepEqual(outcomes['injection at the end of a long note'], ['QUARANTINED', 'QUARANTINED']);
    assert.deepEqual(outcomes['zero-width disguise'], ['QUARANTINED', 'QUARANTINED']);
    // Nothing held is lost: every id a write named is in the review queue, still held.
    const queue = await raw(served.url, { method: 'GET', path: '/api/quarantine?status=held&limit=1000' });
    assert.equal(queue.status, 200, queue.body.slice(0, 300));
    const queued = new Set((JSON.parse(queue.body) as { entries: { id: string }[] }).entries.map((e) => e.id));
    assert.ok(held.length >= 4, `held: ${held.join(', ')}`);
    for (const id of held) assert.ok(queued.has(id), `${id} is held in the review queue`);
    const health = await raw(served.url, { method: 'GET', path: '/api/health' });
    assert.equal(health.status, 200, 'the server still serves');
  });

  it('CLI save and import: the same texts end stored, held or refused with a clear message and exit code; verify passes', async () => {
    for (const [label, text] of BAD.filter(([l]) => l !== 'NUL' && l !== 'lone surrogate')) {
      // (A NUL or a lone surrogate cannot travel in argv; the import below carries them.)
      const r = await cli(sandbox, ['save', text, '--namespace', 'bad-input/cli']);
      // 0 stored, 1 held for review, 2 refused as bad input.
      assert.ok(r.code === 0 || r.code === 1 || r.code === 2, `${label}: exit ${r.code}: ${r.stderr.slice(0, 300)}`);
      if (r.code === 1) assert.match(r.stderr, /held for review, not stored \(quarantine [0-9A-Z]{26}/u, `${label}: ${r.stderr.slice(0, 300)}`);
      if (r.code === 2) assert.match(r.stderr, /limit is 32768 bytes/u, `${label}: ${r.stderr.slice(0, 300)}`);
      if (r.code !== 0) {
        assert.doesNotMatch(r.stderr, /at .+\.js:\d+/u, `${label}: no stack trace`);
      }
    }
    const file = join(sandbox.dir, 'bad.jsonl');
    writeFileSync(file, `${BAD.map(([, text]) => JSON.stringify({ text })).join('\n')}\nnot json at all\n`);
    const imp = await cli(sandbox, ['import', file, '--namespace', 'bad-input/import']);
    assert.equal(imp.code, 1, `an import that held or refused lines exits 1: ${imp.stderr}`);
    assert.doesNotMatch(`${imp.stdout}${imp.stderr}`, /at .+\.js:\d+/u, 'no stack trace');
    assert.match(imp.stdout.split('\n')[0] ?? '', /HELD FOR REVIEW [1-9]/u, `the held count comes first: ${imp.stdout.slice(0, 300)}`);
    const verify = await cli(sandbox, ['verify']);
    assert.equal(verify.code, 0, `verify: ${verify.stdout}${verify.stderr}`);
  });
});
