/**
 * Memory that knows the code: anchors from a memory to the files it is about, the marks recall puts on a
 * memory whose files moved, went or changed, and the contract of the repository those checks read.
 * Pure data and one interface; the git adapter (src/adapters/git/) implements it.
 */

/** A file a memory is about, by path relative to the repository's top level. */
export interface CodeAnchor {
  path: string;
  /** A name inside the file (function, class, constant) the memory is about. */
  symbol?: string;
  /** First and last line (1-based, inclusive) the memory is about, at the recorded commit. */
  lines?: [number, number];
}

/** Where in the code a memory was written: its anchors, the commit, and its branch when branch-scoped. */
export interface CodeRef {
  /** HEAD when the memory was written (null in a repository without commits yet). */
  commit: string | null;
  anchors: CodeAnchor[];
  /** Set when the memory belongs to this branch only (until the branch merges into the default branch). */
  branch?: string;
  /** The merge base of the branch with the default branch when the memory was written (branch scope). */
  base?: string;
}

export const STALE_STATUSES = ['moved', 'removed', 'changed'] as const;
export type StaleStatus = (typeof STALE_STATUSES)[number];

/** Why a recalled memory may no longer hold: one mark per anchor that moved, went or changed. */
export interface StaleMark {
  status: StaleStatus;
  path: string;
  /** The file's path now (status `moved`). */
  newPath?: string;
  /** The commit that removed the file (status `removed`, when committed). */
  commit?: string;
  /** One line for people and models, e.g. `moved to src/billing/tax.ts`. */
  reason: string;
}

/** The repository as it is now, read without starting a process. */
export interface RepoState {
  /** The commit HEAD points at; null before the first commit. */
  head: string | null;
  /** The checked-out branch; null on a detached HEAD. */
  branch: string | null;
  /** The branch work merges into (origin's HEAD, else main, else master); null when none exists. */
  defaultBranch: string | null;
  /** Changes whenever HEAD, a branch or the index changes: a cache key for derived answers. */
  stamp: string;
}

/** How one file differs between a commit and HEAD (git's rename detection applied). */
export interface PathChange {
  status: 'renamed' | 'deleted' | 'modified';
  /** The path at the older commit. */
  path: string;
  /** The path at HEAD (renamed). */
  newPath?: string;
  /** The commit that deleted the file, when the history walk saw it (status `deleted`). */
  commit?: string;
}

/**
 * A git working tree, read-only. Every method answers null or an empty result, never an error, when git is
 * missing, the directory is not a repository, or a commit is unknown: code awareness then marks nothing.
 */
export interface CodeRepository {
  /** The current HEAD, branch and default branch; null outside a repository. Cheap (no process). */
  state(): Promise<RepoState | null>;
  /** Which of these top-level-relative paths are tracked files or folders of the working tree now. */
  existing(paths: readonly string[]): Promise<Set<string>>;
  /**
   * Files changed between `commit` and HEAD, keyed by their path at `commit`; null when unknown. `count`:
   * files whose line counts may be asked next (lineChanges); when nothing is cached yet they are counted
   * alongside, so a fresh process waits for one git round instead of two.
   */
  changesSince(commit: string, count?: readonly string[]): Promise<Map<string, PathChange> | null>;
  /** Lines added and deleted in each of these files between `commit` and HEAD (0 and 0 for binary files). */
  lineChanges(commit: string, paths: readonly string[]): Promise<Map<string, { added: number; deleted: number }>>;
  /** The first commit after `since` (up to HEAD) that removed `path`; null when none is found. */
  removedIn(path: string, since: string): Promise<string | null>;
  /**
   * Tracked files that contain each of these words as a whole word (at most `maxFiles` paths a word; a
   * word found in more files maps to an empty list: too common to anchor to).
   */
  filesContaining(words: readonly string[], maxFiles: number): Promise<Map<string, string[]>>;
  /** A working-tree file's text; null when missing or not a regular file. */
  readFile(path: string): Promise<string | null>;
  /** The commit a local branch points at; null when the branch does not exist. */
  branchTip(branch: string): Promise<string | null>;
  /** Whether `ancestor` is reachable from `descendant`. */
  isAncestor(ancestor: string, descendant: string): Promise<boolean>;
  /** The best common ancestor of two commits; null when none. */
  mergeBase(a: string, b: string): Promise<string | null>;
}
