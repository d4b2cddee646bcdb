import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { isCairnError } from '../src/interfaces/errors.js';
import type { SearchResult } from '../src/interfaces/memory.js';
import type { Store } from '../src/interfaces/store.js';
import { CODING_NAMESPACES } from '../bench/coding-memory-data.js';

/**
 * The floor and query-term coverage in a namespace large enough to have a vocabulary (the coding-memory
 * benchmark's billing repository, 81 notes, on a real SQLite file and the real embedder): words no note
 * uses make a nonsense query irrelevant, and a note holding every query word beats a short one that holds
 * some of them.
 */

const billing = CODING_NAMESPACES[0] as (typeof CODING_NAMESPACES)[number];
const NOW = new Date('2026-11-01T12:00:00.000Z');
const root = mkdtempSync(join(tmpdir(), 'cairn-vocabulary-'));
let store: Store;
let engine: Engine;
const textOf = new Map<string, string>();

before(async () => {
  store = createSqliteStore({ path: join(root, 'vocabulary.db') });
  engine = new Engine({ store, embedder: createUseEmbedder(), tokenCounter: createGptTokenCounter(), defaultNamespace: billing.namespace, now: () => NOW, countRecalls: false });
  for (const note of billing.notes) {
    if (note.state) continue;
    const createdAt = new Date(NOW.getTime() - note.days * 86_400_000).toISOString();
    const input = { text: note.text, kind: note.kind, createdAt, ...(note.route ? { route: { title: note.route.title, description: note.text, paths: note.route.paths } } : {}) };
    const saved = await engine.save(input).catch((err: unknown) => (isCairnError(err) && err.code === 'QUARANTINED' ? null : Promise.reject(err)));
    if (saved) textOf.set(note.key, note.text);
  }
});

after(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

const explain = (results: SearchResult[]) => results.map((r, i) => `${i + 1}. ${(100 * r.score).toFixed(1)} ${r.memory.text}`).join('\n') || '(nothing)';

describe('a namespace with a vocabulary', () => {
  it('holds enough notes for unknown words to count', () => {
    assert.ok(textOf.size >= 50, `${textOf.size} notes`);
  });

  it('"xyzzy nothing matches" returns nothing', async () => {
    const results = await engine.search('xyzzy nothing matches');
    assert.deepEqual(results, [], explain(results));
  });

  it('identifiers and paraphrases still come through', async () => {
    for (const [query, key] of [
      ['TaxProviderClient', 'tax-provider'],
      ['E_LEDGER_IMBALANCE', 'ledger-imbalance'],
      ['journal entry legs do not add up to zero', 'ledger-imbalance'],
    ] as const) {
      const results = await engine.search(query);
      assert.equal(results[0]?.memory.text, textOf.get(key), `${query}:\n${explain(results)}`);
    }
  });

  it('"where do tax rates come from" puts the note holding every word above the short tax route', async () => {
    const results = await engine.search('where do tax rates come from');
    assert.equal(results[0]?.memory.text, textOf.get('tax-provider'), explain(results));
    assert.equal(results[0]?.scoreDetails.signals.lexical.coverage, 1);
    const route = results.find((r) => r.memory.kind === 'route' && r.memory.text.startsWith('Tax code'));
    assert.ok(route && (route.scoreDetails.signals.lexical.coverage as number) < 1, explain(results));
  });
});
