/**
 * How many ranked candidates a filtered top-k search of the store fetches before its filter: k + max(64, k/2),
 * then four times as many while fewer than k pass (the BM25 candidates; the quantised vector scan starts from
 * vector-codes/scan-fetch.ts `scanFetch`). BM25 ranks in the final order, so the margin is for rows the filter leaves out, and filtering more
 * rows is a large part of a search's cost.
 */
export function firstFetch(k: number): number {
  return k + Math.max(64, Math.ceil(k / 2));
}
