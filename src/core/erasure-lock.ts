import { CairnError } from '../interfaces/errors.js';
import type { Memory } from '../interfaces/memory.js';
import type { PendingErasure, StoreTx } from '../interfaces/store.js';
import type { EventBody } from './events.js';

/**
 * The erasure lock: while an erasure is pending (from the transaction that starts it until its certificate
 * is issued), no event may enter its scope. The check runs inside every writer's transaction, so it holds
 * across processes: a write that commits before the lock is seen by the erasure, one after it is refused
 * with CONFLICT and writes nothing. Only the erasure's own bookkeeping passes.
 */

/** A memory belongs to a subject when its provenance `subject`, `speaker` or `agent` is that id. */
export function belongsToSubject(m: Pick<Memory, 'metadata'>, subject: string): boolean {
  const p = m.metadata as Record<string, string | undefined>;
  return p['subject'] === subject || p['speaker'] === subject || p['agent'] === subject;
}

export function sameErasureScope(a: PendingErasure['scope'], b: PendingErasure['scope']): boolean {
  return 'namespace' in a ? 'namespace' in b && a.namespace === b.namespace : 'subject' in b && a.subject === b.subject;
}

function touches(erasure: PendingErasure, scope: string, body: EventBody): boolean {
  if (body.type === 'erasure.completed' || body.type === 'erased') return false;
  const entry = 'entry' in body ? body.entry : null;
  if ('namespace' in erasure.scope) {
    const ns = erasure.scope.namespace;
    return scope === ns || ('memory' in body && body.memory.namespace === ns) || entry?.namespace === ns;
  }
  const subject = erasure.scope.subject;
  if ('memory' in body && belongsToSubject(body.memory, subject)) return true;
  if (body.type === 'turn.committed' && body.speaker === subject) return true;
  return entry?.agent === subject;
}

/**
 * Throws CONFLICT when `body`, about to be appended to `scope`, would enter a pending erasure's scope.
 * Reads the pending erasures inside the writer's transaction on purpose: that read and the erasure's record
 * exclude each other, which is the lock.
 */
export async function assertOutsideErasures(tx: StoreTx, scope: string, body: EventBody): Promise<void> {
  const pending = await tx.pendingErasures();
  const hit = pending.find((e) => touches(e, scope, body));
  if (!hit) return;
  const what = 'namespace' in hit.scope ? `namespace ${JSON.stringify(hit.scope.namespace)}` : 'this subject';
  const flag = 'namespace' in hit.scope ? `--namespace ${JSON.stringify(hit.scope.namespace)}` : '--subject <id>';
  throw new CairnError('CONFLICT', `${what} is being erased (erasure ${hit.id} started ${hit.startedAt}); nothing was written, retry when it has finished`, {
    hint: `if no erasure is running any more, finish it with cairn erase ${flag} --key <private.pem> --out <certificate.json>`,
  });
}
