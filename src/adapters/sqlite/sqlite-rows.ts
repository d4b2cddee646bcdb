// Row mapping and SQL fragments shared by the store's parts.
import { createHash } from 'node:crypto';
import type { Memory, MemoryKind } from '../../interfaces/memory.js';
import type { AccessScope, AccessTokenRecord, SnapshotRecord, StoredEvent } from '../../interfaces/store.js';

export type Row = Record<string, unknown>;

/** A token standing for the namespace inside the full-text index, so BM25 queries stay in one namespace. */
export function nsToken(namespace: string): string {
  return 'n' + createHash('sha256').update(namespace).digest('hex').slice(0, 24);
}

export function quoteTerm(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}

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
  };
}

export function memoryParams(m: Memory): Row {
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

/** isCurrent and isActive (interfaces/memory.ts) in SQL, over the alias `m`; `@now` is the time. */
export const CURRENT_SQL = `m.forgotten_at IS NULL AND m.superseded_by IS NULL`;
export const ACTIVE_SQL = `${CURRENT_SQL} AND (m.expires_at IS NULL OR m.expires_at > @now)`;


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


/** WHERE fragments for kinds/tags/activity; parameters go into `params`. */
export function filterSql(filter: { kinds?: MemoryKind[] | undefined; tags?: string[] | undefined; includeInactive?: boolean | undefined }, params: Row): string {
  const parts: string[] = [];
  if (!filter.includeInactive) parts.push(ACTIVE_SQL);
  if (filter.kinds && filter.kinds.length) {
    parts.push(`m.kind IN (${filter.kinds.map((k, i) => ((params[`kind${i}`] = k), `@kind${i}`)).join(', ')})`);
  }
  if (filter.tags && filter.tags.length) {
    parts.push(
      `EXISTS (SELECT 1 FROM json_each(m.tags) t WHERE t.value IN (${filter.tags.map((t, i) => ((params[`tag${i}`] = t), `@tag${i}`)).join(', ')}))`,
    );
  }
  return parts.length ? parts.join(' AND ') : '1';
}

