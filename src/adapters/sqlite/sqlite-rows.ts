// Row mapping and SQL fragments shared by the store's parts.
import { createHash } from 'node:crypto';
import type { MemoryKind } from '../../interfaces/memory.js';
import type { Row } from '../sql/sql-rows.js';

// Memories, events, snapshots and tokens map to rows as on PostgreSQL: one copy in sql/sql-rows.ts.
export type { Row } from '../sql/sql-rows.js';

/** A token standing for the namespace inside the full-text index, so BM25 queries stay in one namespace. */
export function nsToken(namespace: string): string {
  return 'n' + createHash('sha256').update(namespace).digest('hex').slice(0, 24);
}

export function quoteTerm(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}

/** isCurrent and isActive (interfaces/memory.ts) in SQL, over the alias `m`; `@now` is the time. */
export const CURRENT_SQL = `m.forgotten_at IS NULL AND m.superseded_by IS NULL`;
export const ACTIVE_SQL = `${CURRENT_SQL} AND (m.expires_at IS NULL OR m.expires_at > @now)`;

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

