import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative } from 'node:path';
import type { CodeRepository, PathChange, RepoState } from '../../interfaces/code.js';

/**
 * The git working tree cairn runs in, read through the `git` command. Reading HEAD, branches and the
 * default branch goes through the files of `.git` (no process: a spawn costs 3–5 ms here, and recall asks
 * this on every search); history questions spawn git once and are cached, keyed by the commits involved,
 * so they never go stale. Git missing, a directory outside a repository or an unknown commit give null or
 * empty answers, never an error.
 */

export interface GitRepositoryConfig {
  /** A directory inside the working tree. */
  cwd: string;
  /** The git executable (default `git` on PATH). */
  gitPath?: string;
  /** Upper bound of one git command, ms (default 5000). */
  timeoutMs?: number;
}

interface Layout {
  top: string;
  gitDir: string;
  commonDir: string;
}

/** A small least-recently-used map: history answers are immutable, so only the size needs bounding. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }
}

const SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/u;

/** The git repository with where it lives on disk (for the `.cairn/` folder of `cairn sync`). */
export interface GitRepository extends CodeRepository {
  /** The working tree's top level; null outside a repository. */
  topLevel(): Promise<string | null>;
  /** This working tree's own git directory (per worktree); null outside a repository. */
  gitDir(): Promise<string | null>;
}

export function createGitRepository(config: GitRepositoryConfig): GitRepository {
  const gitPath = config.gitPath ?? 'git';
  const timeout = config.timeoutMs ?? 5000;
  let layout: Promise<Layout | null> | null = null;
  const changes = new Lru<Map<string, PathChange> | null>(256);
  const removals = new Lru<string | null>(1024);
  const ancestry = new Lru<boolean>(1024);

  const run = (args: string[], cwd?: string): Promise<string | null> =>
    new Promise((resolve) => {
      execFile(gitPath, args, { cwd: cwd ?? config.cwd, encoding: 'utf8', timeout, maxBuffer: 256 * 1024 * 1024, windowsHide: true }, (err, stdout) => {
        resolve(err ? null : stdout);
      });
    });

  const getLayout = (): Promise<Layout | null> => {
    layout ??= (async () => {
      const out = await run(['rev-parse', '--path-format=absolute', '--show-toplevel', '--absolute-git-dir', '--git-common-dir']);
      const [top, gitDir, commonDir] = (out ?? '').split('\n');
      if (!top || !gitDir || !commonDir) return null;
      return { top, gitDir, commonDir };
    })();
    return layout;
  };

  const readText = async (path: string): Promise<string | null> => {
    try {
      return await readFile(path, 'utf8');
    } catch {
      return null;
    }
  };

  const mtime = async (path: string): Promise<number> => {
    try {
      return (await stat(path)).mtimeMs;
    } catch {
      return 0;
    }
  };

  /** A ref's commit from the loose ref file or packed-refs. */
  const readRef = async (l: Layout, ref: string): Promise<string | null> => {
    for (const dir of ref.startsWith('refs/') ? [l.commonDir] : [l.gitDir, l.commonDir]) {
      const loose = (await readText(join(dir, ref)))?.trim();
      if (loose) return loose.startsWith('ref: ') ? readRef(l, loose.slice(5)) : SHA.test(loose) ? loose : null;
    }
    const packed = await readText(join(l.commonDir, 'packed-refs'));
    for (const line of packed?.split('\n') ?? []) {
      const [sha, name] = line.split(' ');
      if (name === ref && sha && SHA.test(sha)) return sha;
    }
    return null;
  };

  const defaultBranch = async (l: Layout): Promise<string | null> => {
    const origin = (await readText(join(l.commonDir, 'refs/remotes/origin/HEAD')))?.trim();
    if (origin?.startsWith('ref: refs/remotes/origin/')) return origin.slice('ref: refs/remotes/origin/'.length);
    for (const name of ['main', 'master']) if (await readRef(l, `refs/heads/${name}`)) return name;
    return null;
  };

  /** A path inside the top level, normalised; null for one that leaves it. */
  const inside = (l: Layout, path: string): string | null => {
    const clean = normalize(path.replace(/\/+$/u, ''));
    if (clean === '' || clean === '.' || isAbsolute(clean)) return null;
    const full = join(l.top, clean);
    const rel = relative(l.top, full);
    return rel.startsWith('..') || rel === '' ? null : full;
  };

  return {
    async topLevel() {
      return (await getLayout())?.top ?? null;
    },
    async gitDir() {
      return (await getLayout())?.gitDir ?? null;
    },

    async state(): Promise<RepoState | null> {
      const l = await getLayout();
      if (!l) return null;
      const headText = (await readText(join(l.gitDir, 'HEAD')))?.trim() ?? '';
      const branch = headText.startsWith('ref: refs/heads/') ? headText.slice('ref: refs/heads/'.length) : null;
      const head = branch ? await readRef(l, `refs/heads/${branch}`) : SHA.test(headText) ? headText : null;
      const def = await defaultBranch(l);
      const defTip = def ? await readRef(l, `refs/heads/${def}`) : null;
      const stamps = await Promise.all([join(l.gitDir, 'index'), join(l.commonDir, 'refs/heads'), join(l.commonDir, 'packed-refs')].map(mtime));
      return { head, branch, defaultBranch: def, stamp: [head, branch, def, defTip, ...stamps].join(':') };
    },

    async existing(paths) {
      const l = await getLayout();
      const found = new Set<string>();
      if (!l) return found;
      await Promise.all(
        paths.map(async (p) => {
          const full = inside(l, p);
          if (!full) return;
          try {
            const s = await stat(full);
            if (s.isFile() || s.isDirectory()) found.add(p);
          } catch {
            // missing: not found
          }
        }),
      );
      return found;
    },

    async changesSince(commit) {
      const l = await getLayout();
      if (!l || !SHA.test(commit)) return null;
      const head = (await this.state())?.head;
      if (!head) return null;
      const key = `${commit}..${head}`;
      const cached = changes.get(key);
      if (cached !== undefined) return cached;
      const out = commit === head ? '' : await run(['diff', '-M', '--raw', '--numstat', '-z', '--no-color', commit, head]);
      const parsed = out === null ? null : parseRawNumstat(out);
      changes.set(key, parsed);
      return parsed;
    },

    async removedIn(path, since) {
      const l = await getLayout();
      const head = l && (await this.state())?.head;
      if (!l || !head || !SHA.test(since)) return null;
      const key = `${since}..${head}:${path}`;
      const cached = removals.get(key);
      if (cached !== undefined) return cached;
      const out = await run(['log', '--format=%H', '--diff-filter=D', '--reverse', `${since}..${head}`, '--', path]);
      const sha = out?.split('\n').find((s) => SHA.test(s)) ?? null;
      removals.set(key, sha);
      return sha;
    },

    async filesContaining(words, maxFiles) {
      const found = new Map<string, string[]>();
      const wanted = words.filter((w) => /^[A-Za-z_$][\w$]{2,100}$/u.test(w));
      if (wanted.length === 0 || !(await getLayout())) return found;
      const out = await run(['grep', '-z', '-o', '-w', '-F', '-I', '--no-color', ...wanted.flatMap((w) => ['-e', w])]);
      const files = new Map<string, Set<string>>();
      for (const line of out?.split('\n') ?? []) {
        const [path, word] = line.split('\0');
        if (!path || !word) continue;
        let set = files.get(word);
        if (!set) files.set(word, (set = new Set()));
        set.add(path);
      }
      for (const [word, set] of files) found.set(word, set.size > maxFiles ? [] : [...set].sort());
      return found;
    },

    async readFile(path) {
      const l = await getLayout();
      const full = l && inside(l, path);
      if (!full) return null;
      try {
        const s = await stat(full);
        return s.isFile() ? await readFile(full, 'utf8') : null;
      } catch {
        return null;
      }
    },

    async branchTip(branch) {
      const l = await getLayout();
      if (!l || !/^[\w./-]+$/u.test(branch) || branch.includes('..')) return null;
      return readRef(l, `refs/heads/${branch}`);
    },

    async isAncestor(ancestor, descendant) {
      if (!SHA.test(ancestor) || !SHA.test(descendant)) return false;
      if (ancestor === descendant) return true;
      const key = `${ancestor}<${descendant}`;
      const cached = ancestry.get(key);
      if (cached !== undefined) return cached;
      // exit 0: ancestor, 1: not; anything else (unknown commit) answers null and counts as not.
      const answer = (await run(['merge-base', '--is-ancestor', ancestor, descendant])) !== null;
      ancestry.set(key, answer);
      return answer;
    },

    async mergeBase(a, b) {
      if (!SHA.test(a) || !SHA.test(b)) return null;
      const out = (await run(['merge-base', a, b]))?.trim();
      return out && SHA.test(out) ? out : null;
    },
  };
}

/**
 * Parses `git diff --raw --numstat -z`: raw records (`:modes shas STATUS\0path\0[new\0]`) then numstat
 * records (`added\tdeleted\tpath\0`, or `added\tdeleted\t\0old\0new\0` for a rename).
 */
export function parseRawNumstat(out: string): Map<string, PathChange> {
  const tokens = out.split('\0');
  const result = new Map<string, PathChange>();
  let i = 0;
  while (i < tokens.length && tokens[i]?.startsWith(':')) {
    const status = (tokens[i] as string).split(' ').pop() ?? '';
    const letter = status[0];
    const path = tokens[i + 1] ?? '';
    if (letter === 'R' || letter === 'C') {
      const newPath = tokens[i + 2] ?? '';
      if (letter === 'R') result.set(path, { status: 'renamed', path, newPath, added: 0, deleted: 0 });
      i += 3;
    } else {
      if (letter === 'D') result.set(path, { status: 'deleted', path, added: 0, deleted: 0 });
      else if (letter === 'M' || letter === 'T') result.set(path, { status: 'modified', path, added: 0, deleted: 0 });
      i += 2;
    }
  }
  while (i < tokens.length) {
    const t = tokens[i] ?? '';
    if (t === '') {
      i++;
      continue;
    }
    const [a, d, p] = t.split('\t');
    const added = Number(a) || 0;
    const deleted = Number(d) || 0;
    let path = p ?? '';
    if (path === '') {
      path = tokens[i + 1] ?? '';
      i += 3;
    } else {
      i += 1;
    }
    const change = result.get(path);
    if (change) Object.assign(change, { added, deleted });
  }
  return result;
}

