import { CairnError } from '../interfaces/errors.js';
import type { QuarantineEntry, QuarantineOp, QuarantineReceipt, QuarantineView } from '../interfaces/quarantine.js';
import type { StoreTx } from '../interfaces/store.js';
import { emit, STORE_SCOPE } from './events.js';
import { ulid } from './ids.js';
import type { FilterVerdict } from './ingest-filter.js';
import { sha256Hex } from './text.js';

/**
 * The quarantine of the ingest filter: a blocked write is held for an operator, not dropped. What the log
 * and the review queue hold is content-free (see QuarantineEntry); the text and the original request sit in
 * the vault, the learned anchor in its own table, both erasable.
 */

/** Characters of the held text the review queue shows, so an operator can triage without reading it. */
export const PREVIEW_CHARS = 16;

export function previewOf(text: string): string {
  return [...text.replace(/\s+/gu, ' ').trim()].slice(0, PREVIEW_CHARS).join('');
}

/** A write the filter blocked, as the engine hands it over. */
export interface HeldWrite {
  /** The text that was scored and blocked (after redaction). */
  text: string;
  verdict: FilterVerdict;
  op: QuarantineOp;
  namespace: string;
  source: string | null;
  agent: string | null;
  /** JSON request that a release replays (already redacted). */
  request: unknown;
}

/**
 * Holds a blocked write in `tx`: a new entry with its vault row, or, when the same text
 * is already held, one more attempt on that entry. Writes only store-wide events: no namespace changes.
 */
export async function holdInTx(tx: StoreTx, held: HeldWrite, now: string): Promise<QuarantineReceipt> {
  const hash = sha256Hex(held.text);
  const score = Math.round(held.verdict.score * 10_000) / 10_000;
  const existing = (await tx.findQuarantineByHash(hash)).find((e) => e.status === 'held');
  if (existing) {
    const entry: QuarantineEntry = { ...existing, attempts: existing.attempts + 1, lastAttemptAt: now, score: Math.max(existing.score, score) };
    await emit(tx, STORE_SCOPE, { type: 'quarantine.repeated', entry }, now);
    return { id: entry.id, score, hash, repeat: true };
  }
  const entry: QuarantineEntry = {
    id: ulid(Date.parse(now)),
    hash,
    score,
    pass: held.verdict.pass,
    anchor: held.verdict.anchor,
    tricks: held.verdict.tricks,
    op: held.op,
    namespace: held.namespace,
    source: held.source,
    agent: held.agent,
    status: 'held',
    attempts: 1,
    createdAt: now,
    lastAttemptAt: now,
    decidedAt: null,
    reason: null,
    memoryIds: [],
  };
  // No learned anchor here: an automatic hold may be a mistake, and an anchor learned from a mistake would
  // hold every later note of the same shape. Only an operator's drop (or a poison mark) teaches.
  await tx.putQuarantineVault(entry.id, held.text, held.request);
  await emit(tx, STORE_SCOPE, { type: 'quarantine.held', entry }, now);
  return { id: entry.id, score, hash, repeat: false };
}

/** The error a blocked save or turn throws: says it was held and where, never repeats the text. */
export function quarantinedError(held: { receipt: QuarantineReceipt; position?: string }[], total: number): CairnError {
  const first = held[0]?.receipt;
  const hint = first ? `an operator can review it with \`cairn quarantine show ${first.id}\` and release it with \`cairn quarantine release ${first.id} --reason …\`` : undefined;
  if (held.length === 1 && total <= 1 && first) {
    return new CairnError(
      'QUARANTINED',
      `held for review: the text reads like an instruction to the model, so it was not stored (quarantine ${first.id}, score ${first.score.toFixed(3)})`,
      { field: 'text', ...(hint ? { hint } : {}) },
    );
  }
  const list = held.map((h) => `${h.position ? `${h.position} → ` : ''}quarantine ${h.receipt.id} (score ${h.receipt.score.toFixed(3)})`).join(', ');
  return new CairnError(
    'QUARANTINED',
    `held for review: ${held.length} of ${total} texts read like instructions to the model, so nothing was stored: ${list}`,
    { field: 'text', ...(hint ? { hint } : {}) },
  );
}

export function toView(entry: QuarantineEntry, vaultText: string | null): QuarantineView {
  return { ...entry, preview: vaultText === null ? null : previewOf(vaultText) };
}

/** Operator reasons: required for a release, 1–1000 characters. */
export function validateReason(value: unknown, required: boolean): string | null {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    if (required) throw new CairnError('INVALID_INPUT', 'reason: a release needs a reason (why the held text is safe to store)', { field: 'reason' });
    return null;
  }
  if (typeof value !== 'string' || value.length > 1000) throw new CairnError('INVALID_INPUT', 'reason: must be a string of at most 1000 characters', { field: 'reason' });
  return value.trim();
}
