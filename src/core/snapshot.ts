import { gunzipSync, gzipSync } from 'node:zlib';
import type { Memory } from '../interfaces/memory.js';
import type { EmbedderInfo, SnapshotRecord, StoreTx } from '../interfaces/store.js';
import { CanonicalText, canonicalJson, memoryJson, memoryLine, StateHasher } from './checksum.js';
import { sha256Hex } from './text.js';

/**
 * Snapshots: a serialised copy of one scope's projected state, a disposable fast path for recovery.
 * A snapshot is trusted only after two checks: the SHA-256 of its stored bytes (storage corruption) and the
 * engine's canonical checksum of the decoded state (a different engine version or a logic change). A
 * snapshot that fails either is discarded and the state is rebuilt from the log.
 */

/** Version of the state layout. Bump when the projection or its serialisation changes meaning. */
export const ENGINE_STATE_VERSION = 1;

export interface SnapshotState {
  format: 'cairn-snapshot/1';
  engineVersion: number;
  scope: string;
  /** Last event of the scope included. */
  seq: number;
  embedder: EmbedderInfo | null;
  settings: { key: string; value: unknown }[];
  memories: { memory: Memory; vectorHash: string | null }[];
  /** Canonical checksum of everything above but the checksum itself. */
  checksum: string;
}

export type SnapshotProblem = 'storage-corruption' | 'version-mismatch' | 'checksum-mismatch';

export type SnapshotCheck = { ok: true; state: SnapshotState } | { ok: false; problem: SnapshotProblem; detail: string };

/** Checksum of one scope's state, the same construction as the whole-store checksum restricted to it. */
export function scopeChecksum(state: Pick<SnapshotState, 'scope' | 'embedder' | 'settings' | 'memories'>): string {
  return checksumOfLines(state, state.memories.map((m) => memoryLine(m.memory, m.vectorHash)));
}

/** scopeChecksum from the memories' state lines, in id order. */
function checksumOfLines(state: Pick<SnapshotState, 'scope' | 'embedder' | 'settings'>, lines: string[]): string {
  const h = new StateHasher(state.embedder);
  h.namespace(state.scope);
  for (const s of state.settings) h.setting(s.key, s.value);
  for (const line of lines) h.memoryLine(line);
  return h.digest();
}

/** Default `snapshotGrowth`: a recovery replays at most a twentieth of the log past its snapshot. */
export const DEFAULT_SNAPSHOT_GROWTH = 0.05;

/**
 * Whether a turn commit that falls on a `snapshotEvery` turn also writes a snapshot: always when the scope has
 * none, otherwise only when its log has grown since that snapshot by at least `growth` of the snapshot's
 * position. A snapshot costs the size of the scope; a recovery replays the events after it. Growing the
 * interval with the log keeps both bounded: the snapshots' cost per turn stays the same however large the
 * scope gets, and a recovery replays at most `growth` of the log (plus `every` turns) past its snapshot.
 * Append-only stores rewrite their logs by the same rule (once the log grew by a share since the last rewrite).
 */
export function snapshotDue(growth: number, lastSeq: number, head: { seq: number } | null): boolean {
  return head === null || lastSeq - head.seq >= growth * head.seq;
}

/**
 * Reads the scope's projection inside `tx` and serialises it as a snapshot at `seq`. Each memory is
 * serialised once, for both the checksum and the blob; gzip runs at level 1 (the blob is a disposable
 * cache, read back only on recovery, so speed inside the turn's transaction matters more than its size).
 * Must run inside the transaction that writes the snapshot, so it serialises exactly the state at `seq`.
 */
export async function buildSnapshot(tx: StoreTx, scope: string, seq: number, now: string): Promise<Omit<SnapshotRecord, 'version'>> {
  const embedder = await tx.embedder();
  const settings = await tx.settingsOf(scope);
  const memories = await tx.memoriesOf(scope);
  const json = memories.map((m) => memoryJson(m.memory, m.vectorHash));
  const checksum = checksumOfLines({ scope, embedder, settings }, json.map((j) => j.line));
  const entries = json.map((j) => new CanonicalText(j.entry));
  const state = { format: 'cairn-snapshot/1', engineVersion: ENGINE_STATE_VERSION, seq, scope, embedder, settings, memories: entries, checksum };
  const blob = gzipSync(canonicalJson(state), { level: 1 });
  return { scope, seq, blob: new Uint8Array(blob), blobSha256: sha256Hex(blob), checksum, engineVersion: ENGINE_STATE_VERSION, createdAt: now };
}

/** Checks a stored snapshot; tells storage corruption, version mismatch and checksum mismatch apart. */
export function checkSnapshot(record: SnapshotRecord): SnapshotCheck {
  if (sha256Hex(record.blob) !== record.blobSha256) {
    return { ok: false, problem: 'storage-corruption', detail: 'the snapshot bytes do not match their SHA-256' };
  }
  let state: SnapshotState;
  try {
    state = JSON.parse(gunzipSync(record.blob).toString('utf8')) as SnapshotState;
  } catch (err) {
    return { ok: false, problem: 'storage-corruption', detail: `the snapshot cannot be decoded: ${(err as Error).message}` };
  }
  if (state.engineVersion !== ENGINE_STATE_VERSION || record.engineVersion !== ENGINE_STATE_VERSION) {
    return {
      ok: false,
      problem: 'version-mismatch',
      detail: `the snapshot was written by engine state version ${state.engineVersion}; this engine reads version ${ENGINE_STATE_VERSION}`,
    };
  }
  const recomputed = scopeChecksum(state);
  if (recomputed !== state.checksum || state.checksum !== record.checksum || state.scope !== record.scope || state.seq !== record.seq) {
    return { ok: false, problem: 'checksum-mismatch', detail: 'the decoded state does not match its embedded checksum' };
  }
  return { ok: true, state };
}
