import type { CodeRef, CodeRepository, RepoState } from '../interfaces/code.js';
import type { Memory } from '../interfaces/memory.js';

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
