/**
 * A namespace's coarse lists kept in the database (`recall_lists`, postgres-schema.ts step 9), so the next
 * long-lived process (every `cairn mcp` an agent starts against a large store) takes them instead of building them
 * again: at 1M vectors a build is about 86 s of a core. What is kept is what a build hands over (centroids, each
 * snapshot row's list, the far list's bound: vector-codes/coarse-build-bytes.ts) with the log position its snapshot
 * holds every change up to, not the codes: those come from the process's own copy, and the memories the log names
 * after that position are placed again, as after a build in the same process.
 *
 * A cache, never a source. A saved build is taken only when its position is not past the reader's, no event
 * between the two changed vectors wholesale (an embedder recorded, vectors reset, an erasure), no erasure is in
 * progress, and its bytes are whole (checksum); otherwise the lists are built. It is written only under the same
 * conditions, and every erasure empties the table when it is recorded and when it finishes (postgres-tx.ts
 * `putPendingErasure`, postgres-store.ts `finishErasure`), so centroids made from erased vectors do not stay.
 */
import { decodeCoarseBuild, encodeCoarseBuild, type CoarseBuildShape } from '../vector-codes/coarse-build-bytes.js';
import type { CoarseBuild } from '../vector-codes/coarse-lists.js';
import type { Pool } from './postgres-driver.js';

/**
 * Empties the saved lists: every erasure runs it when it is recorded and when it finishes (postgres-tx.ts
 * `putPendingErasure`, postgres-store.ts `finishErasure`), since centroids are made from the vectors it removes.
 */
export const CLEAR_SAVED_LISTS_SQL = 'DELETE FROM recall_lists';

/** More events than this since a saved build (as the copies' catch-up counts them), and it is built anew instead. */
export const SAVED_LISTS_MAX_CHANGES = 50_000;

/**
 * Keeps `build` as the namespace's lists, made from a snapshot holding every change up to `position`; false when
 * it was not kept (an event since changed vectors wholesale, an erasure is in progress, or the lists kept are from
 * a later position: a slower build of an older snapshot does not replace them).
 */
export async function saveRecallLists(pool: Pool, namespace: string, position: number, build: CoarseBuild, wholesale: readonly string[]): Promise<boolean> {
  const { body, shape } = encodeCoarseBuild(build);
  const { rowCount } = await pool.query(
    `INSERT INTO recall_lists (namespace, dimensions, position, shape, body)
     SELECT $1, $2, $3, $4, $5
     WHERE NOT EXISTS (SELECT 1 FROM pending_erasures) AND NOT EXISTS (SELECT 1 FROM events WHERE gseq > $3 AND type = ANY($6::text[]))
     ON CONFLICT (namespace) DO UPDATE SET dimensions = excluded.dimensions, position = excluded.position, shape = excluded.shape, body = excluded.body
       WHERE recall_lists.position <= excluded.position`,
    [namespace, build.dimensions, position, JSON.stringify(shape), body, [...wholesale]],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * The namespace's saved lists for a copy whose rows hold every change up to `position`, with the ids of the
 * memories the log names after the build's snapshot (up to `position`), or why there are none to take.
 */
export async function readRecallLists(
  pool: Pool,
  namespace: string,
  dimensions: number,
  position: number,
  wholesale: readonly string[],
): Promise<{ build: CoarseBuild; changedIds: string[] } | { problem: string }> {
  // The checks first, without the body (about 12 MB at 1M), which is read only when they pass.
  const [row] = (
    await pool.query<{ dimensions: number; position: string; shape: string; erasing: boolean; wholesale: boolean }>(
      `SELECT l.dimensions, l.position, l.shape, EXISTS (SELECT 1 FROM pending_erasures) AS erasing,
         EXISTS (SELECT 1 FROM events WHERE gseq > l.position AND type = ANY($2::text[])) AS wholesale
       FROM recall_lists l WHERE l.namespace = $1`,
      [namespace, [...wholesale]],
    )
  ).rows;
  if (!row) return { problem: 'no saved lists' };
  const saved = Number(row.position);
  if (row.dimensions !== dimensions) return { problem: `the saved lists are of ${row.dimensions} dimensions, the vectors of ${dimensions}` };
  if (saved > position) return { problem: `the saved lists are ahead of the copy (log position ${saved} of ${position})` };
  if (row.erasing) return { problem: 'an erasure is in progress' };
  if (row.wholesale) return { problem: 'the vectors changed wholesale since the saved lists were made' };
  // The events since, read once: counted against the bound, and the memories they name placed again.
  const { rows: since } = await pool.query<{ id: string | null }>(
    'SELECT memory_id AS id FROM events WHERE gseq > $1 AND gseq <= $2 ORDER BY gseq LIMIT $3',
    [saved, position, SAVED_LISTS_MAX_CHANGES + 1],
  );
  if (since.length > SAVED_LISTS_MAX_CHANGES) return { problem: `more than ${SAVED_LISTS_MAX_CHANGES} changes since the saved lists were made` };
  let shape: CoarseBuildShape;
  try {
    shape = JSON.parse(row.shape) as CoarseBuildShape;
  } catch {
    return { problem: 'the saved lists have a damaged header' };
  }
  if (typeof shape !== 'object' || shape === null) return { problem: 'the saved lists have a damaged header' };
  // Read with the position it was checked at: a newer save in between is refused here and taken next time.
  const [kept] = (await pool.query<{ body: Buffer }>('SELECT body FROM recall_lists WHERE namespace = $1 AND position = $2', [namespace, saved])).rows;
  if (!kept) return { problem: 'the saved lists changed while they were read' };
  const decoded = decodeCoarseBuild(kept.body, shape, dimensions, 'the saved lists');
  if ('problem' in decoded) return decoded;
  return { build: decoded.build, changedIds: [...new Set(since.flatMap((r) => (r.id === null ? [] : [r.id])))] };
}
