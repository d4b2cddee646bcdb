/**
 * `GET /api/feed` over real HTTP from the real `cairn serve --auth`: server-sent events for what is stored,
 * by the server and by another process on the same database, filtered by provenance; a reconnect with
 * Last-Event-ID misses nothing; a token without the namespace is refused before any stream opens; and the
 * server stops at once while a feed is open.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stopServed } from './brain-harness.js';
import { cli, cliJson, createSandbox, type Sandbox } from './mcp-scenario.js';
import { serve, type Served } from './served.js';

const NS = 'feed-shop';

interface FeedEvent {
  event: string;
  id: string;
  data: string;
}

/** Reads server-sent events from a fetch body until `stop` says enough (or the time is up). */
async function readEvents(res: Response, stop: (events: FeedEvent[]) => boolean, ms = 15_000): Promise<FeedEvent[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: FeedEvent[] = [];
  let buffer = '';
  const deadline = Date.now() + ms;
  try {
    while (!stop(events) && Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), deadline - Date.now()))]);
      if (chunk === null || chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const field = (name: string) => block.split('\n').filter((l) => l.startsWith(`${name}: `)).map((l) => l.slice(name.length + 2)).join('\n');
        if (field('event')) events.push({ event: field('event'), id: field('id'), data: field('data') });
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return events;
}

describe('GET /api/feed (server-sent events)', () => {
  let sandbox: Sandbox;
  let served: Served;
  let admin = '';
  let stranger = '';
  const feed = (query: string, headers: Record<string, string> = {}, token = admin) =>
    fetch(new URL(`/api/feed?${query}`, served.url), { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers } });
  const post = async (text: string) => {
    const r = await fetch(new URL('/api/memories', served.url), { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ text, namespace: NS }) });
    assert.equal(r.status, 201);
  };

  before(async () => {
    sandbox = createSandbox('http-feed');
    admin = (await cliJson<{ token: string }>(sandbox, ['token', 'create', '--namespace', '*', '--scope', 'admin'])).token;
    stranger = (await cliJson<{ token: string }>(sandbox, ['token', 'create', '--namespace', 'elsewhere', '--scope', 'read'])).token;
    served = await serve(sandbox, ['--auth', '--quiet']);
  });
  after(async () => {
    await stopServed(served);
    sandbox.remove();
  });

  it('streams each memory stored from now on, by the server and by another process, filtered by source', async () => {
    const all = await feed(`namespace=${NS}`);
    assert.equal(all.status, 200);
    assert.match(all.headers.get('content-type') ?? '', /^text\/event-stream/u);
    const mcpOnly = await feed(`namespace=${NS}&source=mcp`);
    await post('Invoices are numbered per year, starting at 1');
    const saved = await cli(sandbox, ['save', 'Refunds go back to the original payment method', '--namespace', NS, '--source', 'mcp']);
    assert.equal(saved.code, 0, saved.stderr);
    const events = await readEvents(all, (e) => e.filter((x) => x.event === 'memory').length >= 2);
    assert.equal(events[0]?.event, 'ready');
    const memories = events.filter((e) => e.event === 'memory').map((e) => JSON.parse(e.data) as { text: string; metadata: { source: string } });
    assert.deepEqual(memories.map((m) => [m.text, m.metadata.source]), [
      ['Invoices are numbered per year, starting at 1', 'http'],
      ['Refunds go back to the original payment method', 'mcp'],
    ]);
    const filtered = await readEvents(mcpOnly, (e) => e.some((x) => x.event === 'memory'), 5000);
    assert.deepEqual(filtered.filter((e) => e.event === 'memory').map((e) => (JSON.parse(e.data) as { text: string }).text), ['Refunds go back to the original payment method']);
  });

  it('a reconnect with Last-Event-ID gets what was stored while it was away, and nothing twice', async () => {
    const first = await feed(`namespace=${NS}`);
    const [ready] = await readEvents(first, (e) => e.length >= 1);
    assert.equal(ready?.event, 'ready');
    await post('Coupons never stack with sale prices');
    await post('Gift cards are sold in whole euros only');
    const again = await feed(`namespace=${NS}`, { 'last-event-id': ready!.id });
    const events = await readEvents(again, (e) => e.filter((x) => x.event === 'memory').length >= 2);
    assert.deepEqual(events.filter((e) => e.event === 'memory').map((e) => (JSON.parse(e.data) as { text: string }).text), ['Coupons never stack with sale prices', 'Gift cards are sold in whole euros only']);
  });

  it('refuses a token without the namespace, and a bad filter, before a stream opens', async () => {
    const refused = await feed(`namespace=${NS}`, {}, stranger);
    assert.equal(refused.status, 403);
    assert.match(refused.headers.get('content-type') ?? '', /json/u);
    const bad = await feed(`namespace=${NS}&source=${'x'.repeat(600)}`);
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { field: string } }).error.field, 'provenance.source');
  });

  it('the server stops at once while a feed is open', async () => {
    const open = await feed(`namespace=${NS}`);
    await readEvents(open, (e) => e.length >= 1);
    const started = Date.now();
    served.child.kill('SIGTERM');
    assert.equal(await served.exited, 0);
    assert.ok(Date.now() - started < 5000, `stopped in ${Date.now() - started} ms`);
  });
});
