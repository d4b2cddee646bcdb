/**
 * `cairn mcp` facing bad input on real stdio: a message that is not JSON gets -32700, one over the size
 * limit gets -32600 by its id, and the server keeps serving; a save sent just before is answered.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { BIN, NO_MODEL, useSandbox } from './mcp-scenario.js';

interface Reply {
  id: number | string | null;
  result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
  error?: { code: number; message: string };
}

describe('cairn mcp (stdio): bad input', () => {
  const sandbox = useSandbox('mcp-stdio-input', NO_MODEL);

  it('answers malformed and oversized lines with JSON-RPC errors and keeps serving', async (t) => {
    const child = spawn(process.execPath, [BIN, 'mcp', '--db', sandbox.db], { cwd: sandbox.cwd, env: sandbox.env, stdio: ['pipe', 'pipe', 'pipe'] });
    t.after(() => void child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const replies: Reply[] = [];
    let out = '';
    const waiters: (() => void)[] = [];
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      let nl: number;
      while ((nl = out.indexOf('\n')) !== -1) {
        replies.push(JSON.parse(out.slice(0, nl)) as Reply);
        out = out.slice(nl + 1);
        for (const w of waiters.splice(0)) w();
      }
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const send = (m: unknown) => child.stdin.write(`${typeof m === 'string' ? m : JSON.stringify(m)}\n`);
    const until = async (ids: (number | null)[]) => {
      const deadline = Date.now() + 30_000;
      while (!ids.every((id) => replies.some((r) => r.id === id))) {
        assert.ok(Date.now() < deadline, `expected replies to ${JSON.stringify(ids)}, got ${JSON.stringify(replies).slice(0, 2000)}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
    };

    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } } });
    await until([1]);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'save_memory', arguments: { text: 'A save sent just before a huge line is answered' } } });
    // Over 10 MiB on one line, written in pieces.
    child.stdin.write('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"save_memory","arguments":{"text":"');
    const piece = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 11; i++) child.stdin.write(piece);
    child.stdin.write('"}}}\n');
    send('{this is not json');
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'search_memory', arguments: { query: 'huge line answered' } } });
    await until([2, 3, 7, null]);

    const byId = (id: number | null) => replies.filter((r) => r.id === id);
    const saved = byId(2)[0]?.result;
    assert.ok(saved && saved.isError !== true && saved.structuredContent?.['id'], `the save before the huge line is answered: ${JSON.stringify(byId(2))} ${stderr}`);
    assert.equal(byId(7)[0]?.error?.code, -32600, 'the oversized request is refused by its id');
    assert.equal(byId(null)[0]?.error?.code, -32700, 'malformed JSON gets a parse error');
    const search = byId(3)[0]?.result?.structuredContent as { results: { text: string }[] } | undefined;
    assert.ok(search?.results.some((r) => r.text.startsWith('A save sent just before')), 'still serving afterwards');
    child.stdin.end();
    assert.equal(await exited, 0, 'exits cleanly when stdin closes');
  });
});
