import { CairnError } from '../interfaces/errors.js';
import type { ScopeInfo, Store, StoredEvent, StoreTx, VectorIndexCheck } from '../interfaces/store.js';
import { createHash } from 'node:crypto';
import { canonicalJson, StateHasher, vectorHash } from './checksum.js';
import { bodyOf, insertProjected, project, STORE_SCOPE } from './events.js';
import { checkSnapshot, type SnapshotProblem } from './snapshot.js';

/**
 * Replay, proof and recovery. `verify` replays the whole log into a scratch store and compares canonical
 * checksums with the live store; `recover` rebuilds the live projection from each scope's newest valid
 * snapshot plus the log tail (or the whole log when no snapshot can be trusted).
 */

export interface Gap {
  scope: string;
  /** Sequence numbers missing between 1 and the scope's highest. */
  missing: number[];
}

export interface VerifyReport {
  ok: boolean;
  mode: 'full-replay';
  events: number;
  scopes: number;
  memories: number;
  gaps: Gap[];
  liveChecksum: string;
  replayedChecksum: string;
  /** Checksums of the quarantine projection (content-free entries), live and replayed; must be equal too. */
  quarantine: { live: string; replayed: string };
  /**
   * The store's derived approximate vector index, checked against the stored vectors (rebuilt when it differed);
   * null for a backend without one. Not part of `ok`: the index is a cache of the state proven above.
   */
  vectorIndex: VectorIndexCheck | null;
  replayMs: number;
  eventsPerSecond: number;
  totalMs: number;
}

export interface RecoverScopeReport {
  scope: string;
  mode: 'snapshot+tail' | 'full-replay';
  snapshotSeq: number | null;
  snapshotProblem: SnapshotProblem | null;
  eventsReplayed: number;
}

export interface RecoverReport {
  scopes: RecoverScopeReport[];
  eventsReplayed: number;
  checksum: string;
  gaps: Gap[];
  ms: number;
}

/** Finds missing sequence numbers per scope. A scope is gap-free when its event count equals its highest seq. */
export async function findGaps(store: Store, scopes?: ScopeInfo[]): Promise<Gap[]> {
  const gaps: Gap[] = [];
  for (const s of scopes ?? (await store.scopes())) {
    if (s.events === s.lastSeq) continue;
    const present = new Set<number>();
    for await (const page of scopePages(store, s.scope)) for (const e of page) present.add(e.seq);
    const missing: number[] = [];
    for (let i = 1; i <= s.lastSeq && missing.length < 1000; i++) if (!present.has(i)) missing.push(i);
    gaps.push({ scope: s.scope, missing });
  }
  return gaps;
}

/** Names of the namespaces holding projected state (memories or settings). */
async function projectedNamespaces(store: Store, now: string): Promise<string[]> {
  const names = new Set<string>();
  for (const n of (await store.stats(now)).namespaces) names.add(n.namespace);
  for (const s of await store.scopes()) if (s.scope !== STORE_SCOPE) names.add(s.scope);
  return [...names].sort();
}

/**
 * The canonical checksum of a store's whole projected state (see checksum.ts for the exact construction).
 * Vectors are hashed from the bytes actually held by the vector index, so a damaged index shows.
 */
export async function stateChecksum(store: Store, only?: string[]): Promise<{ checksum: string; memories: number }> {
  const hasher = new StateHasher(await store.embedder());
  let memories = 0;
  const now = new Date(0).toISOString(); // stats' expiry split is irrelevant here; only names are used
  for (const ns of only ?? (await projectedNamespaces(store, now))) {
    const settings = await store.listSettings(ns);
    let headed = false;
    const head = () => {
      if (headed) return;
      headed = true;
      hasher.namespace(ns);
      for (const s of settings) hasher.setting(s.key, s.value);
    };
    if (settings.length) head();
    for await (const page of store.iterateMemories(ns, 500)) {
      head();
      const vectors = await store.getVectors(page.map((m) => m.id));
      for (const m of page) {
        const v = vectors.get(m.id);
        hasher.memory(m, v ? vectorHash(v) : null);
        memories++;
      }
    }
  }
  return { checksum: hasher.digest(), memories };
}

/**
 * SHA-256 over the canonical JSON of every quarantine entry, by id. Kept apart from `stateChecksum`: a
 * blocked write changes the quarantine but must leave the memory state exactly as it was.
 */
export async function quarantineChecksum(store: Store): Promise<string> {
  const entries = await store.listQuarantine({ status: 'all', limit: Number.MAX_SAFE_INTEGER });
  const hash = createHash('sha256').update('cairn-quarantine/1\n');
  for (const e of entries.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) hash.update(canonicalJson(e)).update('\n');
  return hash.digest('hex');
}

/** Applies a stored event to `tx`, first copying the vector blob it references from `source` when needed. */
async function applyStored(tx: StoreTx, event: StoredEvent, source: Store | null): Promise<void> {
  const body = bodyOf(event);
  if (source) {
    const hash = 'vector' in body ? body.vector : null;
    if (hash) {
      const v = await source.getVectorBlob(hash);
      if (!v) throw new CairnError('INTEGRITY', `event ${JSON.stringify(event.namespace)}#${event.seq} references a missing vector blob`);
      await tx.putVectorBlob(hash, v);
    }
  }
  await project(tx, body, event.namespace);
}

/**
 * Has `target` prepare the vector objects of every embedder these events record (Store.prepareVectors),
 * before the transaction that projects them: projecting a `store.embedder` event runs no DDL.
 */
async function prepareRecordedEmbedders(target: Store, events: readonly StoredEvent[]): Promise<void> {
  const done = new Set<string>();
  for (const e of events) {
    const body = bodyOf(e);
    if (body.type !== 'store.embedder' || done.has(`${body.embedder.dimensions}`)) continue;
    done.add(`${body.embedder.dimensions}`);
    await target.prepareVectors(body.embedder);
  }
}

/** Replays every event of `source`, in commit order, into the empty store `target`; `onPage` after each commit. */
export async function replayInto(source: Store, target: Store, batchSize = 5000, onPage?: (events: number) => void): Promise<number> {
  let n = 0;
  for await (const page of source.iterateEvents(0, batchSize)) {
    await prepareRecordedEmbedders(target, page);
    await target.transaction(async (tx) => {
      for (const event of page) {
        await tx.appendEvent({ namespace: event.namespace, type: event.type, memoryId: event.memoryId, payload: event.payload, at: event.at });
        await applyStored(tx, event, source);
      }
    });
    n += page.length;
    onPage?.(page.length);
  }
  return n;
}

/**
 * Proves the live state equals a replay of the log: replays into `scratch` (an empty store) and compares
 * canonical checksums. `ok` only when they are equal and no scope has a gap.
 */
export async function verify(store: Store, scratch: Store): Promise<VerifyReport> {
  const started = performance.now();
  const scopes = await store.scopes();
  const gaps = await findGaps(store, scopes);
  const t0 = performance.now();
  const events = await replayInto(store, scratch);
  const replayMs = performance.now() - t0;
  const live = await stateChecksum(store);
  const replayed = await stateChecksum(scratch);
  const quarantine = { live: await quarantineChecksum(store), replayed: await quarantineChecksum(scratch) };
  const vectorIndex = store.checkVectorIndex ? await store.checkVectorIndex() : null;
  return {
    ok: gaps.length === 0 && live.checksum === replayed.checksum && quarantine.live === quarantine.replayed,
    quarantine,
    vectorIndex,
    mode: 'full-replay',
    events,
    scopes: scopes.length,
    memories: live.memories,
    gaps,
    liveChecksum: live.checksum,
    replayedChecksum: replayed.checksum,
    replayMs: Math.round(replayMs),
    eventsPerSecond: replayMs > 0 ? Math.round((events / replayMs) * 1000) : events,
    totalMs: Math.round(performance.now() - started),
  };
}

/** The events of one scope with seq > `after`, in pages of 5,000, in order. */
async function* scopePages(store: Store, scope: string, after = 0): AsyncGenerator<StoredEvent[]> {
  for (;;) {
    const page = await store.events(scope, after, 5000);
    if (page.length === 0) return;
    yield page;
    after = (page[page.length - 1] as StoredEvent).seq;
  }
}

/** Replays the events of one scope with seq > afterSeq into `tx`; returns how many. */
async function replayScopeTail(store: Store, tx: StoreTx, scope: string, afterSeq: number): Promise<number> {
  let n = 0;
  for await (const page of scopePages(store, scope, afterSeq)) {
    for (const e of page) await applyStored(tx, e, null);
    n += page.length;
  }
  return n;
}

/**
 * Rebuilds the live projection in place, in one transaction: per namespace, from its newest valid snapshot
 * plus the events after it, else from its whole log. A snapshot failing its checks is discarded. With
 * `namespace`, only that scope is rebuilt. The log itself is never changed. Reads the snapshots and the log
 * tails inside its transaction, after clearing each scope's projection (which takes the scope's lock on
 * PostgreSQL): a writer committing between a read outside and the rebuild would lose its projection.
 */
export async function recover(store: Store, options: { namespace?: string } = {}): Promise<RecoverReport> {
  const started = performance.now();
  const allScopes = await store.scopes();
  const gaps = await findGaps(store, allScopes);
  const reports: RecoverScopeReport[] = [];
  const names = new Set(allScopes.map((s) => s.scope).filter((s) => s !== STORE_SCOPE));
  if (!options.namespace) for (const n of (await store.stats(new Date(0).toISOString())).namespaces) names.add(n.namespace);
  const targets = options.namespace ? [options.namespace] : [...names].sort();
  if (!options.namespace) for await (const page of scopePages(store, STORE_SCOPE)) await prepareRecordedEmbedders(store, page);
  // Bulk: the projection is cleared and rebuilt in this one transaction.
  await store.transaction(async (tx) => {
    if (!options.namespace) {
      // Store-wide scope first: the embedder record decides which vectors the namespaces can hold.
      await tx.resetVectors();
      await tx.clearQuarantine(); // rebuilt from the quarantine events of the store-wide scope
      const n = await replayScopeTail(store, tx, STORE_SCOPE, 0);
      reports.push({ scope: STORE_SCOPE, mode: 'full-replay', snapshotSeq: null, snapshotProblem: null, eventsReplayed: n });
    }
    for (const scope of targets) {
      await tx.clearProjection(scope);
      const record = await tx.getSnapshot(scope);
      let fromSeq = 0;
      let problem: SnapshotProblem | null = null;
      if (record) {
        const check = checkSnapshot(record);
        if (check.ok) {
          for (const s of check.state.settings) await tx.setSetting(scope, s.key, s.value);
          for (const m of check.state.memories) await insertProjected(tx, m.memory, m.vectorHash);
          fromSeq = check.state.seq;
        } else {
          problem = check.problem;
          await tx.deleteSnapshot(scope);
        }
      }
      const n = await replayScopeTail(store, tx, scope, fromSeq);
      reports.push({ scope, mode: fromSeq > 0 ? 'snapshot+tail' : 'full-replay', snapshotSeq: fromSeq || null, snapshotProblem: problem, eventsReplayed: n });
    }
  }, { bulk: true });
  const { checksum } = await stateChecksum(store);
  return { scopes: reports, eventsReplayed: reports.reduce((s, r) => s + r.eventsReplayed, 0), checksum, gaps, ms: Math.round(performance.now() - started) };
}
