/** Statement parameters and vector text of the PostgreSQL store; the row mapping is shared (sql/sql-rows.ts). */
import { endianness } from 'node:os';
import { CairnError } from '../../interfaces/errors.js';

/**
 * A statement's rows as arrays (node-postgres `rowMode: 'array'`), each column's position by its name: no object
 * is built a row (the fused statement's ~500 rows at 100k: a round trip 10.4 against 9.8 ms, p50 of 34 replayed).
 */
export interface ArrayRows {
  rows: unknown[][];
  columns: ReadonlyMap<string, number>;
}

export function arrayRowsOf(result: { rows: unknown[][]; fields: readonly { name: string }[] }): ArrayRows {
  return { rows: result.rows, columns: new Map(result.fields.map((f, i) => [f.name, i])) };
}

/** Positional parameters for one statement: `p.add(value)` returns its placeholder (`$1`, `$2`, …). */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * Whole numbers as the text of a PostgreSQL array (`{1,2,3}`, cast in the statement): a proposal sends several
 * thousand, which node-postgres's own array serialisation handles one element at a time (about 0.1 µs each).
 */
export function intArrayParam(values: readonly number[]): string {
  for (const v of values) if (!Number.isSafeInteger(v)) throw new CairnError('INTERNAL', `a whole-number array parameter holds ${v}`);
  return `{${values.join(',')}}`;
}

/**
 * A vector as the text both `vector` and `real[]` accept after a cast. A float32 printed as a double reads
 * back as the same float32, so the stored vector (and its content hash) is exactly the one given.
 */
export function vectorLiteral(v: Float32Array, storage: 'pgvector' | 'array'): string {
  const body = Array.from(v, (x) => String(x)).join(',');
  return storage === 'pgvector' ? `[${body}]` : `{${body}}`;
}

const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * A query vector as a statement parameter: with pgvector, its binary form (`vector_recv`: int16 dimensions, int16
 * unused, big-endian float4s), which node-postgres sends as a binary parameter — neither side prints or parses 512
 * numbers (about 0.3 ms of a cached search's client time printing them at 100k, a CPU profile); as `real[]` text
 * otherwise (vectorLiteral).
 */
export function vectorParam(v: Float32Array, storage: 'pgvector' | 'array'): string | Buffer {
  if (storage === 'array') return vectorLiteral(v, storage);
  const out = Buffer.alloc(4 + v.length * 4);
  out.writeInt16BE(v.length, 0);
  out.writeInt16BE(0, 2);
  if (LITTLE_ENDIAN) {
    Buffer.from(v.buffer, v.byteOffset, v.length * 4).copy(out, 4);
    out.subarray(4).swap32();
  } else {
    for (let i = 0; i < v.length; i++) out.writeFloatBE(v[i] as number, 4 + i * 4);
  }
  return out;
}

/**
 * A vector from pgvector's binary form (`vector_send`): int16 dimensions, int16 unused, then big-endian float4s.
 * On a little-endian machine the floats are copied whole and their bytes swapped in place (Buffer.swap32): 2.1 µs
 * a 512-dimension vector against 6.1 read one by one (a throwaway micro-benchmark), which was a tenth of the CPU of
 * loading a search copy.
 */
export function vectorFromSend(bytes: Buffer): Float32Array {
  const dims = bytes.readInt16BE(0);
  const out = new Float32Array(dims);
  if (LITTLE_ENDIAN) {
    const raw = Buffer.from(out.buffer, out.byteOffset, dims * 4);
    bytes.copy(raw, 0, 4, 4 + dims * 4);
    raw.swap32();
    return out;
  }
  for (let i = 0; i < dims; i++) out[i] = bytes.readFloatBE(4 + i * 4);
  return out;
}

/** Parses the text of a `vector` (`[…]`) or a `real[]` (`{…}`); PostgreSQL prints float4 shortest-exact. */
export function parseVector(text: string): Float32Array {
  const inner = text.slice(1, -1);
  if (inner === '') return new Float32Array(0);
  return Float32Array.from(inner.split(','), Number);
}
