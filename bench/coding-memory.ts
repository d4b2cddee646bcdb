/**
 * The coding-memory benchmark: what an agent working in four repositories asks of its memory, through the
 * real engine (SQLite file, FTS5, sqlite-vec, USE-lite). Data: bench/coding-memory-data.ts (≥ 300 notes,
 * ≥ 200 queries; paraphrases, identifiers, paths, error codes, update chains written without supersede,
 * forgotten and expired notes, the same question in several namespaces, off-topic questions).
 *
 *   node dist/bench/coding-memory.js [--split dev|test|extra|all] [--out <file>] [--vector-cache <file>] [--quick]
 *
 * Queries alternate dev/test within each query type (first dev, second test, …), so both halves hold every
 * type. Choices are made on dev (bench/recall-sweep.ts); test is reported. The namespaces of
 * bench/data/coding-memory-extra.json (CODING_EXTRA_NAMESPACES) are saved into a store of their own (so the dev
 * and test figures do not move with them) and their queries form a third split, `extra`: dev material only,
 * reported apart (`--split extra`). Figures per split and per type:
 * R@1, R@5 and MRR over queries with an answer; update-correct (the chain's newest note is returned and no
 * older version ranks above it); off-topic rejection (the search returns nothing); leaks (a forgotten or
 * expired note, or another namespace's note, among the results of any query).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine, type EngineConfig } from '../src/core/engine.js';
import { isCairnError } from '../src/interfaces/errors.js';
import type { Store } from '../src/interfaces/store.js';
import type { SearchOptions, SearchResult } from '../src/interfaces/memory.js';
import { CODING_NAMESPACES, QUERY_TYPES, type NamespaceSpec, type QueryType } from './coding-memory-data.js';
import { CachingEmbedder, loadVectorCache, prefetchEmbeddings, ratioRule, relatedRule, saveVectorCache, statedRule } from './locomo-data.js';
import { staleRouteCases } from './coding-stale-routes.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');

/**
 * Namespaces written later, apart from the four of coding-memory-data.ts, by a writer who read none of them
 * (bench/data/coding-memory-extra.json, same shape): their queries are dev material only (split `extra`), so a
 * choice can be checked on wordings the four namespaces' dev half has not worn out, and the test half stays as
 * it was. Empty when the file is absent.
 */
export const CODING_EXTRA_NAMESPACES: NamespaceSpec[] = (() => {
  const file = join(repoRoot, 'bench', 'data', 'coding-memory-extra.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as NamespaceSpec[]) : [];
})();

/** Query time of the benchmark; every note's date is counted back from it. */
export const CODING_NOW = new Date('2026-11-01T12:00:00.000Z');
const DAY = 86_400_000;

/** `extra`: dev material from CODING_EXTRA_NAMESPACES. */
export type Split = 'dev' | 'test' | 'extra';
const SPLITS: readonly Split[] = ['dev', 'test', 'extra'];

/** Every namespace the benchmark stores: the four of the dev/test halves, then the extra ones. */
const ALL_NAMESPACES: NamespaceSpec[] = [...CODING_NAMESPACES, ...CODING_EXTRA_NAMESPACES];

export interface CodingQuery {
  namespace: string;
  query: string;
  type: QueryType;
  split: Split;
  /** Memory id of the answer, null when there is none. */
  expect: string | null;
  /** Older versions of the answer's update chain. */
  older: string[];
}

export interface CodingFixture {
  engine: Engine;
  store: Store;
  queries: CodingQuery[];
  /** Ids that must never be returned: forgotten and expired notes. */
  inactive: Set<string>;
  namespaceOf: Map<string, string>;
  notes: number;
  /** What each save reported as likely replaced (write time), by the saved note's namespace/key. */
  likely: Map<string, string[]>;
  idOf: Map<string, string>;
  /** Notes the ingest filter held (not stored; their queries are left out). */
  quarantined: string[];
  close(): Promise<void>;
}

function chainOf(key: string): { subject: string; version: number } | null {
  const m = /^(.+)@(\d+)$/u.exec(key);
  return m ? { subject: m[1] as string, version: Number(m[2]) } : null;
}

/** Every text the benchmark embeds (notes and queries), for prefetching into a cache. */
export function codingTexts(): string[] {
  return ALL_NAMESPACES.flatMap((ns) => [...ns.notes.flatMap((x) => [x.text, ...(x.q ?? []).map(([, q]) => q)]), ...ns.offTopic]);
}

/**
 * Builds the store (notes saved at their own dates, then forgotten/expired ones made so) and the queries: of the
 * four namespaces (dev and test halves) or, with `extra`, of CODING_EXTRA_NAMESPACES (split `extra`).
 */
export async function buildCodingFixture(embedder: CachingEmbedder, config: Partial<EngineConfig> = {}, extra = false): Promise<CodingFixture> {
  const namespaces = extra ? CODING_EXTRA_NAMESPACES : CODING_NAMESPACES;
  const dir = mkdtempSync(join(tmpdir(), 'cairn-coding-'));
  const store = createSqliteStore({ path: join(dir, 'coding.db') });
  let clock = CODING_NOW;
  const engine = new Engine({
    store,
    embedder,
    tokenCounter: createGptTokenCounter(),
    defaultNamespace: 'bench',
    countRecalls: false,
    ...config,
    now: () => clock,
  });
  const idOf = new Map<string, string>();
  const inactive = new Set<string>();
  const namespaceOf = new Map<string, string>();
  const likely = new Map<string, string[]>();
  const quarantined: string[] = [];
  let notes = 0;
  for (const ns of namespaces) {
    const ordered = [...ns.notes].sort((a, b) => b.days - a.days);
    for (const note of ordered) {
      const createdAt = new Date(CODING_NOW.getTime() - note.days * DAY);
      clock = new Date(createdAt.getTime() + 1000);
      const saved = await engine
        .save({
          namespace: ns.namespace,
          text: note.text,
          kind: note.kind,
          createdAt: createdAt.toISOString(),
          ...(note.route ? { route: { title: note.route.title, description: note.text, paths: note.route.paths } } : {}),
          ...(note.state === 'expired' ? { expiresAt: new Date(CODING_NOW.getTime() - DAY).toISOString() } : {}),
        })
        .catch((err: unknown) => {
          // The ingest filter (product default) may hold a note: it is not stored, and its queries are left out.
          if (isCairnError(err) && err.code === 'QUARANTINED') return null;
          throw err;
        });
      if (!saved) {
        quarantined.push(`${ns.namespace}/${note.key}`);
        continue;
      }
      if (saved.duplicate) throw new Error(`duplicate note ${ns.namespace}/${note.key}`);
      idOf.set(`${ns.namespace}/${note.key}`, saved.id);
      likely.set(`${ns.namespace}/${note.key}`, (saved.likelyReplaces ?? []).map((l) => l.id));
      namespaceOf.set(saved.id, ns.namespace);
      notes++;
      if (note.state) inactive.add(saved.id);
    }
  }
  clock = CODING_NOW;
  for (const ns of namespaces) {
    for (const note of ns.notes) {
      if (note.state === 'forgotten' && idOf.has(`${ns.namespace}/${note.key}`)) await engine.forget(idOf.get(`${ns.namespace}/${note.key}`) as string, { namespace: ns.namespace, reason: 'wrong' });
    }
  }

  const counter = new Map<QueryType, number>();
  const split = (type: QueryType): Split => {
    if (extra) return 'extra';
    const i = counter.get(type) ?? 0;
    counter.set(type, i + 1);
    return i % 2 === 0 ? 'dev' : 'test';
  };
  const queries: CodingQuery[] = [];
  for (const ns of namespaces) {
    for (const note of ns.notes) {
      for (const [type, query] of note.q ?? []) {
        // A note the ingest filter held has no queries, but keeps its place in the dev/test alternation.
        if (!idOf.has(`${ns.namespace}/${note.key}`)) {
          split(type);
          continue;
        }
        const chain = chainOf(note.key);
        const older = chain
          ? ns.notes.filter((o) => chainOf(o.key)?.subject === chain.subject && (chainOf(o.key)?.version ?? 0) < chain.version).map((o) => idOf.get(`${ns.namespace}/${o.key}`) as string)
          : [];
        queries.push({ namespace: ns.namespace, query, type, split: split(type), expect: note.state ? null : (idOf.get(`${ns.namespace}/${note.key}`) as string), older });
      }
    }
    for (const query of ns.offTopic) queries.push({ namespace: ns.namespace, query, type: 'off-topic', split: split('off-topic'), expect: null, older: [] });
  }
  return {
    engine,
    store,
    queries,
    inactive,
    namespaceOf,
    notes,
    likely,
    idOf,
    quarantined,
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface QueryOutcome {
  query: CodingQuery;
  /** 1-based rank of the answer among the results, null when absent. */
  rank: number | null;
  returned: number;
  leaked: boolean;
  updateCorrect: boolean | null;
  top: string | null;
}

/**
 * `reorder`: a harness's change to the ranking (bench/paraphrase-levers.ts); it is given the first
 * max(3 × limit, 30) results of the search and its first `limit` are scored.
 */
export async function runQueries(
  fixture: CodingFixture,
  queries: CodingQuery[],
  options: SearchOptions = {},
  limit = 10,
  reorder?: (query: CodingQuery, results: SearchResult[]) => Promise<SearchResult[]>,
): Promise<QueryOutcome[]> {
  const out: QueryOutcome[] = [];
  for (const q of queries) {
    const fetched = await fixture.engine.search(q.query, { ...options, namespace: q.namespace, limit: reorder ? Math.max(3 * limit, 30) : limit, countRecall: false });
    const found = reorder ? (await reorder(q, fetched)).slice(0, limit) : fetched;
    const ids = found.map((r) => r.memory.id);
    const at = q.expect ? ids.indexOf(q.expect) : -1;
    const rank = at >= 0 ? at + 1 : null;
    const leaked = ids.some((id) => fixture.inactive.has(id) || fixture.namespaceOf.get(id) !== q.namespace);
    let updateCorrect: boolean | null = null;
    if (q.type === 'update') updateCorrect = rank !== null && q.older.every((o) => !ids.includes(o) || ids.indexOf(o) > at);
    out.push({ query: q, rank, returned: ids.length, leaked, updateCorrect, top: found[0]?.memory.text ?? null });
  }
  return out;
}

export interface Figures {
  queries: number;
  answerable: number;
  r1: number | null;
  r5: number | null;
  mrr: number | null;
  updateCorrect: number | null;
  offTopic: number;
  offTopicRejected: number | null;
  leaks: number;
}

const mean = (xs: number[]): number | null => (xs.length ? Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10000) / 10000 : null);

export function figures(outcomes: QueryOutcome[]): Figures {
  const answerable = outcomes.filter((o) => o.query.expect !== null);
  const updates = outcomes.filter((o) => o.updateCorrect !== null);
  const off = outcomes.filter((o) => o.query.type === 'off-topic');
  return {
    queries: outcomes.length,
    answerable: answerable.length,
    r1: mean(answerable.map((o) => (o.rank === 1 ? 1 : 0))),
    r5: mean(answerable.map((o) => (o.rank !== null && o.rank <= 5 ? 1 : 0))),
    mrr: mean(answerable.map((o) => (o.rank ? 1 / o.rank : 0))),
    updateCorrect: mean(updates.map((o) => (o.updateCorrect ? 1 : 0))),
    offTopic: off.length,
    offTopicRejected: mean(off.map((o) => (o.returned === 0 ? 1 : 0))),
    leaks: outcomes.filter((o) => o.leaked).length,
  };
}

export function figuresByType(outcomes: QueryOutcome[]): Record<string, Figures> {
  const out: Record<string, Figures> = { all: figures(outcomes) };
  for (const t of QUERY_TYPES) {
    const sub = outcomes.filter((o) => o.query.type === t);
    if (sub.length) out[t] = figures(sub);
  }
  return out;
}

function parseArgs(argv: string[]): { split: Split | 'all'; out: string | null; vectorCache: string | null; quick: boolean; config: Partial<EngineConfig> } {
  let split: Split | 'all' = 'all';
  const config: Partial<EngineConfig> = {};
  let out: string | null = null;
  let vectorCache: string | null = null;
  let quick = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--split') {
      const v = argv[++i];
      if (v !== 'dev' && v !== 'test' && v !== 'extra' && v !== 'all') throw new Error(`--split must be dev, test, extra or all (got ${v})`);
      split = v;
    } else if (a === '--out') out = resolve(argv[++i] ?? '');
    else if (a === '--vector-cache') vectorCache = resolve(argv[++i] ?? '');
    else if (a === '--quick') quick = true;
    // The recorded-update rule of recall (topics.ts RecordedUpdateRule), or off: figures with and without it, same build.
    else if (a === '--likely-replaces-ratio') config.likelyReplaces = ratioRule(argv[++i]);
    // The weight of related terms in the lexical signal (core/related-terms.ts), or off.
    else if (a === '--related-weight') config.relatedTerms = relatedRule(argv[++i]);
    // The stated-update rule of recall (topics.ts StatedUpdateRule) as `cosine,overlap,ratio`, or off: a development aid.
    else if (a === '--stated-update') config.statedUpdate = statedRule(argv[++i]);
    else throw new Error(`unknown argument ${a}; usage: node dist/bench/coding-memory.js [--split dev|test|extra|all] [--out <file>] [--vector-cache <file>] [--quick] [--likely-replaces-ratio <r>|off] [--related-weight <w>|off] [--stated-update <cosine,overlap,ratio>|off]`);
  }
  return { split, out, vectorCache, quick, config };
}

/**
 * Write time, over one fixture's namespaces: did the save of each newer chain version name an older version as
 * likely replaced, and how many saves named a note of another subject.
 */
function writeTimeOf(namespaces: NamespaceSpec[], fixture: CodingFixture) {
  const w = { chainVersions: 0, flaggedAnOlderVersion: 0, saves: 0, savesFlaggingAnotherSubject: 0, otherSubjectFlags: 0 };
  for (const ns of namespaces) {
    for (const note of ns.notes) {
      if (!fixture.idOf.has(`${ns.namespace}/${note.key}`)) continue;
      const flagged = fixture.likely.get(`${ns.namespace}/${note.key}`) ?? [];
      const chain = chainOf(note.key);
      const sameChain = new Set(
        ns.notes.filter((o) => chain && chainOf(o.key)?.subject === chain.subject && o.key !== note.key).map((o) => fixture.idOf.get(`${ns.namespace}/${o.key}`) as string),
      );
      w.saves++;
      if (chain && chain.version > 1) {
        w.chainVersions++;
        if (flagged.some((id) => sameChain.has(id))) w.flaggedAnOlderVersion++;
      }
      const others = flagged.filter((id) => !sameChain.has(id)).length;
      w.otherSubjectFlags += others;
      if (others > 0) w.savesFlaggingAnotherSubject++;
    }
  }
  return w;
}

const pct = (x: number | null) => (x === null ? '   –' : (100 * x).toFixed(1).padStart(5));

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const embedder = new CachingEmbedder(createUseEmbedder());
  if (args.vectorCache) loadVectorCache(embedder, args.vectorCache);
  await prefetchEmbeddings(embedder, codingTexts(), 2);
  if (args.vectorCache) saveVectorCache(embedder, args.vectorCache);
  const fixture = await buildCodingFixture(embedder, args.config);
  const splits: readonly Split[] = args.split === 'all' ? SPLITS.filter((s) => s !== 'extra' || CODING_EXTRA_NAMESPACES.length > 0) : [args.split];
  let extra: CodingFixture | null = null;
  try {
    extra = splits.includes('extra') ? await buildCodingFixture(embedder, args.config, true) : null;
    // Only the chosen halves are searched: `--split dev` never runs a test query.
    const outcomes = [
      ...(await runQueries(fixture, fixture.queries.filter((q) => splits.includes(q.split)))),
      ...(extra ? await runQueries(extra, extra.queries) : []),
    ];
    const results: Record<string, Record<string, Figures>> = {};
    const lines: string[] = [];
    for (const s of splits) {
      const sub = outcomes.filter((o) => o.query.split === s);
      const byType = figuresByType(sub);
      results[s] = byType;
      lines.push(`${s} split — ${sub.length} queries`);
      lines.push(`${'type'.padEnd(16)} ${'n'.padStart(4)} ${'R@1'.padStart(5)} ${'R@5'.padStart(5)} ${'MRR'.padStart(5)} ${'upd'.padStart(5)} ${'rej'.padStart(5)} leaks`);
      for (const [type, f] of Object.entries(byType)) {
        lines.push(`${type.padEnd(16)} ${String(f.queries).padStart(4)} ${pct(f.r1)} ${pct(f.r5)} ${pct(f.mrr)} ${pct(f.updateCorrect)} ${pct(f.offTopicRejected)} ${f.leaks}`);
      }
    }
    const writeTime = writeTimeOf(CODING_NAMESPACES, fixture);
    const writeTimeExtra = extra ? writeTimeOf(CODING_EXTRA_NAMESPACES, extra) : null;
    for (const [label, w] of [['', writeTime], [' (extra)', writeTimeExtra]] as const) {
      if (w) lines.push(`write time${label}: ${w.flaggedAnOlderVersion} of ${w.chainVersions} newer chain versions named an older version as likely replaced; ${w.savesFlaggingAnotherSubject} of ${w.saves} saves named a note of another subject`);
    }
    const misses = outcomes
      .filter((o) => o.query.split !== 'test' && ((o.query.expect && o.rank !== 1) || (o.query.type === 'off-topic' && o.returned > 0) || o.leaked))
      .map((o) => ({ split: o.query.split, type: o.query.type, namespace: o.query.namespace, query: o.query.query, rank: o.rank, returned: o.returned, top: o.top }));
    // The context block for an off-topic question, to show what an agent is given when nothing matches.
    // Stale routes (bench/coding-stale-routes.ts): moved files in real git repositories.
    const staleRoutes = await staleRouteCases(embedder);
    lines.push(
      `stale routes: ${staleRoutes.moved} of ${staleRoutes.routes} routes moved; marked with the new path ${pct(staleRoutes.markedWithNewPath)} %, ` +
        `false marks ${staleRoutes.falseMarks}, after one followMoves call R@1 with the new path ${pct(staleRoutes.followedR1)} %`,
    );
    const offTopic = fixture.queries.find((q) => q.type === 'off-topic') as CodingQuery;
    const pack = await fixture.engine.context(offTopic.query, { namespace: offTopic.namespace });
    const result = {
      benchmark: 'coding-memory recall (bench/coding-memory-data.ts)',
      command: `node dist/bench/coding-memory.js ${process.argv.slice(2).join(' ')}`.trim(),
      date: new Date().toISOString(),
      data: {
        namespaces: CODING_NAMESPACES.map((n) => n.namespace),
        notes: fixture.notes,
        queries: fixture.queries.length,
        perSplit: Object.fromEntries(['dev', 'test'].map((s) => [s, fixture.queries.filter((q) => q.split === s).length])),
        perType: Object.fromEntries(QUERY_TYPES.map((t) => [t, fixture.queries.filter((q) => q.type === t).length])),
        updateChains: fixture.queries.filter((q) => q.type === 'update').length,
        inactiveNotes: fixture.inactive.size,
        quarantinedNotes: fixture.quarantined,
        // The extra namespaces, stored apart (split `extra`, dev material): their own counts.
        extra: extra && {
          namespaces: CODING_EXTRA_NAMESPACES.map((n) => n.namespace),
          notes: extra.notes,
          queries: extra.queries.length,
          perType: Object.fromEntries(QUERY_TYPES.map((t) => [t, extra?.queries.filter((q) => q.type === t).length ?? 0])),
          quarantinedNotes: extra.quarantined,
        },
      },
      method:
        'engine.search(query, { namespace, limit: 10 }) with the product defaults; R@k and MRR over queries with an answer; update-correct: newest version returned and ranked above every older version returned; rejection: no result at all; leaks: queries whose results hold a forgotten/expired note or another namespace\'s note',
      results,
      staleRoutes,
      writeTimeLikelyReplaces: writeTime,
      writeTimeLikelyReplacesExtra: writeTimeExtra,
      offTopicContext: { query: offTopic.query, tokens: pack.tokens, text: pack.text },
      devMisses: misses,
      durationMs: Math.round(performance.now() - started),
    };
    console.log(lines.join('\n'));
    const out = args.out ?? (args.quick ? null : join(repoRoot, 'bench', 'results', 'coding-memory.json'));
    if (out) {
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
      process.stderr.write(`wrote ${out}\n`);
    }
  } finally {
    await fixture.close();
    await (extra as CodingFixture | null)?.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main().catch((err: unknown) => {
    process.stderr.write(`coding-memory bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  });
}
