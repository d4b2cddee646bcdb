// Reads of the projection: one memory, lists, supersede history, the live feed, usage statistics.
import { CairnError } from '../interfaces/errors.js';
import type { ListOptions, Memory, ProvenanceFilter } from '../interfaces/memory.js';
import { isActive } from '../interfaces/memory.js';
import type { RecallStats } from '../interfaces/store.js';
import { addToTotals, type FeedbackTotals } from './feedback.js';
import { storedSince } from './feed.js';
import { validateId, validateKind, validateLimit, validateProvenanceFilter, validateTags, MAX_LIMIT, validateTime } from './validate.js';
import type { EngineContext } from './engine-context.js';


/** The memory with this id in the namespace, or null (also when it lives in another namespace). */
export async function memoryIn(ctx: EngineContext, id: string, options: { namespace?: string | undefined; anyNamespace?: boolean } = {}): Promise<Memory | null> {
  const mid = validateId(id);
  const m = await ctx.store.getMemory(mid);
  if (!m) return null;
  if (!options.anyNamespace && m.namespace !== ctx.ns(options.namespace)) return null;
  return m;
}

export async function list(ctx: EngineContext, options: ListOptions = {}): Promise<Memory[]> {
  return ctx.store.listMemories({
    namespace: ctx.ns(options.namespace),
    kinds: options.kinds?.map((k) => validateKind(k, 'kinds')),
    tags: options.tags === undefined ? undefined : validateTags(options.tags),
    before: options.before === undefined ? undefined : validateId(options.before, 'before'),
    createdFrom: options.from === undefined ? undefined : validateTime(options.from, 'from'),
    createdTo: options.to === undefined ? undefined : validateTime(options.to, 'to'),
    provenance: options.provenance === undefined ? undefined : validateProvenanceFilter(options.provenance),
    limit: options.limit === undefined ? 50 : validateLimit(options.limit, 'limit', 10_000),
    now: ctx.now(),
    includeInactive: options.includeInactive ?? false,
  });
}

/**
 * Memories stored after event `afterSeq` of the namespace's log, by any process (see feed.ts); with
 * `afterSeq` null, only the current position, to start a live feed from.
 */
export async function memoriesStoredSince(ctx: EngineContext, afterSeq: number | null, options: { namespace?: string; provenance?: ProvenanceFilter } = {}): Promise<{ seq: number; memories: Memory[] }> {
  if (afterSeq !== null && (!Number.isInteger(afterSeq) || afterSeq < 0)) throw new CairnError('INVALID_INPUT', `after: must be a whole number from 0 (got ${afterSeq})`, { field: 'after' });
  return storedSince(ctx.store, ctx.ns(options.namespace), afterSeq, validateProvenanceFilter(options.provenance));
}

/**
 * A memory's supersede chain, oldest first: the notes it replaced and the notes that replaced it
 * (forgotten or not), all in its namespace.
 */
export async function history(ctx: EngineContext, id: string, options: { namespace?: string } = {}): Promise<Memory[]> {
  const start = await memoryIn(ctx, id, options);
  if (!start) throw new CairnError('NOT_FOUND', `no memory with id ${JSON.stringify(id)} in ${JSON.stringify(ctx.ns(options.namespace))}`, { field: 'id' });
  const chain: Memory[] = [start];
  const seen = new Set([start.id]);
  for (let m: Memory | null = start; m?.supersedes && !seen.has(m.supersedes) && chain.length < 1000; ) {
    m = await ctx.store.getMemory(m.supersedes);
    if (!m || m.namespace !== start.namespace) break;
    seen.add(m.id);
    chain.unshift(m);
  }
  for (let m: Memory | null = start; m?.supersededBy && !seen.has(m.supersededBy) && chain.length < 1000; ) {
    m = await ctx.store.getMemory(m.supersededBy);
    if (!m || m.namespace !== start.namespace) break;
    seen.add(m.id);
    chain.push(m);
  }
  return chain;
}

/** Recall statistics and memories per day of a namespace (for the brain page). */
export async function usage(ctx: EngineContext, options: { namespace?: string; top?: number } = {}): Promise<{ recalls: RecallStats; createdPerDay: { day: string; count: number }[]; feedback: FeedbackTotals }> {
  const namespace = ctx.ns(options.namespace);
  const top = options.top === undefined ? 10 : validateLimit(options.top, 'top', MAX_LIMIT);
  const [recalls, createdPerDay, feedback] = await Promise.all([ctx.store.recallStats(namespace, ctx.now(), top), ctx.store.createdPerDay(namespace), feedbackTotals(ctx, namespace)]);
  return { recalls, createdPerDay, feedback };
}

export async function feedbackTotals(ctx: EngineContext, namespace: string): Promise<FeedbackTotals> {
  const totals: FeedbackTotals = { useful: 0, wrong: 0, stale: 0, rated: 0, toReview: 0 };
  for (const m of await liveMemories(ctx, namespace, (x) => Boolean(x.feedback))) addToTotals(totals, m);
  return totals;
}

/** The namespace's active memories that pass `keep`, read page by page. */
export async function liveMemories(ctx: EngineContext, namespace: string, keep: (m: Memory) => boolean): Promise<Memory[]> {
  const now = ctx.now();
  const out: Memory[] = [];
  for await (const page of ctx.store.iterateMemories(namespace, 1000)) for (const m of page) if (isActive(m, now) && keep(m)) out.push(m);
  return out;
}
