import { createRequire } from 'node:module';

/** usearch's module: its SIMD exhaustive kernel scans int8 codes (quantized-vectors.ts). */
export type Usearch = typeof import('usearch');

let loaded: Usearch | Error | null = null;

/**
 * usearch, loaded on first use (a native module; the short commands never need it). Null with the reason when
 * it cannot load on this platform (no prebuilt binary): the store then searches without it (SQLite exhaustively
 * with sqlite-vec, PostgreSQL with its own statement alone).
 */
export function loadUsearch(): { usearch: Usearch } | { error: string } {
  if (loaded === null) {
    try {
      loaded = createRequire(import.meta.url)('usearch') as Usearch;
    } catch (err) {
      loaded = err instanceof Error ? err : new Error(String(err));
    }
  }
  return loaded instanceof Error ? { error: `usearch could not load: ${loaded.message.split('\n')[0]}` } : { usearch: loaded };
}
