/**
 * pgvector's HNSW parameters for cairn's query, chosen by measurement:
 *
 *   node dist/bench/pg-hnsw.js [--quick] [--pg <admin url>] [--sizes 100000] [--builds 16:64,16:128,24:128]
 *                              [--ef 40,100,200] [--data mix|noise] [--out bench/results/pg-hnsw.json]
 *
 * For each size, a fresh database holds one table shaped like the store's vectors (namespace, active flag,
 * `vector(512)`): the target namespace with `size` rows and three noise namespaces with 10 % each. Vectors
 * are made from real USE-lite vectors of a pool of distinct notes: by default a random blend of two pool
 * notes (weights 0.5–1 and the rest) plus Gaussian noise of norm 0.5, renormalised, so rows spread over the
 * space real notes span; `--data noise` leaves the blend out (dense clusters of near-copies of each note,
 * the hard case for a graph). Queries are real vectors of question texts. For each build (m,
 * ef_construction): build time and index size; for each ef_search: recall@10 of the namespace-filtered
 * query (iterative scan, strict order, as the store runs it) against the exact answer, and p50/p95 latency;
 * and the share of the true ten found among 50 candidates (the pool recall asks each signal for).
 * Needs the admin URL of a server with pgvector (--pg, else CAIRN_BENCH_PG, else CAIRN_TEST_PG).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { freshLocation } from './bench-stores.js';
import { stats } from './measure.js';
import { coreNote, query, rng } from './synthetic-notes.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, HERE.includes(join('dist', 'bench')) ? '../..' : '..');
const NOISE_NORM = 0.5;
const K = 10;
/** The candidate pool recall asks each signal for (max(limit × 5, 50) for the default limit of 10). */
const POOL = 50;

function log(message: string): void {
  process.stderr.write(`[pg-hnsw ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

const literal = (v: Float32Array) => `[${Array.from(v, (x) => x.toFixed(6)).join(',')}]`;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const quick = argv.includes('--quick');
  const pgAdmin = value('--pg') ?? process.env['CAIRN_BENCH_PG'] ?? process.env['CAIRN_TEST_PG'];
  if (!pgAdmin) throw new Error('needs a PostgreSQL server with pgvector: --pg <admin url> or CAIRN_BENCH_PG');
  const sizes = (value('--sizes') ?? (quick ? '5000' : '100000')).split(',').map(Number);
  const builds = (value('--builds') ?? (quick ? '16:64' : '16:64,16:128,24:128')).split(',').map((b) => b.split(':').map(Number) as [number, number]);
  const efs = (value('--ef') ?? '40,100,200').split(',').map(Number);
  const out = resolve(value('--out') ?? join(ROOT, 'bench', 'results', quick ? 'quick' : '', 'pg-hnsw.json'));
  const started = performance.now();
  const load = loadavg();

  const real = createUseEmbedder();
  const r = rng(5);
  const poolTexts = [...new Set(Array.from({ length: 3000 }, () => coreNote(r).text))].slice(0, quick ? 200 : 1000);
  const pool = await real.embed(poolTexts);
  const questions = [...new Set(Array.from({ length: 400 }, () => query(r)))].slice(0, quick ? 30 : 100);
  const queryVectors = await real.embed(questions);
  log(`embedded ${pool.length} pool notes and ${questions.length} queries`);
  const noise = rng(777);
  const gauss = () => Math.sqrt(-2 * Math.log(noise() + 1e-12)) * Math.cos(2 * Math.PI * noise());
  // `noise`: copies of a pool note plus noise (dense clusters of near-duplicates, the hard case for a graph);
  // `mix` (default): a random blend of two pool notes plus the same noise, spread over the space real notes span.
  const data = value('--data') ?? 'mix';
  if (data !== 'mix' && data !== 'noise') throw new Error('--data is mix or noise');
  const rowVector = (i: number): Float32Array => {
    const v = Float32Array.from(pool[i % pool.length] as Float32Array);
    if (data === 'mix') {
      const other = pool[Math.floor(noise() * pool.length)] as Float32Array;
      const a = 0.5 + 0.5 * noise();
      for (let d = 0; d < v.length; d++) v[d] = a * (v[d] as number) + (1 - a) * (other[d] as number);
    }
    const sigma = NOISE_NORM / Math.sqrt(v.length);
    let norm = 0;
    for (let d = 0; d < v.length; d++) {
      v[d] = (v[d] as number) + sigma * gauss();
      norm += (v[d] as number) ** 2;
    }
    norm = Math.sqrt(norm);
    for (let d = 0; d < v.length; d++) v[d] = (v[d] as number) / norm;
    return v;
  };

  const levels = [];
  for (const size of sizes) {
    const loc = await freshLocation('postgres', '', pgAdmin, 'hnsw');
    const c = new pg.Client({ connectionString: loc.db });
    await c.connect();
    try {
      await c.query('CREATE EXTENSION IF NOT EXISTS vector');
      await c.query('CREATE TABLE vecs (pk bigint PRIMARY KEY, namespace text COLLATE "C" NOT NULL, active boolean NOT NULL, embedding vector(512) NOT NULL)');
      const namespaces = [['target', size], ['noise-1', size / 10], ['noise-2', size / 10], ['noise-3', size / 10]] as const;
      let pk = 0;
      const tFill = performance.now();
      for (const [ns, n] of namespaces) {
        for (let done = 0; done < n; ) {
          const batch = Math.min(2000, n - done);
          const pks: number[] = [];
          const vs: string[] = [];
          const actives: boolean[] = [];
          for (let j = 0; j < batch; j++) {
            pks.push(++pk);
            vs.push(literal(rowVector(pk)));
            actives.push(pk % 20 !== 0); // 5 % forgotten or superseded: filtered out like the store's inactive rows
          }
          await c.query('INSERT INTO vecs SELECT p, $2, a, v::vector FROM unnest($1::bigint[], $3::text[], $4::boolean[]) AS u(p, v, a)', [pks, ns, vs, actives]);
          done += batch;
        }
      }
      const fillSeconds = Math.round((performance.now() - tFill) / 100) / 10;
      log(`${size}: filled ${pk} rows in ${fillSeconds} s`);
      const filterSql = `namespace = 'target' AND active`;
      // The exact answer, by a sequential scan.
      const exact: string[][] = [];
      for (const q of queryVectors) {
        const { rows } = await c.query<{ pk: string }>(`SELECT pk FROM vecs WHERE ${filterSql} ORDER BY (embedding <=> $1::vector) + 0, pk LIMIT ${K}`, [literal(q)]);
        exact.push(rows.map((x) => x.pk));
      }
      const results = [];
      for (const [m, efc] of builds) {
        await c.query('DROP INDEX IF EXISTS vecs_hnsw');
        await c.query(`SET maintenance_work_mem = '${size >= 500_000 ? '4GB' : '1GB'}'`);
        await c.query(`SET max_parallel_maintenance_workers = ${Math.max(0, cpus().length - 1)}`);
        const tBuild = performance.now();
        await c.query(`CREATE INDEX vecs_hnsw ON vecs USING hnsw (embedding vector_cosine_ops) WITH (m = ${m}, ef_construction = ${efc})`);
        const buildSeconds = Math.round((performance.now() - tBuild) / 100) / 10;
        const indexBytes = Number((await c.query<{ b: string }>(`SELECT pg_relation_size('vecs_hnsw') AS b`)).rows[0]?.b);
        log(`${size}: m ${m}, ef_construction ${efc}: built in ${buildSeconds} s, ${Math.round(indexBytes / 2 ** 20)} MiB`);
        for (const ef of efs) {
          await c.query(`SET hnsw.ef_search = ${ef}`);
          await c.query(`SET hnsw.iterative_scan = strict_order`);
          let hits = 0;
          let pooledHits = 0;
          const times: number[] = [];
          const pooledTimes: number[] = [];
          for (const [i, q] of queryVectors.entries()) {
            const truth = new Set(exact[i]);
            const t = performance.now();
            const { rows } = await c.query<{ pk: string }>(`SELECT pk FROM vecs WHERE ${filterSql} ORDER BY embedding <=> $1::vector LIMIT ${K}`, [literal(q)]);
            times.push(performance.now() - t);
            hits += rows.filter((x) => truth.has(x.pk)).length;
            // What recall asks the store for: a pool of 50 candidates for a result of 10.
            const t2 = performance.now();
            const pooled = await c.query<{ pk: string }>(`SELECT pk FROM vecs WHERE ${filterSql} ORDER BY embedding <=> $1::vector LIMIT ${POOL}`, [literal(q)]);
            pooledTimes.push(performance.now() - t2);
            pooledHits += pooled.rows.filter((x) => truth.has(x.pk)).length;
          }
          const plan = (await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN SELECT pk FROM vecs WHERE ${filterSql} ORDER BY embedding <=> $1::vector LIMIT ${K}`, [literal(queryVectors[0] as Float32Array)])).rows
            .map((x) => x['QUERY PLAN'])
            .join(' ');
          const row = { m, efConstruction: efc, efSearch: ef, buildSeconds, indexMiB: Math.round(indexBytes / 2 ** 20), recallAt10: Math.round((hits / (K * queryVectors.length)) * 1000) / 1000, latencyMs: stats(times.slice(3)), recallAt10In50: Math.round((pooledHits / (K * queryVectors.length)) * 1000) / 1000, latency50Ms: stats(pooledTimes.slice(3)), usesIndex: plan.includes('vecs_hnsw') };
          results.push(row);
          log(`${size}: m ${m}/${efc}, ef_search ${ef}: recall@10 ${row.recallAt10}, p50 ${row.latencyMs.p50} ms; true top 10 in 50 candidates ${row.recallAt10In50}, p50 ${row.latency50Ms.p50} ms${row.usesIndex ? '' : ' (no index used)'}`);
        }
      }
      const exactTimes: number[] = [];
      for (const q of queryVectors.slice(0, 20)) {
        const t = performance.now();
        await c.query(`SELECT pk FROM vecs WHERE ${filterSql} ORDER BY (embedding <=> $1::vector) + 0, pk LIMIT ${K}`, [literal(q)]);
        exactTimes.push(performance.now() - t);
      }
      levels.push({ targetRows: size, totalRows: pk, fillSeconds, exactScan: stats(exactTimes), results });
    } finally {
      await c.end();
      await loc.drop();
    }
  }
  const result = {
    benchmark: 'pg-hnsw',
    command: `node dist/bench/pg-hnsw.js ${argv.join(' ')}`.trim(),
    date: new Date().toISOString(),
    machine: { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, loadAverageAtStart: load.map((x) => Math.round(x * 100) / 100) },
    quick,
    levels,
    data,
    notes: [
      `vectors: ${data === 'mix' ? 'a random blend of two real USE-lite note vectors' : 'a real USE-lite note vector'} plus Gaussian noise of norm 0.5, renormalised; 5 % of rows inactive; the query filters by namespace and activity as the store does`,
      'latency is one query on an open connection (no pool, no fusion): the index walk alone',
    ],
    durationSeconds: Math.round((performance.now() - started) / 100) / 10,
  };
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(levels, null, 2)}\n`);
}

await main();
