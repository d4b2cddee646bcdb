import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cli, cliJson, NO_MODEL, useSandbox, type Sandbox } from './mcp-scenario.js';

/**
 * The real `cairn` bin in real git repositories: a stale route marked in search and followed in one call,
 * and two clones syncing through .cairn/, with a conflict exiting 1. Each clone has its own database; the
 * namespace is set (the clones' remotes differ, the repository is one).
 */

const ENV = {
  ...NO_MODEL,
  CAIRN_NAMESPACE: 'github.com/acme/shop',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

const a = useSandbox('code-a', ENV);
const b = useSandbox('code-b', ENV);

function git(box: Sandbox, ...args: string[]): string {
  return execFileSync('git', args, { cwd: box.cwd, env: { ...box.env, GIT_CONFIG_GLOBAL: join(box.dir, 'gitconfig') }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

describe('cairn and the code it remembers (real bin, real git)', () => {
  let routeId = '';
  let followed = '';

  it('a route to a file renamed since is marked in search and followed to the new path by cairn follow', async () => {
    git(a, 'init', '-q', '-b', 'main');
    mkdirSync(join(a.cwd, 'src'));
    writeFileSync(join(a.cwd, 'src/tax.py'), 'def vat(): pass\n');
    git(a, 'add', '-A');
    git(a, 'commit', '-q', '-m', 'first');
    routeId = (await cliJson<{ id: string }>(a, ['route', '--title', 'checkout tax', '--description', 'VAT rounding', '--paths', 'src/tax.py'])).id;
    mkdirSync(join(a.cwd, 'src/billing'));
    git(a, 'mv', 'src/tax.py', 'src/billing/tax.py');
    git(a, 'commit', '-q', '-m', 'move');
    const found = await cliJson<{ results: { id: string; stale?: { newPath?: string; reason: string }[] }[] }>(a, ['search', 'checkout tax VAT rounding']);
    assert.equal(found.results[0]?.id, routeId);
    assert.equal(found.results[0]?.stale?.[0]?.reason, 'moved to src/billing/tax.py');
    const text = await cli(a, ['search', 'checkout tax VAT rounding']);
    assert.match(text.stdout, /\[stale: src\/tax\.py moved to src\/billing\/tax\.py\]/u);
    const r = await cliJson<{ id: string; supersedes: string; memory: { route: { paths: string[] } } }>(a, ['follow', routeId]);
    followed = r.id;
    assert.equal(r.supersedes, routeId);
    assert.deepEqual(r.memory.route.paths, ['src/billing/tax.py']);
  });

  it('cairn sync writes .cairn/, a second clone imports it with the same ids, and a two-sided change exits 1', async () => {
    const wrote = await cliJson<{ written: string[] }>(a, ['sync']);
    assert.deepEqual(wrote.written, [followed]);
    git(a, 'add', '-A');
    git(a, 'commit', '-q', '-m', 'memories');
    execFileSync('git', ['clone', '-q', a.cwd, join(b.dir, 'clone')], { env: b.env, stdio: 'ignore' });
    const clone: Sandbox = { ...b, cwd: join(b.dir, 'clone') };
    const got = await cliJson<{ imported: string[] }>(clone, ['sync']);
    assert.deepEqual(got.imported, [followed]);
    assert.equal((await cliJson<{ id: string }>(clone, ['get', followed])).id, followed);

    // A edits the file; B replaces the same memory in its store; B pulls and syncs: a conflict.
    const file = join(a.cwd, '.cairn', `${followed}.md`);
    writeFileSync(file, readFileSync(file, 'utf8').replace(/\n$/u, ' (reviewed)\n'));
    git(a, 'commit', '-q', '-am', 'review');
    await cliJson(clone, ['supersede', followed, 'Checkout tax lives in src/billing/tax.py; VAT is rounded per line']);
    git(clone, 'pull', '-q', '--no-rebase', a.cwd, 'main');
    const conflict = await cli(clone, ['sync']);
    assert.equal(conflict.code, 1);
    assert.match(conflict.stdout, new RegExp(`conflict: ${followed}`, 'u'));
    assert.equal(conflict.stderr.trim().split('\n').length, 1, 'one line on stderr');
    assert.match(conflict.stderr, /changed on both sides/u);
    const settled = await cliJson<{ removed: string[]; conflicts: unknown[] }>(clone, ['sync', '--take-memory', followed]);
    assert.deepEqual(settled.conflicts, []);
    assert.deepEqual(settled.removed, [followed]);
  });
});
