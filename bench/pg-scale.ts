/**
 * PostgreSQL at scale: search through the real engine and store at 100k and 1M memories, with the latency
 * bench's kind of data, and where a search's time goes.
 *
 *   node dist/bench/pg-scale.js --pg <admin url> [--sizes 100000,1000000] [--keep-db] [--db <url of a kept database>]
 *                               [--quick] [--no-related-terms] [--ef 200,400,800] [--samples 60] [--fill-budget-s N] [--maintenance-work-mem 4GB]
 *                               [--copies] [--out bench/results/pg-scale.json]
 *
 * Data, as bench/latency.ts makes it: 512 generated coding notes embedded with the real model; each stored memory
 * is one of them (round robin) plus a unique ticket/author/date detail, with the note's vector plus Gaussian
 * noise of norm 0.5, renormalised; kind and tags of the note, importance 1–9, created up to a year ago. The
 * measured namespace holds `size` memories and three noise namespaces 10 % each.
 *
 * Fill: the first memory through the engine (it records the embedder), then a bulk load of the projection (one
 * multi-row statement per 1,000 memories writing rows, postings and vectors as `StoreTx.insertMemory` does; no log
 * events: this database only serves the search timing), the HNSW index dropped meanwhile and built once after it
 * (bench-stores.ts `withIndexBuiltAfter`). With `--db`, a database kept by an earlier run (`--keep-db`) is reused
 * and filled on from what it holds, so a size can be measured again after a change without a new fill.
 *
 * Searches go through `Engine.search` on the real store: end to end (the real model embeds each query), and with
 * the query vector computed beforehand. Every store call of the cached searches is timed (the `store` section:
 * mean ms per search by method), and recall@10 of `vectorCandidates` (the HNSW walk) against the exact answer is
 * measured on the same queries.
 *
 * `--copies`: the store as a long-lived process opens it (`recallCopies`: searches proposed from copies of the
 * namespace, postgres-recall-copies.ts); the copy is loaded (a first search, then waiting for it) before timing,
 * and its load time is reported.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { migrate } from '../src/adapters/postgres/postgres-migrations.js';
import { termCounts } from '../src/adapters/postgres/postgres-tx.js';
import { Params, vectorLiteral } from '../src/adapters/postgres/postgres-rows.js';
import { vectorCtes } from '../src/adapters/postgres/postgres-search.js';
import { MEMORY_COLUMNS, memoryValues } from '../src/adapters/sql/sql-rows.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { vectorHash } from '../src/core/checksum.js';
import { Engine } from '../src/core/engine.js';
import { indexText } from '../src/core/events.js';
import { analyse } from '../src/core/lexical.js';
import type { Embedder } from '../src/interfaces/embedder.js';
import type { Memory, MemoryKind } from '../src/interfaces/memory.js';
import type { Store } from '../src/interfaces/store.js';
import { createPostgresStore, type PostgresStore } from '../src/adapters/postgres/postgres-store.js';
import { openStoreAt, resolvePostgres } from '../src/surfaces/open-engine.js';
import { makeMemory } from '../test/contract/store-contract.js';
import { freshLocation, withIndexBuiltAfter } from './bench-stores.js';
import { stats, timeEach } from './measure.js';
import { coreNote, detail, gaussian, noisyCopy, PrecomputedEmbedder, query, rng } from './synthetic-notes.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, HERE.includes(join('dist', 'bench')) ? '../..' : '..');
const NOISE_NORM = 0.5;
const TARGET = 'github.com/acme/shop';
const NOISE = ['github.com/acme/service-1', 'github.com/acme/service-2', 'github.com/acme/service-3'];
/** Memories per bulk statement (about 21 parameters each, under PostgreSQL's 65,535). */
const BULK = 1000;

function log(message: string): void {
  process.stderr.write(`[pg-scale ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

const load1 = () => Math.round((loadavg()[0] ?? 0) * 100) / 100;

/** The store with every async method timed: total ms and calls by method name since the last `reset`. */
function timedStore(store: Store): { store: Store; totals: Map<string, { ms: number; calls: number }>; reset(): void } {
  const totals = new Map<string, { ms: number; calls: number }>();
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || typeof prop !== 'string' || prop === 'transaction') return typeof value === 'function' ? value.bind(target) : value;
      return (...args: unknown[]) => {
        const t = performance.now();
        const out = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!(out instanceof Promise)) return out;
        return out.finally(() => {
          const e = totals.get(prop) ?? { ms: 0, calls: 0 };
          e.ms += performance.now() - t;
          e.calls++;
          totals.set(prop, e);
        });
      };
    },
  });
  return { store: proxy, totals, reset: () => totals.clear() };
}

interface Generated {
  memory: Memory;
  vector: Float32Array;
}

/**
 * Rows, postings and vectors of `batch` in one statement, as StoreTx.insertMemory writes each (postgres-tx.ts).
 * `keys` are drawn from the identity's sequence beforehand (`reserveKeys`), so postings and vectors need no join
 * back to the rows.
 */
function bulkStatement(keys: string[], batch: Generated[]): { sql: string; values: unknown[] } {
  const values: unknown[] = [];
  const add = (v: unknown) => (values.push(v), `$${values.length}`);
  const rows: string[] = [];
  const posting = { pk: [] as string[], ns: [] as string[], term: [] as string[], tf: [] as number[] };
  const vec = { pk: [] as string[], ns: [] as string[], kind: [] as string[], embedding: [] as string[] };
  batch.forEach(({ memory, vector }, i) => {
    const pk = keys[i] as string;
    const terms = analyse(indexText(memory));
    rows.push(`(${[pk, ...memoryValues(memory), terms.length + 1, vectorHash(vector)].map(add).join(', ')})`);
    const tc = termCounts(terms);
    tc.terms.forEach((t, j) => {
      posting.pk.push(pk);
      posting.ns.push(memory.namespace);
      posting.term.push(t);
      posting.tf.push(tc.counts[j] as number);
    });
    vec.pk.push(pk);
    vec.ns.push(memory.namespace);
    vec.kind.push(memory.kind);
    vec.embedding.push(vectorLiteral(vector, 'pgvector'));
  });
  const sql = `WITH m AS (INSERT INTO memories (pk, ${MEMORY_COLUMNS.join(', ')}, doc_length, vector_hash) OVERRIDING SYSTEM VALUE VALUES ${rows.join(', ')}),
      t AS (INSERT INTO memory_terms (namespace, term, memory_pk, tf)
        SELECT u.ns, u.term, u.pk, u.tf FROM unnest(${add(posting.pk)}::bigint[], ${add(posting.ns)}::text[], ${add(posting.term)}::text[], ${add(posting.tf)}::int[]) AS u(pk, ns, term, tf))
     INSERT INTO memory_vectors (memory_pk, namespace, active, kind, embedding)
       SELECT u.pk, u.ns, true, u.kind, u.e::vector FROM unnest(${add(vec.pk)}::bigint[], ${add(vec.ns)}::text[], ${add(vec.kind)}::text[], ${add(vec.embedding)}::text[]) AS u(pk, ns, kind, e)`;
  return { sql, values };
}

/** `n` fresh values of the memories' identity sequence (on a connection of its own: sequences are not transactional). */
async function reserveKeys(k: pg.Client, n: number): Promise<string[]> {
  const { rows } = await k.query<{ pk: string }>(`SELECT nextval(pg_get_serial_sequence('memories', 'pk')) AS pk FROM generate_series(1, $1)`, [n]);
  return rows.map((r) => r.pk);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const pgAdmin = value('--pg') ?? process.env['CAIRN_BENCH_PG'] ?? process.env['CAIRN_TEST_PG'] ?? null;
  const kept = value('--db') ?? null;
  if (!pgAdmin && !kept) throw new Error('needs a PostgreSQL server: --pg <admin url> (or --db <url of a kept database>)');
  const quick = argv.includes('--quick');
  const copies = argv.includes('--copies');
  const sizes = (value('--sizes') ?? (quick ? '2000' : '100000,1000000')).split(',').map(Number);
  const samples = Number(value('--samples') ?? (quick ? 10 : 60));
  const keepDb = argv.includes('--keep-db') || kept !== null;
  const out = resolve(value('--out') ?? join(ROOT, 'bench', 'results', quick ? 'quick' : '', 'pg-scale.json'));
  const maintenanceMemory = value('--maintenance-work-mem') ?? '4GB';
  // A size's fill stops after this long and the size is measured as reached (`fill.complete: false`).
  const fillBudgetS = value('--fill-budget-s');
  const efs = (value('--ef') ?? '200,400,800').split(',').map(Number).filter((x) => Number.isInteger(x) && x > 0);
  const started = performance.now();
  const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);

  const loc = kept ? { db: kept, drop: async () => {} } : await freshLocation('postgres', '', pgAdmin, 'scale');
  log(`database ${loc.db}${keepDb ? ' (kept)' : ''}`);
  const real = createUseEmbedder();
  // The pool and the queries, made as bench/latency.ts makes them (its own seeds: same kind of data, not the same rows).
  const r = rng(20240601);
  const pool = Array.from({ length: 512 }, () => coreNote(r));
  const poolVectors = await real.embed(pool.map((p) => p.text));
  const queries = [...new Set(Array.from({ length: samples * 4 }, () => query(r)))].slice(0, samples * 2 + 10);
  const queryVectors = await real.embed(queries);
  log(`embedded ${pool.length} pool notes and ${queries.length} queries`);

  const pre = new PrecomputedEmbedder(real);
  queries.forEach((q, i) => pre.vectors.set(q, queryVectors[i] as Float32Array));
  const tokenCounter = createGptTokenCounter();
  // --no-related-terms: the lexical signal of the query's own words only, so PostgreSQL answers in one fused
  // statement (with related terms, core fuses two lexical candidate queries and a vector one).
  const related = argv.includes('--no-related-terms') ? { relatedTerms: null } : {};
  // The store is opened when first needed: a kept database whose fill was stopped has no HNSW index, and
  // opening the store would build it (minutes at this size) just before the fill drops it again.
  let opened: { timed: ReturnType<typeof timedStore>; cachedEngine: Engine; realEngine: Engine } | null = null;
  const engines = async () => {
    if (opened) return opened;
    const store = copies ? createPostgresStore({ ...resolvePostgres(loc.db, process.env, undefined), recallCopies: true }) : await openStoreAt(loc.db, { mustExist: false });
    const timed = timedStore(store);
    opened = {
      timed,
      cachedEngine: new Engine({ store: timed.store, embedder: pre, tokenCounter, defaultNamespace: TARGET, ingestFilter: { enabled: false }, ...related }),
      // End to end: the real model embeds each query (the engine's own query-vector cache is per text; no text repeats).
      realEngine: new Engine({ store: timed.store, embedder: real as Embedder, tokenCounter, defaultNamespace: TARGET, ingestFilter: { enabled: false }, ...related }),
    };
    return opened;
  };
  const c = new pg.Client({ connectionString: loc.db });
  await c.connect();
  // A kept database is brought to this schema before it is filled on, so the fill writes the current indexes
  // (a later migration would rebuild them over every row).
  await migrate(c as unknown as Parameters<typeof migrate>[0], { createExtension: true, location: loc.db });
  // What the figures include: a throwaway cluster (scripts/pg-cluster.sh) runs with fsync off, so no commit waits
  // for a disk flush there, as it would on a production server; the store's own settings (prepared statements).
  const setting = async (name: string) => (await c.query<{ v: string }>('SELECT current_setting($1) AS v', [name])).rows[0]?.v ?? null;
  const server = {
    version: await setting('server_version'),
    fsync: await setting('fsync'),
    synchronousCommit: await setting('synchronous_commit'),
    preparedStatements: resolvePostgres(loc.db, process.env, undefined).preparedStatements ?? true,
  };
  const levels: unknown[] = [];
  const writeOut = () => {
    const result = {
      benchmark: 'pg-scale',
      command: `node dist/bench/pg-scale.js ${argv.join(' ')}`.trim(),
      date: new Date().toISOString(),
      machine: { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, loadAverageAtStart: loadAtStart },
      server,
      relatedTerms: !argv.includes('--no-related-terms'),
      data: 'latency-bench shape: 512 real-embedded generated notes, each memory a note + unique detail, vector = note vector + Gaussian noise of norm 0.5, renormalised; 3 noise namespaces at 10 % each',
      levels,
      durationSeconds: Math.round((performance.now() - started) / 100) / 10,
    };
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  };
  try {
    const counted = async () =>
      new Map((await c.query<{ namespace: string; n: string }>('SELECT namespace, count(*) AS n FROM memories GROUP BY namespace')).rows.map((x) => [x.namespace, Number(x.n)]));
    let counts = await counted();
    if ((counts.size === 0)) {
      await (await engines()).cachedEngine.save({ text: 'first note: records the embedder', namespace: NOISE[0] as string, metadata: { source: 'bench' } });
      counts = await counted();
    }
    const nowMs = Date.now();
    const gauss = gaussian(rng(777));
    let serial = [...counts.values()].reduce((a, b) => a + b, 0);
    const make = (namespace: string): Generated => {
      const s = serial++;
      const base = pool[s % pool.length] as (typeof pool)[number];
      const vector = noisyCopy(poolVectors[s % pool.length] as Float32Array, NOISE_NORM, gauss);
      const createdAt = new Date(nowMs - Math.floor(r() * 365 * 86_400_000)).toISOString();
      const text = base.text + detail(r, s);
      const memory = makeMemory(namespace, text, { kind: base.kind as MemoryKind, importance: 1 + Math.floor(r() * 9), tags: base.tags, metadata: { source: 'bench' }, createdAt });
      return { memory, vector };
    };

    for (const size of sizes) {
      const want = new Map([[TARGET, size], ...NOISE.map((ns) => [ns, Math.round(size * 0.1)] as [string, number])]);
      const missing = [...want].reduce((n, [ns, w]) => n + Math.max(0, w - (counts.get(ns) ?? 0)), 0);
      let fill: { seconds: number; rowsAdded: number; complete: boolean; indexBuildSeconds: number | null; load: number[] } | null = null;
      const total0 = [...want].reduce((n, [ns]) => n + (counts.get(ns) ?? 0), 0);
      if (missing > 0) {
        const t = performance.now();
        const deadline = fillBudgetS ? Date.now() + Number(fillBudgetS) * 1000 : null;
        const loadBefore = load1();
        const split = { generate: 0, insert: 0 };
        let complete = true;
        const { indexBuildSeconds } = await withIndexBuiltAfter(
          loc.db,
          async () => {
            let done = 0;
            let pending: Promise<unknown> = Promise.resolve();
            const k = new pg.Client({ connectionString: loc.db });
            await k.connect();
            // In rounds (the measured namespace 1,000 a round, each noise namespace its share), so a fill stopped
            // by the budget keeps the namespaces in proportion.
            const share = (ns: string) => Math.max(1, Math.round((BULK * (want.get(ns) ?? 0)) / size));
            while (done < missing && (deadline === null || Date.now() < deadline)) {
              for (const [ns, w] of want) {
                const n = Math.min(share(ns), w - (counts.get(ns) ?? 0));
                if (n <= 0) continue;
                // The next batch is made while the server writes the last one.
                const g = performance.now();
                const batch = Array.from({ length: n }, () => make(ns));
                const { sql, values } = bulkStatement(await reserveKeys(k, n), batch);
                const wrote = performance.now();
                await pending;
                pending = c.query(sql, values);
                split.generate += wrote - g;
                split.insert += performance.now() - wrote;
                counts.set(ns, (counts.get(ns) ?? 0) + n);
                const before = done;
                done += n;
                if (Math.floor(done / 50_000) > Math.floor(before / 50_000) || done === missing) {
                  log(`filled ${done} of ${missing}: ${Math.round(split.generate / 1000)} s making statements, ${Math.round(split.insert / 1000)} s waiting for the server (load ${load1()})`);
                }
              }
            }
            complete = done >= missing;
            await pending;
            await k.end();
            log(`rows in, building the HNSW index (load ${load1()})`);
          },
          { maintenanceWorkMem: maintenanceMemory },
        );
        fill = { seconds: Math.round((performance.now() - t) / 100) / 10, rowsAdded: [...want].reduce((n, [ns]) => n + (counts.get(ns) ?? 0), 0) - total0, complete, indexBuildSeconds, load: [loadBefore, load1()] };
        log(`filled ${fill.rowsAdded} rows toward ${size}${complete ? '' : ' (the fill budget ran out)'} in ${fill.seconds} s (HNSW build ${indexBuildSeconds} s; load ${load1()})`);
      }
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      const [cachedQueries, e2eQueries] = [queries.slice(0, samples + 5), queries.slice(samples + 5)];
      const loadAtSearch = load1();
      // Warm the caches the same way for both series: the cached series first (its warm-up reads the pages).
      const { timed, cachedEngine, realEngine } = await engines();
      let copyLoad: { seconds: number; coarseListsSeconds: number; residentMiB: number; heapMiB: number; collected: boolean; status: unknown } | null = null;
      if (copies) {
        const t = performance.now();
        // With node --expose-gc, the heap is measured after collections (the load's garbage gone).
        const collect = () => (globalThis as { gc?: () => void }).gc?.();
        collect();
        const before = process.memoryUsage();
        await cachedEngine.search(cachedQueries[0] as string, { namespace: TARGET });
        await (timed.store as PostgresStore).recallCopiesSettled();
        const loaded = performance.now();
        // A search from the loaded copy starts the build of coarse lists of a large namespace: measured with them.
        await cachedEngine.search(cachedQueries[1] as string, { namespace: TARGET });
        await (timed.store as PostgresStore).recallCopiesSettled();
        const listed = performance.now();
        collect();
        const after = process.memoryUsage();
        const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
        copyLoad = {
          seconds: Math.round((loaded - t) / 100) / 10,
          coarseListsSeconds: Math.round((listed - loaded) / 100) / 10,
          residentMiB: mib(after.rss - before.rss),
          heapMiB: mib(after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers),
          collected: typeof (globalThis as { gc?: unknown }).gc === 'function',
          status: (timed.store as PostgresStore).recallCopiesStatus(),
        };
        log(`copy loaded in ${copyLoad.seconds} s, then coarse lists (if any) in ${copyLoad.coarseListsSeconds} s`);
      }
      timed.reset();
      const cached = await timeEach(cachedQueries, 5, (q) => cachedEngine.search(q, { namespace: TARGET }), 60_000, 30);
      const calls = cachedQueries.length;
      const storeCalls = Object.fromEntries(
        [...timed.totals].sort((a, b) => b[1].ms - a[1].ms).map(([k, v]) => [k, { msPerSearch: Math.round((v.ms / calls) * 100) / 100, callsPerSearch: Math.round((v.calls / calls) * 100) / 100 }]),
      );
      const e2e = await timeEach(e2eQueries, 3, (q) => realEngine.search(q, { namespace: TARGET }), 60_000, 30);
      // Recall@10 of the walk (the store's vector candidates) against the exact nearest ten of the namespace.
      const recallQueries = queryVectors.slice(0, size >= 1_000_000 ? 20 : 40);
      let hits = 0;
      let worst = 1;
      let poolHits = 0;
      const truths: Set<string>[] = [];
      for (const qv of recallQueries) {
        const approx = await timed.store.vectorCandidates(qv, 10, { namespace: TARGET, now: new Date().toISOString() });
        const exact = await c.query<{ id: string }>(
          `SELECT m.id FROM memory_vectors v JOIN memories m ON m.pk = v.memory_pk WHERE v.namespace = $1 AND v.active AND vector_dims(v.embedding) = 512
           ORDER BY (v.embedding::vector(512) <=> $2::vector(512)) + 0 LIMIT 10`,
          [TARGET, vectorLiteral(qv, 'pgvector')],
        );
        const truth = new Set(exact.rows.map((x) => x.id));
        const found = approx.filter((h) => truth.has(h.id)).length;
        hits += found;
        worst = Math.min(worst, found / 10);
        // As search asks: the pool of 300 candidates (minCandidates), whose best ten then lead the vector signal.
        const pooled = await timed.store.vectorCandidates(qv, 300, { namespace: TARGET, now: new Date().toISOString() });
        poolHits += pooled.slice(0, 10).filter((h) => truth.has(h.id)).length;
        truths.push(truth);
      }
      // hnsw.ef_search chosen by measurement: the store's vector statement for the pool of 300 on this
      // connection at each setting (iterative scan as the store runs it), recall@10 of its best ten and its time.
      const efSweep = [];
      await c.query('SET hnsw.iterative_scan = strict_order');
      for (const ef of efs) {
        await c.query(`SET hnsw.ef_search = ${ef}`);
        let found = 0;
        const ms: number[] = [];
        for (const [i, qv] of recallQueries.entries()) {
          const p = new Params();
          const sql = `WITH ${vectorCtes(p, vectorLiteral(qv, 'pgvector'), 300, { namespace: TARGET, now: new Date().toISOString() }, { storage: 'pgvector', dimensions: 512 })}
            SELECT m.id FROM vec JOIN memories m ON m.pk = vec.pk ORDER BY vec.similarity DESC, m.pk LIMIT 10`;
          const t = performance.now();
          const { rows } = await c.query<{ id: string }>(sql, p.values);
          ms.push(performance.now() - t);
          found += rows.filter((x) => (truths[i] as Set<string>).has(x.id)).length;
        }
        efSweep.push({ efSearch: ef, recallAt10: Math.round((found / (recallQueries.length * 10)) * 1000) / 1000, statement: stats(ms) });
        log(`ef_search ${ef}: recall@10 ${efSweep[efSweep.length - 1]?.recallAt10}, p50 ${efSweep[efSweep.length - 1]?.statement.p50} ms`);
      }
      const level = {
        memories: size,
        /** Memories the measured namespace held when searches ran (below `memories` when the fill budget ran out). */
        measuredNamespaceMemories: counts.get(TARGET) ?? 0,
        totalMemories: total,
        fill,
        loadAverageAtSearch: loadAtSearch,
        loadAverageAfter: load1(),
        search: { endToEnd: stats(e2e), cachedQueryVector: stats(cached) },
        store: storeCalls,
        // With --copies: the copy's load, and how the searches were answered (proposals that stood or not).
        copies: copyLoad ? { ...copyLoad, after: (timed.store as PostgresStore).recallCopiesStatus() } : null,
        /** The store's vector candidates (the HNSW walk, or with --copies the copy's proposal rescored) against exact search. */
        hnswRecallAt10: {
          queries: recallQueries.length,
          mean: Math.round((hits / (recallQueries.length * 10)) * 1000) / 1000,
          worst,
          inPoolOf300: Math.round((poolHits / (recallQueries.length * 10)) * 1000) / 1000,
        },
        efSweep,
      };
      levels.push(level);
      log(`at ${size}: end to end p50 ${level.search.endToEnd.p50} ms, cached p50 ${level.search.cachedQueryVector.p50} ms, recall@10 ${level.hnswRecallAt10.mean} (${level.hnswRecallAt10.inPoolOf300} in the pool of 300) (load ${loadAtSearch})`);
      log(`store calls per search: ${JSON.stringify(storeCalls)}`);
      writeOut();
    }
  } finally {
    await c.end();
    await (opened as { timed: { store: Store } } | null)?.timed.store.close();
    if (!keepDb) await loc.drop();
  }
}

await main();
