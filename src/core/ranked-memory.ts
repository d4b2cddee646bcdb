// Recall reads its several hundred candidates in part (what ranking needs) and only the few it keeps in full.
import { CairnError } from '../interfaces/errors.js';
import type { Memory, SearchResult } from '../interfaces/memory.js';
import type { RankingFields, Store } from '../interfaces/store.js';

/**
 * A candidate of which only its RankingFields were read: score fusion, branch visibility, session context and
 * demotion need nothing more. Reading any other field throws, so a step that looks at text, kind or tags
 * before `readWhole` fails loudly instead of ranking by a missing value.
 *
 * Measured at 10k generated notes: reading the 540 candidates of a search whole took a third of a search with
 * a cached query vector (their text, tags and metadata copied and parsed), their ranking fields 0.9 ms.
 */
class RankedOnly implements Memory {
  readonly id: string;
  readonly namespace: string;
  readonly createdAt: string;
  readonly sessionId: string | undefined;
  declare readonly feedback?: Memory['feedback'];
  declare readonly code?: Memory['code'];

  constructor(f: RankingFields) {
    this.id = f.id;
    this.namespace = f.namespace;
    this.createdAt = f.createdAt;
    this.sessionId = f.sessionId;
    // Absent, as on a Memory, when unset.
    if (f.feedback) Object.defineProperty(this, 'feedback', { value: f.feedback, enumerable: true });
    if (f.code) Object.defineProperty(this, 'code', { value: f.code, enumerable: true });
  }

  private unread(field: string): never {
    throw new CairnError('INTERNAL', `recall read ${field} of candidate ${this.id} before reading it whole`);
  }

  get text(): string {
    return this.unread('text');
  }
  get kind(): Memory['kind'] {
    return this.unread('kind');
  }
  get importance(): number {
    return this.unread('importance');
  }
  get tags(): string[] {
    return this.unread('tags');
  }
  get taskId(): string | null {
    return this.unread('taskId');
  }
  get metadata(): Memory['metadata'] {
    return this.unread('metadata');
  }
  get route(): Memory['route'] {
    return this.unread('route');
  }
  get updatedAt(): string {
    return this.unread('updatedAt');
  }
  get expiresAt(): string | null {
    return this.unread('expiresAt');
  }
  get supersedes(): string | null {
    return this.unread('supersedes');
  }
  get supersededBy(): string | null {
    return this.unread('supersededBy');
  }
  get forgottenAt(): string | null {
    return this.unread('forgottenAt');
  }
  get forgetReason(): string | null {
    return this.unread('forgetReason');
  }
  get dedupeKey(): string {
    return this.unread('dedupeKey');
  }
  get likelyReplaces(): string[] | undefined {
    return this.unread('likelyReplaces');
  }
}

/** The candidates by id: their ranking fields when the store reads those, else whole. */
export async function readCandidates(store: Store, ids: string[]): Promise<Map<string, Memory>> {
  const read: Memory[] = store.getRankingFields ? (await store.getRankingFields(ids)).map((f) => new RankedOnly(f)) : await store.getMemories(ids);
  return new Map(read.map((m) => [m.id, m]));
}

/** The memory's `metadata.sessionId`, whether it was read whole or for ranking only. */
export function sessionIdOf(m: Memory): string | undefined {
  return m instanceof RankedOnly ? m.sessionId : m.metadata.sessionId;
}

/**
 * Makes the first `n` results whole (in place): the candidates among them read for ranking only are read in
 * full in one call. One that is gone meanwhile (removed by another process since its candidates were read)
 * leaves the results, and the next one moves up.
 */
export async function readWhole(store: Store, results: SearchResult[], n: number): Promise<SearchResult[]> {
  let out = results;
  for (;;) {
    const partial = out.slice(0, n).filter((r) => r.memory instanceof RankedOnly);
    if (partial.length === 0) return out;
    const whole = new Map((await store.getMemories(partial.map((r) => r.memory.id))).map((m) => [m.id, m]));
    const gone = new Set<SearchResult>();
    for (const r of partial) {
      const m = whole.get(r.memory.id);
      if (m) r.memory = m;
      else gone.add(r);
    }
    if (gone.size === 0) return out;
    out = out.filter((r) => !gone.has(r));
  }
}
