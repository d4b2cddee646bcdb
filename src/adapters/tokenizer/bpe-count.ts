import type { BpeTable } from './bpe-table.js';

/** Pieces counted at most once each per process (a piece's count never changes): short words repeat. */
const PIECE_CACHE_MAX = 20_000;

/**
 * Counts a text's tokens the way the tokenizer package does (gpt-tokenizer's countTokens, cl100k_base): the text cut
 * into pieces by the encoding's expression, a piece that is a token counts one, any other is merged pair by pair,
 * lowest rank first and leftmost among equals, and counts the parts left. Special tokens ("<|endoftext|>") are
 * ordinary text here: a memory that holds one is counted, never refused.
 */
export function createBpeCount(table: BpeTable, split: RegExp): (text: string) => number {
  const utf8 = new TextEncoder();
  let buffer = new Uint8Array(256);
  const cache = new Map<string, number>();

  const merged = (bytes: Uint8Array, length: number): number => {
    if (length <= 1) return length;
    const starts: number[] = [];
    const ranks: number[] = [];
    const rankAt = (i: number): number => {
      const end = starts[i + 2];
      if (end === undefined) return Infinity;
      const rank = table.rankOf(bytes, starts[i] as number, end);
      return rank < 0 ? Infinity : rank;
    };
    for (let i = 0; i <= length; i++) starts.push(i);
    for (let i = 0; i <= length; i++) ranks.push(i < length - 1 ? rankAt(i) : Infinity);
    while (starts.length > 1) {
      let lowest = Infinity;
      let at = -1;
      for (let i = 0; i < ranks.length - 1; i++) {
        if ((ranks[i] as number) < lowest) {
          lowest = ranks[i] as number;
          at = i;
        }
      }
      if (at < 0) break;
      starts.splice(at + 1, 1);
      ranks.splice(at, 1);
      ranks[at] = rankAt(at);
      if (at > 0) ranks[at - 1] = rankAt(at - 1);
    }
    return starts.length - 1;
  };

  const piece = (text: string): number => {
    const known = cache.get(text);
    if (known !== undefined) return known;
    if (buffer.length < 3 * text.length) buffer = new Uint8Array(3 * text.length);
    const { written } = utf8.encodeInto(text, buffer);
    // A lone surrogate is encoded as U+FFFD. The package looks a piece up as a string, which never matches one, and
    // merges its bytes; the nine tokens holding U+FFFD merge back to themselves, so the count is the same.
    const whole = table.rankOf(buffer, 0, written);
    const count = whole >= 0 ? 1 : merged(buffer, written);
    if (cache.size >= PIECE_CACHE_MAX) cache.clear();
    cache.set(text, count);
    return count;
  };

  return (text) => {
    let count = 0;
    for (const [match] of text.matchAll(split)) count += piece(match);
    return count;
  };
}
