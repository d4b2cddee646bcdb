import type { Pool, PoolClient } from './postgres-driver.js';
import { HNSW_BUILD_PARAMS, HNSW_DEFAULT_PARAMS, hnswIndexName, hnswIndexSql, VECTOR_INDEX_LOCK } from './postgres-schema.js';

/**
 * The HNSW index of a store that already holds vectors, when it is missing (dropped by hand, lost in a
 * restore, a build cut short): built CONCURRENTLY, outside any transaction and without the statement
 * timeout, so writers go on meanwhile and a large store still opens. Queries do not wait for it: the planner
 * ignores an index until it is valid, so vector search scans exactly until then, with the same results.
 */

/** valid; invalid (a concurrent build running, or one cut short); missing. */
export type VectorIndexState = 'valid' | 'invalid' | 'missing';

export async function vectorIndexState(pool: Pool, dims: number): Promise<VectorIndexState> {
  const { rows } = await pool.query<{ valid: boolean }>(
    `SELECT i.indisvalid AND i.indisready AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
    [hnswIndexName(dims)],
  );
  const row = rows[0];
  return row === undefined ? 'missing' : row.valid ? 'valid' : 'invalid';
}

/** What a build came to: `busy` when another session holds the build lock, `blocked` when it waited too long. */
export type VectorIndexBuild = { outcome: 'built' | 'valid' | 'busy' } | { outcome: 'blocked'; detail: string };

/**
 * Builds the index of `dims` unless it is valid. One process at a time (an advisory lock per dimension,
 * taken without waiting): `busy` when another session is building it; an invalid leftover is dropped first.
 * On a connection of its own, closed afterwards so its lifted timeout reaches no other caller. A concurrent
 * build waits for every transaction of the database holding an older snapshot: with `lockTimeoutMs` each
 * such wait is bounded, and a build that waited too long drops its leftover (or leaves it to the next
 * build) and comes back `blocked`, naming the sessions in the way. `onSession` learns the build's backend
 * pid (to cancel it).
 */
export async function buildVectorIndex(
  pool: Pool,
  dims: number,
  options: { lockTimeoutMs?: number; onSession?: (pid: number) => void } = {},
): Promise<VectorIndexBuild> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ ok: boolean; pid: number }>('SELECT pg_try_advisory_lock($1, $2) AS ok, pg_backend_pid() AS pid', [VECTOR_INDEX_LOCK, dims]);
    if (!rows[0]?.ok) return { outcome: 'busy' };
    options.onSession?.(rows[0].pid);
    await client.query(`SET statement_timeout = 0; SET lock_timeout = ${options.lockTimeoutMs ?? 0}`);
    const state = await vectorIndexState(pool, dims);
    if (state === 'valid') return { outcome: 'valid' };
    try {
      if (state === 'invalid') await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${hnswIndexName(dims)}`);
      await client.query(hnswIndexSql(dims, { concurrently: true }));
    } catch (err) {
      if ((err as { code?: string }).code !== '55P03') throw err;
      const blockers = await snapshotHolders(client);
      await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${hnswIndexName(dims)}`).catch(() => {});
      return { outcome: 'blocked', detail: `building it CONCURRENTLY waited ${(options.lockTimeoutMs ?? 0) / 1000} s for ${blockers || 'a long transaction of another session'}` };
    }
    return { outcome: 'built' };
  } finally {
    client.release(true); // ends the session: its advisory lock and settings go with it
  }
}

/**
 * A build in the background (a long-lived process), until `cancel()`: that cancels its statement on the
 * server (pg_cancel_backend, repeated until the build has ended, at most `boundMs`, then pg_terminate_backend),
 * so closing never waits
 * for a build held up by another session. A cancelled concurrent build leaves an invalid index, which the
 * next build drops and builds again.
 */
export function startVectorIndexBuild(pool: Pool, dims: number): { done: Promise<VectorIndexBuild>; cancel(boundMs?: number): Promise<void> } {
  let pid: number | null = null;
  let settled = false;
  const done = buildVectorIndex(pool, dims, { onSession: (p) => (pid = p) });
  const finished = done.then(
    () => (settled = true),
    () => (settled = true),
  );
  return {
    done,
    async cancel(boundMs = 5_000) {
      const deadline = Date.now() + boundMs;
      while (!settled && Date.now() < deadline) {
        if (pid !== null) await pool.query('SELECT pg_cancel_backend($1)', [pid]).catch(() => {});
        await Promise.race([finished, new Promise((r) => setTimeout(r, 100))]);
      }
      // Not cancelled within the bound (a statement between two queries, a stuck server): end the session.
      if (!settled && pid !== null) await pool.query('SELECT pg_terminate_backend($1)', [pid]).catch(() => {});
      await Promise.race([finished, new Promise((r) => setTimeout(r, 1_000))]);
    },
  };
}

/** Other sessions of this database with a transaction that holds a snapshot or an xid, oldest first, for messages. */
export async function snapshotHolders(client: PoolClient): Promise<string> {
  const { rows } = await client.query<{ pid: number; state: string | null; since: string | null }>(
    `SELECT pid, state, to_char(xact_start, 'YYYY-MM-DD"T"HH24:MI:SS') AS since FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)
      ORDER BY xact_start LIMIT 3`,
  );
  return rows.map(sessionLine).join(', ');
}

/** A session in a message: `pid N (idle in transaction, in a transaction since …)`. */
export function sessionLine(r: { pid: number; state: string | null; since: string | null }): string {
  return `pid ${r.pid} (${r.state ?? 'unknown state'}, in a transaction since ${r.since ?? '?'})`;
}

/**
 * For `cairn doctor`: why the index's build parameters (pg_class.reloptions; none stored means pgvector's
 * defaults, as an older cairn built it) are not the ones searches are tuned for, and how to rebuild it online,
 * or null. ef_search 800 (postgres-driver.ts) finds 0.97 of the true ten over the current build at 100k near
 * copies, 0.798 over one built with ef_construction 64. `REINDEX` keeps the stored options, so they are set first.
 */
export async function hnswBuildProblem(pool: Pool, dims: number): Promise<string | null> {
  const name = hnswIndexName(dims);
  const { rows } = await pool.query<{ options: string[] | null }>(
    `SELECT c.reloptions AS options FROM pg_class c WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
    [name],
  );
  const row = rows[0];
  if (row === undefined) return null;
  const stored = new Map((row.options ?? []).map((o) => o.split('=') as [string, string]));
  const built = { m: Number(stored.get('m') ?? HNSW_DEFAULT_PARAMS.m), ef_construction: Number(stored.get('ef_construction') ?? HNSW_DEFAULT_PARAMS.ef_construction) };
  if (built.m === HNSW_BUILD_PARAMS.m && built.ef_construction >= HNSW_BUILD_PARAMS.ef_construction) return null;
  const want = `m = ${HNSW_BUILD_PARAMS.m}, ef_construction = ${HNSW_BUILD_PARAMS.ef_construction}`;
  return (
    `hnsw index ${name} was built with m ${built.m}, ef_construction ${built.ef_construction} (this version builds ${want}): ` +
    `vector search finds fewer of the true nearest (recall@10 0.798 instead of 0.97 at 100k near copies) and walks longer; ` +
    `rebuild it online with: ALTER INDEX ${name} SET (${want}); REINDEX INDEX CONCURRENTLY ${name};`
  );
}

/** For `cairn doctor`: the index's state in a sentence. */
export function describeVectorIndex(state: VectorIndexState, dims: number): string {
  if (state === 'valid') return `hnsw (vector_cosine_ops, ${dims} dimensions, iterative scan)`;
  if (state === 'invalid') return `hnsw (${dims} dimensions) being built (or a build was cut short): vector search scans exactly until it is valid; cairn verify builds it again`;
  return `hnsw (${dims} dimensions) missing: vector search scans exactly; cairn verify builds it, and so does a long-lived cairn (serve, mcp) when it opens`;
}
