/**
 * Runs the benchmarks one after another, each in its own Node process, then writes the report.
 *
 *   npm run bench                      the core set (coding-memory recall, LoCoMo recall and context size, latency and size), full size;
 *                                      writes bench/results/*.json and bench/REPORT.md (about 10–15 minutes on 2 cores)
 *   npm run bench -- --all             every benchmark (adds durability, mcp, hooks, security, http)
 *   npm run bench -- --only latency    one benchmark (comma-separate several); the report keeps the others' last results
 *   npm run bench -- --quick           smoke run: small sizes; writes bench/results/quick/*.json and its REPORT.md there,
 *                                      so the committed results stay untouched
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { reportPathFor, resultsDirFor, ROOT, writeReport, type RunRecord } from './report.js';

interface Benchmark {
  name: string;
  /** Compiled entry point, relative to the repository root. */
  script: string;
  args: string[];
  /** In the default run (`npm run bench` with no --only/--all). */
  core?: boolean;
}

const BENCHMARKS: Benchmark[] = [
  { name: 'coding', script: 'dist/bench/coding-memory.js', args: [], core: true },
  { name: 'locomo', script: 'dist/bench/locomo.js', args: ['--split', 'all'], core: true },
  { name: 'latency', script: 'dist/bench/latency.js', args: [], core: true },
  { name: 'fusion-latency', script: 'dist/bench/fusion-latency.js', args: [] },
  { name: 'floor-scale', script: 'dist/bench/floor-scale.js', args: [] },
  { name: 'durability', script: 'dist/bench/durability.js', args: [] },
  { name: 'mcp', script: 'dist/bench/mcp.js', args: [] },
  { name: 'hooks', script: 'dist/bench/hooks.js', args: [] },
  { name: 'security', script: 'dist/bench/security.js', args: [] },
  // CPU cost of the filter's text rules (de-obfuscation, intent patterns) on adversarial 32 KB inputs.
  { name: 'filter-cost', script: 'dist/bench/filter-cost.js', args: [] },
  { name: 'http', script: 'dist/bench/http.js', args: [] },
  { name: 'embed-call', script: 'dist/bench/embed-call.js', args: [] },
  { name: 'staleness', script: 'dist/bench/staleness.js', args: [] },
  { name: 'sync', script: 'dist/bench/sync.js', args: [] },
  { name: 'backends', script: 'dist/bench/backends.js', args: [] },
  // PostgreSQL search at scale through the engine (needs --pg or CAIRN_BENCH_PG / CAIRN_TEST_PG); 1M: see the script.
  { name: 'pg-scale', script: 'dist/bench/pg-scale.js', args: ['--sizes', '100000'] },
  // PostgreSQL lexical ranking against SQLite's FTS5 on LoCoMo (needs --pg or CAIRN_BENCH_PG / CAIRN_TEST_PG).
  { name: 'pg-lexical', script: 'dist/bench/pg-lexical.js', args: ['--split', 'dev'] },
  { name: 'pg-lexical-test', script: 'dist/bench/pg-lexical.js', args: ['--split', 'test'] },
];

const USAGE = `usage: node dist/bench/run.js [--all | --only ${BENCHMARKS.map((b) => b.name).join('|')}[,…]] [--quick]`;

function parseArgs(argv: string[]): { only: string[] | null; quick: boolean } {
  let only: string[] | null = BENCHMARKS.filter((b) => b.core).map((b) => b.name);
  let quick = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--quick') quick = true;
    else if (a === '--all') only = null;
    else if (a === '--only' || a.startsWith('--only=')) {
      const v = a === '--only' ? argv[++i] : a.slice('--only='.length);
      if (!v) throw new Error(`--only needs a benchmark name; ${USAGE}`);
      only = v.split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = only.filter((n) => !BENCHMARKS.some((b) => b.name === n));
      if (unknown.length) throw new Error(`unknown benchmark ${unknown.join(', ')}; ${USAGE}`);
    } else if (a === '--help' || a === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else throw new Error(`unknown argument ${a}; ${USAGE}`);
  }
  return { only, quick };
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: 'inherit', env });
    child.on('error', (err) => {
      process.stderr.write(`[bench] could not start ${command}: ${err.message}\n`);
      resolvePromise(1);
    });
    child.on('exit', (code, signal) => resolvePromise(code ?? (signal ? 128 : 1)));
  });
}

async function main(): Promise<void> {
  const { only, quick } = parseArgs(process.argv.slice(2));
  const ownArgs = process.argv.slice(2).join(' ');
  const invocation =
    process.env['npm_lifecycle_event'] === 'bench' ? `npm run bench${ownArgs ? ` -- ${ownArgs}` : ''}` : `node dist/bench/run.js${ownArgs ? ` ${ownArgs}` : ''}`;
  const resultsDir = resultsDirFor(quick);
  const started = performance.now();
  const runs: RunRecord[] = [];

  for (const bench of BENCHMARKS) {
    if (only && !only.includes(bench.name)) continue;
    const args = [...bench.args];
    // A smoke run writes next to the full results, never over them.
    if (quick) args.push('--quick', '--out', relative(ROOT, join(resultsDir, `${bench.name}.json`)));
    const command = ['node', bench.script, ...args].join(' ');
    if (!existsSync(join(ROOT, bench.script))) {
      process.stderr.write(`[bench] ${bench.name}: skipped, ${bench.script} does not exist\n`);
      runs.push({ name: bench.name, command, status: 'skipped', note: `${bench.script} not built`, durationMs: 0 });
      continue;
    }
    process.stderr.write(`\n[bench] ${bench.name}: ${command}\n`);
    const t = performance.now();
    const code = await run(process.execPath, [bench.script, ...args], { ...process.env, CAIRN_BENCH_INVOCATION: invocation });
    const durationMs = Math.round(performance.now() - t);
    runs.push({ name: bench.name, command, status: code === 0 ? 'ok' : 'failed', ...(code === 0 ? {} : { note: `exit code ${code}` }), durationMs });
    process.stderr.write(`[bench] ${bench.name}: ${code === 0 ? 'done' : `failed (exit code ${code})`} in ${(durationMs / 1000).toFixed(1)} s\n`);
  }

  const totalMs = Math.round(performance.now() - started);
  const out = reportPathFor(quick);
  writeReport({ resultsDir, out, invocation, runs, totalMs });
  process.stderr.write(`\n[bench] wrote ${relative(ROOT, out)}; total ${(totalMs / 1000).toFixed(1)} s\n`);
  if (runs.some((r) => r.status === 'failed')) process.exitCode = 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`[bench] ${(err as Error).message}\n`);
  process.exitCode = 2;
});
