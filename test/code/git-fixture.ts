import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Real git repositories for the code-awareness tests: made in a temp dir, committed with a fixed identity,
 * never touching the user's git configuration (HOME and the global/system config point into the temp dir).
 */

export interface GitFixture {
  dir: string;
  git(...args: string[]): string;
  write(path: string, text: string): void;
  commit(message: string): string;
  head(): string;
  cleanup(): void;
}

export function gitEnv(home: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    GIT_CONFIG_GLOBAL: join(home, '.gitconfig'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
  };
}

/** A fresh repository on branch `main` (or a clone of `cloneOf`). */
export function makeRepo(prefix = 'cairn-git-', cloneOf?: string): GitFixture {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const dir = join(root, 'repo');
  const env = gitEnv(root);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  if (cloneOf) execFileSync('git', ['clone', '-q', cloneOf, dir], { env, stdio: 'ignore' });
  else {
    mkdirSync(dir);
    git('init', '-q', '-b', 'main');
  }
  const fixture: GitFixture = {
    dir,
    git,
    write(path, text) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    },
    commit(message) {
      git('add', '-A');
      git('commit', '-q', '--allow-empty', '-m', message);
      return git('rev-parse', 'HEAD');
    },
    head: () => git('rev-parse', 'HEAD'),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
  return fixture;
}

/** `n` lines of distinct text (a file body). */
export function lines(n: number, word = 'line'): string {
  return Array.from({ length: n }, (_, i) => `${word} ${i + 1}`).join('\n') + '\n';
}
