import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import type { SearchResult } from '../src/interfaces/memory.js';
import type { Store } from '../src/interfaces/store.js';

/**
 * Session context on the real embedder and a real SQLite file: a conversation saved turn by turn with its
 * session id, where the answer to a question is the turn after the one that names its subject.
 */

const NS = 'chat/caroline';
const NOW = new Date('2026-11-01T12:00:00.000Z');

const SESSION_1 = [
  'Caroline said, "I finally went to the adoption information evening the agency runs."',
  'Melanie said, "Oh wow, how did it go? Was it what you hoped?"',
  'Caroline said, "It was on the seventh of May and I came home full of hope."',
  'Melanie said, "I am so happy for you, that sounds wonderful."',
];
const SESSION_2 = [
  'Melanie said, "We took the kids camping by the lake last weekend."',
  'Caroline said, "That sounds lovely, did the weather hold up?"',
  'Melanie said, "Mostly, though it poured on the Sunday morning."',
];
/** Saved without a session: what an agent writes by hand. */
const LOOSE = ['Caroline said, "My brother came home in May with his new dog."', 'Melanie said, "Evenings at the pottery class are my favourite part of the week."'];

const embedder = createUseEmbedder();
const root = mkdtempSync(join(tmpdir(), 'cairn-session-context-'));
let store: Store;
let withContext: Engine;
let withoutContext: Engine;
const ids = new Map<string, string>();

before(async () => {
  store = createSqliteStore({ path: join(root, 'session.db') });
  const config = { store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, now: () => NOW, countRecalls: false };
  withContext = new Engine(config);
  withoutContext = new Engine({ ...config, sessionContext: null });
  let t = Date.parse('2026-05-08T18:00:00.000Z');
  for (const [session, turns] of [['s1', SESSION_1], ['s2', SESSION_2]] as const) {
    for (const text of turns) {
      const r = await withContext.save({ text, createdAt: new Date((t += 1000)).toISOString(), metadata: { source: 'import', sessionId: session } });
      ids.set(text, r.id);
    }
    t += 7 * 86_400_000;
  }
  for (const text of LOOSE) ids.set(text, (await withContext.save({ text, createdAt: new Date((t += 86_400_000)).toISOString() })).id);
});

after(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

const rankOf = (results: SearchResult[], text: string) => results.findIndex((r) => r.memory.id === ids.get(text));
const explain = (results: SearchResult[]) => results.map((r, i) => `${i + 1}. ${(100 * r.score).toFixed(1)}${r.scoreDetails.context ? ` (+${r.scoreDetails.context.contribution.toFixed(1)} session)` : ''} ${r.memory.text}`).join('\n');

describe('session context', () => {
  const question = 'when did Caroline go to the adoption evening';
  const answer = SESSION_1[2] as string;

  it('lifts the turn after the one that names the subject, with points from its neighbour', async () => {
    const plain = await withoutContext.search(question, { limit: 10 });
    const lifted = await withContext.search(question, { limit: 10 });
    const before = rankOf(plain, answer);
    const now = rankOf(lifted, answer);
    // Without context the answer may already sit second: the same-topic step lifts it as the newer turn over
    // "Oh wow, how did it go?" (a cross-subject lift, recorded in the notes). Context must never push it down,
    // and the points it adds must go to the answer most of all, for its neighbour names the subject.
    assert.ok(now >= 0 && (before < 0 || now <= before), `answer at ${before + 1} without context, ${now + 1} with:\n${explain(lifted)}`);
    const ctx = lifted[now]?.scoreDetails.context;
    assert.ok(ctx && ctx.contribution > 0, explain(lifted));
    const others = lifted.filter((_, i) => i !== now).map((r) => r.scoreDetails.context?.contribution ?? 0);
    assert.ok(others.every((c) => c < ctx.contribution), `the answer gains the most session points:\n${explain(lifted)}`);
    assert.equal(ctx.session, ids.get(SESSION_1[0] as string), 'the best other memory of its session is the turn that names the evening');
  });

  it('the points still add up, and a memory saved without a session gains none', async () => {
    const results = await withContext.search(question, { limit: 10 });
    assert.ok(results.length > 2);
    for (const r of results) {
      const d = r.scoreDetails;
      const sum = d.signals.vector.contribution + d.signals.lexical.contribution + d.signals.recency.contribution + (d.context?.contribution ?? 0);
      assert.ok(Math.abs(sum - (d.relevance as number)) < 1e-9, `${sum} ≠ ${d.relevance}`);
      assert.ok(Math.abs(100 * r.score - (d.relevance as number)) < 1e-9);
      assert.ok((d.relevance as number) <= 100);
      if (r.memory.metadata.sessionId === undefined) assert.equal(d.context, undefined, r.memory.text);
    }
    for (let i = 1; i < results.length; i++) assert.ok((results[i - 1] as SearchResult).score >= (results[i] as SearchResult).score || results[i - 1]?.scoreDetails.newerThan);
  });

  it('an off-topic question still returns nothing: context is added after the floor', async () => {
    assert.deepEqual(await withContext.search('how many moons does jupiter have'), []);
  });
});
