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

/** Canonical JSON written beforehand: `canonicalJson` copies it verbatim (lets a caller serialise a part once and reuse it). */
export class CanonicalText {
  constructor(readonly json: string) {}
}

const quotedKeys = new Map<string, string>();

function quotedKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (quotedKeys.size < 10_000) quotedKeys.set(k, q);
  }
  return q;
}

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    return s === undefined ? 'null' : s;
  }
  if (value instanceof CanonicalText) return value.json;
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      const v: unknown = value[i];
      out += v === undefined ? 'null' : canonicalJson(v);
    }
    return `${out}]`;
  }
  return `{${sortedMembers(value as Record<string, unknown>).members.join(',')}}`;
}

function sortedMembers(obj: Record<string, unknown>): { keys: string[]; members: string[] } {
  const keys: string[] = [];
  const members: string[] = [];
  for (const k of Object.keys(obj).sort()) {
    const v = obj[k];
    if (v === undefined) continue;
    keys.push(k);
    members.push(`${quotedKey(k)}:${canonicalJson(v)}`);
  }
  return { keys, members };
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
  return memoryJson(memory, vectorHashHex).line;
}

/**
 * One memory serialised once, two ways: its state line (the memory's members with `vectorHash` among them)
 * and the snapshot's entry `{"memory":{…},"vectorHash":…}`, both canonical JSON.
 */
export function memoryJson(memory: Memory, vectorHashHex: string | null): { line: string; entry: string } {
  const { vectorHash: _own, ...fields } = memory as Memory & { vectorHash?: unknown };
  const { keys, members } = sortedMembers(fields);
  const hash = `"vectorHash":${JSON.stringify(vectorHashHex)}`;
  // In the line, "vectorHash" takes its place in key order among the memory's members.
  let at = 0;
  while (at < keys.length && (keys[at] as string) < 'vectorHash') at++;
  const line = `{${[...members.slice(0, at), hash, ...members.slice(at)].join(',')}}`;
  return { line, entry: `{"memory":{${members.join(',')}},${hash}}` };
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
    this.memoryLine(memoryLine(memory, vectorHashHex));
  }

  /** A memory by its state line (`memoryJson(…).line`), for a caller that serialised it already. */
  memoryLine(line: string): void {
    this.line(`mem ${line}`);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}
