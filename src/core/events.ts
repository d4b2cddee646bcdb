import { CairnError } from '../interfaces/errors.js';
import type { FeedbackVerdict, Memory } from '../interfaces/memory.js';
import type { QuarantineEntry } from '../interfaces/quarantine.js';
import type { EmbedderInfo, StoredEvent, StoreTx } from '../interfaces/store.js';
import type { RedactionCounts } from './redact.js';
import { assertOutsideErasures } from './erasure-lock.js';
import { analyse } from './lexical.js';

/**
 * The event vocabulary and the projection. The log is the source of truth: memory rows, full-text rows and
 * vectors are what `project` makes of the events, in order. The live write path and replay call the same
 * `project`, so a replayed store equals the live one by construction, and `cairn verify` proves it.
 *
 * Memory events carry the whole record after the change, so projecting one never reads the clock or the
 * previous row. Vectors are carried by content hash; the bytes live in the vector blob table, which is
 * part of the log, so replay never re-runs the embedding model.
 */

/**
 * Quarantine. A write the ingest filter blocks leaves no trace in any namespace: the only event is a
 * store-wide `quarantine.*` event carrying the content-free entry (hash, score, pass, anchor id, source,
 * times, status), projected into the quarantine table. The held text and the anchor learned from it are
 * derived from user content; they live in the vault and learned-anchor tables, outside the log, because the
 * log is immutable and an erasure request must be able to remove them. They are not part of any projection,
 * so `cairn verify` replays the log without them and still matches. `redactions` on memory and turn events
 * records which kinds of secret were replaced and how many, never the secret.
 */

/** Scope of store-wide events (the embedder record); never a valid namespace, which cannot be empty. */
export const STORE_SCOPE = '';

export type EventBody =
  | { type: 'memory.saved'; memory: Memory; vector: string | null; redactions?: RedactionCounts }
  | { type: 'memory.updated'; memory: Memory; vector?: string | null; redactions?: RedactionCounts }
  | { type: 'memory.superseded'; memory: Memory }
  | { type: 'memory.forgotten'; memory: Memory }
  /** An operator marked a stored memory as poisoned: it leaves recall at once (like a forget) and may teach the filter. */
  | { type: 'memory.poisoned'; memory: Memory; taught: boolean }
  | { type: 'memory.restored'; memory: Memory }
  /** A recalled memory marked useful, wrong or stale: the memory with its new counts. */
  | { type: 'memory.rated'; memory: Memory; verdict: FeedbackVerdict }
  | { type: 'memory.purged'; id: string }
  | { type: 'memory.reembedded'; id: string; vector: string }
  | { type: 'store.embedder'; embedder: EmbedderInfo }
  | { type: 'store.vectors-reset' }
  | { type: 'settings.changed'; key: string; value: unknown }
  | { type: 'turn.committed'; session: string; turn: number; text: string; speaker: string | null; items: string[]; redactions?: RedactionCounts }
  | { type: 'quarantine.held'; entry: QuarantineEntry }
  | { type: 'quarantine.repeated'; entry: QuarantineEntry }
  | { type: 'quarantine.released'; entry: QuarantineEntry }
  | { type: 'quarantine.dropped'; entry: QuarantineEntry }
  /** An operator read a held text in full: the audit records who and which entry, never the text. */
  | { type: 'quarantine.revealed'; quarantineId: string; by: string | null }
  /** An event whose content an erasure removed: it keeps its place in the log and projects to nothing. */
  | { type: 'erased'; erasure: string; was: string }
  | { type: 'erasure.completed'; certificate: string; scope: { namespace: string } | { subjectSha256: string }; counts: Record<string, number> };

export type EventType = EventBody['type'];

/** The text that is embedded and indexed for a memory: a route's title, description and paths count too. */
export function indexText(m: { text: string; route: Memory['route'] }): string {
  if (!m.route) return m.text;
  // Surfaces usually build a route's text from its title and description: count each only once, so a
  // route's words do not weigh double against an ordinary memory's.
  const extra = [m.route.title, m.route.description].filter((part) => part && !m.text.includes(part));
  return [...extra, m.text, m.route.paths.join(' ')].filter(Boolean).join('\n');
}

/**
 * The terms a memory is indexed under (its postings, lower case, stemmed): the one rule, read by the projection
 * and by erasure, whose proof looks for the erased memories' terms where a backend keeps copies of them.
 */
export function indexedTerms(m: { text: string; route: Memory['route'] }): string[] {
  return analyse(indexText(m));
}

function memoryIdOf(body: EventBody): string | null {
  if ('memory' in body) return body.memory.id;
  if ('id' in body) return body.id;
  return null;
}

/** Splits an event body into the stored payload (everything but `type`). */
function payloadOf(body: EventBody): Record<string, unknown> {
  const { type: _type, ...rest } = body;
  return rest;
}

export function bodyOf(event: Pick<StoredEvent, 'type' | 'payload'>): EventBody {
  return { type: event.type, ...(event.payload as object) } as EventBody;
}

/**
 * The vector a memory event refers to. A vector whose size differs from the store's current embedder was
 * made by an embedder since replaced; a `memory.reembedded` event later in the log carries its successor,
 * so it is left out (this only happens when replaying across a reindex).
 */
async function vectorFor(tx: StoreTx, hash: string | null | undefined): Promise<Float32Array | null> {
  if (!hash) return null;
  const v = await tx.getVectorBlob(hash);
  if (!v) throw new CairnError('INTEGRITY', `the log references vector ${hash.slice(0, 12)}… which is missing from the vector blobs`);
  const current = await tx.embedder();
  return current && current.dimensions === v.length ? v : null;
}

/** Inserts a memory row with its full-text row and (by hash) its vector: one step of a projection. */
export async function insertProjected(tx: StoreTx, memory: Memory, vectorHashHex: string | null): Promise<void> {
  await tx.insertMemory(memory, await vectorFor(tx, vectorHashHex), indexedTerms(memory));
}

/** Applies one event to the projection. Deterministic: the same events give the same state. */
export async function project(tx: StoreTx, body: EventBody, scope: string): Promise<void> {
  switch (body.type) {
    case 'memory.saved':
      await insertProjected(tx, body.memory, body.vector);
      return;
    case 'memory.updated':
      if ('vector' in body) {
        await tx.updateMemory(body.memory, { vector: await vectorFor(tx, body.vector), terms: indexedTerms(body.memory) });
      } else {
        await tx.updateMemory(body.memory);
      }
      return;
    case 'memory.superseded':
    case 'memory.forgotten':
    case 'memory.poisoned':
    case 'memory.restored':
    case 'memory.rated':
      await tx.updateMemory(body.memory);
      return;
    case 'memory.purged':
      await tx.deleteMemory(body.id);
      return;
    case 'memory.reembedded': {
      const v = await vectorFor(tx, body.vector);
      if (v) await tx.setVector(body.id, v);
      return;
    }
    case 'store.embedder':
      await tx.setEmbedder(body.embedder);
      return;
    case 'store.vectors-reset':
      await tx.resetVectors();
      return;
    case 'settings.changed':
      await tx.setSetting(scope, body.key, body.value);
      return;
    case 'turn.committed':
      return; // the turn's items arrive as their own memory events
    case 'erased':
    case 'erasure.completed':
    case 'quarantine.revealed':
      return;
    case 'quarantine.held':
    case 'quarantine.repeated':
    case 'quarantine.released':
    case 'quarantine.dropped':
      await tx.putQuarantine(body.entry);
      return;
    default: {
      const unknown: { type: string } = body;
      throw new CairnError('INTEGRITY', `unknown event type ${unknown.type} in the log`);
    }
  }
}

/**
 * Appends an event to its scope and projects it, in the caller's transaction. Returns its sequence number.
 * Refused with CONFLICT, writing nothing, while an erasure of that scope is pending (erasure-lock.ts).
 */
export async function emit(tx: StoreTx, scope: string, body: EventBody, at: string): Promise<number> {
  await assertOutsideErasures(tx, scope, body);
  const seq = await tx.appendEvent({ namespace: scope, type: body.type, memoryId: memoryIdOf(body), payload: payloadOf(body), at });
  await project(tx, body, scope);
  return seq;
}
