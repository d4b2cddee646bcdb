/** Turns texts into vectors. Implementations load their model lazily, once, on the first call. */
export interface Embedder {
  /** Stable identifier of the model, recorded by the store (e.g. `use-lite-512`). */
  readonly id: string;
  readonly dimensions: number;
  /**
   * Embeds a batch; returns one unit-length vector per input, in input order.
   * Throws CairnError EMBEDDER_UNAVAILABLE when the model cannot be loaded or reached.
   */
  embed(texts: string[], options?: EmbedOptions): Promise<Float32Array[]>;
  /** Milliseconds the model took to load, or null while it is not loaded. */
  loadTimeMs(): number | null;
}

export interface EmbedOptions {
  /**
   * The batch is fixed text the product itself ships (never a user's text), asked for again by every process:
   * its vectors may be kept on disk between processes. An embedder that keeps nothing ignores it.
   */
  fixed?: boolean;
}

/** Reorders fused candidates. Optional: without one, the fused order is returned unchanged. */
export interface Reranker {
  readonly id: string;
  /** Returns a relevance score per document, in input order; higher is more relevant. */
  score(query: string, documents: string[]): Promise<number[]>;
}

/** Counts tokens the way a model would. Loads its vocabulary lazily, once, on the first call. */
export interface TokenCounter {
  readonly id: string;
  count(text: string): Promise<number>;
}

/** Where logs go. Never stdout: stdout belongs to the protocol. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}
