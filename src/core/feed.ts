import type { Memory, ProvenanceFilter } from '../interfaces/memory.js';
import type { Store } from '../interfaces/store.js';
import { matchesProvenance } from './validate.js';

/** At most this many events are read per call: a feed that fell behind catches up over several calls. */
const EVENTS_PER_READ = 500;

/**
 * What was stored in a namespace after event `afterSeq`, read from the event log, so writes by every process
 * that shares the database show (an agent's own MCP server, hooks, the CLI), not only this one's. With
 * `afterSeq` null it only returns where the log is now: a feed starts from there. Memories are in the order
 * they were stored, as they are now (an erased one is gone), filtered by provenance.
 */
export async function storedSince(store: Store, namespace: string, afterSeq: number | null, filter: ProvenanceFilter): Promise<{ seq: number; memories: Memory[] }> {
  if (afterSeq === null) {
    const scope = (await store.scopes()).find((s) => s.scope === namespace);
    return { seq: scope?.lastSeq ?? 0, memories: [] };
  }
  const events = await store.events(namespace, afterSeq, EVENTS_PER_READ);
  const seq = events.length ? (events[events.length - 1] as { seq: number }).seq : afterSeq;
  const ids = events.filter((e) => e.type === 'memory.saved' && e.memoryId).map((e) => e.memoryId as string);
  if (ids.length === 0) return { seq, memories: [] };
  const byId = new Map((await store.getMemories(ids)).map((m) => [m.id, m]));
  const memories = ids.map((id) => byId.get(id)).filter((m): m is Memory => m !== undefined && m.namespace === namespace && matchesProvenance(m.metadata, filter));
  return { seq, memories };
}
