// Reads a search starts before it knows it needs them, so that a server store answers them beside other round
// trips instead of after them. A read started ahead and never used fails nothing.
import type { Memory } from '../interfaces/memory.js';
import type { CandidateFilter, Store } from '../interfaces/store.js';

/**
 * `read`, started now and awaited later, if at all: its failure reaches only the step that awaits it (a
 * rejection nobody awaits is not reported as unhandled).
 */
export function readAhead<T>(read: Promise<T>): Promise<T> {
  read.catch(() => {});
  return read;
}

/**
 * A read by memory ids of which a part may be started ahead, for the ids a later step will most likely ask for:
 * `get` then reads only the ids not read ahead, and `pick` takes from both answers what the ids asked for have.
 */
export class ReadsById<T> {
  private ahead: { ids: ReadonlySet<string>; read: Promise<T> } | null = null;

  constructor(
    private readonly read: (ids: string[]) => Promise<T>,
    private readonly pick: (ids: readonly string[], answers: readonly T[]) => T,
  ) {}

  /** Starts reading for these ids (once; a second call is ignored). */
  readAhead(ids: readonly string[]): void {
    if (this.ahead || ids.length === 0) return;
    this.ahead = { ids: new Set(ids), read: readAhead(this.read([...ids])) };
  }

  /** What the store answers for these ids. */
  async get(ids: readonly string[]): Promise<T> {
    const ahead = this.ahead;
    if (!ahead) return this.read([...ids]);
    const missing = ids.filter((id) => !ahead.ids.has(id));
    return this.pick(ids, await Promise.all(missing.length > 0 ? [ahead.read, this.read(missing)] : [ahead.read]));
  }
}

/** Memories' vectors (Store.getVectors). */
export function vectorReads(store: Store): ReadsById<Map<string, Float32Array>> {
  return new ReadsById(
    (ids) => store.getVectors(ids),
    (ids, answers) => {
      const out = new Map<string, Float32Array>();
      for (const id of ids) {
        const v = answers.reduce<Float32Array | undefined>((found, answer) => found ?? answer.get(id), undefined);
        if (v) out.set(id, v);
      }
      return out;
    },
  );
}

/** The notes that likely replace memories (Store.listLikelyReplacing); read ahead for more ids, only those naming one asked for. */
export function replacingReads(store: Store, filter: CandidateFilter): ReadsById<Memory[]> {
  return new ReadsById(
    (ids) => store.listLikelyReplacing(ids, filter),
    (ids, answers) => {
      const asked = new Set(ids);
      const out = new Map<string, Memory>();
      for (const m of answers.flat()) if (m.likelyReplaces?.some((id) => asked.has(id))) out.set(m.id, m);
      return [...out.values()];
    },
  );
}
