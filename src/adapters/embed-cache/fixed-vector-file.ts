import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EmbedOptions, Embedder, Logger } from '../../interfaces/embedder.js';

/**
 * Keeps the vectors of fixed batches (`embed(texts, { fixed: true })`: text the product ships, such as the
 * relevance floor's background sentences) in a folder, one file a batch, so that a short command does not
 * embed them again in every process: with the local model, 64 sentences cost about half a second of a
 * `cairn search`. Any other batch goes straight to the wrapped embedder.
 *
 * A file is named after the embedder's id, its dimensions and the batch's texts (SHA-256), so a changed text
 * or another model never reads it. It holds the vectors as little-endian float32, then the SHA-256 of those
 * bytes: a file of the wrong size or checksum (cut short, edited) is not used, and the batch is embedded
 * again and written anew. Writes go to a temporary file renamed into place, so a reader never sees half a
 * file; a folder that cannot be written (read-only home) only costs the embedding again next time.
 */
export class FixedVectorFile implements Embedder {
  readonly id: string;
  readonly dimensions: number;

  constructor(
    private readonly inner: Embedder,
    private readonly dir: string,
    private readonly log?: Logger,
  ) {
    this.id = inner.id;
    this.dimensions = inner.dimensions;
  }

  async embed(texts: string[], options?: EmbedOptions): Promise<Float32Array[]> {
    if (!options?.fixed || texts.length === 0) return this.inner.embed(texts, options);
    const file = join(this.dir, `${this.key(texts)}.f32`);
    const kept = this.read(file, texts.length);
    if (kept) return kept;
    const vectors = await this.inner.embed(texts, options);
    this.write(file, vectors);
    return vectors;
  }

  loadTimeMs(): number | null {
    return this.inner.loadTimeMs();
  }

  /** The file's name: what decides the vectors (model, dimensions, texts), hashed. */
  private key(texts: string[]): string {
    const hash = createHash('sha256').update(`${this.id}\u0000${this.dimensions}\u0000`);
    for (const t of texts) hash.update(`${Buffer.byteLength(t)}:${t}`);
    return hash.digest('hex').slice(0, 40);
  }

  private read(file: string, count: number): Float32Array[] | null {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch {
      return null; // not written yet
    }
    const payload = count * this.dimensions * 4;
    if (bytes.length !== payload + 32 || !createHash('sha256').update(bytes.subarray(0, payload)).digest().equals(bytes.subarray(payload))) {
      this.log?.debug(`fixed vectors ${file} do not match their checksum or size; embedding again`);
      return null;
    }
    return Array.from({ length: count }, (_, i) => {
      const v = new Float32Array(this.dimensions);
      const row = bytes.subarray(i * this.dimensions * 4, (i + 1) * this.dimensions * 4);
      for (let d = 0; d < this.dimensions; d++) v[d] = row.readFloatLE(d * 4);
      return v;
    });
  }

  private write(file: string, vectors: Float32Array[]): void {
    if (vectors.some((v) => v.length !== this.dimensions)) return; // the caller reports the embedder's fault
    const payload = Buffer.alloc(vectors.length * this.dimensions * 4);
    vectors.forEach((v, i) => v.forEach((x, d) => payload.writeFloatLE(x, (i * this.dimensions + d) * 4)));
    const temp = `${file}.${process.pid}.tmp`;
    try {
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(temp, Buffer.concat([payload, createHash('sha256').update(payload).digest()]));
      renameSync(temp, file);
    } catch (err) {
      try {
        rmSync(temp, { force: true });
      } catch {
        // nothing was written (the folder could not be made)
      }
      this.log?.debug(`fixed vectors not kept in ${this.dir}: ${(err as Error).message}`);
    }
  }
}

/** Wraps `inner` so that its fixed batches are kept in `dir` between processes. */
export function keepFixedVectors(inner: Embedder, dir: string, log?: Logger): Embedder {
  return new FixedVectorFile(inner, dir, log);
}
