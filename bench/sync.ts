/**
 * `cairn sync` at 10,000 memories, in a real git repository and a real clone of it.
 *
 *   node dist/bench/sync.js [--quick] [--out bench/results/sync.json]
 *
 * Steps, each timed once (one run): the first sync writes every memory's file; a second sync finds nothing
 * to do; after a commit, a fresh clone with an empty database imports every file with its id; then 1 % of
 * the files are edited and 1 % deleted in the clone and synced (supersede and forget). Without an embedding
 * model (the ingest filter needs one and is then off): the model's time per imported text is the same as for
 * any write and is measured by the latency benchmark.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openCairnFolder } from '../src/adapters/git/cairn-folder.js';
import { createGitRepository } from '../src/adapters/git/git-repository.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import type { SyncReport } from '../src/core/sync.js';
import { rng } from './synthetic-notes.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const outArg = args.indexOf('--out');
const outPath = join(ROOT, outArg >= 0 ? (args[outArg + 1] as string) : 'bench/results/sync.json');
const NS = 'bench/sync';
const MEMORIES = quick ? 1000 : 10_000;
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const WORDS = 'invoice ledger tenant webhook retry schema migration index shard replica token session cookie payment refund checkout basket price discount coupon tax rounding currency export import report audit deploy release rollback feature flag'.split(' ');

function counts(r: SyncReport) {
  return { written: r.written.length, removed: r.removed.length, imported: r.imported.length, superseded: r.superseded.length, updated: r.updated.length, forgotten: r.forgotten.length, conflicts: r.conflicts.length, unchanged: r.unchanged };
}

async function main(): Promise<void> {
  const started = performance.now();
  const base = mkdtempSync(join(tmpdir(), 'cairn-bench-sync-'));
  const env = { ...process.env, HOME: base, GIT_CONFIG_GLOBAL: join(base, '.gitconfig'), GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'b@example.com', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'b@example.com' };
  const gitIn = (dir: string) => (...a: string[]) => execFileSync('git', a, { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 }).trim();
  try {
    const dirA = join(base, 'a');
    mkdirSync(dirA);
    const gitA = gitIn(dirA);
    gitA('init', '-q', '-b', 'main');
    writeFileSync(join(dirA, 'README.md'), 'bench\n');
    gitA('add', '-A');
    gitA('commit', '-q', '-m', 'first');

    const open = (dir: string, db: string) => {
      const store = createSqliteStore({ path: join(base, db) });
      const repository = createGitRepository({ cwd: dir });
      const engine = new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: NS, repository, countRecalls: false });
      return { store, engine, sync: async () => engine.sync(await openCairnFolder(repository, NS)) };
    };
    const a = open(dirA, 'a.db');
    const random = rng(7);
    const w = () => WORDS[Math.floor(random() * WORDS.length)] as string;
    for (let k = 0; k < MEMORIES; k += 500) {
      await a.engine.saveMany(
        Array.from({ length: Math.min(500, MEMORIES - k) }, (_, j) => ({
          text: `Note ${k + j}: the ${w()} ${w()} must be checked before the ${w()} ${w()} runs (ticket ${10_000 + k + j})`,
          kind: (['decision', 'gotcha', 'convention', 'fact', 'note'] as const)[(k + j) % 5],
          tags: [w()],
          importance: 1 + ((k + j) % 10),
        })),
      );
    }
    const time = async <T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> => {
      const t = performance.now();
      const value = await fn();
      return { ms: round(performance.now() - t), value };
    };
    const first = await time(() => a.sync());
    const noop = await time(() => a.sync());
    const folderBytes = (execFileSync('du', ['-sb', join(dirA, '.cairn')], { encoding: 'utf8' }).split('\t')[0] ?? '0').trim();
    gitA('add', '-A');
    gitA('commit', '-q', '-m', 'memories');

    const dirB = join(base, 'b');
    execFileSync('git', ['clone', '-q', dirA, dirB], { env, stdio: 'ignore' });
    const b = open(dirB, 'b.db');
    const imported = await time(() => b.sync());
    const names = (await (await openCairnFolder(createGitRepository({ cwd: dirB }), NS)).read()).keys();
    const list = [...names].sort();
    const edits = Math.floor(MEMORIES / 100);
    for (const name of list.slice(0, edits)) {
      const p = join(dirB, '.cairn', name);
      writeFileSync(p, readFileSync(p, 'utf8').replace(/\n$/u, ' (reviewed)\n'));
    }
    for (const name of list.slice(edits, 2 * edits)) rmSync(join(dirB, '.cairn', name));
    const edited = await time(() => b.sync());
    await a.store.close();
    await b.store.close();

    const result = {
      benchmark: 'sync',
      command: `node dist/bench/sync.js${quick ? ' --quick' : ''}`,
      date: new Date().toISOString(),
      machine: { cores: cpus().length, memoryGiB: round(totalmem() / 2 ** 30, 1), node: process.version },
      quick,
      memories: MEMORIES,
      folderBytes: Number(folderBytes),
      databaseBytes: statSync(join(base, 'a.db')).size,
      steps: {
        firstSyncWritesEveryFile: { ms: first.ms, ...counts(first.value) },
        secondSyncNothingToDo: { ms: noop.ms, ...counts(noop.value) },
        freshCloneImportsEveryFile: { ms: imported.ms, perMemoryMs: round(imported.ms / MEMORIES, 3), ...counts(imported.value) },
        onePercentEditedOnePercentDeleted: { ms: edited.ms, ...counts(edited.value) },
      },
      notes: [
        'one run of each step on one machine; no embedding model, so the ingest filter is off (model time per text is the latency benchmark’s)',
        'imports go through the engine’s write path in batches of 200 (one transaction each; redaction, dedupe, event log); each edit or deletion is its own write; files are written 64 at a time',
      ],
      durationSeconds: round((performance.now() - started) / 1000),
    };
    mkdirSync(dirname(outPath), { recursive: true });
    writeFileSync(outPath, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result.steps, null, 2)}\n`);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
