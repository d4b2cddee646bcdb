import type { Usearch } from './usearch.js';

/** One row's change for a copy kept elsewhere: its new codes, or null when it left. */
export interface CodeChange {
  rowid: number;
  codes: Int8Array | null;
}

/** More pending changes than this and a copy is sent whole again (a rebuild's worth of patches costs more). */
const JOURNAL_LIMIT = 65_536;
let instances = 0;

/**
 * One namespace's vectors as int8 codes of one length (`quantize`), in one contiguous array for usearch's SIMD
 * exhaustive kernel, which ranks them by inner product: with every row's codes of the same length, that is the
 * cosine's order, at twice the speed of usearch's int8 cosine kernel (it adds up one product a dimension, not three).
 * Rows are keyed by the memory's rowid; removal moves the last row into the freed slot.
 *
 * Measured on this machine (load average 14, 100,000 vectors of 512 dimensions with about 200 noisy copies
 * of each of 512 real notes): int8 scan 6.5–9.6 ms, recall@10 of its 64 best against exact float search 1.0;
 * an HNSW graph (usearch, i8, connectivity 32, expansion 256) reached 0.89 at 256 candidates and 0.95 at 512.
 */
export class QuantizedVectors {
  private keys: Float64Array;
  private data: Int8Array;
  private count = 0;
  private readonly slots = new Map<number, number>();
  /** Changes since the journal was last taken (see startJournal); null when none is kept or too many came. */
  private journal: CodeChange[] | null = null;
  /** Tells this instance from a rebuilt one of the same namespace (a copy of the old one is of no use). */
  readonly instance = ++instances;

  constructor(
    readonly dimensions: number,
    capacity = 1024,
  ) {
    this.keys = new Float64Array(Math.max(1, capacity));
    this.data = new Int8Array(Math.max(1, capacity) * dimensions);
  }

  size(): number {
    return this.count;
  }

  has(rowid: number): boolean {
    return this.slots.has(rowid);
  }

  /** Adds or replaces the row's vector. */
  set(rowid: number, vector: Float32Array): void {
    const slot = this.slotOf(rowid);
    quantize(vector, this.data, slot * this.dimensions);
    this.record(rowid, slot);
  }

  /** Adds or replaces the row's codes as they are (a copy following another instance's changes). */
  setCodes(rowid: number, codes: Int8Array): void {
    const slot = this.slotOf(rowid);
    this.data.set(codes.subarray(0, this.dimensions), slot * this.dimensions);
    this.record(rowid, slot);
  }

  /** The row's slot, a new one at the end when it has none. */
  private slotOf(rowid: number): number {
    let slot = this.slots.get(rowid);
    if (slot === undefined) {
      if (this.count === this.keys.length) this.grow();
      slot = this.count++;
      this.slots.set(rowid, slot);
      this.keys[slot] = rowid;
    }
    return slot;
  }

  remove(rowid: number): void {
    const slot = this.slots.get(rowid);
    if (slot === undefined) return;
    this.record(rowid, null);
    const last = --this.count;
    if (slot !== last) {
      const moved = this.keys[last] as number;
      this.keys[slot] = moved;
      this.data.copyWithin(slot * this.dimensions, last * this.dimensions, (last + 1) * this.dimensions);
      this.slots.set(moved, slot);
    }
    this.slots.delete(rowid);
  }

  /**
   * From now on every change is kept for `takeJournal`, so a copy of these codes made now (toBuffer) can be
   * brought up to date by replaying them in order.
   */
  startJournal(): void {
    this.journal = [];
  }

  /** No journal is kept from now on (its copy is gone). */
  stopJournal(): void {
    this.journal = null;
  }

  /**
   * The changes since the journal was started or last taken, oldest first; null when there were too many to keep
   * (the copy must be made again) or no journal is kept.
   */
  takeJournal(): CodeChange[] | null {
    if (!this.journal) return null;
    const out = this.journal;
    this.journal = [];
    return out;
  }

  private record(rowid: number, slot: number | null): void {
    if (!this.journal) return;
    if (this.journal.length >= JOURNAL_LIMIT) {
      this.journal = null;
      return;
    }
    this.journal.push({ rowid, codes: slot === null ? null : this.data.slice(slot * this.dimensions, (slot + 1) * this.dimensions) });
  }

  /** The rows as they are held: rowids, and their codes `dimensions` apiece (views, valid until the next change). */
  rows(): { keys: Float64Array; data: Int8Array } {
    return { keys: this.keys.subarray(0, this.count), data: this.data.subarray(0, this.count * this.dimensions) };
  }

  /** One row's codes (a view, valid until the next change), or null when absent. */
  codes(rowid: number): Int8Array | null {
    const slot = this.slots.get(rowid);
    return slot === undefined ? null : this.data.subarray(slot * this.dimensions, (slot + 1) * this.dimensions);
  }

  /** Rowids of the `count` nearest rows by the codes' inner product (the int8 cosine's order), nearest first. */
  nearest(usearch: Usearch, query: Float32Array, count: number): number[] {
    const n = Math.min(count, this.count);
    if (n === 0) return [];
    const q = new Int8Array(this.dimensions);
    quantize(query, q, 0);
    const found = usearch.exactSearch(this.data.subarray(0, this.count * this.dimensions), q, this.dimensions, n, codesMetric(usearch), 1);
    return Array.from(found.keys as BigUint64Array, (position) => this.keys[Number(position)] as number);
  }

  /** The int8 cosine of a row's stored codes with `vector` (for the consistency check), or null when absent. */
  cosine(rowid: number, vector: Float32Array): number | null {
    const slot = this.slots.get(rowid);
    if (slot === undefined) return null;
    let dot = 0;
    let a = 0;
    let b = 0;
    for (let i = 0; i < this.dimensions; i++) {
      const x = this.data[slot * this.dimensions + i] as number;
      const y = vector[i] as number;
      dot += x * y;
      a += x * x;
      b += y * y;
    }
    return a > 0 && b > 0 ? dot / Math.sqrt(a * b) : 0;
  }

  /** rowids (float64 LE) then codes (int8), `size()` rows. */
  toBuffer(): Buffer {
    const keys = Buffer.from(this.keys.buffer, this.keys.byteOffset, this.count * 8);
    const codes = Buffer.from(this.data.buffer, this.data.byteOffset, this.count * this.dimensions);
    return Buffer.concat([keys, codes]);
  }

  static fromBuffer(dimensions: number, rows: number, body: Buffer): QuantizedVectors | null {
    if (body.length !== rows * (8 + dimensions)) return null;
    const out = new QuantizedVectors(dimensions, rows);
    const keys = new Float64Array(rows);
    Buffer.from(keys.buffer).set(body.subarray(0, rows * 8));
    out.keys = keys.length ? keys : out.keys;
    out.data.set(new Int8Array(body.buffer, body.byteOffset + rows * 8, rows * dimensions));
    out.count = rows;
    for (let i = 0; i < rows; i++) {
      const rowid = keys[i] as number;
      if (!Number.isSafeInteger(rowid) || out.slots.has(rowid)) return null;
      out.slots.set(rowid, i);
    }
    return out;
  }

  private grow(): void {
    const keys = new Float64Array(this.keys.length * 2);
    keys.set(this.keys);
    const data = new Int8Array(keys.length * this.dimensions);
    data.set(this.data);
    this.keys = keys;
    this.data = data;
  }
}

/**
 * The codes' root mean square: a vector is scaled to length CODE_RMS × √dimensions, so every row's codes have
 * (up to rounding) one length and their inner product orders rows as their cosine does. A code past ±127 is
 * clipped: at 40, a component more than 3.2 times the mean size. USE-lite's largest component was at most 0.107 of
 * its vector's length over 3,345 real texts (the coding-memory notes and LoCoMo's dev turns), 2.4 times the mean
 * size at 512 dimensions, so none is. Of each text's exact ten nearest among them (300 queries), the ten nearest by
 * the codes' inner product held 0.993, by the cosine of codes scaled to each vector's largest component (the form
 * before) 0.996; the twenty nearest held all ten with both. A search rescores at least twice what it keeps, exactly.
 */
export const CODE_RMS = 40;

/**
 * The cosine of a float vector and a row's codes: the row's rounding, and the clipping of a component beyond
 * ±127 (over 3 root mean squares, CODE_RMS), are the errors. Measured on 91,600 pairs of the latency bench's real
 * 512-dimension vectors: mean 0.0002 from the exact cosine, largest 0.0014. Vectors of few dimensions, or with
 * components far larger than the rest, err more (0.03–0.06 at worst for 32-dimension Gaussian test vectors).
 */
export function codesCosine(vector: Float32Array, codes: Int8Array): number {
  let dot = 0;
  let vv = 0;
  let cc = 0;
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i] as number;
    const c = codes[i] as number;
    dot += x * c;
    vv += x * x;
    cc += c * c;
  }
  return vv > 0 && cc > 0 ? dot / Math.sqrt(vv * cc) : 0;
}

/** How the codes are compared by usearch: inner product (see CODE_RMS). */
export function codesMetric(usearch: Usearch): Usearch['MetricKind']['IP'] {
  return usearch.MetricKind.IP;
}

/**
 * The codes of `vector` into `out` from `offset`. Each is rounded half up after clipping, as floor(x + 0.5) written
 * (x + 128.5 | 0) − 128 (x + 128.5 is positive, so truncation floors it): the same codes as Math.round but within a
 * few ulps of a half, and 1.4 against 6.1 µs a 512-dimension vector (a throwaway micro-benchmark; loading a
 * PostgreSQL search copy of 100k memories spent 0.7 s here).
 */
export function quantize(vector: Float32Array, out: Int8Array, offset: number): void {
  const dims = vector.length;
  let squares = 0;
  for (let i = 0; i < dims; i++) {
    const x = vector[i] as number;
    squares += x * x;
  }
  const scale = squares > 0 ? (CODE_RMS * Math.sqrt(dims)) / Math.sqrt(squares) : 0;
  for (let i = 0; i < dims; i++) {
    let x = (vector[i] as number) * scale;
    x = x > 127 ? 127 : x < -127 ? -127 : x;
    out[offset + i] = ((x + 128.5) | 0) - 128;
  }
}
