import type { CodeRef, CodeRepository, RepoState } from '../interfaces/code.js';
import type { Memory } from '../interfaces/memory.js';
import type { Store } from '../interfaces/store.js';
import { canonicalJson } from './checksum.js';
import { emit } from './events.js';

/**
 * Two tiers of a repository's memory. The repository tier is shared by every worktree and branch; a note
 * scoped to a branch is recalled only on that branch until the branch is merged into the default branch,
 * then it belongs to the repository tier (recalled everywhere at once; `reconcileBranches` records the
 * promotion as an event). A branch deleted without being merged takes its notes out of recall at once;
 * they are forgotten (reversibly) BRANCH_GRACE_DAYS after cairn first saw the branch gone, so a branch
 * deleted by mistake and pushed again keeps them.
 *
 * Merged means: the branch's work is reachable from the default branch. A branch is recognised as merged
 * when its tip (or, once it is deleted, the commit the note was written at) is an ancestor of the default
 * branch's tip and differs from the merge base recorded with the note (a branch with no commit of its own
 * is not "merged" just because its tip is on the default branch). A squash or rebase merge writes new
 * commits, so it is not recognised: such notes are dropped after the grace period like an unmerged
 * branch's (documented in the README).
 */

export const BRANCH_GRACE_DAYS = 14;

export type BranchStatus = 'current' | 'merged' | 'open' | 'deleted';

/** Answers branch questions for one repository state, each branch once. */
export class BranchResolver {
  private readonly cache = new Map<string, Promise<BranchStatus>>();

  constructor(
    private readonly repo: CodeRepository,
    private readonly state: RepoState,
  ) {}

  status(code: CodeRef): Promise<BranchStatus> {
    const branch = code.branch as string;
    if (branch === this.state.branch) return Promise.resolve('current');
    const key = `${branch}\u0000${code.base ?? ''}\u0000${code.commit ?? ''}`;
    let answer = this.cache.get(key);
    if (!answer) {
      answer = this.resolve(code).catch(() => 'open' as const);
      this.cache.set(key, answer);
    }
    return answer;
  }

  private async resolve(code: CodeRef): Promise<BranchStatus> {
    const branch = code.branch as string;
    const tip = await this.repo.branchTip(branch);
    const defTip = this.state.defaultBranch ? await this.repo.branchTip(this.state.defaultBranch) : null;
    const work = tip ?? code.commit;
    if (defTip && work && work !== code.base && (await this.repo.isAncestor(work, defTip))) return 'merged';
    return tip ? 'open' : 'deleted';
  }
}

/** Whether a branch-scoped memory is recalled now: on its branch, or once its branch has merged. */
export async function visibleOnBranch(resolver: BranchResolver | null, memory: Memory): Promise<boolean> {
  if (!memory.code?.branch) return true;
  if (!resolver) return false;
  const status = await resolver.status(memory.code);
  return status === 'current' || status === 'merged';
}

/** The memory moved to the repository tier: its branch and merge base dropped, anchors and commit kept. */
export function promoted(memory: Memory, now: string): Memory {
  const { branch: _branch, base: _base, ...code } = memory.code as CodeRef;
  return { ...memory, code, updatedAt: now };
}

/** Namespace setting: when cairn first saw each branch of branch-scoped notes gone (branch → ISO time). */
export const MISSING_BRANCHES_SETTING = 'branches.missing';

export interface BranchReport {
  /** Notes moved to the repository tier because their branch merged. */
  promoted: string[];
  /** Notes forgotten because their branch was deleted unmerged more than the grace period ago. */
  dropped: string[];
  /** Branches gone unmerged, with when cairn first saw them gone and how many live notes they hold. */
  waiting: { branch: string; since: string; notes: number }[];
  /** Branches with open notes: branch → live notes. */
  open: Record<string, number>;
}

/**
 * Settles branch-scoped notes of a namespace against the repository: a merged branch's notes join the
 * repository tier (`memory.updated` without branch); a branch gone unmerged is remembered with the time it
 * was first seen gone (`settings.changed`), and its notes are forgotten (`memory.forgotten`, reversible)
 * once BRANCH_GRACE_DAYS have passed since. Idempotent; every change is an event in one transaction.
 * Branch status is resolved before the transaction; inside, each memory and the missing-branch setting are re-
 * read, since the changes are built from them.
 */
export async function reconcileBranches(store: Store, resolver: BranchResolver, namespace: string, now: string, graceDays = BRANCH_GRACE_DAYS): Promise<BranchReport> {
  const scoped: Memory[] = [];
  for await (const page of store.iterateMemories(namespace, 500)) {
    for (const m of page) if (m.code?.branch && m.forgottenAt === null && m.supersededBy === null) scoped.push(m);
  }
  const status = new Map<string, BranchStatus>();
  for (const m of scoped) status.set(m.id, await resolver.status(m.code as CodeRef));
  return store.transaction(async (tx) => {
    const settings = await tx.settingsOf(namespace);
    const before = (settings.find((s) => s.key === MISSING_BRANCHES_SETTING)?.value ?? {}) as Record<string, string>;
    const missing: Record<string, string> = {};
    const report: BranchReport = { promoted: [], dropped: [], waiting: [], open: {} };
    const graceMs = graceDays * 86_400_000;
    for (const m of scoped) {
      const fresh = await tx.getMemory(m.id);
      if (!fresh?.code?.branch || fresh.forgottenAt !== null || fresh.supersededBy !== null) continue;
      const branch = fresh.code.branch;
      const s = status.get(m.id);
      if (s === 'merged') {
        await emit(tx, namespace, { type: 'memory.updated', memory: promoted(fresh, now) }, now);
        report.promoted.push(fresh.id);
      } else if (s === 'deleted') {
        const since = before[branch] ?? missing[branch] ?? now;
        missing[branch] = since;
        if (Date.parse(now) - Date.parse(since) >= graceMs) {
          const reason = `branch ${branch} was deleted without being merged (${graceDays} days ago or more)`;
          await emit(tx, namespace, { type: 'memory.forgotten', memory: { ...fresh, forgottenAt: now, forgetReason: reason, updatedAt: now } }, now);
          report.dropped.push(fresh.id);
        }
      } else {
        report.open[branch] = (report.open[branch] ?? 0) + 1;
      }
    }
    for (const m of scoped) {
      const branch = m.code?.branch as string;
      if (missing[branch] && status.get(m.id) === 'deleted' && !report.dropped.includes(m.id)) {
        const w = report.waiting.find((x) => x.branch === branch);
        if (w) w.notes++;
        else report.waiting.push({ branch, since: missing[branch] as string, notes: 1 });
      }
    }
    // Branches whose notes are all settled are no longer tracked.
    for (const [branch] of Object.entries(missing)) if (!report.waiting.some((w) => w.branch === branch)) delete missing[branch];
    if (canonicalJson(missing) !== canonicalJson(before)) await emit(tx, namespace, { type: 'settings.changed', key: MISSING_BRANCHES_SETTING, value: missing }, now);
    return report;
  });
}
