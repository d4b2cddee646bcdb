/**
 * How many ranked candidates a filtered top-k search of the store fetches before its filter: k + max(64, k/2),
 * then four times as many while fewer than k pass (the BM25 candidates; the quantised vector scan starts from
 * scanFetch). BM25 ranks in the final order, so the margin is for rows the filter leaves out, and filtering more
 * rows is a large part of a search's cost.
 */
export function firstFetch(k: number): number {
  return k + Math.max(64, Math.ceil(k / 2));
}

/**
 * How many int8 candidates the exact rescoring of a top-k vector search starts from: k + 64. int8 ranks so close
 * to the float order that a larger k needs no larger margin: on the latency bench's stores (engine k = 300, 200
 * queries at 100k and 300 at 10k) the exact best 300 sat within the int8 best 321 (100k) and 313 (10k), the exact
 * ten within 12. Rows failing the filter widen it as with firstFetch.
 */
export function scanFetch(k: number): number {
  return k + 64;
}

/** The fetch sizes of a widening search: `first`, then ×4 each time; the last is the first at or over `last`. */
export function* widening(first: number, last = Infinity): Generator<number> {
  for (let fetch = first; ; fetch *= 4) {
    yield fetch;
    if (fetch >= last) return;
  }
}
