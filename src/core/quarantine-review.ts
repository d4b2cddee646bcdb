// The operator's side of the ingest filter: the review queue, reveal, release and drop, security status.
import { CairnError } from '../interfaces/errors.js';
import type { MemoryInput } from '../interfaces/memory.js';
import type { StoreTx } from '../interfaces/store.js';
import { emit, STORE_SCOPE } from './events.js';
import { lessonVector } from './ingest-filter.js';
import { countReasons, matchesFilter, toView, validateReason } from './quarantine.js';
import type {
  QuarantineBulkResult,
  QuarantineDetail,
  QuarantineEntry,
  QuarantineFilter,
  QuarantineListOptions,
  QuarantineReleaseResult,
  QuarantineReview,
  QuarantineView,
} from '../interfaces/quarantine.js';
import { validateId, validateLimit } from './validate.js';
import type { EngineContext } from './engine-context.js';
import { type TurnInput, commitTurnWith } from './turns.js';
import { type UpdatePatch, saveScreened, scrub, updateWith } from './write-path.js';

/**
 * The review queue of the ingest filter, newest first (held entries unless `status` says otherwise). Each
 * entry shows the hash, a 16-character preview and the score, never the full text, so an operator can
 * triage without reading it. Store-wide: every namespace and agent.
 */
export async function listQuarantine(ctx: EngineContext, options: QuarantineListOptions = {}): Promise<QuarantineView[]> {
  const status = options.status ?? 'held';
  if (!['held', 'released', 'dropped', 'all'].includes(status)) {
    throw new CairnError('INVALID_INPUT', `status: must be held, released, dropped or all (got ${JSON.stringify(status)})`, { field: 'status' });
  }
  const limit = options.limit === undefined ? 50 : validateLimit(options.limit, 'limit', 10_000);
  const entries = await ctx.store.listQuarantine({ status, limit });
  return Promise.all(entries.map((e) => quarantineView(ctx, e)));
}

/** An entry as listed, with the preview of its held text (none once the vault is emptied). */
export async function quarantineView(ctx: EngineContext, entry: QuarantineEntry): Promise<QuarantineView> {
  return toView(entry, (await ctx.store.getQuarantineVault(entry.id))?.text ?? null);
}

/**
 * One quarantine entry, or null. The full held text only with `reveal` (null once it is gone); a reveal
 * that returns text is recorded as a `quarantine.revealed` audit event (who, which entry; never the text).
 */
export async function getQuarantined(ctx: EngineContext, id: string, options: { reveal?: boolean; by?: string } = {}): Promise<QuarantineDetail | null> {
  const qid = validateId(id, 'id');
  const entry = await ctx.store.getQuarantine(qid);
  if (!entry) return null;
  const vault = await ctx.store.getQuarantineVault(qid);
  if (options.reveal && vault) {
    const by = options.by === undefined ? null : scrub(ctx, String(options.by).slice(0, 200), 'by', {});
    await ctx.store.transaction((tx) => emit(tx, STORE_SCOPE, { type: 'quarantine.revealed', quarantineId: qid, by }, ctx.now()));
  }
  return { ...toView(entry, vault?.text ?? null), text: options.reveal ? (vault?.text ?? null) : null };
}

/**
 * The review queue at scale: totals, matches per reason, and the newest `limit` (default 50) entries
 * matching the filter (namespace, source, reason words, score range, time range, ids). Store-wide.
 */
export async function reviewQuarantine(ctx: EngineContext, filter: QuarantineFilter = {}, options: { limit?: number } = {}): Promise<QuarantineReview> {
  const limit = options.limit === undefined ? 50 : validateLimit(options.limit, 'limit', 10_000);
  // The total stays within the namespace reviewed: a namespace-limited admin learns nothing of the others.
  const all = (await ctx.store.listQuarantine({ status: filter.status ?? 'held', limit: Number.MAX_SAFE_INTEGER })).filter(
    (e) => filter.namespace === undefined || e.namespace === filter.namespace,
  );
  const matched = all.filter((e) => matchesFilter(e, filter));
  const page = await Promise.all(matched.slice(0, limit).map((e) => quarantineView(ctx, e)));
  return { total: all.length, matched: matched.length, byReason: countReasons(matched), entries: page };
}

/**
 * Releases or drops every held entry matching `filter` (ids, or any review filter), one transaction per
 * entry as the single operations do. `dryRun` only counts. A release needs a reason; a drop teaches the
 * filter unless `teach` is false. Entries another writer decided meanwhile are reported as failed.
 */
export async function decideQuarantined(ctx: EngineContext,
  action: 'release' | 'drop',
  filter: QuarantineFilter,
  options: { reason?: string; dryRun?: boolean; teach?: boolean } = {},
): Promise<QuarantineBulkResult> {
  if (action !== 'release' && action !== 'drop') throw new CairnError('INVALID_INPUT', `action: must be release or drop (got ${JSON.stringify(action)})`, { field: 'action' });
  if (action === 'release' || !options.dryRun) validateReason(options.reason, action === 'release');
  const held = (await ctx.store.listQuarantine({ status: 'held', limit: Number.MAX_SAFE_INTEGER })).filter((e) => matchesFilter(e, { ...filter, status: 'held' }));
  const ids = held.map((e) => e.id);
  const result: QuarantineBulkResult = { action, dryRun: Boolean(options.dryRun), matched: ids.length, ids, done: [], failed: [] };
  if (options.dryRun) return result;
  for (const id of ids) {
    try {
      if (action === 'release') await releaseQuarantined(ctx, id, { reason: options.reason as string });
      else await dropQuarantined(ctx, id, { ...(options.reason === undefined ? {} : { reason: options.reason }), ...(options.teach === undefined ? {} : { teach: options.teach }) });
      result.done.push(id);
    } catch (err) {
      result.failed.push({ id, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return result;
}

/**
 * Releases a held write: commits it as the original call would have (save, turn or update, with dedupe),
 * records the operator's reason, and un-learns the lesson that held it (when a learned anchor did), all
 * in one transaction. The
 * same text sent again later passes the filter. CONFLICT unless the entry is held.
 * The entry is read before (to fail early) and again inside the transaction, where only one decision can win.
 */
export async function releaseQuarantined(ctx: EngineContext, id: string, options: { reason: string }): Promise<QuarantineReleaseResult> {
  const qid = validateId(id, 'id');
  const reason = scrub(ctx, validateReason(options?.reason, true) as string, 'reason', {});
  const entry = await ctx.store.getQuarantine(qid);
  if (!entry) throw new CairnError('NOT_FOUND', `no quarantine entry ${qid}`, { field: 'id' });
  if (entry.status !== 'held') throw new CairnError('CONFLICT', `quarantine entry ${qid} is already ${entry.status}`, { field: 'id' });
  const vault = await ctx.store.getQuarantineVault(qid);
  if (!vault) throw new CairnError('CONFLICT', `the held text of quarantine entry ${qid} was erased; there is nothing to release`, { field: 'id' });
  let released: QuarantineEntry | null = null;
  const inTx = async (tx: StoreTx, now: string, memoryIds: string[]) => {
    const current = await tx.getQuarantine(qid);
    if (!current || current.status !== 'held') throw new CairnError('CONFLICT', `quarantine entry ${qid} was decided by another writer`, { field: 'id' });
    released = { ...current, status: 'released', decidedAt: now, reason, memoryIds: [...new Set(memoryIds)] };
    await emit(tx, STORE_SCOPE, { type: 'quarantine.released', entry: released }, now);
    await tx.deleteLearnedAnchor(qid);
    // Held by a lesson (an anchor learned from a confirmed attack) and released as good: the lesson was
    // too broad, so it is un-learned; the drop or poison mark it came from stays in the log.
    if (current.anchor?.startsWith('learned:')) await tx.deleteLearnedAnchor(current.anchor.slice('learned:'.length));
    await tx.deleteQuarantineVault(qid);
  };
  const request = vault.request as { op: string; input?: unknown; id?: string; namespace?: string; patch?: UpdatePatch };
  let duplicate = false;
  if (request.op === 'save') {
    const [r] = await saveScreened(ctx, [request.input as MemoryInput], { screen: false, inTx });
    duplicate = r !== undefined && 'duplicate' in r && r.duplicate;
  } else if (request.op === 'turn') {
    const r = await commitTurnWith(ctx, request.input as TurnInput, null, { screen: false, inTx });
    duplicate = r.itemsAdded === 0;
  } else if (request.op === 'update') {
    await updateWith(ctx, request.id as string, request.patch ?? {}, { namespace: request.namespace as string }, { screen: false, inTx });
  } else {
    throw new CairnError('INTEGRITY', `quarantine entry ${qid} holds an unknown request ${JSON.stringify(request.op)}`);
  }
  const done = released as QuarantineEntry | null;
  if (!done) throw new CairnError('INTERNAL', `release of ${qid} committed no release event`);
  return { entry: done, memoryIds: done.memoryIds, duplicate };
}

/**
 * Drops a held write for good: its text leaves the vault. A drop confirms the text as an attack, so
 * (unless `teach` is false) the filter learns it: an anchor shared by every agent of the store then holds
 * reworded variants. CONFLICT unless the entry is held.
 * The entry's status is read inside the transaction, where only one decision can win.
 */
export async function dropQuarantined(ctx: EngineContext, id: string, options: { reason?: string; teach?: boolean } = {}): Promise<QuarantineEntry> {
  const qid = validateId(id, 'id');
  const given = validateReason(options.reason, false);
  const reason = given === null ? null : scrub(ctx, given, 'reason', {});
  const vault = options.teach === false || !ctx.embedder ? null : await ctx.store.getQuarantineVault(qid);
  const lesson = vault && ctx.embedder ? await lessonVector(ctx.store, ctx.embedder, ctx.filterConfig, vault.text) : null;
  return ctx.store.transaction(async (tx) => {
    const current = await tx.getQuarantine(qid);
    if (!current) throw new CairnError('NOT_FOUND', `no quarantine entry ${qid}`, { field: 'id' });
    if (current.status !== 'held') throw new CairnError('CONFLICT', `quarantine entry ${qid} is already ${current.status}`, { field: 'id' });
    const now = ctx.now();
    const dropped: QuarantineEntry = { ...current, status: 'dropped', decidedAt: now, reason, taught: lesson !== null };
    await emit(tx, STORE_SCOPE, { type: 'quarantine.dropped', entry: dropped }, now);
    if (lesson) await tx.putLearnedAnchor(qid, lesson, now);
    await tx.deleteQuarantineVault(qid);
    return dropped;
  });
}
