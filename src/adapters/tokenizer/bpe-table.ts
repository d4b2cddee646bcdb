import { createHash } from 'node:crypto';

/**
 * A byte-pair encoding's ranks as one compact table: every token's bytes sorted, with its rank, looked up by binary
 * search. Read from a file it is ready at once (a few typed-array views over the file), where the tokenizer
 * package's own ranks are a 1 MB JavaScript module to compile and a 100,000-entry map to build: about 100 ms of a
 * cold hook.
 *
 * File layout (little-endian): "CAIRNBPE", format version, token count N, data length, N ranks (u32), N + 1 byte
 * offsets (u32) into the data, the tokens' bytes one after another in byte order, then the SHA-256 of all before it.
 */

const MAGIC = 'CAIRNBPE';
/** The layout's version: part of the file's name (tableFileName), so two layouts never replace each other's file. */
export const BPE_TABLE_FORMAT = 2;
const HEADER = 20;
const DIGEST = 32;

export interface BpeTable {
  /** The rank of bytes[start, end), or -1 when they are not a token. */
  rankOf(bytes: Uint8Array, start: number, end: number): number;
}

/** Ranks as the tokenizer package gives them: index = rank, each a string (valid UTF-8) or its bytes. */
export type RankList = readonly (string | readonly number[] | undefined)[];

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Whether bytes are valid UTF-8. */
function isUtf8(bytes: Uint8Array): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * The table file of a rank list: its tokens' bytes sorted. A token the package gives as bytes that are valid UTF-8
 * (eight cl100k tokens starting with U+FEFF) is left out: the package looks valid UTF-8 up among its string tokens
 * only, so it never produces them, and counts must be its own.
 */
export function encodeBpeTable(ranks: RankList): Uint8Array {
  // Each token as a string of one character a byte (latin1): such strings sort as their bytes do, natively.
  const entries: { key: string; rank: number }[] = [];
  ranks.forEach((token, rank) => {
    if (token === undefined) return;
    const bytes = typeof token === 'string' ? Buffer.from(token, 'utf8') : Buffer.from(token);
    if (typeof token !== 'string' && isUtf8(bytes)) return;
    entries.push({ key: bytes.toString('latin1'), rank });
  });
  entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const dataLength = entries.reduce((sum, e) => sum + e.key.length, 0);
  const out = Buffer.alloc(HEADER + 4 * entries.length + 4 * (entries.length + 1) + dataLength + DIGEST);
  out.write(MAGIC, 0, 'latin1');
  out.writeUInt32LE(BPE_TABLE_FORMAT, 8);
  out.writeUInt32LE(entries.length, 12);
  out.writeUInt32LE(dataLength, 16);
  const ranksAt = HEADER;
  const offsetsAt = ranksAt + 4 * entries.length;
  const dataAt = offsetsAt + 4 * (entries.length + 1);
  let offset = 0;
  entries.forEach((e, i) => {
    out.writeUInt32LE(e.rank, ranksAt + 4 * i);
    out.writeUInt32LE(offset, offsetsAt + 4 * i);
    out.write(e.key, dataAt + offset, 'latin1');
    offset += e.key.length;
  });
  out.writeUInt32LE(offset, offsetsAt + 4 * entries.length);
  createHash('sha256').update(out.subarray(0, out.length - DIGEST)).digest().copy(out, out.length - DIGEST);
  return out;
}

/** The table in a file's bytes, or null when they are not a whole, intact table of this format (then it is built again). */
export function decodeBpeTable(file: Uint8Array): BpeTable | null {
  if (file.length < HEADER + DIGEST || Buffer.from(file.buffer, file.byteOffset, 8).toString('latin1') !== MAGIC) return null;
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const n = view.getUint32(12, true);
  const dataLength = view.getUint32(16, true);
  if (view.getUint32(8, true) !== BPE_TABLE_FORMAT || file.length !== HEADER + 8 * n + 4 + dataLength + DIGEST) return null;
  const digest = createHash('sha256').update(file.subarray(0, file.length - DIGEST)).digest();
  if (!digest.equals(file.subarray(file.length - DIGEST))) return null;
  // Typed arrays need aligned offsets: a copy of the file when it does not start on a 4-byte boundary.
  const bytes = file.byteOffset % 4 === 0 ? file : new Uint8Array(file);
  const ranks = new Uint32Array(bytes.buffer, bytes.byteOffset + HEADER, n);
  const offsets = new Uint32Array(bytes.buffer, bytes.byteOffset + HEADER + 4 * n, n + 1);
  const data = bytes.subarray(HEADER + 8 * n + 4, HEADER + 8 * n + 4 + dataLength);
  return {
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
