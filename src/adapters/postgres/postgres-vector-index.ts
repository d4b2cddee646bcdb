import type { Pool } from './postgres-driver.js';
import { hnswIndexName, hnswIndexSql, VECTOR_INDEX_LOCK } from './postgres-schema.js';

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

/**
 * Builds the index of `dims` unless it is valid. One process at a time (an advisory lock per dimension,
 * taken without waiting): `busy` when another session is building it; an invalid leftover is dropped first.
 * On a connection of its own, closed afterwards so its lifted timeout reaches no other caller.
 */
export async function buildVectorIndex(pool: Pool, dims: number): Promise<'built' | 'valid' | 'busy'> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [VECTOR_INDEX_LOCK, dims]);
    if (!rows[0]?.ok) return 'busy';
    await client.query('SET statement_timeout = 0');
    const state = await vectorIndexState(pool, dims);
    if (state === 'valid') return 'valid';
    if (state === 'invalid') await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${hnswIndexName(dims)}`);
    await client.query(hnswIndexSql(dims, { concurrently: true }));
    return 'built';
  } finally {
    client.release(true); // ends the session: its advisory lock and setting go with it
  }
}

/** For `cairn doctor`: the index's state in a sentence. */
export function describeVectorIndex(state: VectorIndexState, dims: number): string {
  if (state === 'valid') return `hnsw (vector_cosine_ops, ${dims} dimensions, iterative scan)`;
  if (state === 'invalid') return `hnsw (${dims} dimensions) being built (or a build was cut short): vector search scans exactly until it is valid; cairn verify builds it again`;
  return `hnsw (${dims} dimensions) missing: vector search scans exactly; it is built in the background when the store opens, or by cairn verify`;
}
