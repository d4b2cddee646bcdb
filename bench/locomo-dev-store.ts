/**
 * The LoCoMo dev split (conversations 0–4) in a real store, with every question's candidate lists fetched
 * once (sqlite-vec KNN and FTS5 BM25, the engine's pool of 300, and the BM25 scale of score fusion), for
 * harnesses that try many fusion settings on the same candidates (bench/recall-sweep.ts, bench/recall-levers.ts).
 * The test split is never loaded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { DEFAULT_MIN_CANDIDATES, Engine } from '../src/core/engine.js';
import { indexText } from '../src/core/events.js';
import { fts5Idf, type RankedHit } from '../src/core/fusion.js';
import { analyse, queryTerms } from '../src/core/lexical.js';
import { inverseDocumentFrequency } from '../src/core/topics.js';
import type { Memory } from '../src/interfaces/memory.js';
import type { Store } from '../src/interfaces/store.js';
import { ingestConversation, loadLocomo, SPLITS, type CachingEmbedder, type Conversation, type Question } from './locomo-data.js';

export interface DevCandidates {
  vector: RankedHit[];
  lexical: RankedHit[];
  /** Σ idf of the query terms. */
  scale: number;
  queryVector: Float32Array;
}

export interface LocomoDevStore {
  store: Store;
  engine: Engine;
  now: Date;
  dev: Conversation[];
  questions: { conv: Conversation; q: Question }[];
  cands: DevCandidates[];
  memories: Map<string, Memory>;
  vectors: Map<string, Float32Array>;
  termCache: Map<string, Set<string>>;
  rarity: (term: string) => number;
  ageDays: (m: Memory) => number;
  close(): Promise<void>;
}

export async function openLocomoDevStore(embedder: CachingEmbedder): Promise<LocomoDevStore> {
  const dev = SPLITS.dev.map((i) => loadLocomo()[i] as Conversation);
  if (dev.some((c) => c.index >= 5)) throw new Error('only the dev split may be loaded here');
  const dir = mkdtempSync(join(tmpdir(), 'cairn-locomo-dev-'));
  const store = createSqliteStore({ path: join(dir, 'locomo.db') });
  const now = new Date('2024-01-01T00:00:00.000Z');
  const engine = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: 'locomo', now: () => now, countRecalls: false });
  const close = async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const conv of dev) await ingestConversation(engine, conv);
    const memories = new Map<string, Memory>();
    for (const conv of dev) for await (const page of store.iterateMemories(conv.namespace, 1000)) for (const m of page) memories.set(m.id, m);
    const questions = dev.flatMap((c) => c.questions.map((q) => ({ conv: c, q })));
    const cands: DevCandidates[] = [];
    for (const { conv, q } of questions) {
      const filter = { namespace: conv.namespace, now: now.toISOString() };
      const [qv] = await embedder.embed([q.question]);
      const terms = queryTerms(q.question);
      const vec = await store.vectorCandidates(qv as Float32Array, DEFAULT_MIN_CANDIDATES, filter);
      const lex = terms.length ? await store.lexicalCandidates(terms, DEFAULT_MIN_CANDIDATES, filter) : [];
      const { documents, frequencies } = await store.termDocumentFrequencies(terms);
      cands.push({
        vector: vec.map((h) => ({ id: h.id, raw: h.similarity })),
        lexical: lex.map((h) => ({ id: h.id, raw: h.score })),
        scale: terms.reduce((s, t) => s + fts5Idf(documents, frequencies.get(t) ?? 0), 0),
        queryVector: qv as Float32Array,
      });
    }
    const vectors = await store.getVectors([...memories.keys()]);
    const termCache = new Map<string, Set<string>>();
    for (const m of memories.values()) termCache.set(m.id, new Set(analyse(indexText(m))));
    const allTerms = [...new Set([...termCache.values()].flatMap((t) => [...t]))];
    const df = await store.termDocumentFrequencies(allTerms);
    const rarity = inverseDocumentFrequency(df.documents, df.frequencies);
    const ageDays = (m: Memory) => (now.getTime() - Date.parse(m.createdAt)) / 86_400_000;
    return { store, engine, now, dev, questions, cands, memories, vectors, termCache, rarity, ageDays, close };
  } catch (err) {
    await close();
    throw err;
  }
}
