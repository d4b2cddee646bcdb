/**
 * The default namespace is the git repository of the working directory: its origin URL, else its top-level
 * path, shared by every subfolder and linked worktree. Spawns the real bin inside temp git repositories.
 */
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// dist/test/e2e/namespace.test.js → repository root
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = join(ROOT, 'bin', 'cairn.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let sandbox: string;
let db: string;

function env(): NodeJS.ProcessEnv {
  const home = join(sandbox, 'home');
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'cairn e2e',
    GIT_AUTHOR_EMAIL: 'e2e@example.com',
    GIT_COMMITTER_NAME: 'cairn e2e',
    GIT_COMMITTER_EMAIL: 'e2e@example.com',
    CAIRN_DB: db,
  };
}

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, env: env(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function cairn(cwd: string, args: string[]): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

async function ok<T>(cwd: string, args: string[]): Promise<T> {
  const r = await cairn(cwd, args);
  assert.equal(r.code, 0, `cairn ${args.join(' ')} in ${cwd} exited ${r.code}: ${r.stderr}`);
  assert.equal(r.stderr, '');
  return JSON.parse(r.stdout) as T;
}

interface Saved {
  id: string;
  memory: { namespace: string };
}
interface Results {
  results: { id: string; text: string; namespace: string }[];
}

/** A repository with one commit, a subfolder, and a linked worktree beside it. */
function makeRepo(name: string, origin: string | null): { top: string; sub: string; worktree: string } {
  const top = join(sandbox, name);
  mkdirSync(join(top, 'src', 'billing'), { recursive: true });
  writeFileSync(join(top, 'src', 'billing', 'invoice.py'), 'VAT = 0.2\n');
  git(top, ['init', '-q', '-b', 'main']);
  if (origin) git(top, ['remote', 'add', 'origin', origin]);
  git(top, ['add', '.']);
  git(top, ['commit', '-q', '-m', 'init']);
  const worktree = join(sandbox, `${name}-feature`);
  git(top, ['worktree', 'add', '-q', '-b', 'feature', worktree]);
  return { top: realpathSync(top), sub: join(top, 'src', 'billing'), worktree };
}

before(() => {
  sandbox = realpathSync(mkdtempSync(join(tmpdir(), 'cairn-e2e-ns-')));
  db = join(sandbox, 'shared.db');
  mkdirSync(join(sandbox, 'home'));
});

after(() => {
  rmSync(sandbox, { recursive: true, force: true });
});

describe('the default namespace comes from git', () => {
  let shop: ReturnType<typeof makeRepo>;
  let local: ReturnType<typeof makeRepo>;
  let shopNote: Saved;
  let localNote: Saved;

  it('a note saved in a subfolder of a repository with origin is found from the root and from a linked worktree', async () => {
    shop = makeRepo('shop', 'git@github.com:acme/shop.git');
    local = makeRepo('scratch', null);
    [shopNote, localNote] = await Promise.all([
      ok<Saved>(shop.sub, ['save', 'Invoices are numbered per legal entity, without gaps.', '--kind', 'constraint', '--json']),
      ok<Saved>(local.sub, ['save', 'The scratch repository keeps experiments with the tax engine.', '--json']),
    ]);
    assert.equal(shopNote.memory.namespace, 'github.com/acme/shop');

    const [fromRoot, fromWorktree, doctor] = await Promise.all([
      ok<Results>(shop.top, ['search', 'how are invoices numbered', '--json']),
      ok<Results>(shop.worktree, ['search', 'how are invoices numbered', '--json']),
      ok<{ namespace: string }>(shop.worktree, ['doctor', '--json']),
    ]);
    for (const [where, r] of [['root', fromRoot], ['worktree', fromWorktree]] as const) {
      assert.deepEqual(r.results.map((x) => x.id), [shopNote.id], `from the ${where}: exactly the shop's note`);
      assert.equal(r.results[0]?.namespace, 'github.com/acme/shop');
    }
    assert.equal(doctor.namespace, 'github.com/acme/shop (from git-origin)');
  });

  it('a repository without origin uses its top-level path, and its worktrees share it', async () => {
    assert.equal(localNote.memory.namespace, local.top);
    const [fromWorktree, doctor] = await Promise.all([
      ok<Results>(local.worktree, ['search', 'tax engine experiments', '--json']),
      ok<{ namespace: string }>(local.worktree, ['doctor', '--json']),
    ]);
    assert.deepEqual(fromWorktree.results.map((x) => x.id), [localNote.id]);
    assert.equal(fromWorktree.results[0]?.namespace, local.top);
    assert.equal(doctor.namespace, `${local.top} (from git-toplevel)`);
  });

  it('--namespace overrides the repository, and namespaces never see each other', async () => {
    const elsewhere = await ok<Saved>(shop.sub, ['save', 'Invoices are numbered per legal entity, without gaps.', '--namespace', 'acme/handbook', '--json']);
    assert.equal(elsewhere.memory.namespace, 'acme/handbook');
    assert.notEqual(elsewhere.id, shopNote.id, 'the same text in another namespace is another memory');

    const [shopSearch, localSearch, handbookSearch, crossGet, shopList] = await Promise.all([
      ok<Results>(shop.top, ['search', 'invoices tax engine experiments numbering', '--limit', '50', '--json']),
      ok<Results>(local.top, ['search', 'invoices tax engine experiments numbering', '--limit', '50', '--json']),
      ok<Results>(local.top, ['search', 'invoices numbered', '--namespace', 'acme/handbook', '--json']),
      cairn(local.top, ['get', shopNote.id, '--json']),
      ok<{ memories: { id: string }[] }>(shop.worktree, ['list', '--json']),
    ]);
    assert.deepEqual(shopSearch.results.map((x) => x.id), [shopNote.id]);
    assert.deepEqual(localSearch.results.map((x) => x.id), [localNote.id]);
    assert.deepEqual(handbookSearch.results.map((x) => x.id), [elsewhere.id]);
    assert.equal(crossGet.code, 1, 'another namespace’s id is not found');
    assert.equal(crossGet.stdout, '');
    assert.match(crossGet.stderr, /"code":"NOT_FOUND"/u);
    assert.deepEqual(shopList.memories.map((m) => m.id), [shopNote.id]);

    const stats = await ok<{ namespaces: { namespace: string; live: number }[] }>(sandbox, ['stats', '--json']);
    assert.deepEqual(
      stats.namespaces.map((n) => [n.namespace, n.live]).sort(),
      [['acme/handbook', 1], ['github.com/acme/shop', 1], [local.top, 1]].sort(),
      'one shared database file, three namespaces',
    );
  });
});
