import type { Memory, MemoryKind } from '../../interfaces/memory.js';
import type { AccessScope, AccessTokenRecord, RankingFields, SnapshotRecord, StoredEvent } from '../../interfaces/store.js';

/**
 * Rows of the SQL backends (SQLite, PostgreSQL) to domain objects and back: both keep the same columns, with
 * JSON bodies as the exact text cairn wrote, so a memory reads back identical (and checksums equal) on both.
 */

export type Row = Record<string, unknown>;

export const MEMORY_COLUMNS = [
  'id',
  'namespace',
  'text',
  'kind',
  'importance',
  'tags',
  'task_id',
  'metadata',
  'route',
  'created_at',
  'updated_at',
  'expires_at',
  'supersedes',
  'superseded_by',
  'forgotten_at',
  'forget_reason',
  'dedupe_key',
  'code',
  'feedback',
  'likely_replaces',
  'instruction_check',
] as const;

/** The memory's column values, by column name (JSON bodies as text; unset code, feedback, likely replaces and instruction check as NULL). */
export function memoryRecord(m: Memory): Record<(typeof MEMORY_COLUMNS)[number], unknown> {
  return {
    id: m.id,
    namespace: m.namespace,
    text: m.text,
    kind: m.kind,
    importance: m.importance,
    tags: JSON.stringify(m.tags),
    task_id: m.taskId,
    metadata: JSON.stringify(m.metadata),
    route: m.route ? JSON.stringify(m.route) : null,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
    expires_at: m.expiresAt,
    supersedes: m.supersedes,
    superseded_by: m.supersededBy,
    forgotten_at: m.forgottenAt,
    forget_reason: m.forgetReason,
    dedupe_key: m.dedupeKey,
    code: m.code ? JSON.stringify(m.code) : null,
    feedback: m.feedback ? JSON.stringify(m.feedback) : null,
    likely_replaces: m.likelyReplaces?.length ? JSON.stringify(m.likelyReplaces) : null,
    instruction_check: m.instructionCheck ? JSON.stringify(m.instructionCheck) : null,
  };
}

/** The memory's values in MEMORY_COLUMNS order (positional parameters). */
export function memoryValues(m: Memory): unknown[] {
  const r = memoryRecord(m);
  return MEMORY_COLUMNS.map((c) => r[c]);
}

/** `m.id, m.namespace, …`: the columns rowToMemory reads, for the alias `m`. */
export const MEMORY_SELECT = MEMORY_COLUMNS.map((c) => `m.${c}`).join(', ');

export function rowToMemory(r: Row): Memory {
  return {
    id: r['id'] as string,
    namespace: r['namespace'] as string,
    text: r['text'] as string,
    kind: r['kind'] as MemoryKind,
    importance: r['importance'] as number,
    tags: JSON.parse(r['tags'] as string) as string[],
    taskId: (r['task_id'] as string | null) ?? null,
    metadata: JSON.parse(r['metadata'] as string) as Memory['metadata'],
    route: r['route'] ? (JSON.parse(r['route'] as string) as Memory['route']) : null,
    createdAt: r['created_at'] as string,
    updatedAt: r['updated_at'] as string,
    expiresAt: (r['expires_at'] as string | null) ?? null,
    supersedes: (r['supersedes'] as string | null) ?? null,
    supersededBy: (r['superseded_by'] as string | null) ?? null,
    forgottenAt: (r['forgotten_at'] as string | null) ?? null,
    forgetReason: (r['forget_reason'] as string | null) ?? null,
    dedupeKey: r['dedupe_key'] as string,
    // Absent (not null) when unset, so memories without them keep their canonical form and checksum.
    ...(r['code'] ? { code: JSON.parse(r['code'] as string) as NonNullable<Memory['code']> } : {}),
    ...(r['feedback'] ? { feedback: JSON.parse(r['feedback'] as string) as NonNullable<Memory['feedback']> } : {}),
    ...(r['likely_replaces'] ? { likelyReplaces: JSON.parse(r['likely_replaces'] as string) as string[] } : {}),
    ...(r['instruction_check'] ? { instructionCheck: JSON.parse(r['instruction_check'] as string) as NonNullable<Memory['instructionCheck']> } : {}),
  };
}

/**
 * A row of `id, namespace, created_at, metadata, feedback, code` as RankingFields. `metadata` may be NULL when the
 * statement left out metadata naming no session (JSON.stringify writes the key as `"sessionId"`).
 */
export function rowToRankingFields([id, namespace, createdAt, metadata, feedback, code]: unknown[]): RankingFields {
  const sessionId = metadata ? (JSON.parse(metadata as string) as Memory['metadata']).sessionId : undefined;
  return {
    id: id as string,
    namespace: namespace as string,
    createdAt: createdAt as string,
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(feedback ? { feedback: JSON.parse(feedback as string) as NonNullable<Memory['feedback']> } : {}),
    ...(code ? { code: JSON.parse(code as string) as NonNullable<Memory['code']> } : {}),
  };
}

export function rowToEvent(r: Row): StoredEvent {
  return {
    gseq: r['gseq'] as number,
    namespace: r['namespace'] as string,
    seq: r['seq'] as number,
    type: r['type'] as string,
    memoryId: (r['memory_id'] as string | null) ?? null,
    payload: JSON.parse(r['payload'] as string) as unknown,
    at: r['at'] as string,
  };
}

export function rowToSnapshot(r: Row): SnapshotRecord {
  return {
    scope: r['scope'] as string,
    version: r['version'] as number,
    seq: r['seq'] as number,
    blob: new Uint8Array(r['blob'] as Buffer),
    blobSha256: r['blob_sha256'] as string,
    checksum: r['checksum'] as string,
    engineVersion: r['engine_version'] as number,
    createdAt: r['created_at'] as string,
  };
}

export function rowToToken(r: Row): AccessTokenRecord {
  return {
    id: r['id'] as string,
    hash: r['hash'] as string,
    name: (r['name'] as string | null) ?? null,
    namespaces: JSON.parse(r['namespaces'] as string) as string[],
    scope: r['scope'] as AccessScope,
    createdAt: r['created_at'] as string,
    expiresAt: (r['expires_at'] as string | null) ?? null,
    revokedAt: (r['revoked_at'] as string | null) ?? null,
    lastUsedAt: (r['last_used_at'] as string | null) ?? null,
  };
}
