import { CairnError } from '../interfaces/errors.js';
import { QUARANTINE_STATUSES, type QuarantineEntry, type QuarantineFilter, type QuarantineOp, type QuarantineReceipt, type QuarantineView } from '../interfaces/quarantine.js';
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
 * Looks the held text up inside the transaction: two writers holding the same text must make one entry, not
 * two.
 */
export async function holdInTx(tx: StoreTx, held: HeldWrite, now: string): Promise<QuarantineReceipt> {
  const hash = sha256Hex(held.text);
  const score = Math.round(held.verdict.score * 10_000) / 10_000;
  const existing = (await tx.findQuarantineByHash(hash)).find((e) => e.status === 'held');
  if (existing) {
    const entry: QuarantineEntry = { ...existing, attempts: existing.attempts + 1, lastAttemptAt: now, score: Math.max(existing.score, score) };
    await emit(tx, STORE_SCOPE, { type: 'quarantine.repeated', entry }, now);
    return { id: entry.id, score, hash, repeat: true, reasons: held.verdict.reasons };
  }
  const entry: QuarantineEntry = {
    id: ulid(Date.parse(now)),
    hash,
    score,
    pass: held.verdict.pass,
    anchor: held.verdict.anchor,
    tricks: held.verdict.tricks,
    reasons: held.verdict.reasons,
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
  return { id: entry.id, score, hash, repeat: false, reasons: held.verdict.reasons };
}

/** The error a blocked save or turn throws: says it was held and where, never repeats the text. */
export function quarantinedError(held: { receipt: QuarantineReceipt; position?: string }[], total: number): CairnError {
  const first = held[0]?.receipt;
  const hint = first ? `an operator can review it with \`cairn quarantine show ${first.id}\` and release it with \`cairn quarantine release ${first.id} --reason …\`` : undefined;
  if (held.length === 1 && total <= 1 && first) {
    return new CairnError(
      'QUARANTINED',
      `held for review, not stored (quarantine ${first.id}, score ${first.score.toFixed(3)}): ${first.reasons.join('; ')}`,
      { field: 'text', ...(hint ? { hint } : {}) },
    );
  }
  const list = held.map((h) => `${h.position ? `${h.position} → ` : ''}quarantine ${h.receipt.id} (score ${h.receipt.score.toFixed(3)}: ${h.receipt.reasons.join('; ')})`).join(', ');
  return new CairnError(
    'QUARANTINED',
    `held for review: ${held.length} of ${total} texts read like instructions to the agent, so nothing was stored: ${list}`,
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

/** The classifier's score line of a reason list: not a reason to group or filter by. */
const SCORE_LINE = /^the classifier scores it /u;

/** Why an entry was held, without the classifier's score line: the reasons to show, group and filter by. */
export function heldReasons(e: { reasons?: readonly string[] | null }): string[] {
  return (e.reasons ?? []).filter((r) => !SCORE_LINE.test(r));
}

/** Validates a review filter from any surface: one rule for the CLI, the API and the page. */
export function validateFilter(raw: Record<string, unknown>): QuarantineFilter {
  const f: QuarantineFilter = {};
  const text = (k: string, max = 200): string | undefined => {
    const v = raw[k];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string' || v.length > max) throw new CairnError('INVALID_INPUT', `${k}: must be a string of at most ${max} characters`, { field: k });
    return v;
  };
  const num = (k: string): number | undefined => {
    const v = raw[k];
    if (v === undefined || v === null || v === '') return undefined;
    const n = typeof v === 'number' ? v : Number(v);
    if (!Number.isFinite(n) || n < -1 || n > 1) throw new CairnError('INVALID_INPUT', `${k}: must be a number from -1 to 1`, { field: k });
    return n;
  };
  const time = (k: string): string | undefined => {
    const v = text(k, 40);
    if (v !== undefined && Number.isNaN(Date.parse(v))) throw new CairnError('INVALID_INPUT', `${k}: must be an ISO-8601 date or time`, { field: k });
    return v === undefined ? undefined : new Date(Date.parse(v)).toISOString();
  };
  const status = text('status', 20);
  if (status !== undefined) {
    if (!([...QUARANTINE_STATUSES, 'all'] as string[]).includes(status)) throw new CairnError('INVALID_INPUT', `status: must be held, released, dropped or all (got ${JSON.stringify(status)})`, { field: 'status' });
    f.status = status as QuarantineFilter['status'] & string;
  }
  for (const k of ['namespace', 'source', 'reason'] as const) {
    const v = text(k);
    if (v !== undefined) f[k] = v;
  }
  for (const k of ['minScore', 'maxScore'] as const) {
    const v = num(k);
    if (v !== undefined) f[k] = v;
  }
  for (const k of ['since', 'until'] as const) {
    const v = time(k);
    if (v !== undefined) f[k] = v;
  }
  if (raw['ids'] !== undefined) {
    const ids = raw['ids'];
    if (!Array.isArray(ids) || ids.length > 10_000 || !ids.every((x) => typeof x === 'string' && /^[0-9A-Z]{26}$/u.test(x))) {
      throw new CairnError('INVALID_INPUT', 'ids: must be a list of at most 10,000 quarantine ids', { field: 'ids' });
    }
    f.ids = ids as string[];
  }
  return f;
}

export function matchesFilter(e: QuarantineEntry, f: QuarantineFilter): boolean {
  if (f.namespace !== undefined && e.namespace !== f.namespace) return false;
  if (f.source !== undefined && e.source !== f.source) return false;
  if (f.reason !== undefined) {
    const words = f.reason.toLowerCase();
    if (!heldReasons(e).some((r) => r.toLowerCase().includes(words))) return false;
  }
  if (f.minScore !== undefined && e.score < f.minScore) return false;
  if (f.maxScore !== undefined && e.score > f.maxScore) return false;
  if (f.since !== undefined && e.createdAt < f.since) return false;
  if (f.until !== undefined && e.createdAt >= f.until) return false;
  if (f.ids !== undefined && !f.ids.includes(e.id)) return false;
  return true;
}

/** Matching entries per reason, for the review's totals. */
export function countReasons(entries: readonly QuarantineEntry[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of entries) for (const r of heldReasons(e)) out[r] = (out[r] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort((a, b) => b[1] - a[1]));
}
