import type { Embedder } from '../../interfaces/embedder.js';

/**
 * Wraps an embedder with an in-memory LRU cache keyed by text: a repeated text (a recurring query, a
 * re-saved note) costs no model call, and neither does a text asked for while the call computing it is
 * still running (concurrent requests with the same query share that call, its vector or its error). Same id
 * and dimensions as the wrapped embedder, so vectors are interchangeable with it.
 */
export class CachingEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly cache = new Map<string, Float32Array>();
  /** Texts whose model call is running, and that call's vectors in the order of its texts. */
  private readonly running = new Map<string, { call: Promise<Float32Array[]>; index: number }>();

  constructor(
    private readonly inner: Embedder,
    private readonly maxEntries = 10_000,
  ) {
    this.id = inner.id;
    this.dimensions = inner.dimensions;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((t) => !this.cache.has(t) && !this.running.has(t)))];
    if (missing.length) {
      const call = this.inner.embed(missing);
      missing.forEach((t, index) => this.running.set(t, { call, index }));
      call.then(
        (vectors) => missing.forEach((t, i) => (this.running.delete(t), this.remember(t, vectors[i] as Float32Array))),
        () => missing.forEach((t) => this.running.delete(t)),
      );
    }
    // This call's texts in flight: its own call and other callers' calls for the same texts.
    const pending = new Map<string, Promise<Float32Array>>();
    for (const t of texts) {
      const run = this.running.get(t);
      if (run && !pending.has(t)) pending.set(t, run.call.then((vectors) => vectors[run.index] as Float32Array));
    }
    const found = new Map(await Promise.all([...pending].map(async ([t, v]) => [t, await v] as const)));
    const vectors = texts.map((t) => found.get(t) ?? (this.cache.get(t) as Float32Array));
    texts.forEach((t, i) => this.remember(t, vectors[i] as Float32Array)); // refreshes each one's place in the LRU order
    return vectors;
  }

  private remember(text: string, vector: Float32Array): void {
    this.cache.delete(text);
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
