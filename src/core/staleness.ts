import type { CodeAnchor, CodeRepository, PathChange, StaleMark } from '../interfaces/code.js';
import type { Memory } from '../interfaces/memory.js';

/**
 * Staleness at recall. Each recalled memory's anchors are compared with the repository: the files changed
 * between the memory's commit and HEAD (one `git diff -M` per distinct commit, cached by the pair of
 * commits, so a repeated search starts no process) and the working tree (a `stat` per anchor). A file
 * git sees renamed is "moved to <new path>"; a deleted one "removed in <commit>"; one whose changed lines
 * reach CHANGED_SHARE of its size "code changed since". Unknown commits (another clone's history, not
 * fetched) mark nothing.
 */

/**
 * A file counts as heavily changed when (added + deleted lines) / (lines then + lines now) reaches this
 * share: 1 for a rewrite, 0.5 when half of it was replaced, 0.33 when it doubled by additions only. A
 * definition, not a tuned weight: it is what "most of the file is new" means.
 */
export const CHANGED_SHARE = 0.5;

const short = (sha: string) => sha.slice(0, 10);

function lineCount(text: string): number {
  if (text === '') return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}

/** The changes under a folder anchor (`src/billing` covers `src/billing/tax.ts`). */
function under(changes: Map<string, PathChange>, dir: string): PathChange[] {
  const prefix = `${dir}/`;
  return [...changes.values()].filter((c) => c.path.startsWith(prefix));
}

type LineCounts = Map<string, { added: number; deleted: number }>;

async function markAnchor(repo: CodeRepository, anchor: CodeAnchor, commit: string, changes: Map<string, PathChange>, present: Set<string>, counts: LineCounts): Promise<StaleMark | null> {
  const { path } = anchor;
  const change = changes.get(path);
  if (change?.status === 'renamed' && change.newPath) {
    return { status: 'moved', path, newPath: change.newPath, reason: `moved to ${change.newPath}` };
  }
  if (change?.status === 'deleted') {
    const by = change.commit ?? (await repo.removedIn(path, commit));
    return by ? { status: 'removed', path, commit: by, reason: `file removed in ${short(by)}` } : { status: 'removed', path, reason: 'file removed' };
  }
  if (!change && !present.has(path)) {
    const inside = under(changes, path);
    if (inside.length > 0) {
      // A folder: moved when its files went to one new folder, removed when they went away.
      const renamed = inside.filter((c) => c.status === 'renamed' && c.newPath);
      if (renamed.length > 0) {
        const first = renamed[0] as PathChange;
        const rest = first.path.slice(path.length);
        const target = first.newPath?.endsWith(rest) ? (first.newPath as string).slice(0, -rest.length) : (first.newPath as string);
        return { status: 'moved', path, newPath: target, reason: `moved to ${target}` };
      }
      const by = await repo.removedIn(path, commit);
      return by ? { status: 'removed', path, commit: by, reason: `folder removed in ${short(by)}` } : { status: 'removed', path, reason: 'folder removed' };
    }
    return { status: 'removed', path, reason: 'file removed (not committed yet)' };
  }
  if (change?.status === 'modified' || (anchor.symbol && !change)) {
    const text = change || anchor.symbol ? await repo.readFile(path) : null;
    if (anchor.symbol && text !== null && !text.includes(anchor.symbol)) {
      return { status: 'changed', path, reason: `code changed since ${short(commit)}: ${anchor.symbol} is no longer in ${path}` };
    }
    const lines = counts.get(path);
    if (change && text !== null && lines) {
      const now = lineCount(text);
      const then = Math.max(0, now - lines.added + lines.deleted);
      const share = (lines.added + lines.deleted) / Math.max(1, then + now);
      if (share >= CHANGED_SHARE) {
        return { status: 'changed', path, reason: `code changed since ${short(commit)} (${lines.added} lines added, ${lines.deleted} removed of ${then})` };
      }
    }
  }
  return null;
}

/**
 * The stale marks of memories recalled in `repo`, by memory id; memories with nothing stale are absent.
 * Never throws: a failing check marks nothing.
 */
export async function staleMarks(repo: CodeRepository, memories: readonly Memory[]): Promise<Map<string, StaleMark[]>> {
  const marks = new Map<string, StaleMark[]>();
  const anchored = memories.filter((m) => m.code && m.code.commit && m.code.anchors.length > 0);
  if (anchored.length === 0) return marks;
  const commits = [...new Set(anchored.map((m) => m.code?.commit as string))];
  const pathsOf = (c: string) => [...new Set(anchored.filter((m) => m.code?.commit === c).flatMap((m) => m.code?.anchors.map((a) => a.path) ?? []))];
  const [changesOf, present] = await Promise.all([
    Promise.all(commits.map(async (c) => [c, await repo.changesSince(c, pathsOf(c)).catch(() => null)] as const)).then((e) => new Map(e)),
    repo.existing([...new Set(anchored.flatMap((m) => m.code?.anchors.map((a) => a.path) ?? []))]).catch(() => new Set<string>()),
  ]);
  // Line counts only for the anchored files git sees modified (few: most anchors are untouched), one
  // `git diff --numstat` per commit, cached per file by the adapter.
  const countsOf = new Map(
    await Promise.all(
      commits.map(async (c) => {
        const changes = changesOf.get(c);
        const modified = pathsOf(c).filter((p) => changes?.get(p)?.status === 'modified');
        return [c, await repo.lineChanges(c, modified).catch(() => new Map() as LineCounts)] as const;
      }),
    ),
  );
  await Promise.all(
    anchored.map(async (m) => {
      const commit = m.code?.commit as string;
      const changes = changesOf.get(commit);
      if (!changes) return;
      const counts = countsOf.get(commit) ?? new Map();
      const found: StaleMark[] = [];
      const seen = new Set<string>();
      for (const anchor of m.code?.anchors ?? []) {
        const mark = await markAnchor(repo, anchor, commit, changes, present, counts).catch(() => null);
        if (mark && !seen.has(mark.reason + mark.path)) {
          seen.add(mark.reason + mark.path);
          found.push(mark);
        }
      }
      if (found.length) marks.set(m.id, found);
    }),
  );
  return marks;
}

/** A route's paths with moved ones replaced by their new paths; null when none moved. */
export function followMoves(paths: readonly string[], marks: readonly StaleMark[]): string[] | null {
  const moved = new Map(marks.filter((m) => m.status === 'moved' && m.newPath).map((m) => [m.path, m.newPath as string]));
  if (moved.size === 0) return null;
  const norm = (p: string) => p.replace(/^\.\//u, '').replace(/\/+$/u, '');
  const next = paths.map((p) => moved.get(norm(p)) ?? p);
  return next.some((p, i) => p !== paths[i]) ? [...new Set(next)] : null;
}
