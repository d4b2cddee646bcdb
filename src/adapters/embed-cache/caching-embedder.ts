import type { Embedder } from '../../interfaces/embedder.js';

/**
 * Wraps an embedder with an in-memory LRU cache keyed by text: a repeated text (a recurring query, a
 * re-saved note) costs no model call. Same id and dimensions as the wrapped embedder, so vectors are
 * interchangeable with it.
 */
export class CachingEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly cache = new Map<string, Float32Array>();

  constructor(
    private readonly inner: Embedder,
    private readonly maxEntries = 10_000,
  ) {
    this.id = inner.id;
    this.dimensions = inner.dimensions;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((t) => !this.cache.has(t)))];
    if (missing.length) {
      const vectors = await this.inner.embed(missing);
      missing.forEach((t, i) => this.remember(t, vectors[i] as Float32Array));
    }
    return texts.map((t) => {
      const v = this.cache.get(t) as Float32Array;
      this.cache.delete(t); // refresh its place in the LRU order
      this.cache.set(t, v);
      return v;
    });
  }

  private remember(text: string, vector: Float32Array): void {
    this.cache.set(text, vector);
    while (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value as string;
      this.cache.delete(oldest);
    }
  }

  get size(): number {
    return this.cache.size;
  }

  loadTimeMs(): number | null {
    return this.inner.loadTimeMs();
  }
}

export function createCachingEmbedder(inner: Embedder, maxEntries?: number): CachingEmbedder {
  return new CachingEmbedder(inner, maxEntries);
}
