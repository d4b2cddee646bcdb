import { CairnError } from '../interfaces/errors.js';
import type { EmbedOptions } from '../interfaces/embedder.js';
import type { EmbedderInfo } from '../interfaces/store.js';
import type { EngineContext } from './engine-context.js';

// Embedding through the engine's embedder, for writes and searches alike (apart from the write path, which a
// process that only searches never loads).

export async function embedMany(ctx: EngineContext, texts: string[], options?: EmbedOptions): Promise<(Float32Array | null)[]> {
  if (!ctx.embedder || !ctx.store.capabilities.vectorSearch || texts.length === 0) return texts.map(() => null);
  const vectors = await ctx.embedder.embed(texts, options);
  for (const v of vectors) {
    if (v.length !== ctx.embedder.dimensions) {
      throw new CairnError('INTERNAL', `embedder ${ctx.embedder.id} returned ${v.length} dimensions, expected ${ctx.embedder.dimensions}`);
    }
  }
  return vectors;
}

/** Fails with EMBEDDER_MISMATCH when the store holds vectors from another embedder. */
export async function checkEmbedder(ctx: EngineContext): Promise<EmbedderInfo | null> {
  if (!ctx.embedder || !ctx.store.capabilities.vectorSearch) return null;
  const stored = await ctx.store.embedder();
  if (stored && (stored.id !== ctx.embedder.id || stored.dimensions !== ctx.embedder.dimensions)) {
    throw new CairnError(
      'EMBEDDER_MISMATCH',
      `the store holds ${stored.dimensions}-dimension vectors from ${stored.id}, but the configured embedder is ${ctx.embedder.id} (${ctx.embedder.dimensions} dimensions)`,
      { hint: 'run `cairn reindex` to re-embed every memory with the configured embedder, or configure the original one' },
    );
  }
  return stored;
}
