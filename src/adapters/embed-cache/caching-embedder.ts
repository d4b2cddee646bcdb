import { CairnError } from '../../interfaces/errors.js';
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
    // Cached vectors are taken now, before any await: other callers may evict them while this one waits.
    const hits = new Map<string, Float32Array>();
    for (const t of texts) {
      const v = this.cache.get(t);
      if (v) hits.set(t, v);
    }
    const missing = [...new Set(texts.filter((t) => !hits.has(t) && !this.running.has(t)))];
    if (missing.length) {
      const call = this.inner.embed(missing);
      missing.forEach((t, index) => this.running.set(t, { call, index }));
      call.then(
        (vectors) =>
          missing.forEach((t, i) => {
            this.running.delete(t);
            const v = vectors[i];
            if (v) this.remember(t, v);
          }),
        () => missing.forEach((t) => this.running.delete(t)),
      );
    }
    // This call's texts in flight: its own call and other callers' calls for the same texts.
    const pending = new Map<string, Promise<Float32Array | undefined>>();
    for (const t of texts) {
      const run = this.running.get(t);
      if (run && !hits.has(t) && !pending.has(t)) pending.set(t, run.call.then((vectors) => vectors[run.index]));
    }
    const found = new Map(await Promise.all([...pending].map(async ([t, v]) => [t, await v] as const)));
    const vectors = texts.map((t) => found.get(t) ?? hits.get(t));
    // A vector the model did not return (a short answer from the wrapped embedder) is asked for again, never cached as missing.
    const lost = [...new Set(texts.filter((_, i) => !vectors[i]))];
    if (lost.length) {
      const again = await this.inner.embed(lost);
      const byText = new Map(lost.map((t, i) => [t, again[i]] as const));
      texts.forEach((t, i) => (vectors[i] ??= byText.get(t)));
      if (vectors.some((v) => !v)) throw new CairnError('INTERNAL', `the embedder returned ${again.length} vectors for ${lost.length} texts`);
    }
    const done = vectors as Float32Array[];
    texts.forEach((t, i) => this.remember(t, done[i] as Float32Array)); // refreshes each one's place in the LRU order
    return done;
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
