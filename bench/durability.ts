/**
 * Durability benchmark: turn commit latency excluding embedding, replay speed, verify time at 100k events.
 *
 *   node dist/bench/durability.js [--quick] [--out bench/results/durability.json]
 *
 * Vectors are real Universal Sentence Encoder vectors. Commit latency is measured with the texts embedded
 * beforehand (a caching embedder answers from memory) and the ingest filter is off (its extra embeddings of
 * de-obfuscated text and sentence windows are model time; its own cost is in bench/results/security.json),
 * so it is the cost of the transaction alone: the turn
 * event, the item row, its full-text row, its vector and, every 10th turn, the snapshot. For the 100k-event
 * log, 1,000 distinct real vectors are reused round-robin across the 50,000 distinct turn texts: embedding
 * 50,000 texts would take most of the run and the vectors' content does not change replay cost.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCachingEmbedder } from '../src/adapters/embed-cache/caching-embedder.js';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import { verify } from '../src/core/replay.js';
import type { Embedder } from '../src/interfaces/embedder.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const outArg = args.indexOf('--out');
const outPath = join(ROOT, outArg >= 0 ? (args[outArg + 1] as string) : 'bench/results/durability.json');

const WORDS = (
  'cache queue invoice ledger tenant webhook retry schema migration index shard replica token session cookie ' +
  'payment refund checkout basket price discount coupon tax rounding currency export import report audit ' +
  'deploy release rollback feature flag config secret rotation backup restore latency timeout quota limit'
).split(' ');

function turnText(i: number): string {
  const w = (k: number) => WORDS[(i * 7 + k * 13) % WORDS.length];
  return `Turn ${i}: we decided the ${w(1)} ${w(2)} must not touch the ${w(3)} ${w(4)}; see src/${w(5)}/${w(6)}_${i % 97}.ts (ticket ${1000 + i}).`;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

function round(x: number, d = 2): number {
  return Math.round(x * 10 ** d) / 10 ** d;
}

/** Real vectors of `base` texts, handed out round-robin by text: a stand-in for embedding many texts. */
async function cyclingEmbedder(real: Embedder, base: number): Promise<Embedder> {
  const vectors = await real.embed(Array.from({ length: base }, (_, i) => turnText(i)));
  let next = 0;
  const assigned = new Map<string, Float32Array>();
  return {
    id: real.id,
    dimensions: real.dimensions,
    loadTimeMs: () => real.loadTimeMs(),
    async embed(texts: string[]) {
      return texts.map((t) => {
        let v = assigned.get(t);
        if (!v) {
          v = vectors[next++ % vectors.length] as Float32Array;
          assigned.set(t, v);
        }
        return v;
      });
    },
  };
}

async function main(): Promise<void> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-durability-'));
  const real = createUseEmbedder();
  const tokenCounter = createGptTokenCounter();
  try {
    // 1. Turn commit latency, texts embedded ahead.
    const commits = quick ? 200 : 2000;
    const cache = createCachingEmbedder(real, commits + 10);
    const texts = Array.from({ length: commits }, (_, i) => turnText(i));
    const tEmbed = performance.now();
    await cache.embed(texts);
    const embedMsPerText = (performance.now() - tEmbed) / commits;
    const engine = new Engine({ store: createSqliteStore({ path: join(dir, 'commit.db') }), embedder: cache, tokenCounter, defaultNamespace: 'bench/commit', snapshotEvery: 10, ingestFilter: { enabled: false } });
    const times: number[] = [];
    const snapTimes: number[] = [];
    const plainTimes: number[] = [];
    for (let i = 0; i < commits; i++) {
      const t = performance.now();
      const r = await engine.commitTurn({ session: 'bench', turn: i, text: texts[i] as string, speaker: 'user' });
      const ms = performance.now() - t;
      times.push(ms);
      (r.snapshot ? snapTimes : plainTimes).push(ms);
    }
    await engine.store.close();
    times.sort((a, b) => a - b);
    snapTimes.sort((a, b) => a - b);
    plainTimes.sort((a, b) => a - b);
    const commit = {
      turns: commits,
      snapshotEvery: 10,
      p50Ms: round(percentile(times, 50), 3),
      p95Ms: round(percentile(times, 95), 3),
      p99Ms: round(percentile(times, 99), 3),
      snapshotTurnP50Ms: round(percentile(snapTimes, 50), 3),
      withoutSnapshotP50Ms: round(percentile(plainTimes, 50), 3),
      withoutSnapshotP95Ms: round(percentile(plainTimes, 95), 3),
      embedMsPerTextBatched: round(embedMsPerText, 2),
      goal: { p50Ms: 2, p95Ms: 5 },
      published: { atlasP50Ms: 21.7, atlasP95Ms: 47.2 },
    };
    process.stderr.write(`commit: p50 ${commit.p50Ms} ms, p95 ${commit.p95Ms} ms over ${commits} turns\n`);

    // 2. A log of ~100k events across 100 namespaces, then replay and verify.
    const namespaces = quick ? 10 : 100;
    const turnsPerNs = quick ? 250 : 500;
    const cycling = await cyclingEmbedder(real, quick ? 200 : 1000);
    const bigPath = join(dir, 'big.db');
    const big = new Engine({ store: createSqliteStore({ path: bigPath }), embedder: cycling, tokenCounter, defaultNamespace: 'bench/0', snapshotEvery: 10, ingestFilter: { enabled: false } });
    const tFill = performance.now();
    let n = 0;
    for (let t = 0; t < turnsPerNs; t++) {
      for (let s = 0; s < namespaces; s++) {
        await big.commitTurn({ namespace: `bench/${s}`, session: `s${s}`, turn: t, text: turnText(n++) });
      }
    }
    const fillMs = performance.now() - tFill;
    const scratch = createSqliteStore({ path: ':memory:' });
    const report = await verify(big.store, scratch);
    await scratch.close();
    await big.store.close();
    const replay = {
      namespaces,
      turns: n,
      events: report.events,
      fillSeconds: round(fillMs / 1000, 1),
      replayMs: report.replayMs,
      eventsPerSecond: report.eventsPerSecond,
      verifyTotalMs: report.totalMs,
      verified: report.ok,
      databaseBytes: statSync(bigPath).size,
      goal: { eventsPerSecond: 20000 },
    };
    process.stderr.write(`replay: ${replay.events} events in ${replay.replayMs} ms (${replay.eventsPerSecond}/s), verify ${replay.verifyTotalMs} ms, ok ${replay.verified}\n`);

    const result = {
      benchmark: 'durability',
      command: `node dist/bench/durability.js${quick ? ' --quick' : ''}`,
      date: new Date().toISOString(),
      machine: { cores: cpus().length, memoryGiB: round(totalmem() / 2 ** 30, 1), node: process.version },
      quick,
      commit,
      replay,
      notes: [
        'commit latency excludes embedding: texts are embedded beforehand and served by a caching embedder; the ingest filter is off (it may embed de-obfuscated text and sentence windows: model time)',
        `the ${replay.events}-event log reuses real vectors of ${quick ? 200 : 1000} distinct texts round-robin; every turn text is distinct`,
      ],
      durationSeconds: round((performance.now() - started) / 1000, 1),
    };
    mkdirSync(dirname(outPath), { recursive: true });
    writeFileSync(outPath, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify({ commit, replay }, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
