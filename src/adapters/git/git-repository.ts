import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, relative, resolve } from 'node:path';
import type { CodeRepository, PathChange, RepoState } from '../../interfaces/code.js';
import { readHistoryCache, writeHistoryCache, type HistoryCacheData } from './history-cache-file.js';

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
  entries(): IterableIterator<[string, V]> {
    return this.map.entries();
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

/** Adapters with history answers not yet written to their cache file. */
const pendingSaves = new Set<() => void>();
let flushTimer: NodeJS.Timeout | null = null;

/** Writes every pending history cache file now (the process does it a second after new answers, and at exit). */
export function flushHistoryCaches(): void {
  if (flushTimer) clearTimeout(flushTimer);
  flushTimer = null;
  const saves = [...pendingSaves];
  pendingSaves.clear();
  for (const save of saves) save();
}

const schedule = (): void => {
  flushTimer ??= setTimeout(flushHistoryCaches, 1000).unref();
};
process.on('beforeExit', () => {
  if (pendingSaves.size > 0) flushHistoryCaches();
});

export function createGitRepository(config: GitRepositoryConfig): GitRepository {
  const gitPath = config.gitPath ?? 'git';
  const timeout = config.timeoutMs ?? 5000;
  let layout: Promise<Layout | null> | null = null;
  /** Per memory commit: its changes up to the HEAD they were computed at. */
  const latest = new Lru<{ head: string; changes: Map<string, PathChange> | null }>(256);
  const steps = new Lru<Promise<Step[] | null>>(64);
  const removals = new Lru<{ sha: string | null; head: string }>(1024);
  const counted = new Lru<{ added: number; deleted: number }>(4096);
  const deletionWalks = new Lru<Promise<Map<string, string>>>(64);
  const ancestry = new Lru<boolean>(1024);

  const run = (args: string[], cwd?: string): Promise<string | null> =>
    new Promise((resolve) => {
      execFile(gitPath, args, { cwd: cwd ?? config.cwd, encoding: 'utf8', timeout, maxBuffer: 256 * 1024 * 1024, windowsHide: true }, (err, stdout) => {
        resolve(err ? null : stdout);
      });
    });

  const getLayout = (): Promise<Layout | null> => {
    layout ??= findLayout(config.cwd);
    return layout;
  };

  // The history answers of earlier processes (history-cache-file.ts), read once before the first history
  // question. New answers are written back a second after they were found, or when the process is about to
  // exit (a hook or CLI call), never in the middle of a search.
  let loaded: Promise<void> | null = null;
  let savedIn: string | null = null;
  const loadSaved = (): Promise<void> => {
    loaded ??= (async () => {
      const l = await getLayout();
      if (!l) return;
      savedIn = l.gitDir;
      const saved = readHistoryCache(l.gitDir);
      if (!saved) return;
      const head = (await readState())?.head;
      for (const [commit, at, changes] of saved.latest) latest.set(commit, { head: at, changes: new Map(changes.map((c) => [c.path, c])) });
      for (const [key, added, deleted] of saved.counted) counted.set(key, { added, deleted });
      // A removal is only known to be the first along since..HEAD for the HEAD it was found at.
      for (const [since, at, path, sha] of saved.removals) if (at === head) removals.set(`${since}:${path}`, { sha, head: at });
    })();
    return loaded;
  };
  const save = (): void => {
    if (!savedIn) return;
    const data: HistoryCacheData = { latest: [], counted: [], removals: [] };
    for (const [commit, v] of latest.entries()) if (v.changes) data.latest.push([commit, v.head, [...v.changes.values()]]);
    for (const [key, c] of counted.entries()) data.counted.push([key, c.added, c.deleted]);
    for (const [key, v] of removals.entries()) {
      const cut = key.indexOf(':');
      if (v.sha) data.removals.push([key.slice(0, cut), v.head, key.slice(cut + 1), v.sha]);
    }
    writeHistoryCache(savedIn, data);
  };
  const queueSave = (): void => {
    pendingSaves.add(save);
    schedule();
  };

  // Reads of .git's small files and stats of anchored paths are synchronous on purpose: each takes
  // microseconds, while an async call waits for a thread-pool slot, which on a busy machine cost several
  // milliseconds a search (measured by bench/staleness.ts).
  const readText = async (path: string): Promise<string | null> => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return null;
    }
  };

  const mtime = async (path: string): Promise<number> => {
    try {
      return statSync(path).mtimeMs;
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

  /**
   * The first-parent commits from `from` (exclusive) to `to`, oldest first, with their changes; null when
   * `to` does not descend from `from` along first parents (a checkout elsewhere: diff again instead).
   */
  const stepsBetween = (from: string, to: string): Promise<Step[] | null> => {
    // The promise is cached, so the memory commits of one search share one walk.
    const key = `${from}..${to}`;
    let walk = steps.get(key);
    if (!walk) steps.set(key, (walk = walkSteps(from, to)));
    return walk;
  };
  const walkSteps = async (from: string, to: string): Promise<Step[] | null> => {
    const out = await run(['log', '--first-parent', '--reverse', '-M', '--raw', '-z', '--no-color', '--format=%x01%H %P', `${from}..${to}`]);
    let answer: Step[] | null = out === null ? null : [];
    let parent = from;
    for (const chunk of (out ?? '').split('\x01')) {
      if (!answer || chunk === '') continue;
      const end = chunk.indexOf('\0');
      const [sha, first] = (end < 0 ? chunk : chunk.slice(0, end)).trim().split(' ');
      if (!sha || first !== parent) {
        answer = null;
        break;
      }
      parent = sha;
      answer.push({ commit: sha, ...parseChanges(end < 0 ? '' : chunk.slice(end + 1).replace(/^\n/u, '')) });
    }
    if (answer && parent !== to) answer = null;
    return answer;
  };

  /** Every path deleted after `since` up to `head`, with the first commit that deleted it. */
  const deletionsSince = async (since: string, head: string): Promise<Map<string, string>> => {
    const out = await run(['log', '--reverse', '--diff-filter=D', '--name-only', '-z', '--no-color', '--format=%x01%H', `${since}..${head}`]);
    const found = new Map<string, string>();
    for (const chunk of (out ?? '').split('\x01')) {
      const [sha, ...paths] = chunk.split('\0');
      if (!sha || !SHA.test(sha.trim())) continue;
      for (const p of paths) {
        const path = p.replace(/^\n/u, '');
        if (path && !found.has(path)) found.set(path, sha.trim());
      }
    }
    return found;
  };

  const readState = async (): Promise<RepoState | null> => {
    const l = await getLayout();
    if (!l) return null;
    const headText = (await readText(join(l.gitDir, 'HEAD')))?.trim() ?? '';
    const branch = headText.startsWith('ref: refs/heads/') ? headText.slice('ref: refs/heads/'.length) : null;
    const head = branch ? await readRef(l, `refs/heads/${branch}`) : SHA.test(headText) ? headText : null;
    const def = await defaultBranch(l);
    const defTip = def ? await readRef(l, `refs/heads/${def}`) : null;
    const stamps = await Promise.all([join(l.gitDir, 'index'), join(l.commonDir, 'refs/heads'), join(l.commonDir, 'packed-refs')].map(mtime));
    return { head, branch, defaultBranch: def, stamp: [head, branch, def, defTip, ...stamps].join(':') };
  };
  let stateRead: Promise<RepoState | null> | null = null;

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

    state(): Promise<RepoState | null> {
      // Calls made at once (the checks of one search) share one read of the files.
      stateRead ??= readState().finally(() => {
        stateRead = null;
      });
      return stateRead;
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
            const s = statSync(full);
            if (s.isFile() || s.isDirectory()) found.add(p);
          } catch {
            // missing: not found
          }
        }),
      );
      return found;
    },

    async changesSince(commit, count = []) {
      const l = await getLayout();
      if (!l || !SHA.test(commit)) return null;
      const head = (await this.state())?.head;
      if (!head) return null;
      await loadSaved();
      const known = latest.get(commit);
      if (known?.head === head) return known.changes;
      let result: Map<string, PathChange> | null | undefined;
      if (known?.changes && known.head) {
        // HEAD moved on from where this commit's changes were last computed: apply the commits in between
        // (one `git log` shared by every memory commit) instead of diffing each commit again.
        const between = await stepsBetween(known.head, head);
        if (between) result = between.reduce<Map<string, PathChange> | null>((acc, step) => compose(acc, step), known.changes);
      }
      if (result === undefined) {
        // Names and statuses only: line counts are asked for the few files that need them (lineChanges),
        // here alongside when nothing is known yet (the first search of a process).
        const [out] = await Promise.all([
          commit === head ? '' : run(['diff', '-M', '--raw', '-z', '--no-color', commit, head]),
          commit === head || count.length === 0 ? null : this.lineChanges(commit, count),
        ]);
        result = out === null ? null : parseRaw(out);
      }
      latest.set(commit, { head, changes: result });
      if (result) queueSave();
      return result;
    },

    async lineChanges(commit, paths) {
      const head = (await this.state())?.head;
      const found = new Map<string, { added: number; deleted: number }>();
      if (!head || !SHA.test(commit) || paths.length === 0) return found;
      if (commit === head) return new Map(paths.map((p) => [p, { added: 0, deleted: 0 }]));
      await loadSaved();
      const missing = paths.filter((p) => {
        const hit = counted.get(`${commit}..${head}:${p}`);
        if (hit) found.set(p, hit);
        return !hit;
      });
      if (missing.length > 0) {
        const out = await run(['diff', '--numstat', '-z', '--no-color', '--no-renames', commit, head, '--', ...missing.map((p) => `:(literal)${p}`)]);
        const counts = parseNumstat(out ?? '');
        for (const p of missing) {
          const c = counts.get(p) ?? { added: 0, deleted: 0 };
          // A failed git (timeout) answers zeros this once; only real counts are kept.
          if (out !== null) counted.set(`${commit}..${head}:${p}`, c);
          found.set(p, c);
        }
        if (out !== null) queueSave();
      }
      return found;
    },

    async removedIn(path, since) {
      const l = await getLayout();
      const head = l && (await this.state())?.head;
      if (!l || !head || !SHA.test(since)) return null;
      // One walk lists every deletion since `since` (the memories of one search share it); the first
      // commit after `since` that removed a path stays that commit as HEAD moves on.
      await loadSaved();
      const key = `${since}:${path}`;
      const cached = removals.get(key)?.sha;
      if (cached) return cached;
      const walkKey = `${since}..${head}`;
      let walk = deletionWalks.get(walkKey);
      if (!walk) deletionWalks.set(walkKey, (walk = deletionsSince(since, head)));
      const deletions = await walk;
      // A folder's removal is the first removal of a file under it.
      const sha = deletions.get(path) ?? [...deletions].find(([p]) => p.startsWith(`${path}/`))?.[1] ?? null;
      removals.set(key, { sha, head });
      if (sha) queueSave();
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
        const s = statSync(full);
        return s.isFile() && s.size <= 4 * 1024 * 1024 ? readFileSync(full, 'utf8') : null;
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
 * Finds the working tree's top level and git directories from the files, as git does for a plain or linked
 * worktree: the nearest `.git` folder, or a `.git` file naming the worktree's git directory (whose
 * `commondir` names the shared one). Reading files instead of running `git rev-parse` saves a process on
 * the first search of every hook and CLI call.
 */
async function findLayout(cwd: string): Promise<Layout | null> {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const dotGit = join(dir, '.git');
    try {
      const s = await stat(dotGit);
      if (s.isDirectory()) return { top: dir, gitDir: dotGit, commonDir: dotGit };
      if (s.isFile()) {
        const pointer = /^gitdir: (.+)$/mu.exec(await readFile(dotGit, 'utf8'))?.[1]?.trim();
        if (!pointer) return null;
        const gitDir = resolve(dir, pointer);
        const common = (await readFile(join(gitDir, 'commondir'), 'utf8').catch(() => '')).trim();
        return { top: dir, gitDir, commonDir: common ? resolve(gitDir, common) : gitDir };
      }
    } catch {
      // no .git here: look further up
    }
    if (dirname(dir) === dir) return null;
  }
}

/** One commit of a history walk: what it changed, and the paths it added. */
interface Step {
  commit: string;
  changes: Map<string, PathChange>;
  added: Set<string>;
}

/** The changes since a commit followed by one more commit's (renames chained, line counts summed). */
export function compose(base: Map<string, PathChange> | null, step: Step): Map<string, PathChange> | null {
  if (!base) return null;
  const out = new Map<string, PathChange>();
  const byCurrent = new Map<string, string>();
  for (const [key, c] of base) {
    out.set(key, { ...c });
    if (c.status !== 'deleted') byCurrent.set(c.newPath ?? c.path, key);
  }
  for (const s of step.changes.values()) {
    const key = byCurrent.get(s.path);
    if (key === undefined) {
      // Unchanged since the base commit until now (a path that was renamed away is another file: skip).
      if (!out.has(s.path)) out.set(s.path, s.status === 'deleted' ? { ...s, commit: step.commit } : { ...s });
      continue;
    }
    const c = out.get(key) as PathChange;
    if (s.status === 'deleted') {
      c.status = 'deleted';
      delete c.newPath;
      c.commit = step.commit;
    } else if (s.status === 'renamed' && s.newPath) {
      if (s.newPath === c.path) {
        c.status = 'modified';
        delete c.newPath;
      } else {
        c.status = 'renamed';
        c.newPath = s.newPath;
      }
    }
  }
  // A path deleted and then added again exists once more: the working tree check decides.
  for (const path of step.added) if (out.get(path)?.status === 'deleted') out.delete(path);
  return out;
}

/** `parseRaw` plus the paths the commit added (for composing a history walk). */
function parseChanges(out: string): { changes: Map<string, PathChange>; added: Set<string> } {
  const added = new Set<string>();
  const tokens = out.split('\0');
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as string;
    if (!t.startsWith(':')) continue;
    const letter = t.split(' ').pop()?.[0];
    if (letter === 'A') added.add(tokens[i + 1] ?? '');
    else if (letter === 'R' || letter === 'C') {
      if (letter === 'C') added.add(tokens[i + 2] ?? '');
      i++;
    }
    i++;
  }
  return { changes: parseRaw(out), added };
}

/** Parses `git diff --raw -z`: records `:modes shas STATUS\0path\0[new path\0]`. */
export function parseRaw(out: string): Map<string, PathChange> {
  const tokens = out.split('\0');
  const result = new Map<string, PathChange>();
  for (let i = 0; i < tokens.length; i++) {
    const t = (tokens[i] as string).replace(/^\n/u, '');
    if (!t.startsWith(':')) continue;
    const letter = t.split(' ').pop()?.[0];
    const path = tokens[i + 1] ?? '';
    if (letter === 'R' || letter === 'C') {
      if (letter === 'R') result.set(path, { status: 'renamed', path, newPath: tokens[i + 2] ?? '' });
      i += 2;
    } else {
      if (letter === 'D') result.set(path, { status: 'deleted', path });
      else if (letter === 'M' || letter === 'T') result.set(path, { status: 'modified', path });
      i += 1;
    }
  }
  return result;
}

/** Parses `git diff --numstat -z` (no renames: `added\tdeleted\tpath\0`). */
function parseNumstat(out: string): Map<string, { added: number; deleted: number }> {
  const counts = new Map<string, { added: number; deleted: number }>();
  for (const t of out.split('\0')) {
    const [a, d, path] = t.replace(/^\n/u, '').split('\t');
    if (path) counts.set(path, { added: Number(a) || 0, deleted: Number(d) || 0 });
  }
  return counts;
}
