// The vec0 tables holding the memories' vectors, one per dimension (memories_vec_<n>): their names and DDL.
// Kept free of imports: the vector index worker reads them too.

/** The vec0 table holding vectors of `dimensions` dimensions; one per dimension (see migration 11). */
export function vectorTableName(dimensions: number): string {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 8192) throw new Error(`bad dimensions ${dimensions}`);
  return `memories_vec_${dimensions}`;
}

/**
 * The vectors a quantised index holds: every current memory (not forgotten, not superseded) with a vector in
 * the vector table of this dimension, the same vectors exhaustive search reads. Expiry, kinds and tags are
 * checked when hits are rescored, not here.
 */
export function indexedVectorsSql(dimensions: number): string {
  return `SELECT m.rowid AS rowid, m.namespace AS namespace, v.embedding AS data FROM memories m
  JOIN ${vectorTableName(dimensions)} v ON v.rowid = m.rowid WHERE m.forgotten_at IS NULL AND m.superseded_by IS NULL`;
}

/**
 * The vec0 table. The namespace is a partition key, so a KNN query scans only its namespace's vectors;
 * `active` and `kind` are metadata columns filtered inside the index. Chunks of 64 vectors instead of the
 * default 1024: every partition allocates whole chunks, and with 1024 a namespace of a few notes would cost
 * 2 MB (measured: 100 namespaces × 100 vectors took 214 MB with 1024, 27 MB with 64, inserts 2× faster).
 */
export function vectorTableSql(dimensions: number): string {
  return `CREATE VIRTUAL TABLE IF NOT EXISTS ${vectorTableName(dimensions)} USING vec0(
    namespace TEXT PARTITION KEY,
    active INTEGER,
    kind TEXT,
    embedding float[${dimensions}] distance_metric=cosine,
    chunk_size=64
  )`;
}
