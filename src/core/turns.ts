// Conversation turns: one turn committed atomically with its items and vectors, checkpoints (snapshot
// compare-and-swap) and ingesting whole conversations.
import { CairnError, isCairnError } from '../interfaces/errors.js';
import type { Memory, MemoryInput } from '../interfaces/memory.js';
import { ulid } from './ids.js';
import { emit, indexText } from './events.js';
import { buildSnapshot, snapshotDue } from './snapshot.js';
import type { Conversation } from './conversation.js';
import type { FilterVerdict } from './ingest-filter.js';
import { quarantinedError } from './quarantine.js';
import type { RedactionCounts } from './redact.js';
import type { QuarantineReceipt } from '../interfaces/quarantine.js';
import { validateNamespace, validateText, validateTime } from './validate.js';
import type { EngineContext, ProgressFn, WriteOptions } from './engine-context.js';
import { checkEmbedder, embedMany } from './embedding.js';
import {
  hold,
  prepare,
  putVector,
  prepareEmbedder,
  recordEmbedder,
  redactionField,
  saveRequest,
  screenTexts,
  scrub,
} from './write-path.js';

export interface TurnInput {
  namespace?: string;
  /** Conversation or agent session the turn belongs to. */
  session: string;
  /** Turn number within the session (0 or more). */
  turn: number;
  /** The turn's text, kept verbatim in the turn event. */
  text: string;
  speaker?: string;
  /** When the turn happened (ISO-8601); default now. Items get it as their creation time. */
  at?: string;
  /** Memory items extracted from the turn; default: one note holding the turn's text. */
  items?: MemoryInput[];
}

export interface TurnResult {
  /** Sequence number of the turn event in its namespace. */
  eventSeq: number;
  itemIds: string[];
  /** Items that became new memories. */
  itemsAdded: number;
  /** True when dedupe turned at least one item into an update of an existing memory. */
  deduplicated: boolean;
  /** Whether this commit also wrote a snapshot (every `snapshotEvery` turns of the namespace). */
  snapshot: boolean;
  snapshotVersion: number | null;
}

/**
 * commitTurn, reusing vectors embedded ahead in a batch (keyed by the text that was embedded).
 * Reads inside its transaction only what decides the write under the lock: the embedder record, each item's
 * dedupe re-check (the pre-check before embedding is a plain read), the turn count and the projection a
 * snapshot serialises.
 */
export async function commitTurnWith(ctx: EngineContext, input: TurnInput, embedded: Map<string, Float32Array | null> | null, options: WriteOptions = {}): Promise<TurnResult> {
  if (typeof input !== 'object' || input === null) throw new CairnError('INVALID_INPUT', 'turn must be an object');
  const namespace = ctx.ns(input.namespace);
  if (typeof input.session !== 'string' || !/^[\p{L}\p{N}_.:#/@-]{1,200}$/u.test(input.session)) {
    throw new CairnError('INVALID_INPUT', `session: must be 1–200 letters, digits or _ . : # / @ - (got ${JSON.stringify(input.session)})`, { field: 'session' });
  }
  if (typeof input.turn !== 'number' || !Number.isInteger(input.turn) || input.turn < 0) {
    throw new CairnError('INVALID_INPUT', `turn: must be a whole number, 0 or more (got ${JSON.stringify(input.turn)})`, { field: 'turn' });
  }
  const turnRedactions: RedactionCounts = {};
  const text = scrub(ctx, validateText(input.text), 'text', turnRedactions);
  if (input.speaker !== undefined && (typeof input.speaker !== 'string' || input.speaker.length > 200)) {
    throw new CairnError('INVALID_INPUT', 'speaker: must be a string of at most 200 characters', { field: 'speaker' });
  }
  const at = input.at === undefined ? null : validateTime(input.at, 'at');
  // Default item: the turn's own text, redacted by prepare so its event records its own redactions.
  const items = input.items ?? [{ text: input.text }];
  if (!Array.isArray(items) || items.length > 100) throw new CairnError('INVALID_INPUT', 'items: must be a list of at most 100 memories', { field: 'items' });
  const prepared = items.map((item) =>
    prepare(ctx, {
      ...item,
      namespace,
      createdAt: item.createdAt ?? at ?? undefined,
      metadata: { source: 'turn', sessionId: input.session, ...(input.speaker ? { speaker: input.speaker } : {}), ...item.metadata },
    }),
  );
  const stored = await checkEmbedder(ctx);
  const unique = prepared.filter((p, i) => prepared.findIndex((q) => q.dedupeKey === p.dedupeKey) === i);
  const missing = unique.filter((p) => !embedded?.has(indexText(p)));
  const fresh = await embedMany(ctx, missing.map((p) => indexText(p)));
  const vectorByKey = new Map(missing.map((p, i) => [p.dedupeKey, fresh[i] ?? null]));
  for (const p of unique) if (embedded?.has(indexText(p))) vectorByKey.set(p.dedupeKey, embedded.get(indexText(p)) ?? null);

  // The turn is atomic, so one blocked text holds the whole turn: the turn's own text (kept verbatim in
  // its event) and each item that would become a new memory are screened.
  if (options.screen !== false) {
    const fresh: typeof unique = [];
    for (const p of unique) if (!(await ctx.store.findLiveByDedupeKey(p.namespace, p.dedupeKey))) fresh.push(p);
    const candidates = [
      ...(fresh.some((p) => indexText(p) === text) ? [] : [{ text, vector: embedded?.get(text) ?? null }]),
      ...fresh.map((p) => ({ text: indexText(p), vector: vectorByKey.get(p.dedupeKey) ?? null })),
    ];
    const verdicts = await screenTexts(ctx, candidates);
    let worst: { i: number; verdict: FilterVerdict } | null = null;
    verdicts.forEach((verdict, i) => {
      if (verdict?.blocked && (!worst || verdict.score > worst.verdict.score)) worst = { i, verdict };
    });
    if (worst) {
      const { i, verdict } = worst as { i: number; verdict: FilterVerdict };
      const request = {
        op: 'turn',
        input: {
          namespace,
          session: input.session,
          turn: input.turn,
          text,
          ...(input.speaker !== undefined ? { speaker: input.speaker } : {}),
          ...(at ? { at } : {}),
          items: prepared.map((p) => (saveRequest(p) as { input: MemoryInput }).input),
        },
      };
      const [receipt] = await hold(ctx, [
        { text: (candidates[i] as { text: string }).text, verdict, op: 'turn', namespace, source: 'turn', agent: prepared[0]?.metadata.agent ?? null, request },
      ]);
      throw quarantinedError([{ receipt: receipt as QuarantineReceipt }], 1);
    }
  }

  await prepareEmbedder(ctx, stored);
  return ctx.store.transaction(async (tx) => {
    const now = ctx.now();
    await recordEmbedder(ctx, tx, now);
    const itemEvents: Parameters<typeof emit>[2][] = [];
    const itemIds: string[] = [];
    let itemsAdded = 0;
    let deduplicated = false;
    const inTurn = new Map<string, string>();
    for (const p of prepared) {
      const seen = inTurn.get(p.dedupeKey);
      if (seen) {
        itemIds.push(seen);
        deduplicated = true;
        continue;
      }
      const existing = await tx.findLiveByDedupeKey(p.namespace, p.dedupeKey);
      if (existing) {
        const updated: Memory = { ...existing, importance: Math.max(existing.importance, p.importance), updatedAt: now };
        itemEvents.push({ type: 'memory.updated', memory: updated });
        itemIds.push(existing.id);
        inTurn.set(p.dedupeKey, existing.id);
        deduplicated = true;
        continue;
      }
      const createdAt = p.createdAt ?? now;
      const memory: Memory = { ...p, supersedes: null, id: ulid(Date.parse(createdAt)), createdAt, updatedAt: now };
      itemEvents.push({ type: 'memory.saved', memory, vector: await putVector(tx, vectorByKey.get(p.dedupeKey) ?? null), ...redactionField(ctx, p) });
      itemIds.push(memory.id);
      inTurn.set(p.dedupeKey, memory.id);
      itemsAdded++;
    }
    const eventSeq = await emit(
      tx,
      namespace,
      {
        type: 'turn.committed',
        session: input.session,
        turn: input.turn,
        text,
        speaker: input.speaker ?? null,
        items: itemIds,
        ...(Object.keys(turnRedactions).length ? { redactions: turnRedactions } : {}),
      },
      now,
    );
    let lastSeq = eventSeq;
    for (const body of itemEvents) lastSeq = await emit(tx, namespace, body, now);
    if (options.inTx) await options.inTx(tx, now, itemIds);
    let snapshotVersion: number | null = null;
    if (ctx.snapshotEvery > 0 && (await tx.countEvents(namespace, 'turn.committed')) % ctx.snapshotEvery === 0) {
      const head = await tx.snapshotHead(namespace);
      if (snapshotDue(ctx.snapshotGrowth, lastSeq, head)) {
        snapshotVersion = await tx.putSnapshot(await buildSnapshot(tx, namespace, lastSeq, now), head?.version ?? null);
      }
    }
    return { eventSeq, itemIds, itemsAdded, deduplicated, snapshot: snapshotVersion !== null, snapshotVersion };
  });
}

/**
 * Writes a snapshot of the namespace at its latest event. Compare-and-swap: when `expectedVersion` is
 * given (the version the caller last saw; null for none) and another writer checkpointed since, this
 * fails with CONFLICT and writes nothing. Without it, the version read just before is expected.
 * The last sequence number and the projection are read inside the transaction: the snapshot must be the state
 * at that number, with no write in between.
 */
export async function checkpoint(ctx: EngineContext, options: { namespace?: string; expectedVersion?: number | null } = {}): Promise<{ version: number; seq: number }> {
  const namespace = ctx.ns(options.namespace);
  const expected = options.expectedVersion !== undefined ? options.expectedVersion : ((await ctx.store.getSnapshot(namespace))?.version ?? null);
  return ctx.store.transaction(async (tx) => {
    const seq = await tx.lastSeq(namespace);
    if (seq === 0) throw new CairnError('NOT_FOUND', `namespace ${namespace} has no events to snapshot`);
    const version = await tx.putSnapshot(await buildSnapshot(tx, namespace, seq, ctx.now()), expected);
    return { version, seq };
  });
}

/**
 * Commits every turn of each conversation, in order, one transaction per turn. With several
 * conversations, each goes to its own namespace `<namespace>/<conversation id>`.
 */
export async function ingest(ctx: EngineContext,
  conversations: Conversation[],
  options: { namespace?: string; onProgress?: ProgressFn } = {},
): Promise<{ namespace: string; conversation: string; turns: number; itemsAdded: number; snapshots: number; quarantined: number }[]> {
  const base = ctx.ns(options.namespace);
  const total = conversations.reduce((s, c) => s + c.turns.length, 0);
  let done = 0;
  const out = [];
  for (const c of conversations) {
    const namespace = conversations.length > 1 ? validateNamespace(`${base}/${c.id}`) : base;
    let itemsAdded = 0;
    let snapshots = 0;
    let quarantined = 0;
    // Embed the whole conversation in batches first (much faster than one text at a time); each turn
    // still commits in its own transaction.
    const texts = [...new Set(c.turns.map((t) => t.text))];
    const vectors = await embedMany(ctx, texts);
    const embedded = new Map(texts.map((t, i) => [t, vectors[i] ?? null]));
    for (const t of c.turns) {
      let r: TurnResult;
      try {
        r = await commitTurnWith(ctx, {
          namespace,
          session: t.session,
          turn: t.turn,
          text: t.text,
          ...(t.speaker ? { speaker: t.speaker } : {}),
          ...(t.at ? { at: t.at } : {}),
          items: [{ text: t.text, metadata: { source: 'import', ...(t.externalId ? { externalId: t.externalId } : {}) } }],
        }, embedded);
      } catch (err) {
        // A held turn is in the quarantine for review; the rest of the conversation goes on.
        if (!isCairnError(err, 'QUARANTINED')) throw err;
        quarantined++;
        options.onProgress?.(++done, total);
        continue;
      }
      itemsAdded += r.itemsAdded;
      if (r.snapshot) snapshots++;
      options.onProgress?.(++done, total);
    }
    out.push({ namespace, conversation: c.id, turns: c.turns.length, itemsAdded, snapshots, quarantined });
  }
  return out;
}
