/**
 * A byte-pair encoding's ranks as one compact table: every token's bytes sorted, with its rank, looked up by binary
 * search. Read from a file it is ready at once (a few typed-array views over the file), where the tokenizer
 * package's own ranks are a 1 MB JavaScript module to compile and a 100,000-entry map to build: about 100 ms of a
 * cold hook.
 *
 * File layout (little-endian): "CAIRNBPE", format version, token count N, data length, N ranks (u32), N + 1 byte
 * offsets (u32) into the data, then the tokens' bytes one after another in byte order.
 */

const MAGIC = 'CAIRNBPE';
const FORMAT = 1;
const HEADER = 20;

export interface BpeTable {
  readonly size: number;
  /** The rank of bytes[start, end), or -1 when they are not a token. */
  rankOf(bytes: Uint8Array, start: number, end: number): number;
}

/** Ranks as the tokenizer package gives them: index = rank, each a string (valid UTF-8) or its bytes. */
export type RankList = readonly (string | readonly number[] | undefined)[];

const compare = (a: Uint8Array, b: Uint8Array): number => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a.length - b.length;
};

/** The table file of a rank list: its tokens' bytes sorted. */
export function encodeBpeTable(ranks: RankList): Uint8Array {
  const utf8 = new TextEncoder();
  const entries: { bytes: Uint8Array; rank: number }[] = [];
  ranks.forEach((token, rank) => {
    if (token === undefined) return;
    entries.push({ bytes: typeof token === 'string' ? utf8.encode(token) : Uint8Array.from(token), rank });
  });
  entries.sort((a, b) => compare(a.bytes, b.bytes));
  const dataLength = entries.reduce((sum, e) => sum + e.bytes.length, 0);
  const out = new Uint8Array(HEADER + 4 * entries.length + 4 * (entries.length + 1) + dataLength);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode(MAGIC), 0);
  view.setUint32(8, FORMAT, true);
  view.setUint32(12, entries.length, true);
  view.setUint32(16, dataLength, true);
  const ranksAt = HEADER;
  const offsetsAt = ranksAt + 4 * entries.length;
  const dataAt = offsetsAt + 4 * (entries.length + 1);
  let offset = 0;
  entries.forEach((e, i) => {
    view.setUint32(ranksAt + 4 * i, e.rank, true);
    view.setUint32(offsetsAt + 4 * i, offset, true);
    out.set(e.bytes, dataAt + offset);
    offset += e.bytes.length;
  });
  view.setUint32(offsetsAt + 4 * entries.length, offset, true);
  return out;
}

/** The table in a file's bytes, or null when they are not a whole table of this format (then it is built again). */
export function decodeBpeTable(file: Uint8Array): BpeTable | null {
  if (file.length < HEADER || new TextDecoder().decode(file.subarray(0, 8)) !== MAGIC) return null;
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const n = view.getUint32(12, true);
  const dataLength = view.getUint32(16, true);
  if (view.getUint32(8, true) !== FORMAT || file.length !== HEADER + 8 * n + 4 + dataLength) return null;
  // Typed arrays need aligned offsets: a copy of the file when it does not start on a 4-byte boundary.
  const bytes = file.byteOffset % 4 === 0 ? file : file.slice();
  const ranks = new Uint32Array(bytes.buffer, bytes.byteOffset + HEADER, n);
  const offsets = new Uint32Array(bytes.buffer, bytes.byteOffset + HEADER + 4 * n, n + 1);
  const data = bytes.subarray(HEADER + 8 * n + 4);
  if (offsets[n] !== dataLength) return null;
  return {
    size: n,
    rankOf(key, start, end) {
      const length = end - start;
      let low = 0;
      let high = n - 1;
      while (low <= high) {
        const mid = (low + high) >>> 1;
        const from = offsets[mid] as number;
        const to = offsets[mid + 1] as number;
        const m = Math.min(to - from, length);
        let cmp = 0;
        for (let i = 0; i < m && cmp === 0; i++) cmp = (data[from + i] as number) - (key[start + i] as number);
        if (cmp === 0) cmp = to - from - length;
        if (cmp === 0) return ranks[mid] as number;
        if (cmp < 0) low = mid + 1;
        else high = mid - 1;
      }
      return -1;
    },
  };
}
