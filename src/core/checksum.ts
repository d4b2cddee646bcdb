import { createHash, type Hash } from 'node:crypto';
import { endianness } from 'node:os';
import type { Memory } from '../interfaces/memory.js';

/**
 * Canonical serialisation and checksums of the projected state.
 *
 * Canonical JSON: objects with keys sorted by UTF-16 code unit order, no whitespace, arrays in order,
 * strings and numbers as JSON.stringify writes them, `undefined` members omitted. Two states are
 * byte-identical exactly when their canonical JSON is.
 *
 * The state checksum is SHA-256 over, in order: the line `cairn-state/1`, the canonical JSON of the store's
 * embedder record (or `null`), then per namespace in code-unit order a line `ns <canonical JSON name>`,
 * one line per setting (sorted by key) and one line per memory (sorted by id) holding the canonical JSON of
 * every Memory field plus `vectorHash`: the SHA-256 of the memory's vector as little-endian float32 bytes
 * (null when it has none). Hashing vectors by content lets a replay prove equality without re-running the
 * embedding model, since the embedder id is part of the state.
 */

export const STATE_FORMAT = 'cairn-state/1';

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    return s === undefined ? 'null' : s;
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** SHA-256 of a vector's little-endian float32 bytes, hex. */
export function vectorHash(vector: Float32Array): string {
  return createHash('sha256').update(vectorBytes(vector)).digest('hex');
}

const LITTLE_ENDIAN = endianness() === 'LE';

export function vectorBytes(vector: Float32Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
  const buf = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) buf.writeFloatLE(vector[i] as number, i * 4);
  return buf;
}

/** A vector from little-endian float32 bytes (a copy: the result never aliases the input). */
export function vectorFromBytes(bytes: Uint8Array): Float32Array {
  if (LITTLE_ENDIAN) return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(buf.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

/** The canonical line of one memory in the state. */
export function memoryLine(memory: Memory, vectorHashHex: string | null): string {
  return canonicalJson({ ...memory, vectorHash: vectorHashHex });
}

/** Incremental builder of the state checksum; feed namespaces in order, their contents sorted. */
export class StateHasher {
  private readonly hash: Hash = createHash('sha256');

  constructor(embedder: unknown) {
    this.line(STATE_FORMAT);
    this.line(canonicalJson(embedder ?? null));
  }

  private line(s: string): void {
    this.hash.update(s).update('\n');
  }

  namespace(name: string): void {
    this.line(`ns ${JSON.stringify(name)}`);
  }

  setting(key: string, value: unknown): void {
    this.line(`set ${canonicalJson({ key, value })}`);
  }

  memory(memory: Memory, vectorHashHex: string | null): void {
    this.line(`mem ${memoryLine(memory, vectorHashHex)}`);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}
