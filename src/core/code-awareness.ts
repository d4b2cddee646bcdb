import type { CodeAnchor, CodeRef, CodeRepository, RepoState, StaleMark } from '../interfaces/code.js';
import type { Memory, MemoryScope, RouteInfo, SearchResult } from '../interfaces/memory.js';
import type { Store } from '../interfaces/store.js';
import { anchorMany } from './anchors.js';
import { BranchResolver, visibleOnBranch } from './branches.js';
import { staleMarks } from './staleness.js';

/**
 * What the engine asks of the repository it runs in, in one place: anchoring writes, hiding other
 * branches' notes from recall and marking stale memories. It applies to the engine's default namespace
 * (the repository's, derived by the composition root) only: another namespace's paths are not this
 * repository's. Without a repository (git missing, not in a work tree) every answer is "nothing to do".
 */

/** Namespace setting: the scope of a note saved without one (`repository` unless set to `branch`). */
export const SCOPE_SETTING = 'scope';

export class CodeAwareness {
  private resolver: { stamp: string; resolver: BranchResolver } | null = null;

  constructor(
    private readonly repo: CodeRepository | null,
    private readonly namespace: string,
    private readonly store: Store,
  ) {}

  get repository(): CodeRepository | null {
    return this.repo;
  }

  applies(namespace: string): boolean {
    return this.repo !== null && namespace === this.namespace;
  }

  async state(): Promise<RepoState | null> {
    return this.repo ? this.repo.state().catch(() => null) : null;
  }

  /** The namespace's default scope for new notes. */
  async defaultScope(namespace: string): Promise<MemoryScope> {
    return (await this.store.getSetting(namespace, SCOPE_SETTING)) === 'branch' ? 'branch' : 'repository';
  }

  /** Code references for records about to be written (null where nothing applies). */
  async anchor(records: readonly { namespace: string; text: string; route: RouteInfo | null; anchors: CodeAnchor[]; scope: MemoryScope | null }[]): Promise<(CodeRef | null)[]> {
    const mine = records.map((r, i) => ({ r, i })).filter(({ r }) => this.applies(r.namespace));
    const out: (CodeRef | null)[] = records.map(() => null);
    if (mine.length === 0) return out;
    const state = await this.state();
    if (!state) return out;
    const fallback = await this.defaultScope(this.namespace);
    const refs = await anchorMany(
      this.repo as CodeRepository,
      state,
      mine.map(({ r }) => ({ text: r.text, route: r.route, anchors: r.anchors, scope: r.scope ?? fallback })),
    ).catch(() => mine.map(() => null));
    mine.forEach(({ i }, k) => {
      out[i] = refs[k] ?? null;
    });
    return out;
  }

  /** The branch resolver of the repository's current state (reused while HEAD, branches and index stay). */
  async branches(): Promise<BranchResolver | null> {
    const state = await this.state();
    if (!state || !this.repo) return null;
    if (this.resolver?.stamp !== state.stamp) this.resolver = { stamp: state.stamp, resolver: new BranchResolver(this.repo, state) };
    return this.resolver.resolver;
  }

  /** Drops branch-scoped memories not recalled here (another branch's, or any outside the repository). */
  async visible<T>(items: T[], memoryOf: (item: T) => Memory): Promise<T[]> {
    if (!items.some((x) => memoryOf(x).code?.branch)) return items;
    const first = memoryOf(items[0] as T);
    const resolver = this.applies(first.namespace) ? await this.branches() : null;
    const keep = await Promise.all(items.map((x) => visibleOnBranch(resolver, memoryOf(x))));
    return items.filter((_, i) => keep[i]);
  }

  /** Puts the stale marks on recalled results of the repository's namespace. */
  async mark(results: SearchResult[]): Promise<void> {
    if (!this.repo || !results.some((r) => r.memory.code && this.applies(r.memory.namespace))) return;
    const marks = await staleMarks(this.repo, results.filter((r) => this.applies(r.memory.namespace)).map((r) => r.memory)).catch(() => new Map());
    for (const r of results) {
      const m = marks.get(r.memory.id);
      if (m) r.stale = m;
    }
  }

  /** The `moved` marks of one memory now (empty when nothing moved or it is not this repository's). */
  async moves(memory: Memory): Promise<StaleMark[]> {
    if (!this.repo || !memory.code || !this.applies(memory.namespace)) return [];
    const marks = await staleMarks(this.repo, [memory]);
    return (marks.get(memory.id) ?? []).filter((m) => m.status === 'moved' && m.newPath);
  }

  /** The memory's code reference with moved anchors pointing at their new paths, at the current HEAD. */
  async repointed(memory: Memory, moved: readonly StaleMark[]): Promise<CodeRef> {
    const code = memory.code as CodeRef;
    const to = new Map(moved.map((m) => [m.path, m.newPath as string]));
    const state = await this.state();
    return { ...code, commit: state?.head ?? code.commit, anchors: code.anchors.map((a) => (to.has(a.path) ? { ...a, path: to.get(a.path) as string } : a)) };
  }
}
