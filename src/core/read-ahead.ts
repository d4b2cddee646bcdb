// Reads a search starts before it knows it needs them, so that a server store answers them beside other round
// trips instead of after them. A read started ahead and never used fails nothing.
import type { Store } from '../interfaces/store.js';

/**
 * `read`, started now and awaited later, if at all: its failure reaches only the step that awaits it (a
 * rejection nobody awaits is not reported as unhandled).
 */
export function readAhead<T>(read: Promise<T>): Promise<T> {
  read.catch(() => {});
  return read;
}

/** Memories' vectors, some read ahead: a later `get` reads only those it needs beyond them. */
export class VectorReads {
  private ahead: { ids: ReadonlySet<string>; read: Promise<Map<string, Float32Array>> } | null = null;

  constructor(private readonly store: Store) {}

  /** Starts reading these memories' vectors (once; a second call is ignored). */
  readAhead(ids: readonly string[]): void {
    if (this.ahead || ids.length === 0) return;
    this.ahead = { ids: new Set(ids), read: readAhead(this.store.getVectors([...ids])) };
  }

  /** These memories' vectors (those that have one), as `Store.getVectors` answers. */
  async get(ids: readonly string[]): Promise<Map<string, Float32Array>> {
    const ahead = this.ahead;
    if (!ahead) return this.store.getVectors([...ids]);
    const missing = ids.filter((id) => !ahead.ids.has(id));
    const [early, late] = await Promise.all([ahead.read, missing.length > 0 ? this.store.getVectors(missing) : new Map<string, Float32Array>()]);
    const out = new Map<string, Float32Array>();
    for (const id of ids) {
      const v = early.get(id) ?? late.get(id);
      if (v) out.set(id, v);
    }
    return out;
  }
}
