/**
 * How many ranked candidates a filtered top-k search of the store fetches before its filter: k + max(64, k/2),
 * then four times as many while fewer than k pass. Shared by the quantised vector scan and the BM25 candidates.
 * int8 and BM25 rank close to the final order, so a margin of at least 64 usually suffices, and rescoring or
 * filtering more rows is most of a search's cost.
 */
export function firstFetch(k: number): number {
  return k + Math.max(64, Math.ceil(k / 2));
}

/** The fetch sizes of a widening search: `first`, then ×4 each time; the last is the first at or over `last`. */
export function* widening(first: number, last = Infinity): Generator<number> {
  for (let fetch = first; ; fetch *= 4) {
    yield fetch;
    if (fetch >= last) return;
  }
}
