/**
 * Which lexical ranking on PostgreSQL recalls closest to SQLite's FTS5 BM25: cairn's BM25 in SQL (the
 * shipped one) or PostgreSQL's ts_rank_cd over a tsvector built from the same analysed terms (positions
 * kept, nothing re-tokenised: the vector and the query are written as literal lexemes).
 *
 *   node dist/bench/pg-lexical.js --pg <admin url> [--split dev|test|all] [--out bench/results/pg-lexical.json]
 *
 * LoCoMo conversations, one namespace each, saved through the engine without an embedder (lexical signal
 * only); every question's lexical candidates from each ranker; fractional evidence recall at 5/10/25/50,
 * and how often each PostgreSQL ranker's top 10 equals SQLite's. The choice was made on the dev split
 * (conversations 0–4); the test split is reported, never tuned on.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { parsePostgresUrl } from '../src/adapters/postgres/postgres-config.js';
import { createPostgresStore } from '../src/adapters/postgres/postgres-store.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { analyse, queryTerms } from '../src/core/lexical.js';
import type { Memory } from '../src/interfaces/memory.js';
import type { Store } from '../src/interfaces/store.js';
import { ingestConversation, KS, loadLocomo, recallOf, SPLITS, type Split } from './locomo-data.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const quote = (lexeme: string) => `'${lexeme.replace(/'/gu, "''").replace(/\\/gu, '\\\\')}'`;

/** A tsvector literal of the analysed terms with their positions (1-based, capped at 16383 as PostgreSQL does). */
function tsvectorLiteral(terms: string[]): string {
  const positions = new Map<string, number[]>();
  terms.forEach((t, i) => positions.set(t, [...(positions.get(t) ?? []), Math.min(i + 1, 16383)]));
  return [...positions].map(([t, p]) => `${quote(t)}:${p.join(',')}`).join(' ');
}

async function main(): Promise<void> {
  const admin = arg('pg') ?? process.env['CAIRN_BENCH_PG'] ?? process.env['CAIRN_TEST_PG'];
  if (!admin) throw new Error('give --pg <admin url> (or CAIRN_BENCH_PG / CAIRN_TEST_PG)');
  const split = (arg('split') ?? 'dev') as Split;
  const out = arg('out') ?? `bench/results/pg-lexical-${split}.json`;
  const conversations = loadLocomo().filter((c) => SPLITS[split].includes(c.index));
  const dir = mkdtempSync(join(tmpdir(), 'cairn-pg-lexical-'));
  const name = `cairn_bench_lexical_${process.pid}`;
  const root = new pg.Client({ connectionString: admin });
  await root.connect();
  await root.query(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const { rootCertPath: _unused, ...parsed } = parsePostgresUrl(url.toString());
  const stores: Record<'sqlite' | 'postgres', Store> = {
    sqlite: createSqliteStore({ path: join(dir, 'lexical.db') }),
    postgres: createPostgresStore({ ...parsed, poolSize: 4 }),
  };
  const direct = new pg.Client({ connectionString: url.toString() });
  const rankers = ['sqlite-fts5-bm25', 'postgres-bm25', 'postgres-ts_rank_cd'] as const;
  const recalls: Record<string, Record<number, number[]>> = Object.fromEntries(rankers.map((r) => [r, Object.fromEntries(KS.map((k) => [k, [] as number[]]))]));
  const sameTop10: Record<string, number> = { 'postgres-bm25': 0, 'postgres-ts_rank_cd': 0 };
  let questions = 0;
  try {
    await direct.connect();
    for (const conv of conversations) {
      for (const store of Object.values(stores)) {
        const engine = new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: conv.namespace, ingestFilter: { enabled: false } });
        await ingestConversation(engine, conv);
      }
      // The ts_rank_cd side table: the same analysed terms as the postings, with positions.
      await direct.query('CREATE TABLE IF NOT EXISTS bench_tsv (memory_id text PRIMARY KEY, namespace text NOT NULL, doc tsvector NOT NULL)');
      const memories: Memory[] = [];
      for await (const page of stores.postgres.iterateMemories(conv.namespace)) memories.push(...page);
      for (const m of memories) {
        await direct.query('INSERT INTO bench_tsv (memory_id, namespace, doc) VALUES ($1, $2, $3::tsvector)', [m.id, m.namespace, tsvectorLiteral(analyse(m.text))]);
      }
      await direct.query('CREATE INDEX IF NOT EXISTS bench_tsv_doc ON bench_tsv USING gin (doc)');
      const externalOf = new Map(memories.map((m) => [m.id, (m.metadata as { externalId?: string }).externalId]));
      const now = new Date().toISOString();
      for (const q of conv.questions) {
        const terms = queryTerms(q.question);
        if (terms.length === 0) continue;
        questions++;
        const filter = { namespace: conv.namespace, now };
        const lists: Record<string, string[]> = {
          'sqlite-fts5-bm25': (await stores.sqlite.lexicalCandidates(terms, 50, filter)).map((h) => h.id),
          'postgres-bm25': (await stores.postgres.lexicalCandidates(terms, 50, filter)).map((h) => h.id),
          'postgres-ts_rank_cd': (
            await direct.query<{ memory_id: string }>(
              `SELECT memory_id FROM bench_tsv WHERE namespace = $1 AND doc @@ $2::tsquery ORDER BY ts_rank_cd(doc, $2::tsquery) DESC, memory_id LIMIT 50`,
              [conv.namespace, terms.map(quote).join(' | ')],
            )
          ).rows.map((r) => r.memory_id),
        };
        // Ids differ between the two stores: compare by LoCoMo dialogue id.
        const sqliteMemories = new Map((await stores.sqlite.getMemories(lists['sqlite-fts5-bm25'] as string[])).map((m) => [m.id, (m.metadata as { externalId?: string }).externalId]));
        const retrieved: Record<string, (string | undefined)[]> = {
          'sqlite-fts5-bm25': (lists['sqlite-fts5-bm25'] as string[]).map((id) => sqliteMemories.get(id)),
          'postgres-bm25': (lists['postgres-bm25'] as string[]).map((id) => externalOf.get(id)),
          'postgres-ts_rank_cd': (lists['postgres-ts_rank_cd'] as string[]).map((id) => externalOf.get(id)),
        };
        for (const r of rankers) for (const k of KS) recalls[r]?.[k]?.push(recallOf(q, (retrieved[r] as (string | undefined)[]).slice(0, k)));
        const top = (r: string) => JSON.stringify((retrieved[r] as (string | undefined)[]).slice(0, 10));
        for (const r of ['postgres-bm25', 'postgres-ts_rank_cd']) if (top(r) === top('sqlite-fts5-bm25')) sameTop10[r] = (sameTop10[r] ?? 0) + 1;
      }
      process.stderr.write(`[pg-lexical] conversation ${conv.index}: ${conv.turns.length} turns, ${conv.questions.length} questions\n`);
    }
  } finally {
    await direct.end().catch(() => {});
    for (const s of Object.values(stores)) await s.close();
    await root.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await root.end();
    rmSync(dir, { recursive: true, force: true });
  }
  const mean = (xs: number[]) => (xs.length ? (100 * xs.reduce((a, b) => a + b, 0)) / xs.length : 0);
  const table = Object.fromEntries(rankers.map((r) => [r, Object.fromEntries(KS.map((k) => [`recall@${k}`, Number(mean(recalls[r]?.[k] ?? []).toFixed(1))]))]));
  const result = {
    bench: 'pg-lexical',
    command: `node dist/bench/pg-lexical.js --pg <admin url> --split ${split}`,
    split,
    conversations: conversations.map((c) => c.index),
    questions,
    recall: table,
    sameTop10AsSqlite: Object.fromEntries(Object.entries(sameTop10).map(([r, n]) => [r, `${n} of ${questions}`])),
    at: new Date().toISOString(),
  };
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`pg-lexical: ${(err as Error).message}\n`);
  process.exit(1);
});
