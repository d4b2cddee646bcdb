import { CairnError } from '../../interfaces/errors.js';
import type { Embedder } from '../../interfaces/embedder.js';
import { loadUseModel, type UseModel } from './use-model.js';

export interface UseEmbedderConfig {
  /** Texts per model call. Default 8. */
  batchSize?: number;
}

/**
 * Universal Sentence Encoder lite (512 dimensions) from @energetic-ai, weights shipped inside the npm
 * package: no network, no API key. The model (and TensorFlow.js) load on the first embed, once. A model
 * call runs synchronously (use-model.ts), as the library's own async call in effect did: its awaits never
 * waited on I/O, so the event loop was held for the whole call either way.
 */
export class UseEmbedder implements Embedder {
  readonly id = 'use-lite-512';
  readonly dimensions = 512;
  private model: Promise<UseModel> | null = null;
  private loadedMs: number | null = null;
  private readonly batchSize: number;

  constructor(config: UseEmbedderConfig = {}) {
    this.batchSize = config.batchSize ?? 8; // measured: batches of 4–16 are fastest per text (padding makes large batches slower)
  }

  private load(): Promise<UseModel> {
    if (!this.model) {
      const started = performance.now();
      this.model = (async () => {
        try {
          // On a loaded machine the WebAssembly backend can report "not yet initialized" on the first try:
          // wait for it and try again before giving up.
          for (let attempt = 1; ; attempt++) {
            try {
              const model = await loadUseModel();
              model.embed(['ready']); // the first inference finishes the backend's set-up
              this.loadedMs = performance.now() - started;
              return model;
            } catch (err) {
              if (attempt >= 3) throw err;
              await new Promise((r) => setTimeout(r, 200 * attempt));
            }
          }
        } catch (err) {
          this.model = null;
          throw new CairnError('EMBEDDER_UNAVAILABLE', `could not load the Universal Sentence Encoder: ${(err as Error).message}`, { cause: err });
        }
      })();
    }
    return this.model;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const model = await this.load();
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const batch = texts.slice(i, i + this.batchSize);
      for (const v of model.embed(batch)) out.push(normalise(v));
    }
    return out;
  }

  loadTimeMs(): number | null {
    return this.loadedMs;
  }
}

/** Scales a vector to unit length (cosine = dot product); a zero vector stays zero. */
export function normalise(v: Float32Array): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
  return v;
}

export function createUseEmbedder(config: UseEmbedderConfig = {}): UseEmbedder {
  return new UseEmbedder(config);
}
