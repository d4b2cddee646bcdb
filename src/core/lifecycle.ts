// A memory's life after it is written: supersede, forget, restore, poison, purge expired, reindex, ratings.
import { CairnError } from '../interfaces/errors.js';
import type { Memory, MemoryInput, FeedbackVerdict, SaveResult } from '../interfaces/memory.js';
import type { EmbedderInfo, StoreTx } from '../interfaces/store.js';
import { emit, indexText, STORE_SCOPE } from './events.js';
import { netDoubt, rated } from './feedback.js';
import { lessonVector } from './ingest-filter.js';
import { validateReason } from './quarantine.js';
import { validateId, validateLimit, validateVerdict } from './validate.js';
import type { EngineContext, ProgressFn } from './engine-context.js';
import { liveMemories, memoryIn } from './reads.js';
import { putVector, save, scrub } from './write-path.js';
import { embedMany } from './embedding.js';

export interface ForgetOptions {
  namespace?: string;
  reason?: string;
}

/** Stores `input` as the replacement of `oldId`: both get linked, the old one drops from recall. */
export async function supersede(ctx: EngineContext, oldId: string, input: MemoryInput): Promise<SaveResult> {
  const id = validateId(oldId, 'id');
  const old = await memoryIn(ctx, id, { namespace: input.namespace });
  if (!old) throw new CairnError('NOT_FOUND', `no memory ${id} in namespace ${ctx.ns(input.namespace)}`, { field: 'id' });
  const result = await save(ctx, {
    kind: old.kind,
    importance: old.importance,
    tags: old.tags,
    taskId: old.taskId,
    route: old.route,
    ...input,
    namespace: old.namespace,
    supersedes: id,
  });
  if (result.duplicate) {
    throw new CairnError('CONFLICT', `an identical live memory already exists: ${result.id}`, { field: 'text' });
  }
  return result;
}

/** The forget reason of a poison mark: `poisoned`, or `poisoned: <why>`. */
const POISON_REASON = /^poisoned(?:$|: )/u;

/**
 * Soft delete: the memory leaves recall and can be restored. A reason that reads as a poison mark is
 * refused: a poisoned memory cannot be restored, so an ordinary forget (an agent's `memory_forget` among
 * them) must not be able to lock a memory out of `restore` by wording its reason like one.
 */
export async function forget(ctx: EngineContext, id: string, options: ForgetOptions = {}): Promise<Memory> {
  const reason = options.reason === undefined ? null : scrub(ctx, String(options.reason).slice(0, 1000), 'reason', {});
  if (reason !== null && POISON_REASON.test(reason.trim().toLowerCase())) {
    throw new CairnError('INVALID_INPUT', 'reason: "poisoned" is reserved for marking an attack (`cairn quarantine poison <id>`); word an ordinary forget\'s reason otherwise', { field: 'reason' });
  }
  return changeLifecycle(ctx, id, options.namespace, 'memory.forgotten', (m, now) => {
    if (m.forgottenAt) throw new CairnError('CONFLICT', `memory ${m.id} is already forgotten (${m.forgottenAt})`);
    return { ...m, forgottenAt: now, forgetReason: reason, updatedAt: now };
  });
}

/** Whether `m` left recall by being marked poisoned (`markPoisoned`), not by an ordinary forget. */
function isPoisoned(m: Memory): boolean {
  return m.forgottenAt !== null && m.forgetReason !== null && POISON_REASON.test(m.forgetReason);
}

/**
 * Undoes forget. Fails with CONFLICT when an identical memory was saved since, and for a memory marked
 * poisoned: restoring an attack would let whoever planted it (or an agent it fooled) undo the operator's
 * decision; a poisoned text that was no attack is saved again, through the filter.
 */
export async function restore(ctx: EngineContext, id: string, options: { namespace?: string } = {}): Promise<Memory> {
  return changeLifecycle(ctx, id, options.namespace, 'memory.restored', async (m, now, tx) => {
    if (!m.forgottenAt) throw new CairnError('CONFLICT', `memory ${m.id} is not forgotten`);
    if (isPoisoned(m)) throw new CairnError('CONFLICT', `memory ${m.id} was marked poisoned and is not restored; if it was no attack, save its text again`);
    const clash = m.supersededBy ? null : await tx.findLiveByDedupeKey(m.namespace, m.dedupeKey);
    if (clash) throw new CairnError('CONFLICT', `an identical live memory was saved since: ${clash.id}`);
    return { ...m, forgottenAt: null, forgetReason: null, updatedAt: now };
  });
}

/**
 * Marks a stored memory as poisoned: it leaves recall at once (as a forget does, with the reason
 * `poisoned: …`), a `memory.poisoned` event records it, and (unless `teach` is false) the filter learns
 * it like a confirmed drop, so reworded copies are held for every agent of the store. A memory already
 * marked without a lesson (an agent's `memory_report_attack`, or `teach: false`) can be marked again by an
 * operator to confirm it: that mark teaches, keeps the first reason and logs a second `memory.poisoned`.
 * CONFLICT when it already taught, or when the new mark would teach nothing either.
 */
export async function markPoisoned(ctx: EngineContext, id: string, options: { namespace?: string; reason?: string; teach?: boolean } = {}): Promise<Memory> {
  const given = validateReason(options.reason, false);
  const reason = given === null ? null : scrub(ctx, given, 'reason', {});
  const current = await memoryIn(ctx, validateId(id), { namespace: ctx.ns(options.namespace) });
  const lesson = current && options.teach !== false && ctx.embedder ? await lessonVector(ctx.store, ctx.embedder, ctx.filterConfig, current.text) : null;
  return changeLifecycle(ctx, id, options.namespace, 'memory.poisoned', async (m, now, tx) => {
    if (isPoisoned(m)) {
      if (!lesson || (await tx.getLearnedAnchor(`poison-${m.id}`))) throw new CairnError('CONFLICT', `memory ${m.id} is already marked poisoned${lesson ? ' and taught the filter' : ''}`);
      await tx.putLearnedAnchor(`poison-${m.id}`, lesson, now);
      return { ...m, updatedAt: now };
    }
    if (lesson) await tx.putLearnedAnchor(`poison-${m.id}`, lesson, now);
    return { ...m, forgottenAt: now, forgetReason: reason ? `poisoned: ${reason}` : 'poisoned', updatedAt: now };
  }, { taught: lesson !== null });
}

/**
 * Reads the memory inside the transaction: the next state is built from it, and another writer's change must
 * not be lost in between.
 */
export async function changeLifecycle(ctx: EngineContext,
  id: string,
  namespace: string | undefined,
  type: 'memory.forgotten' | 'memory.restored' | 'memory.poisoned',
  change: (m: Memory, now: string, tx: StoreTx) => Memory | Promise<Memory>,
  extra: { taught: boolean } = { taught: false },
): Promise<Memory> {
  const mid = validateId(id);
  const ns = ctx.ns(namespace);
  return ctx.store.transaction(async (tx) => {
    const m = await tx.getMemory(mid);
    if (!m || m.namespace !== ns) throw new CairnError('NOT_FOUND', `no memory ${mid} in namespace ${ns}`, { field: 'id' });
    const now = ctx.now();
    const next = await change(m, now, tx);
    await emit(tx, ns, type === 'memory.poisoned' ? { type, memory: next, taught: extra.taught } : { type, memory: next }, now);
    return next;
  });
}

/**
 * Removes expired memories for good; returns how many.
 * Each expired memory is re-read inside the transaction: one restored or extended since the list was read is
 * left alone.
 */
export async function purgeExpired(ctx: EngineContext, options: { namespace?: string; all?: boolean } = {}): Promise<number> {
  const now = ctx.now();
  const namespace = options.all ? undefined : ctx.ns(options.namespace);
  const expired = await ctx.store.listExpired(now, namespace);
  if (expired.length === 0) return 0;
  return ctx.store.transaction(async (tx) => {
    // Every namespace up front in one order: two purges of several namespaces cannot deadlock.
    await tx.lockScopes?.(expired.map((m) => m.namespace));
    let n = 0;
    for (const m of expired) {
      const fresh = await tx.getMemory(m.id);
      if (!fresh || fresh.expiresAt === null || fresh.expiresAt > now) continue;
      await emit(tx, m.namespace, { type: 'memory.purged', id: m.id }, now);
      n++;
    }
    return n;
  });
}

/** Re-embeds every memory of every namespace with the configured embedder. */
export async function reindex(ctx: EngineContext, onProgress?: ProgressFn, batchSize = 64): Promise<{ reindexed: number; embedder: EmbedderInfo }> {
  if (!ctx.embedder) throw new CairnError('UNSUPPORTED', 'no embedder is configured; nothing to reindex with');
  if (!ctx.store.capabilities.vectorSearch) throw new CairnError('UNSUPPORTED', 'this store has no vector index');
  const info = { id: ctx.embedder.id, dimensions: ctx.embedder.dimensions };
  const total = (await ctx.store.stats(ctx.now())).total;
  // Embed first (slow, outside any lock), then swap all vectors in one transaction: a failure midway
  // leaves the old index intact.
  const pending: { id: string; namespace: string; vector: Float32Array }[] = [];
  onProgress?.(0, total);
  for await (const page of ctx.store.iterateMemories(undefined, batchSize)) {
    const vectors = await embedMany(ctx, page.map((m) => indexText(m)));
    page.forEach((m, i) => pending.push({ id: m.id, namespace: m.namespace, vector: vectors[i] as Float32Array }));
    onProgress?.(pending.length, total);
  }
  await ctx.store.prepareVectors(info); // the new embedder's vector objects, before the swap's transaction
  // Bulk: resetting every memory's vector rewrites every row of the store in this one transaction.
  await ctx.store.transaction(async (tx) => {
    const now = ctx.now();
    await tx.lockScopes?.([STORE_SCOPE, ...pending.map((p) => p.namespace)]);
    await emit(tx, STORE_SCOPE, { type: 'store.vectors-reset' }, now);
    await emit(tx, STORE_SCOPE, { type: 'store.embedder', embedder: info }, now);
    for (const p of pending) {
      const hash = (await putVector(tx, p.vector)) as string;
      await emit(tx, p.namespace, { type: 'memory.reembedded', id: p.id, vector: hash }, now);
    }
  }, { bulk: true });
  return { reindexed: pending.length, embedder: info };
}

/**
 * Marks a memory useful, wrong or stale (after a recall). Wrong and stale marks beyond the useful ones
 * demote it in recall and put it on the review list. One `memory.rated` event; the memory's text and
 * update time are unchanged.
 * Reads the memory inside the transaction: its counts are incremented, so a concurrent rating must not be lost.
 */
export async function rate(ctx: EngineContext, id: string, verdict: FeedbackVerdict, options: { namespace?: string } = {}): Promise<Memory> {
  const mid = validateId(id);
  const ns = ctx.ns(options.namespace);
  const v = validateVerdict(verdict);
  return ctx.store.transaction(async (tx) => {
    const m = await tx.getMemory(mid);
    if (!m || m.namespace !== ns) throw new CairnError('NOT_FOUND', `no memory ${mid} in namespace ${ns}`, { field: 'id' });
    const now = ctx.now();
    const next = rated(m, v, now);
    await emit(tx, ns, { type: 'memory.rated', memory: next, verdict: v }, now);
    return next;
  });
}

/** Live memories marked wrong or stale more often than useful, most doubted first (the review list). */
export async function reviewList(ctx: EngineContext, options: { namespace?: string; limit?: number } = {}): Promise<Memory[]> {
  const namespace = ctx.ns(options.namespace);
  const limit = options.limit === undefined ? 50 : validateLimit(options.limit, 'limit', 10_000);
  const doubted = await liveMemories(ctx, namespace, (m) => netDoubt(m.feedback) > 0);
  const lastAt = (m: Memory) => m.feedback?.lastAt ?? '';
  return doubted.sort((a, b) => netDoubt(b.feedback) - netDoubt(a.feedback) || (lastAt(a) < lastAt(b) ? 1 : lastAt(a) > lastAt(b) ? -1 : 0)).slice(0, limit);
}
