// The write path: validate, redact, anchor, dedupe, embed, screen, commit with its event (save, saveMany,
// update), and the helpers every write shares (the embedder record, vector blobs, holding in the quarantine); embedding
// itself is in embedding.ts, which searches use too.
import { CairnError } from '../interfaces/errors.js';
import { isCurrent, type LikelyReplaced, type Memory, type MemoryInput, type MemoryKind, type SaveResult } from '../interfaces/memory.js';
import type { EmbedderInfo, StoreTx } from '../interfaces/store.js';
import { ulid } from './ids.js';
import { vectorHash } from './checksum.js';
import { emit, indexText, STORE_SCOPE } from './events.js';
import { analyse } from './lexical.js';
import { dot, isLikelyUpdate, LIKELY_UPDATE, LIKELY_UPDATE_MAX } from './topics.js';
import { dedupeKey } from './text.js';
import type { CodeRef } from '../interfaces/code.js';
import { screenForStore, type FilterVerdict } from './ingest-filter.js';
import { instructionVerdictOf } from './intent.js';
import { holdInTx, quarantinedError, type HeldWrite } from './quarantine.js';
import { applyRedaction, type RedactionCounts } from './redact.js';
import type { QuarantineReceipt } from '../interfaces/quarantine.js';
import {
  validateId,
  validateImportance,
  validateKind,
  validateAnchors,
  validateProvenance,
  validateRoute,
  validateScope,
  validateTags,
  validateText,
  validateTime,
} from './validate.js';
import type { EngineContext, SaveOutcome, WriteOptions } from './engine-context.js';
import { memoryIn } from './reads.js';
import { checkEmbedder, embedMany } from './embedding.js';

export interface UpdatePatch {
  text?: string;
  kind?: MemoryKind;
  importance?: number;
  tags?: string[];
  expiresAt?: string | null;
}

export function validateTaskId(value: unknown): string {
  if (typeof value !== 'string' || !/^[\p{L}\p{N}_.:#/-]{1,128}$/u.test(value)) {
    throw new CairnError('INVALID_INPUT', `taskId: must be 1–128 letters, digits or _ . : # / - (got ${JSON.stringify(value)})`, { field: 'taskId' });
  }
  return value;
}

/** A validated save request: the record without id and timestamps decided yet. */
export type Prepared = ReturnType<typeof prepare>;

/** Validates a save request into a complete record (without id and timestamps decided yet). */
export function prepare(ctx: EngineContext, input: MemoryInput): Omit<Memory, 'id' | 'createdAt' | 'updatedAt'> & { createdAt: string | null } {
  if (typeof input !== 'object' || input === null) throw new CairnError('INVALID_INPUT', 'memory must be an object');
  const namespace = ctx.ns(input.namespace);
  // Redaction runs first, so no later step (dedupe key, embedding, filter, event, quarantine) sees a secret.
  const redactions: RedactionCounts = {};
  const text = scrub(ctx, validateText(input.text), 'text', redactions);
  const kind = input.kind === undefined ? 'note' : validateKind(input.kind);
  const rawRoute = input.route === undefined || input.route === null ? null : validateRoute(input.route);
  const route = rawRoute && {
    title: scrub(ctx, rawRoute.title, 'route.title', redactions),
    description: scrub(ctx, rawRoute.description, 'route.description', redactions),
    paths: rawRoute.paths.map((path, i) => scrub(ctx, path, `route.paths[${i}]`, redactions)),
  };
  if (kind === 'route' && !route) {
    throw new CairnError('INVALID_INPUT', 'route: a memory of kind route needs a route (title, description, paths)', {
      field: 'route',
    });
  }
  if (kind !== 'route' && route) {
    throw new CairnError('INVALID_INPUT', 'route: only memories of kind route carry a route', { field: 'route' });
  }
  const importance = input.importance === undefined ? 5 : validateImportance(input.importance);
  const tags = input.tags === undefined ? [] : scrubTags(ctx, validateTags(input.tags), redactions);
  const taskId = input.taskId === undefined || input.taskId === null ? null : validateTaskId(input.taskId);
  const metadata = scrubMetadata(ctx, validateProvenance(input.metadata), redactions);
  const createdAt = input.createdAt === undefined ? null : validateTime(input.createdAt, 'createdAt');
  const expiresAt = input.expiresAt === undefined || input.expiresAt === null ? null : validateTime(input.expiresAt, 'expiresAt');
  const supersedes = input.supersedes === undefined || input.supersedes === null ? null : validateId(input.supersedes, 'supersedes');
  const prepared = {
    namespace,
    text,
    kind,
    importance,
    tags,
    taskId,
    metadata,
    route,
    createdAt,
    expiresAt,
    supersedes,
    supersededBy: null,
    forgottenAt: null,
    forgetReason: null,
    dedupeKey: dedupeKey(namespace, text),
    ...instructionField(indexText({ text, route })),
  };
  if (Object.keys(redactions).length) ctx.redactionsOf.set(prepared, redactions);
  const anchors = input.anchors === undefined ? [] : validateAnchors(input.anchors);
  const scope = input.scope === undefined ? null : validateScope(input.scope);
  if (anchors.length || scope) ctx.codeInputOf.set(prepared, { anchors, scope });
  return prepared;
}

/** Resolves the code references of prepared records (given ones win) and sets them as their `code`. */
export async function attachCode(ctx: EngineContext, prepared: Prepared[], given: WriteOptions['given']): Promise<void> {
  const refs = await ctx.code.anchor(
    prepared.map((p, i) => {
      const asked = ctx.codeInputOf.get(p);
      // A record whose code is given is not looked up (a foreign namespace answers null without work).
      return { namespace: given?.[i] ? '' : p.namespace, text: p.text, route: p.route, anchors: asked?.anchors ?? [], scope: asked?.scope ?? null };
    }),
  );
  prepared.forEach((p, i) => {
    const ref = given?.[i] ? (given[i] as { code: CodeRef | null }).code : refs[i];
    if (ref) (p as { code?: CodeRef }).code = ref;
  });
}

/** Redacts one field in the configured mode (reject mode throws INVALID_INPUT naming the kind). */
export function scrub(ctx: EngineContext, text: string, field: string, counts: RedactionCounts): string {
  return applyRedaction(text, ctx.redaction, field, counts);
}

export function scrubTags(ctx: EngineContext, tags: string[], counts: RedactionCounts): string[] {
  return [...new Set(tags.map((tag, i) => (scrub(ctx, tag, `tags[${i}]`, counts) === tag ? tag : 'redacted')))];
}

export function scrubMetadata(ctx: EngineContext, metadata: Memory['metadata'], counts: RedactionCounts): Memory['metadata'] {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata)) out[key] = scrub(ctx, value as string, `metadata.${key}`, counts);
  return out as Memory['metadata'];
}

/** The `redactions` member of a write event: present only when something was redacted. */
export function redactionField(ctx: EngineContext, p: object): { redactions?: RedactionCounts } {
  const counts = ctx.redactionsOf.get(p);
  return counts ? { redactions: counts } : {};
}

/** `{ instructionCheck }` for a memory about to be written (Memory.instructionCheck), of its indexText. */
function instructionField(text: string): Pick<Memory, 'instructionCheck'> {
  return { instructionCheck: instructionVerdictOf(text) };
}

/** Runs the ingest filter over texts about to be stored; null entries passed unscored. */
export async function screenTexts(ctx: EngineContext, items: { text: string; vector: Float32Array | null }[]): Promise<(FilterVerdict | null)[]> {
  return screenForStore(ctx.store, ctx.embedder, ctx.filterConfig, items);
}

/** Holds blocked writes in one transaction of their own (store-wide events only). */
export async function hold(ctx: EngineContext, held: HeldWrite[]): Promise<QuarantineReceipt[]> {
  return ctx.store.transaction(async (tx) => {
    const now = ctx.now();
    const receipts: QuarantineReceipt[] = [];
    for (const h of held) receipts.push(await holdInTx(tx, h, now));
    return receipts;
  });
}

/** The request a release replays for a held save: the prepared (redacted) fields. */
export function saveRequest(p: Prepared): Record<string, unknown> {
  return {
    op: 'save',
    input: {
      text: p.text,
      namespace: p.namespace,
      kind: p.kind,
      importance: p.importance,
      tags: p.tags,
      taskId: p.taskId,
      metadata: p.metadata,
      route: p.route,
      ...(p.createdAt ? { createdAt: p.createdAt } : {}),
      expiresAt: p.expiresAt,
      supersedes: p.supersedes,
    },
  };
}

/**
 * Before a transaction that may record the configured embedder (`stored`, read just before, is null): the
 * store prepares its vector objects outside any transaction (Store.prepareVectors), so recording it runs no
 * DDL. Idempotent; a store that already holds an embedder needs nothing.
 */
export async function prepareEmbedder(ctx: EngineContext, stored: EmbedderInfo | null): Promise<void> {
  if (!ctx.embedder || !ctx.store.capabilities.vectorSearch || stored) return;
  await ctx.store.prepareVectors({ id: ctx.embedder.id, dimensions: ctx.embedder.dimensions });
}

/**
 * Records the configured embedder in the log on the first vector write; refuses a different one. Read inside
 * the transaction on purpose: whether to record decides the write, and must hold against a concurrent first
 * writer (prepareEmbedder ran before it).
 */
export async function recordEmbedder(ctx: EngineContext, tx: StoreTx, now: string): Promise<void> {
  if (!ctx.embedder || !ctx.store.capabilities.vectorSearch) return;
  const current = await tx.embedder();
  const wanted = { id: ctx.embedder.id, dimensions: ctx.embedder.dimensions };
  if (!current) {
    await emit(tx, STORE_SCOPE, { type: 'store.embedder', embedder: wanted }, now);
  } else if (current.id !== wanted.id || current.dimensions !== wanted.dimensions) {
    throw new CairnError('EMBEDDER_MISMATCH', `the store holds ${current.dimensions}-dimension vectors from ${current.id}, but the configured embedder is ${wanted.id} (${wanted.dimensions} dimensions)`, {
      hint: 'run `cairn reindex` to re-embed every memory with the configured embedder',
    });
  }
}

/** Stores a vector in the log's blob table and returns its content hash. */
export async function putVector(tx: StoreTx, vector: Float32Array | null): Promise<string | null> {
  if (!vector) return null;
  const hash = vectorHash(vector);
  await tx.putVectorBlob(hash, vector);
  return hash;
}

/**
 * Saves one memory. A repeat of a live memory returns its id with `duplicate: true` and writes nothing.
 * A new memory comes back with the live older ones it probably updates (`likelyReplaces`), left as they are.
 */
export async function save(ctx: EngineContext, input: MemoryInput): Promise<SaveResult> {
  const [result] = await saveMany(ctx, [input]);
  if (!result) throw new CairnError('INTERNAL', 'save produced no result');
  if (result.duplicate) return result;
  return { ...result, likelyReplaces: result.likelyReplaces ?? [] };
}

/** A note a new one may update, with the cosine of their vectors. */
interface ReplaceCandidate {
  memory: Memory;
  similarity: number;
}

/**
 * Only batches of at most this many new memories record what each likely replaces; larger ones (imports,
 * transcripts, bulk saves) record nothing. Against the store, one vector search per item made bulk saves far
 * slower (bench/floor-scale.ts, 10,000 generated notes in 500-note batches: over 5 minutes against 12 s);
 * within the batch, LoCoMo's dev conversations (saved 128 turns a batch) paired chit-chat turns and lost 1.9
 * points of hybrid recall@5 (62.1 -> 60.2; @10 77.2 -> 76.8).
 */
export const LIKELY_LOOKUP_MAX_BATCH = 16;

/** How many of a new note's nearest notes are tested (isLikelyUpdate). */
const LIKELY_NEAREST = 10;

/** The lowest cosine at which isLikelyUpdate can hold. */
const LIKELY_UPDATE_FLOOR = Math.min(LIKELY_UPDATE.minCosine, LIKELY_UPDATE.statedMinCosine);

/** The live notes of the namespace nearest to `vector` that are close enough to be updated by it. */
async function nearestOlder(ctx: EngineContext, namespace: string, vector: Float32Array, skip: (id: string) => boolean): Promise<ReplaceCandidate[]> {
  const hits = (await ctx.store.vectorCandidates(vector, LIKELY_NEAREST, { namespace, now: ctx.now(), approximate: true })).filter((h) => !skip(h.id) && h.similarity >= LIKELY_UPDATE_FLOOR);
  if (hits.length === 0) return [];
  const byId = new Map((await ctx.store.getMemories(hits.map((h) => h.id))).map((m) => [m.id, m]));
  return hits.flatMap((h) => {
    const m = byId.get(h.id);
    return m ? [{ memory: m, similarity: h.similarity }] : [];
  });
}

/** nearestOlder for each text about to be embedded that has a vector and is not a route, one after the other. */
async function likelyLookups(ctx: EngineContext, texts: readonly Prepared[], vectorByKey: ReadonlyMap<string, Float32Array | null>): Promise<Map<string, ReplaceCandidate[]>> {
  const nearby = new Map<string, ReplaceCandidate[]>();
  for (const p of texts) {
    const vector = vectorByKey.get(p.dedupeKey);
    if (vector && p.kind !== 'route') nearby.set(p.dedupeKey, await nearestOlder(ctx, p.namespace, vector, () => false));
  }
  return nearby;
}

/** Of the candidates, those created before `memory` that it probably updates, closest first, at most LIKELY_UPDATE_MAX. */
function pickLikelyReplaced(memory: Pick<Memory, 'text' | 'route' | 'kind' | 'createdAt'>, candidates: ReplaceCandidate[]): LikelyReplaced[] {
  if (memory.kind === 'route') return [];
  const terms = new Set(analyse(indexText(memory)));
  const out: LikelyReplaced[] = [];
  for (const { memory: m, similarity } of [...candidates].sort((a, b) => b.similarity - a.similarity)) {
    if (m.kind === 'route' || m.createdAt > memory.createdAt) continue;
    if (isLikelyUpdate(memory.text, terms, new Set(analyse(indexText(m))), similarity)) out.push({ id: m.id, text: m.text, similarity: Math.round(similarity * 1000) / 1000 });
    if (out.length >= LIKELY_UPDATE_MAX) break;
  }
  return out;
}

/**
 * The notes a memory being written probably updates, decided in its transaction and recorded in the
 * memory itself (`likelyReplaces`), so its save event carries them and replay reproduces them: the store's
 * candidates found before the transaction that are still current, and the batch's earlier memories.
 */
async function replacedInTx(
  tx: StoreTx,
  memory: Memory,
  vector: Float32Array | null,
  fromStore: ReplaceCandidate[],
  batch: readonly { memory: Memory; vector: Float32Array | null }[],
): Promise<LikelyReplaced[]> {
  if (!vector || memory.kind === 'route') return [];
  // The batch's nearest, as many as the store lookup returns: the term test is the costly part.
  const inBatch = batch
    .flatMap((b) => {
      if (!b.vector || b.memory.namespace !== memory.namespace || b.vector.length !== vector.length) return [];
      const similarity = dot(vector, b.vector);
      return similarity >= LIKELY_UPDATE_FLOOR ? [{ memory: b.memory, similarity }] : [];
    })
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, LIKELY_NEAREST);
  // The note it supersedes is replaced outright, wherever it came from.
  const picked = pickLikelyReplaced(memory, [...fromStore, ...inBatch].filter((c) => c.memory.id !== memory.supersedes));
  const out: LikelyReplaced[] = [];
  for (const l of picked) {
    const now = await tx.getMemory(l.id);
    if (now && isCurrent(now) && now.namespace === memory.namespace) out.push(l);
  }
  return out;
}

/**
 * Saves several memories: one embedding batch, then one transaction. All land or none does. Repeats
 * (against the store or earlier in the batch) come back as duplicates.
 */
export async function saveMany(ctx: EngineContext, inputs: MemoryInput[]): Promise<SaveResult[]> {
  const outcomes = await saveScreened(ctx, inputs, { partial: false });
  return outcomes.map((o) => {
    if ('quarantined' in o) throw new CairnError('INTERNAL', 'a held item reached the results of an all-or-nothing batch');
    return o;
  });
}

/**
 * The write path of save, saveMany and import: redact, dedupe, embed, screen, commit. Texts the ingest
 * filter blocks are held in the quarantine; with `partial` the rest are stored and the held ones come
 * back as `{ quarantined }`, otherwise nothing is stored and QUARANTINED is thrown.
 * Inside the transaction it re-reads only what decides the write under the lock (the embedder record, the
 * dedupe key, a given id, the memory superseded); the dedupe pre-check, embedding and screening run before it.
 */
export async function saveScreened(ctx: EngineContext, inputs: MemoryInput[], options: WriteOptions): Promise<SaveOutcome[]> {
  const prepared = inputs.map((input) => prepare(ctx, input));
  await attachCode(ctx, prepared, options.given);
  const stored = await checkEmbedder(ctx);

  // Cheap pre-check, a plain read (no writer lock), so repeats cost no embedding; the commit re-checks.
  const known = new Map<string, Memory>();
  for (const p of prepared) {
    const hit = await ctx.store.findLiveByDedupeKey(p.namespace, p.dedupeKey);
    if (hit) known.set(p.dedupeKey, hit);
  }
  const toEmbed = prepared.filter((p, i) => !known.has(p.dedupeKey) && prepared.findIndex((q) => q.dedupeKey === p.dedupeKey) === i);
  const vectors = await embedMany(ctx, toEmbed.map((p) => indexText(p)));
  const vectorByKey = new Map(toEmbed.map((p, i) => [p.dedupeKey, vectors[i] ?? null]));

  // The notes each new memory may update, looked up before the transaction (the write lock is not held for
  // vector searches; the transaction keeps those still current) and while the filter reads the texts: a store
  // that searches on a worker thread does both at once. A held text's lookup goes unused.
  const recordReplaces = options.recordLikelyReplaces !== false && toEmbed.length <= LIKELY_LOOKUP_MAX_BATCH;
  const lookups = stored && ctx.store.capabilities.vectorSearch && recordReplaces ? likelyLookups(ctx, toEmbed, vectorByKey) : Promise.resolve(new Map<string, ReplaceCandidate[]>());
  // Waited for beside the filter whatever it did: a held write answers QUARANTINED, a write that goes on fails with it.
  const looked = lookups.catch(() => undefined);

  // The filter scores only texts that would become new memories, reusing their storage vectors.
  const blocked = new Map<string, HeldWrite>();
  if (options.screen !== false) {
    const [verdicts] = await Promise.all([screenTexts(ctx, toEmbed.map((p) => ({ text: indexText(p), vector: vectorByKey.get(p.dedupeKey) ?? null }))), looked]);
    toEmbed.forEach((p, i) => {
      const verdict = verdicts[i];
      if (!verdict?.blocked) return;
      blocked.set(p.dedupeKey, {
        text: indexText(p),
        verdict,
        op: 'save',
        namespace: p.namespace,
        source: p.metadata.source ?? null,
        agent: p.metadata.agent ?? null,
        request: saveRequest(p),
      });
    });
  }
  if (blocked.size > 0 && !options.partial) {
    const receipts = await hold(ctx, [...blocked.values()]);
    const byKey = new Map([...blocked.keys()].map((k, i) => [k, receipts[i] as QuarantineReceipt]));
    const held = prepared.flatMap((p, i) => {
      const receipt = byKey.get(p.dedupeKey);
      if (!receipt) return [];
      byKey.delete(p.dedupeKey);
      return [{ receipt, position: `item ${i + 1}` }];
    });
    throw quarantinedError(held, prepared.length);
  }

  const nearby = await lookups;

  if (prepared.some((p) => !blocked.has(p.dedupeKey))) await prepareEmbedder(ctx, stored);
  return ctx.store.transaction(async (tx) => {
    const now0 = ctx.now();
    // A batch that is held as a whole records nothing else: not even the embedder of a fresh store.
    if (prepared.some((p) => !blocked.has(p.dedupeKey))) await recordEmbedder(ctx, tx, now0);
    const results: SaveOutcome[] = [];
    const savedInBatch = new Map<string, Memory>();
    const batchVectors: { memory: Memory; vector: Float32Array | null }[] = [];
    const heldInBatch = new Map<string, QuarantineReceipt>();
    for (const [index, p] of prepared.entries()) {
      const hold = blocked.get(p.dedupeKey);
      if (hold) {
        const receipt = heldInBatch.get(p.dedupeKey) ?? (await holdInTx(tx, hold, now0));
        heldInBatch.set(p.dedupeKey, receipt);
        results.push({ quarantined: receipt });
        continue;
      }
      const existing = savedInBatch.get(p.dedupeKey) ?? (await tx.findLiveByDedupeKey(p.namespace, p.dedupeKey));
      if (existing) {
        results.push({ id: existing.id, duplicate: true, memory: existing });
        continue;
      }
      let vector = vectorByKey.get(p.dedupeKey) ?? null;
      if (vector === null && ctx.embedder && ctx.store.capabilities.vectorSearch) {
        // Another process forgot or superseded the duplicate between the pre-check and now.
        [vector] = (await embedMany(ctx, [indexText(p)])) as [Float32Array];
      }
      const now = ctx.now();
      const createdAt = p.createdAt ?? now;
      const givenId = options.given?.[index]?.id;
      if (givenId && (await tx.getMemory(givenId))) throw new CairnError('CONFLICT', `a memory with id ${givenId} already exists`, { field: 'id' });
      const written: Memory = { ...p, id: givenId ?? ulid(Date.parse(createdAt)), createdAt, updatedAt: now };
      const replaces = recordReplaces ? await replacedInTx(tx, written, vector, nearby.get(p.dedupeKey) ?? [], batchVectors) : [];
      const memory: Memory = replaces.length ? { ...written, likelyReplaces: replaces.map((l) => l.id) } : written;
      // A memory imported from another store (sync) may name a predecessor this store never had: the
      // reference is kept as written, with nothing to link.
      const old = memory.supersedes ? await tx.getMemory(memory.supersedes) : null;
      const dangling = givenId !== undefined && memory.supersedes !== null && !old;
      if (memory.supersedes && !dangling) {
        if (!old || old.namespace !== memory.namespace) {
          throw new CairnError('NOT_FOUND', `supersedes: no memory ${memory.supersedes} in namespace ${memory.namespace}`, { field: 'supersedes' });
        }
        if (old.supersededBy) {
          throw new CairnError('CONFLICT', `memory ${old.id} is already superseded by ${old.supersededBy}`, { field: 'supersedes' });
        }
        await emit(tx, memory.namespace, { type: 'memory.saved', memory, vector: await putVector(tx, vector), ...redactionField(ctx, p) }, now);
        await emit(tx, memory.namespace, { type: 'memory.superseded', memory: { ...old, supersededBy: memory.id, updatedAt: now } }, now);
      } else {
        await emit(tx, memory.namespace, { type: 'memory.saved', memory, vector: await putVector(tx, vector), ...redactionField(ctx, p) }, now);
      }
      savedInBatch.set(p.dedupeKey, memory);
      batchVectors.push({ memory, vector });
      results.push({ id: memory.id, duplicate: false, memory, ...(replaces.length ? { likelyReplaces: replaces } : {}) });
    }
    if (options.inTx) await options.inTx(tx, ctx.now(), results.flatMap((r) => ('id' in r ? [r.id] : [])));
    return results;
  });
}

/** Changes fields of a memory in place; a new text is re-embedded and re-indexed in the same commit. */
export async function update(ctx: EngineContext, id: string, patch: UpdatePatch, options: { namespace?: string } = {}): Promise<Memory> {
  return updateWith(ctx, id, patch, options, {});
}

/**
 * The memory is read again inside the transaction (the change is based on it) with the dedupe clash check; the
 * read before only fails early and picks what to embed.
 */
export async function updateWith(ctx: EngineContext, id: string, patch: UpdatePatch, options: { namespace?: string }, write: WriteOptions): Promise<Memory> {
  const mid = validateId(id);
  const namespace = ctx.ns(options.namespace);
  const redactions: RedactionCounts = {};
  const text = patch.text === undefined ? undefined : scrub(ctx, validateText(patch.text), 'text', redactions);
  const kind = patch.kind === undefined ? undefined : validateKind(patch.kind);
  const importance = patch.importance === undefined ? undefined : validateImportance(patch.importance);
  const tags = patch.tags === undefined ? undefined : scrubTags(ctx, validateTags(patch.tags), redactions);
  const expiresAt = patch.expiresAt === undefined ? undefined : patch.expiresAt === null ? null : validateTime(patch.expiresAt, 'expiresAt');
  await checkEmbedder(ctx);
  const current = await memoryIn(ctx, mid, { namespace });
  if (!current) throw new CairnError('NOT_FOUND', `no memory ${mid} in namespace ${namespace}`, { field: 'id' });
  const textChanged = text !== undefined && text !== current.text;
  const [vector] = textChanged ? await embedMany(ctx, [indexText({ text, route: current.route })]) : [null];
  if (textChanged && write.screen !== false) {
    const screened = indexText({ text, route: current.route });
    const [verdict] = await screenTexts(ctx, [{ text: screened, vector: vector ?? null }]);
    if (verdict?.blocked) {
      const request = { op: 'update', id: mid, namespace, patch: { ...patch, text, ...(tags ? { tags } : {}) } };
      const [receipt] = await hold(ctx, [
        { text: screened, verdict, op: 'update', namespace, source: current.metadata.source ?? null, agent: current.metadata.agent ?? null, request },
      ]);
      throw quarantinedError([{ receipt: receipt as QuarantineReceipt }], 1);
    }
  }
  // A new text is checked before the transaction (a cold process compiles the rules: no lock is held for that).
  const plannedCheck = text !== undefined ? instructionField(indexText({ text, route: current.route })) : null;
  return ctx.store.transaction(async (tx) => {
    const fresh = await tx.getMemory(mid);
    if (!fresh || fresh.namespace !== namespace) throw new CairnError('NOT_FOUND', `no memory ${mid} in namespace ${namespace}`, { field: 'id' });
    const now = ctx.now();
    const next: Memory = {
      ...fresh,
      text: text ?? fresh.text,
      kind: kind ?? fresh.kind,
      importance: importance ?? fresh.importance,
      tags: tags ?? fresh.tags,
      expiresAt: expiresAt === undefined ? fresh.expiresAt : expiresAt,
      dedupeKey: text === undefined ? fresh.dedupeKey : dedupeKey(namespace, text),
      updatedAt: now,
    };
    // A new text is checked again; an unchanged one keeps what was recorded.
    if (plannedCheck) Object.assign(next, plannedCheck);
    if (next.dedupeKey !== fresh.dedupeKey) {
      const clash = await tx.findLiveByDedupeKey(namespace, next.dedupeKey);
      if (clash && clash.id !== mid) throw new CairnError('CONFLICT', `an identical live memory already exists: ${clash.id}`, { field: 'text' });
    }
    const redactionField = Object.keys(redactions).length ? { redactions } : {};
    if (textChanged) {
      await emit(tx, namespace, { type: 'memory.updated', memory: next, vector: await putVector(tx, vector ?? null), ...redactionField }, now);
    } else {
      await emit(tx, namespace, { type: 'memory.updated', memory: next, ...redactionField }, now);
    }
    if (write.inTx) await write.inTx(tx, now, [next.id]);
    return next;
  });
}
