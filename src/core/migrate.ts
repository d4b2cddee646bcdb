import { createHash } from 'node:crypto';
import { CairnError } from '../interfaces/errors.js';
import type { Store } from '../interfaces/store.js';
import { canonicalJson } from './checksum.js';
import { quarantineChecksum, replayInto, stateChecksum } from './replay.js';

/**
 * Moving a whole store to another one, of any backend (`cairn migrate --from … --to …`).
 *
 * The log is the truth, so the move replays it: every event, in commit order, is appended to the empty
 * target and projected there, which rebuilds memories, vectors, settings and the quarantine exactly as the
 * source holds them. What is not in the log is copied beside it: the quarantine vault (held texts), the
 * learned anchors and the access tokens. Recall counts (usage statistics) are not copied; they start again.
 * At the end three checksums are computed on both sides and must be equal: the log's, the state's and the
 * quarantine's. A target that already holds anything is refused before a byte is written.
 */

export interface StoreChecksums {
  /** SHA-256 over every event in commit order (see `logChecksum`). */
  log: string;
  /** The canonical state checksum (replay.ts `stateChecksum`), the one `cairn verify` proves. */
  state: string;
  quarantine: string;
}

export interface MigrateReport {
  ok: boolean;
  events: number;
  scopes: number;
  memories: number;
  vaultEntries: number;
  learnedAnchors: number;
  tokens: number;
  source: StoreChecksums;
  target: StoreChecksums;
  ms: number;
}

export interface MigrateOptions {
  /** Called after each committed page of events: events copied so far and the total. */
  onProgress?: (done: number, total: number) => void;
  /** Events per target transaction. */
  batchSize?: number;
  now?: () => Date;
}

export const LOG_FORMAT = 'cairn-log/1';

/**
 * SHA-256 over the line `cairn-log/1`, then one line per event in commit order: the canonical JSON of its
 * scope, sequence number, type, memory id, time and payload. The global position is left out on purpose: it
 * orders the lines but its values are the backend's business (a sequence may skip numbers after a rollback),
 * while the per-scope sequence is the gap-free contract every backend keeps. Two stores holding the same log
 * have the same log checksum whatever their backend.
 */
export async function logChecksum(store: Store): Promise<{ checksum: string; events: number }> {
  const hash = createHash('sha256').update(`${LOG_FORMAT}\n`);
  let events = 0;
  for await (const page of store.iterateEvents(0, 2000)) {
    for (const e of page) {
      hash.update(canonicalJson({ scope: e.namespace, seq: e.seq, type: e.type, memoryId: e.memoryId, at: e.at, payload: e.payload })).update('\n');
      events++;
    }
  }
  return { checksum: hash.digest('hex'), events };
}

export async function checksumsOf(store: Store): Promise<StoreChecksums & { memories: number; events: number }> {
  const log = await logChecksum(store);
  const state = await stateChecksum(store);
  return { log: log.checksum, state: state.checksum, quarantine: await quarantineChecksum(store), memories: state.memories, events: log.events };
}

/** Copies `source` into the empty `target` and proves the copy equal (see the module comment). */
export async function migrateStore(source: Store, target: Store, options: MigrateOptions = {}): Promise<MigrateReport> {
  const started = performance.now();
  const now = options.now ?? (() => new Date());
  const targetScopes = await target.scopes();
  const targetMemories = (await target.stats(now().toISOString())).total;
  if (targetScopes.length > 0 || targetMemories > 0 || (await target.listTokens()).length > 0) {
    throw new CairnError('CONFLICT', `the target ${target.location} is not empty (${targetScopes.reduce((n, s) => n + s.events, 0)} events, ${targetMemories} memories): migrate only into a new, empty store`);
  }
  const scopes = await source.scopes();
  const total = scopes.reduce((n, s) => n + s.events, 0);
  let done = 0;
  options.onProgress?.(0, total);
  const events = await replayInto(source, target, options.batchSize ?? 2000, (n) => {
    done += n;
    options.onProgress?.(done, total);
  });

  // Beside the log: held texts, learned anchors, tokens.
  const at = now().toISOString();
  const entries = await source.listQuarantine({ status: 'all', limit: Number.MAX_SAFE_INTEGER });
  const anchors = await source.learnedAnchors();
  // The source's held texts are read before the target's transaction, which then only writes.
  const vaults: { id: string; text: string; request: unknown }[] = [];
  for (const e of entries) {
    const vault = await source.getQuarantineVault(e.id);
    if (vault) vaults.push({ id: e.id, text: vault.text, request: vault.request });
  }
  const vaultEntries = vaults.length;
  await target.transaction(async (tx) => {
    for (const v of vaults) await tx.putQuarantineVault(v.id, v.text, v.request);
    for (const a of anchors) await tx.putLearnedAnchor(a.id, a.vector, at);
  });
  const tokens = await source.listTokens();
  for (const t of tokens) await target.putToken(t);

  const [s, t] = [await checksumsOf(source), await checksumsOf(target)];
  return {
    ok: s.log === t.log && s.state === t.state && s.quarantine === t.quarantine,
    events,
    scopes: scopes.length,
    memories: s.memories,
    vaultEntries,
    learnedAnchors: anchors.length,
    tokens: tokens.length,
    source: { log: s.log, state: s.state, quarantine: s.quarantine },
    target: { log: t.log, state: t.state, quarantine: t.quarantine },
    ms: Math.round(performance.now() - started),
  };
}
