/**
 * What staleness marking adds to a search, in real git repositories of 1,000 and 10,000 files.
 *
 *   node dist/bench/staleness.js [--quick] [--out bench/results/staleness.json]
 *
 * Per size: a repository of N files is committed; 2,000 memories anchored to its files are written at two
 * commits; then commits rename 1 % of the files, delete 0.5 % and rewrite 2 %. The same lexical-only search
 * (the embedding model's 15–60 ms would only add noise to a difference; marking does not depend on it) runs
 * on one store with and without the repository:
 *   - baseline: no repository;  warm: repository, HEAD unchanged since the previous search (caches hot);
 *   - cold: a new commit before every search (the first search after a commit: one `git log` of the new
 *     commits); fresh process: a new adapter each time (a hook or CLI process: nothing in memory), with
 *     the history cache file an earlier process left and with it removed.
 * "added" is the difference of the medians. Goal: ≤ 20 ms added at 10,000 files.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGitRepository, flushHistoryCaches } from '../src/adapters/git/git-repository.js';
import { HISTORY_CACHE_FILE } from '../src/adapters/git/history-cache-file.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import type { MemoryInput, SearchResult } from '../src/interfaces/memory.js';
import { stats, type Stats } from './measure.js';
import { rng } from './synthetic-notes.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const outArg = args.indexOf('--out');
const outPath = join(ROOT, outArg >= 0 ? (args[outArg + 1] as string) : 'bench/results/staleness.json');
const NS = 'bench/staleness';
const SIZES = quick ? [1000] : [1000, 10_000];
const MEMORIES = quick ? 400 : 2000;
const SAMPLES = quick ? 20 : 60;
const COLD_SAMPLES = quick ? 8 : 25;
const GOAL_ADDED_MS = 20;

const AREAS = ['billing', 'checkout', 'auth', 'search', 'export', 'import', 'jobs', 'mail', 'admin', 'api', 'cache', 'flags', 'tax', 'cart', 'users', 'reports'];
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

function gitIn(dir: string, env: NodeJS.ProcessEnv) {
  return (...a: string[]) => execFileSync('git', a, { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 }).trim();
}

function fileBody(i: number, lines: number): string {
  return Array.from({ length: lines }, (_, k) => `export const value_${i}_${k} = ${k}; // ${AREAS[(i + k) % AREAS.length]} rule ${k}`).join('\n') + '\n';
}

interface SizeResult {
  files: number;
  memories: number;
  distinctCommits: number;
  changed: { renamed: number; deleted: number; rewritten: number };
  searchMs: { baseline: Stats; warm: Stats; cold: Stats; freshProcess: Stats; freshProcessNoCacheFile: Stats; freshProcessAfterCommit: Stats };
  cacheFileBytes: number;
  addedMs: { warmP50: number; coldP50: number; freshProcessP50: number; freshProcessNoCacheFileP50: number; freshProcessAfterCommitP50: number; warmP95: number; coldP95: number; freshProcessP95: number };
  markedPerSearch: number;
  goalMet: boolean;
}

async function runSize(files: number, base: string): Promise<SizeResult> {
  const dir = join(base, `repo-${files}`);
  mkdirSync(dir);
  const env = {
    ...process.env,
    HOME: base,
    GIT_CONFIG_GLOBAL: join(base, '.gitconfig'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'bench',
    GIT_AUTHOR_EMAIL: 'bench@example.com',
    GIT_COMMITTER_NAME: 'bench',
    GIT_COMMITTER_EMAIL: 'bench@example.com',
  };
  const git = gitIn(dir, env);
  git('init', '-q', '-b', 'main');
  const paths: string[] = [];
  for (let i = 0; i < files; i++) {
    const area = AREAS[i % AREAS.length] as string;
    const p = `src/${area}/m${Math.floor(i / 100)}/file_${i}.ts`;
    mkdirSync(join(dir, dirname(p)), { recursive: true });
    writeFileSync(join(dir, p), fileBody(i, 20));
    paths.push(p);
  }
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');

  const store = createSqliteStore({ path: join(base, `cairn-${files}.db`) });
  const repository = createGitRepository({ cwd: dir });
  const common = { store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, ingestFilter: { enabled: false }, countRecalls: false };
  const withRepo = new Engine({ ...common, repository });
  const without = new Engine(common);
  const random = rng(files);
  const note = (k: number): MemoryInput => {
    const p = paths[Math.floor(random() * paths.length)] as string;
    const area = p.split('/')[1] as string;
    return { text: `The ${area} rule ${k % 50} is applied in ${p}; change it together with the ${area} tests (note ${k})` };
  };
  // Memories at two commits: the first half now, the second after an unrelated commit.
  const half = Math.floor(MEMORIES / 2);
  for (let k = 0; k < half; k += 200) await withRepo.saveMany(Array.from({ length: Math.min(200, half - k) }, (_, j) => note(k + j)));
  writeFileSync(join(dir, 'CHANGELOG.md'), 'unrelated\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'unrelated');
  for (let k = half; k < MEMORIES; k += 200) await withRepo.saveMany(Array.from({ length: Math.min(200, MEMORIES - k) }, (_, j) => note(k + j)));

  // History after the memories: renames, deletions, rewrites.
  const order = paths.map((p, i) => ({ p, i, r: random() })).sort((a, b) => a.r - b.r);
  const renamed = order.slice(0, Math.floor(files * 0.01));
  const deleted = order.slice(renamed.length, renamed.length + Math.floor(files * 0.005));
  const rewritten = order.slice(renamed.length + deleted.length, renamed.length + deleted.length + Math.floor(files * 0.02));
  for (const { p } of renamed) git('mv', p, p.replace('/file_', '/moved_'));
  git('commit', '-q', '-m', 'renames');
  git('rm', '-q', ...deleted.map((d) => d.p));
  git('commit', '-q', '-m', 'deletions');
  for (const { p, i } of rewritten) writeFileSync(join(dir, p), fileBody(i + 7919, 24).replace(/value_/gu, 'amount_'));
  git('add', '-A');
  git('commit', '-q', '-m', 'rewrites');

  const queries = Array.from({ length: SAMPLES + 5 }, (_, i) => `${AREAS[i % AREAS.length]} rule ${i % 50} tests`);
  const search = (engine: Engine) => async (q: string) => engine.search(q, { limit: 10, countRecall: false });
  let marked = 0;
  // Baseline and warm searches alternate, query by query, so drift in the machine's load hits both alike.
  for (const q of queries.slice(0, 5)) {
    await search(without)(q);
    await search(withRepo)(q);
  }
  const baseline: number[] = [];
  const warm: number[] = [];
  for (const q of queries.slice(5)) {
    let t = performance.now();
    await search(without)(q);
    baseline.push(performance.now() - t);
    t = performance.now();
    const r: SearchResult[] = await withRepo.search(q, { limit: 10, countRecall: false });
    warm.push(performance.now() - t);
    marked += r.filter((x) => x.stale).length;
  }
  // Fresh process: a new adapter (nothing in memory, git's layout not yet read), as a hook or CLI call
  // starts; with the history cache file an earlier process left (HEAD unchanged), and without it.
  const freshSearch = async (i: number, withoutFile: boolean): Promise<number> => {
    if (withoutFile) rmSync(join(dir, '.git', HISTORY_CACHE_FILE), { force: true });
    const engine = new Engine({ ...common, repository: createGitRepository({ cwd: dir }) });
    const t = performance.now();
    await engine.search(queries[i % queries.length] as string, { limit: 10, countRecall: false });
    const ms = performance.now() - t;
    flushHistoryCaches(); // the write a process makes at exit, outside the timing
    return ms;
  };
  const fresh: number[] = [];
  const freshNoFile: number[] = [];
  for (let i = 0; i < COLD_SAMPLES; i++) {
    freshNoFile.push(await freshSearch(i, true));
    fresh.push(await freshSearch(i, false));
  }
  // Cold: each search follows a new commit, so HEAD differs and no history answer is cached.
  const cold: number[] = [];
  for (let i = 0; i < COLD_SAMPLES; i++) {
    writeFileSync(join(dir, 'CHANGELOG.md'), `entry ${i}\n`);
    git('commit', '-q', '-am', `entry ${i}`);
    const t = performance.now();
    await withRepo.search(queries[i % queries.length] as string, { limit: 10, countRecall: false });
    cold.push(performance.now() - t);
  }
  // Fresh process after a commit: the file an earlier process left is one commit behind HEAD, so only the
  // new commit is walked (a hook after each commit).
  const freshAfterCommit: number[] = [];
  for (let i = 0; i < COLD_SAMPLES; i++) {
    writeFileSync(join(dir, 'CHANGELOG.md'), `later entry ${i}\n`);
    git('commit', '-q', '-am', `later entry ${i}`);
    freshAfterCommit.push(await freshSearch(i, false));
  }
  const cacheFileBytes = statSync(join(dir, '.git', HISTORY_CACHE_FILE)).size;
  await store.close();
  const b = stats(baseline);
  const w = stats(warm);
  const c = stats(cold);
  const f = stats(fresh);
  const fn = stats(freshNoFile);
  const fc = stats(freshAfterCommit);
  const result: SizeResult = {
    files,
    memories: MEMORIES,
    distinctCommits: 2,
    changed: { renamed: renamed.length, deleted: deleted.length, rewritten: rewritten.length },
    searchMs: { baseline: b, warm: w, cold: c, freshProcess: f, freshProcessNoCacheFile: fn, freshProcessAfterCommit: fc },
    cacheFileBytes,
    addedMs: {
      warmP50: round(w.p50 - b.p50),
      coldP50: round(c.p50 - b.p50),
      freshProcessP50: round(f.p50 - b.p50),
      freshProcessNoCacheFileP50: round(fn.p50 - b.p50),
      freshProcessAfterCommitP50: round(fc.p50 - b.p50),
      warmP95: round(w.p95 - b.p95),
      coldP95: round(c.p95 - b.p95),
      freshProcessP95: round(f.p95 - b.p95),
    },
    markedPerSearch: round(marked / warm.length),
    goalMet: w.p50 - b.p50 <= GOAL_ADDED_MS && c.p50 - b.p50 <= GOAL_ADDED_MS,
  };
  process.stderr.write(`${files} files: baseline p50 ${b.p50} ms, warm p50 ${w.p50} ms (+${result.addedMs.warmP50}), cold p50 ${c.p50} ms (+${result.addedMs.coldP50}), fresh process p50 ${f.p50} ms (+${result.addedMs.freshProcessP50}), without the cache file ${fn.p50} ms (+${result.addedMs.freshProcessNoCacheFileP50}), after a commit ${fc.p50} ms (+${result.addedMs.freshProcessAfterCommitP50}); cache file ${cacheFileBytes} bytes; ${result.markedPerSearch} marked a search\n`);
  return result;
}

/** One flat row per size (medians, ms), for the report's table. */
export function summaryOf(sizes: SizeResult[]): Record<string, Record<string, number | boolean>> {
  return Object.fromEntries(
    sizes.map((s) => [
      `${s.files.toLocaleString('en-US')} files`,
      {
        baselineP50: s.searchMs.baseline.p50,
        addedWarmP50: s.addedMs.warmP50,
        addedColdP50: s.addedMs.coldP50,
        addedFreshProcessP50: s.addedMs.freshProcessP50,
        addedFreshProcessNoCacheFileP50: s.addedMs.freshProcessNoCacheFileP50,
        addedFreshProcessAfterCommitP50: s.addedMs.freshProcessAfterCommitP50,
        cacheFileKiB: round(s.cacheFileBytes / 1024, 1),
        addedWarmP95: s.addedMs.warmP95,
        addedColdP95: s.addedMs.coldP95,
        goalMetWarm: s.addedMs.warmP50 <= GOAL_ADDED_MS,
        goalMetCold: s.addedMs.coldP50 <= GOAL_ADDED_MS,
        goalMetFreshProcess: s.addedMs.freshProcessP50 <= GOAL_ADDED_MS,
      },
    ]),
  );
}

async function main(): Promise<void> {
  const started = performance.now();
  const base = mkdtempSync(join(tmpdir(), 'cairn-bench-stale-'));
  try {
    const sizes: SizeResult[] = [];
    for (const n of SIZES) sizes.push(await runSize(n, base));
    const result = {
      benchmark: 'staleness',
      command: `node dist/bench/staleness.js${quick ? ' --quick' : ''}`,
      date: new Date().toISOString(),
      machine: { cores: cpus().length, memoryGiB: round(totalmem() / 2 ** 30, 1), node: process.version, git: execFileSync('git', ['--version'], { encoding: 'utf8' }).trim() },
      quick,
      goal: { addedMsAt10kFiles: GOAL_ADDED_MS },
      summary: summaryOf(sizes),
      sizes,
      notes: [
        'lexical-only search (no embedding model) on one SQLite store, with and without the repository; added = difference of medians, one run',
        'cold: a commit before each search, so HEAD moved and the history since is walked again (first search after a commit); warm: HEAD unchanged',
        'fresh process: a new repository adapter for each search (nothing in memory, git layout read again), as a hook or CLI process pays, HEAD unchanged since the process before it, which left .git/cairn/history-cache.json; without the cache file: the file removed first (the first process ever, or one after the file was lost: one git diff per distinct memory commit); after a commit: the file one commit behind HEAD',
        `${MEMORIES} memories anchored to random files, written at 2 commits; then 1 % of files renamed, 0.5 % deleted, 2 % rewritten`,
      ],
      durationSeconds: round((performance.now() - started) / 1000, 1),
    };
    mkdirSync(dirname(outPath), { recursive: true });
    writeFileSync(outPath, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(sizes.map((s) => ({ files: s.files, addedMs: s.addedMs })), null, 2)}\n`);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
