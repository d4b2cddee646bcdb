/**
 * How many int8 candidates the exact rescoring of a top-k vector search starts from: k + 64. int8 ranks so close
 * to the float order that a larger k needs no larger margin: on the latency bench's stores (engine k = 300, 200
 * queries at 100k and 300 at 10k) the exact best 300 sat within the int8 best 321 (100k) and 313 (10k), the exact
 * ten within 12. Rows failing the filter widen it (`widening`). The embedded store's scan and the PostgreSQL search
 * copies' vector proposals both start from it.
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
