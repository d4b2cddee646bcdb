import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { HISTORY_CACHE_FILE, readHistoryCache } from '../../src/adapters/git/history-cache-file.js';
import { createGitRepository, flushHistoryCaches } from '../../src/adapters/git/git-repository.js';
import { createSqliteStore } from '../../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../../src/core/engine.js';
import { staleMarks } from '../../src/core/staleness.js';
import type { StaleMark } from '../../src/interfaces/code.js';
import type { Memory } from '../../src/interfaces/memory.js';
import type { Store } from '../../src/interfaces/store.js';
import { gitEnv, lines, makeRepo, type GitFixture } from './git-fixture.js';

/**
 * The git adapter's history answers persisted in `<git dir>/cairn/history-cache.json`: a second process
 * marks the same memories without running git at all, and a corrupt, altered, other-version or outdated
 * file is not trusted (the marks stay exactly what git says, and the file is rebuilt). Real git, real
 * SQLite, a real second node process.
 */

let repo: GitFixture;
let root: string;
let store: Store;
let engine: Engine;
let memories: Memory[];
let cacheFile: string;
const stalenessModule = fileURLToPath(new URL('../../src/core/staleness.js', import.meta.url));
const adapterModule = fileURLToPath(new URL('../../src/adapters/git/git-repository.js', import.meta.url));

/** The marks a fresh adapter gives, as {id: reasons}. */
const reasons = (marks: Map<string, StaleMark[]>) => Object.fromEntries([...marks].sort(([a], [b]) => a.localeCompare(b)).map(([id, m]) => [id, m.map((x) => x.reason)]));
const freshMarks = async () => reasons(await staleMarks(createGitRepository({ cwd: repo.dir }), memories));

/**
 * The marks computed by another node process, by default one whose git executable does not exist (only the
 * file can answer); it exits on its own, without flushing.
 */
function marksInAnotherProcessWithoutGit(gitPath = join(root, 'no-such-git')): Record<string, string[]> {
  const script = `
    const { staleMarks } = await import(${JSON.stringify(stalenessModule)});
    const { createGitRepository } = await import(${JSON.stringify(adapterModule)});
    const memories = JSON.parse(process.argv[1]);
    const marks = await staleMarks(createGitRepository({ cwd: ${JSON.stringify(repo.dir)}, gitPath: ${JSON.stringify(gitPath)} }), memories);
    process.stdout.write(JSON.stringify(Object.fromEntries([...marks].sort(([a], [b]) => a.localeCompare(b)).map(([id, m]) => [id, m.map((x) => x.reason)]))));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(memories)], { env: gitEnv(root), encoding: 'utf8' });
  return JSON.parse(out) as Record<string, string[]>;
}

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'cairn-history-cache-'));
  repo = makeRepo('cairn-history-cache-git-');
  repo.write('app/tax.py', lines(40, '# tax'));
  repo.write('app/export.py', lines(30, '# export'));
  repo.write('app/cart.py', lines(30, '# cart'));
  repo.write('app/stock.py', lines(20, '# stock'));
  repo.commit('first');
  store = createSqliteStore({ path: join(root, 'cairn.db') });
  engine = new Engine({ store, embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: 'history-cache', repository: createGitRepository({ cwd: repo.dir }) });
  const ids = [
    (await engine.save({ text: 'VAT is rounded in app/tax.py' })).id,
    (await engine.save({ text: 'The nightly export is written by app/export.py' })).id,
    (await engine.save({ text: 'Cart totals are summed in app/cart.py' })).id,
    (await engine.save({ text: 'Stock is checked in app/stock.py' })).id,
  ];
  memories = (await Promise.all(ids.map((id) => engine.get(id)))) as Memory[];
  mkdirSync(join(repo.dir, 'billing'));
  repo.git('mv', 'app/tax.py', 'billing/tax.py');
  repo.git('rm', '-q', 'app/export.py');
  repo.write('app/cart.py', lines(5, '# cart') + lines(40, '# basket'));
  repo.commit('move, drop, rewrite');
  cacheFile = join(repo.dir, '.git', HISTORY_CACHE_FILE);
});

after(async () => {
  await store.close();
  repo.cleanup();
  rmSync(root, { recursive: true, force: true });
});

/** The adapter writes a second after new answers or at exit; the test does not wait for either. */
const settle = async () => flushHistoryCaches();

describe('history answers kept across processes', () => {
  let expected: Record<string, string[]>;

  it('a first search writes the file; another process without git marks exactly the same from it', async () => {
    expected = await freshMarks();
    await settle();
    assert.equal(Object.keys(expected).length, 3, JSON.stringify(expected)); // moved, removed, changed; stock untouched
    assert.ok(readHistoryCache(join(repo.dir, '.git')), 'the file is written and valid');
    assert.deepEqual(marksInAnotherProcessWithoutGit(), expected);
  });

  it('a process with git writes the file as it exits, for the next one', () => {
    rmSync(cacheFile);
    assert.deepEqual(marksInAnotherProcessWithoutGit('git'), expected);
    assert.deepEqual(marksInAnotherProcessWithoutGit(), expected);
  });

  it('a corrupt file is ignored, the marks stay right, and the file is rebuilt', async () => {
    writeFileSync(cacheFile, '{"version":1,"checksum":"');
    assert.deepEqual(marksInAnotherProcessWithoutGit(), {}); // nothing to trust, and no git to ask
    assert.deepEqual(await freshMarks(), expected);
    await settle();
    assert.deepEqual(marksInAnotherProcessWithoutGit(), expected);
  });

  it('an altered file (checksum no longer matches) or one of another version is not trusted', async () => {
    const good = readFileSync(cacheFile, 'utf8');
    const file = JSON.parse(good) as { version: number; checksum: string; data: string };
    writeFileSync(cacheFile, JSON.stringify({ ...file, data: file.data.replaceAll('billing/tax.py', 'elsewhere/tax.py') }));
    assert.equal(readHistoryCache(join(repo.dir, '.git')), null);
    assert.deepEqual(marksInAnotherProcessWithoutGit(), {});
    writeFileSync(cacheFile, JSON.stringify({ ...file, version: 999 }));
    assert.equal(readHistoryCache(join(repo.dir, '.git')), null);
    assert.deepEqual(await freshMarks(), expected);
  });

  it('after HEAD moves on, a fresh process sees the new commit, not only what the file held', async () => {
    await freshMarks();
    await settle();
    repo.git('rm', '-q', 'app/stock.py');
    const gone = repo.commit('drop stock');
    const now = await freshMarks();
    const stockId = memories[3]?.id as string;
    assert.deepEqual(now[stockId], [`file removed in ${gone.slice(0, 10)}`]);
    assert.deepEqual({ ...now, [stockId]: undefined }, { ...expected, [stockId]: undefined });
    await settle();
    assert.deepEqual(marksInAnotherProcessWithoutGit(), now);
  });

  it('an unwritable cache location costs nothing but time: marks are unchanged', async () => {
    rmSync(join(repo.dir, '.git', 'cairn'), { recursive: true, force: true });
    writeFileSync(join(repo.dir, '.git', 'cairn'), 'a file where the folder should be');
    try {
      const a = await freshMarks();
      await settle();
      assert.deepEqual(await freshMarks(), a);
      assert.equal(Object.keys(a).length, 4);
    } finally {
      rmSync(join(repo.dir, '.git', 'cairn'), { force: true });
    }
  });
});
