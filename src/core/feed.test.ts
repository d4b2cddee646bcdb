/**
 * What the brain page's live feed and its source/agent/session filters rest on, on real SQLite files: memories
 * stored after a point of the event log, by this engine or by another process's engine on the same file, and
 * listing by provenance.
 */
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createSqliteStore } from '../adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../adapters/tokenizer/gpt-token-counter.js';
import { isCairnError } from '../interfaces/errors.js';
import { Engine } from './engine.js';

const root = mkdtempSync(join(tmpdir(), 'cairn-feed-'));
const path = join(root, 'cairn.db');
const open = () => {
  const store = createSqliteStore({ path });
  return { store, engine: new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: 'acme/shop' }) };
};
const here = open();
const other = open(); // a second connection, as another process (an agent's MCP server) would hold
after(async () => {
  await here.store.close();
  await other.store.close();
  rmSync(root, { recursive: true, force: true });
});

describe('the live feed and provenance filters', () => {
  it('storedSince(null) gives where the log is; later calls return what any connection stored since, in order, filtered', async () => {
    await here.engine.save({ text: 'Stored before the feed started, so never in it', metadata: { source: 'cli' } });
    const start = await here.engine.storedSince(null);
    assert.deepEqual(start.memories, []);
    assert.ok(start.seq > 0);
    const a = await other.engine.save({ text: 'Refunds go to the original payment method', metadata: { source: 'mcp', agent: 'claude-code', sessionId: 's-1' } });
    const b = await here.engine.save({ text: 'Coupons never stack with sale prices', metadata: { source: 'http' } });
    await other.engine.save({ text: 'Elsewhere entirely', namespace: 'acme/api', metadata: { source: 'mcp' } });
    const next = await here.engine.storedSince(start.seq);
    assert.deepEqual(next.memories.map((m) => m.id), [a.id, b.id], 'both connections, oldest first, this namespace only');
    assert.ok(next.seq > start.seq);
    assert.deepEqual((await here.engine.storedSince(next.seq)).memories, [], 'nothing twice');
    assert.deepEqual((await here.engine.storedSince(start.seq, { provenance: { source: 'mcp' } })).memories.map((m) => m.id), [a.id]);
    assert.deepEqual((await here.engine.storedSince(start.seq, { provenance: { source: 'mcp', sessionId: 's-2' } })).memories, []);
    await assert.rejects(here.engine.storedSince(-1), (e: unknown) => isCairnError(e) && e.code === 'INVALID_INPUT' && e.field === 'after');
  });

  it('list filters by source, agent and session; an empty value is no filter; an unknown key is refused', async () => {
    await here.engine.save({ text: 'Feature flag PAYMENTS_V2_ENABLED is read once at boot', metadata: { source: 'mcp', agent: 'opencode', sessionId: 's-2' } });
    await here.engine.save({ text: 'Column names use snake_case in every table', metadata: { source: 'pre-compact-hook', sessionId: 's-2' } });
    const texts = async (provenance: Record<string, string>) => (await here.engine.list({ provenance })).map((m) => m.text).sort();
    assert.deepEqual(await texts({ source: 'mcp' }), ['Feature flag PAYMENTS_V2_ENABLED is read once at boot', 'Refunds go to the original payment method']);
    assert.deepEqual(await texts({ source: 'mcp', agent: 'opencode' }), ['Feature flag PAYMENTS_V2_ENABLED is read once at boot']);
    assert.deepEqual(await texts({ sessionId: 's-2' }), ['Column names use snake_case in every table', 'Feature flag PAYMENTS_V2_ENABLED is read once at boot']);
    assert.equal((await texts({ source: '' })).length, (await here.engine.list({})).length);
    await assert.rejects(here.engine.list({ provenance: { trigger: 'auto' } as never }), (e: unknown) => isCairnError(e) && e.field === 'provenance.trigger');
  });
});
