/*
 * Usage statistics for the brain page: how often search returned each memory, and memories per day. Outside
 * the event log and the checksum; a memory's count is erased with it.
 */

export interface RecallStats {
  /** Live memories of the namespace. */
  live: number;
  /** Live memories that no search has returned yet. */
  neverRecalled: number;
  /** The most recalled live memories, most recalled first (then most recently recalled). */
  top: { id: string; text: string; kind: string; count: number; lastAt: string }[];
  /** How many live memories were recalled n times, bucketed: 0, 1, 2–4, 5–9, 10+ (always these five, in order). */
  histogram: { bucket: string; memories: number }[];
}

export interface UsageStats {
  /**
   * Adds one recall to each of these memories of the namespace (ids of memories that no longer exist are
   * ignored). Best effort: a read-only store records nothing and does not fail. A store may write them a little
   * later, in batches (the embedded store: within a second, and before recallStats or close).
   */
  recordRecalls(namespace: string, ids: string[], at: string): Promise<void>;
  /** The namespace's recall statistics over its live memories at `now`, with the `top` most recalled. */
  recallStats(namespace: string, now: string, top: number): Promise<RecallStats>;
  /** Memories created per UTC day (`YYYY-MM-DD`, the first ten characters of createdAt) in a namespace, live or not, oldest day first. */
  createdPerDay(namespace: string): Promise<{ day: string; count: number }[]>;
}
