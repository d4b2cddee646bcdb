/**
 * Engine.saveRoute / updateRoute / taskNote on a real SQLite file with the real embedder: the rules the
 * MCP tools rely on live here, not in the tools.
 */
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createUseEmbedder } from '../adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../adapters/tokenizer/gpt-token-counter.js';
import { isCairnError } from '../interfaces/errors.js';
import { Engine } from './engine.js';
import { routeText, TASK_NOTE_IMPORTANCE, TASK_NOTE_MIN_CHARS } from './routes.js';

const root = mkdtempSync(join(tmpdir(), 'cairn-engine-notes-'));
const store = createSqliteStore({ path: join(root, 'cairn.db') });
const engine = new Engine({ store, embedder: createUseEmbedder(), tokenCounter: createGptTokenCounter(), defaultNamespace: 'acme/shop' });
after(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

const rejects = (code: string, field?: string) => (err: unknown) => isCairnError(err) && err.code === code && (field === undefined || err.field === field);

describe('routes', () => {
  it('routeText is title: description, plus the paths when there are any', () => {
    assert.equal(routeText({ title: 'tax', description: 'VAT rules', paths: [] }), 'tax: VAT rules');
    assert.equal(routeText({ title: 'tax', description: '', paths: ['src/tax.ts', 'src/vat/'] }), 'tax (paths: src/tax.ts, src/vat/)');
  });

  it('saveRoute stores a route memory; the same route again is a duplicate', async () => {
    const r = await engine.saveRoute({ title: 'checkout tax', description: 'Where VAT is computed', paths: ['src/tax.ts'] }, { metadata: { source: 'mcp' } });
    assert.equal(r.memory.kind, 'route');
    assert.deepEqual(r.memory.route, { title: 'checkout tax', description: 'Where VAT is computed', paths: ['src/tax.ts'] });
    assert.equal(r.memory.text, 'checkout tax: Where VAT is computed (paths: src/tax.ts)');
    const again = await engine.saveRoute({ title: 'checkout tax', description: 'Where VAT is computed', paths: ['src/tax.ts'] });
    assert.equal(again.duplicate, true);
    assert.equal(again.id, r.id);
    await assert.rejects(engine.saveRoute({ title: ' ', description: 'x' }), rejects('INVALID_INPUT', 'route.title'));
  });

  it('updateRoute supersedes, keeps fields left out, and refuses no-op, non-route and replaced ids', async () => {
    const first = await engine.saveRoute({ title: 'invoices', description: 'PDF rendering', paths: ['src/pdf/'] });
    const second = await engine.updateRoute(first.id, { paths: ['src/pdf/', 'templates/'] });
    assert.notEqual(second.id, first.id);
    assert.equal(second.memory.supersedes, first.id);
    assert.deepEqual(second.memory.route, { title: 'invoices', description: 'PDF rendering', paths: ['src/pdf/', 'templates/'] });
    assert.equal((await engine.get(first.id))?.supersededBy, second.id);
    const found = await engine.search('invoice pdf templates', { kinds: ['route'] });
    assert.equal(found[0]?.memory.id, second.id);
    assert.ok(!found.some((f) => f.memory.id === first.id), 'the replaced version left recall');

    await assert.rejects(engine.updateRoute(second.id, { title: 'invoices' }), rejects('CONFLICT', 'id'));
    await assert.rejects(engine.updateRoute(first.id, { title: 'bills' }), rejects('CONFLICT'));
    const note = await engine.save({ text: 'Not a route at all' });
    await assert.rejects(engine.updateRoute(note.id, { title: 'x' }), rejects('INVALID_INPUT', 'id'));
    await assert.rejects(engine.updateRoute('01ARZ3NDEKTSV4RRFFQ69G5FAV', { title: 'x' }), rejects('NOT_FOUND', 'id'));
    await assert.rejects(engine.updateRoute(second.id, { title: 'x' }, { namespace: 'acme/blog' }), rejects('NOT_FOUND', 'id'));
  });
});

describe('task notes', () => {
  it(`under ${TASK_NOTE_MIN_CHARS} characters nothing is stored and the result says why`, async () => {
    const before = (await engine.stats()).events;
    const r = await engine.taskNote({ taskId: 'PAY-1', context: '   tests pass now   ' });
    assert.equal(r.stored, false);
    assert.equal(r.chars, 'tests pass now'.length);
    assert.ok(!r.stored && r.reason.includes(String(TASK_NOTE_MIN_CHARS)));
    assert.equal((await engine.stats()).events, before);
  });

  it(`from ${TASK_NOTE_MIN_CHARS} characters it is one note linked to the task, importance ${TASK_NOTE_IMPORTANCE}`, async () => {
    const context = 'x'.repeat(TASK_NOTE_MIN_CHARS);
    const r = await engine.taskNote({ taskId: 'PAY-1', context, metadata: { source: 'mcp' } });
    assert.ok(r.stored);
    assert.equal(r.memory.taskId, 'PAY-1');
    assert.equal(r.memory.importance, TASK_NOTE_IMPORTANCE);
    assert.equal(r.memory.kind, 'note');
    assert.equal(r.memory.metadata.source, 'mcp');
  });

  it('validates the task id, the context and the namespace before the length rule', async () => {
    await assert.rejects(engine.taskNote({ taskId: 'two words', context: 'short' }), rejects('INVALID_INPUT', 'taskId'));
    await assert.rejects(engine.taskNote({ taskId: 'T-1', context: '' }), rejects('INVALID_INPUT', 'context'));
    await assert.rejects(engine.taskNote({ taskId: 'T-1', context: 'short', namespace: '' }), rejects('INVALID_INPUT', 'namespace'));
  });
});
