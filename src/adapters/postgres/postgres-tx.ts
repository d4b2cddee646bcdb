import { createHash } from 'node:crypto';
import { vectorBytes, vectorFromBytes, vectorHash } from '../../core/checksum.js';
import { CairnError } from '../../interfaces/errors.js';
import { isCurrent, type Memory } from '../../interfaces/memory.js';
import type { QuarantineEntry } from '../../interfaces/quarantine.js';
import type { EmbedderInfo, EventInput, PendingErasure, StoreTx } from '../../interfaces/store.js';
import type { PoolClient } from './postgres-driver.js';
import { MEMORY_COLUMNS, MEMORY_SELECT, memoryValues, rowToMemory, rowToSnapshot, type Row } from '../sql/sql-rows.js';
import { LIVE_BY_DEDUPE_SQL } from './postgres-search.js';
import { Params, vectorLiteral } from './postgres-rows.js';
import { EMBEDDER_LOCK, EMBEDDER_RECORD_LOCK, ERASURE_LOCK, hnswIndexName, type VectorStorage } from './postgres-schema.js';
import { CLEAR_SAVED_LISTS_SQL } from './postgres-saved-lists.js';

/**
 * One write transaction on one pooled connection (READ COMMITTED). Writers in many processes and machines
 * stay correct through locks taken inside the transaction and released at its end:
 *
 * - every operation on a namespace (or on the store-wide scope `''`) first takes that namespace's advisory
 *   lock, so reads inside the transaction see the namespace as no other writer can change it until commit;
 *   the next event sequence number (MAX + 1 under that lock) is therefore gap-free, and a rolled-back
 *   transaction leaves no number behind;
 * - reading the erasures in progress takes the erasure lock shared; recording a new one takes it exclusive,
 *   so a writer either commits before an erasure starts or sees it and is refused;
 * - the global log position (gseq) is assigned at commit by a deferred trigger (postgres-schema.ts).
 */

export interface TxContext {
  storage: VectorStorage;
  /** The dimension of the recorded embedder as this process last saw it. */
  dims: number | null;
  /** The scratch schema whose advisory locks this store takes (lockKeys); null for the live store. */
  lockSpace: string | null;
}

/** Advisory-lock key of the scope given as $1 (64-bit hash of the namespace; a collision only serialises two namespaces). */
const SCOPE_KEY = `hashtextextended('cairn-scope:' || $1, 0)`;

/**
 * The advisory-lock arguments of one store. The live store keeps the keys every cairn process uses; a store
 * in a scratch schema (`lockSpace`, a plain identifier) takes its own: the two-key form for the fixed locks,
 * the schema in the scope hash, so a replay into it never contends with the live store's writers.
 */
function lockKeys(space: string | null): { scope: string; embedder: string; embedderRecord: string; erasure: string } {
  if (space === null) return { scope: SCOPE_KEY, embedder: `${EMBEDDER_LOCK}`, embedderRecord: `${EMBEDDER_RECORD_LOCK}`, erasure: `${ERASURE_LOCK}` };
  if (!/^[a-z_][a-z0-9_]*$/u.test(space)) throw new CairnError('INTERNAL', `bad lock space ${space}`);
  const two = (key: number) => `${key}, hashtext('${space}')`;
  return { scope: `hashtextextended('cairn-scope:${space}:' || $1, 0)`, embedder: two(EMBEDDER_LOCK), embedderRecord: two(EMBEDDER_RECORD_LOCK), erasure: two(ERASURE_LOCK) };
}

/** Distinct terms and how often each occurs (a memory's postings). */
export function termCounts(terms: string[]): { terms: string[]; counts: number[] } {
  const map = new Map<string, number>();
  for (const t of terms) map.set(t, (map.get(t) ?? 0) + 1);
  return { terms: [...map.keys()], counts: [...map.values()] };
}

export function createPostgresTx(client: PoolClient, ctx: TxContext): StoreTx {
  const keys = lockKeys(ctx.lockSpace);
  const locked = new Set<string>();
  let erasureLock: 'none' | 'shared' | 'exclusive' = 'none';
  const q = async <R extends Row = Row>(sql: string, values: unknown[] = []): Promise<R[]> => (await client.query<R>(sql, values)).rows;
  const one = async <R extends Row = Row>(sql: string, values: unknown[] = []): Promise<R | undefined> => (await q<R>(sql, values))[0];
  const snapshotHead = async (scope: string) => (await one<{ version: number; seq: number }>('SELECT version, seq FROM snapshots WHERE scope = $1', [scope])) ?? null;

  /**
   * Takes a lock, then reads, in one round trip: both statements go in one simple-protocol query (no
   * parameters), and under READ COMMITTED the read takes its snapshot after the lock is granted, so it sees
   * every commit of the lock's previous holder.
   */
  const lockThenRead = async <R extends Row = Row>(lockSql: string, readSql: string): Promise<R[]> => {
    const results = (await client.query(`${lockSql}; ${readSql}`)) as unknown as { rows: R[] }[];
    return (results[1] as { rows: R[] }).rows;
  };

  const scopeLockSql = (scope: string): string => `SELECT pg_advisory_xact_lock(${keys.scope.replace('$1', client.escapeLiteral(scope))})`;
  const lockScope = async (scope: string): Promise<void> => {
    if (locked.has(scope)) return;
    await q(`SELECT pg_advisory_xact_lock(${keys.scope})`, [scope]);
    locked.add(scope);
  };
  /** The scopes' locks in sorted order, in one round trip (the same order in every transaction: no deadlock). */
  const lockScopes = async (scopes: Iterable<string>): Promise<void> => {
    const missing = [...new Set(scopes)].filter((s) => !locked.has(s)).sort();
    if (missing.length === 0) return;
    // One statement per lock in one simple-protocol query: the statements run in the order written.
    await client.query(missing.map(scopeLockSql).join('; '));
    for (const s of missing) locked.add(s);
  };
  /** `sql` (text parameters only) under the scope's lock; the first time, lock and read share a round trip. */
  const inScope = async (scope: string, sql: string, values: string[]): Promise<Row[]> => {
    if (locked.has(scope)) return q(sql, values);
    const literal = (n: string) => client.escapeLiteral(values[Number(n) - 1] as string);
    const lock = scopeLockSql(scope);
    const rows = await lockThenRead(lock, sql.replace(/\$(\d+)/g, (_, n: string) => literal(n)));
    locked.add(scope);
    return rows;
  };
  /**
   * The embedder lock: readers of the record take it shared, so writers of different namespaces do not queue
   * behind each other; a reset takes it exclusive (waiting for every reader, blocking new ones until commit).
   * A reader that finds no record also takes the record lock, then reads again: of two first writers the
   * second waits and sees the first's record instead of recording one too. The record as read under the lock
   * cannot change until commit except by this transaction, so it is read once.
   */
  let embedderLock: 'none' | 'shared' | 'exclusive' = 'none';
  let embedderSeen: EmbedderInfo | null | undefined;
  const EMBEDDER_SQL = `SELECT value FROM meta WHERE key = 'embedder'`;
  const embedderOf = (r: { value: string } | undefined): EmbedderInfo | null => (r ? (JSON.parse(r.value) as EmbedderInfo) : null);
  const selectEmbedder = async (): Promise<EmbedderInfo | null> => embedderOf(await one<{ value: string }>(EMBEDDER_SQL));
  const lockEmbedder = async (mode: 'shared' | 'exclusive'): Promise<void> => {
    if (embedderLock === 'exclusive' || embedderLock === mode) return;
    await q(mode === 'shared' ? `SELECT pg_advisory_xact_lock_shared(${keys.embedder})` : `SELECT pg_advisory_xact_lock(${keys.embedder})`);
    embedderLock = mode;
  };
  const lockedEmbedder = async (): Promise<EmbedderInfo | null> => {
    if (embedderSeen !== undefined) return embedderSeen;
    let info: EmbedderInfo | null;
    if (embedderLock === 'none') {
      info = embedderOf((await lockThenRead<{ value: string }>(`SELECT pg_advisory_xact_lock_shared(${keys.embedder})`, EMBEDDER_SQL))[0]);
      embedderLock = 'shared';
    } else info = await selectEmbedder();
    if (info === null && embedderLock === 'shared') {
      await q(`SELECT pg_advisory_xact_lock(${keys.embedderRecord})`);
      info = await selectEmbedder();
    }
    embedderSeen = info;
    return info;
  };
  const readEmbedder = async (): Promise<EmbedderInfo | null> => (embedderSeen !== undefined ? embedderSeen : selectEmbedder());

  const checkDims = async (vector: Float32Array): Promise<void> => {
    if (ctx.dims !== vector.length) ctx.dims = (await readEmbedder())?.dimensions ?? null;
    if (ctx.dims === null) throw new CairnError('INTERNAL', 'no embedder recorded before writing a vector');
    if (vector.length !== ctx.dims) {
      throw new CairnError('EMBEDDER_MISMATCH', `vector has ${vector.length} dimensions; the store holds ${ctx.dims}`, { hint: 'run `cairn reindex`' });
    }
  };

  /**
   * Data-modifying CTEs writing the postings (`terms`, when given) and the vector of the memory row `pk` (a
   * placeholder, or a column of the CTE `source`), so a memory's index costs no round trip of its own.
   */
  const indexCtes = async (p: Params, pk: string, source: string | null, memory: Memory, vector: Float32Array | null, terms: string[]): Promise<string[]> => {
    const ctes: string[] = [];
    const tc = termCounts(terms);
    const ns = p.add(memory.namespace);
    const from = source ? ` FROM ${source}` : '';
    if (tc.terms.length > 0) {
      const postings = `unnest(${p.add(tc.terms)}::text[], ${p.add(tc.counts)}::int[]) AS u(t, c)`;
      ctes.push(`t AS (INSERT INTO memory_terms (namespace, term, memory_pk, tf) SELECT ${ns}, u.t, ${pk}, u.c${from ? `${from}, ${postings}` : ` FROM ${postings}`})`);
    }
    if (vector) {
      await checkDims(vector);
      const cast = ctx.storage === 'pgvector' ? 'vector' : 'real[]';
      const embedding = `${p.add(vectorLiteral(vector, ctx.storage))}::${cast}`;
      ctes.push(`v AS (INSERT INTO memory_vectors (memory_pk, namespace, active, kind, embedding) SELECT ${pk}, ${ns}, ${p.add(isCurrent(memory))}, ${p.add(memory.kind)}, ${embedding}${from})`);
    }
    return ctes;
  };

  /** Rewrites the index of the existing row `pk` (postings only when `terms` is given) in one statement. */
  const writeIndex = async (pk: number, memory: Memory, vector: Float32Array | null, terms: string[] | null): Promise<void> => {
    const p = new Params();
    const pkp = p.add(pk);
    const ctes = await indexCtes(p, pkp, null, memory, vector, terms ?? []);
    const docLength = terms ? `doc_length = ${p.add(terms.length + 1)}, ` : '';
    const update = `UPDATE memories SET ${docLength}vector_hash = ${p.add(vector ? vectorHash(vector) : null)} WHERE pk = ${pkp}`;
    await q(ctes.length > 0 ? `WITH ${ctes.join(', ')} ${update}` : update, p.values);
  };

  const memoryById = async (id: string): Promise<Row | undefined> => {
    // The namespace's lock first, then the row as of now: no other writer can change it until commit.
    const ns = await one<{ namespace: string }>('SELECT namespace FROM memories WHERE id = $1', [id]);
    if (!ns) return undefined;
    await lockScope(ns.namespace);
    return one(`SELECT m.pk, ${MEMORY_SELECT} FROM memories m WHERE m.id = $1`, [id]);
  };

  // The erasures in progress as read under the shared erasure lock, held to the end of the transaction: no
  // erasure can start meanwhile, so the list is read once and re-read only after this transaction records one.
  let erasuresSeen: PendingErasure[] | null = null;
  const pendingErasures = async (): Promise<PendingErasure[]> => {
    const read = 'SELECT id, scope, plan, started_at FROM pending_erasures ORDER BY started_at, id';
    if (erasureLock === 'none') {
      erasuresSeen = (await lockThenRead(`SELECT pg_advisory_xact_lock_shared(${keys.erasure})`, read)).map(rowToPendingErasure);
      erasureLock = 'shared';
    }
    erasuresSeen ??= (await q(read)).map(rowToPendingErasure);
    return [...erasuresSeen];
  };

  // Vector blobs this transaction wrote: a projection reads them straight back (content-addressed, immutable).
  const blobsPut = new Map<string, Float32Array>();

  return {
    lockScopes,
    getMemory: async (id) => {
      const r = await memoryById(id);
      return r ? rowToMemory(r) : null;
    },
    findLiveByDedupeKey: async (namespace, key) => {
      const [r] = await inScope(namespace, LIVE_BY_DEDUPE_SQL, [namespace, key]);
      return r ? rowToMemory(r) : null;
    },
    insertMemory: async (memory, vector, terms) => {
      await lockScope(memory.namespace);
      // The row (with its document length and vector hash), its postings and its vector in one statement.
      const p = new Params();
      const values = memoryValues(memory).map((v) => p.add(v));
      const row = `m AS (INSERT INTO memories (${MEMORY_COLUMNS.join(', ')}, doc_length, vector_hash) VALUES (${values.join(', ')}, ${p.add(terms.length + 1)}, ${p.add(
        vector ? vectorHash(vector) : null,
      )}) RETURNING pk)`;
      const ctes = await indexCtes(p, 'm.pk', 'm', memory, vector, terms);
      await q(`WITH ${[row, ...ctes].join(', ')} SELECT pk FROM m`, p.values);
    },
    updateMemory: async (memory, index) => {
      await lockScope(memory.namespace);
      const sets = MEMORY_COLUMNS.filter((c) => c !== 'id').map((c) => `${c} = $${MEMORY_COLUMNS.indexOf(c) + 1}`);
      const r = await one<{ pk: number }>(`UPDATE memories SET ${sets.join(', ')} WHERE id = $1 RETURNING pk`, memoryValues(memory));
      if (!r) throw new CairnError('NOT_FOUND', `no memory ${memory.id}`);
      if (index) {
        await q('DELETE FROM memory_terms WHERE memory_pk = $1', [r.pk]);
        await q('DELETE FROM memory_vectors WHERE memory_pk = $1', [r.pk]);
        await writeIndex(r.pk, memory, index.vector, index.terms);
      } else {
        await q('UPDATE memory_terms SET namespace = $2 WHERE memory_pk = $1 AND namespace <> $2', [r.pk, memory.namespace]);
        await q('UPDATE memory_vectors SET active = $2, kind = $3, namespace = $4 WHERE memory_pk = $1', [r.pk, isCurrent(memory), memory.kind, memory.namespace]);
      }
    },
    deleteMemory: async (id) => {
      const r = await memoryById(id);
      if (!r) return;
      // Postings and the vector go with the row (ON DELETE CASCADE); recall counts are outside the projection.
      await q('DELETE FROM memories WHERE pk = $1', [r['pk']]);
      await q('DELETE FROM recall_counts WHERE memory_id = $1', [id]);
    },
    appendEvent: async (event: EventInput) => {
      await lockScope(event.namespace);
      const r = await one<{ seq: number }>(
        `INSERT INTO events (namespace, seq, type, memory_id, payload, at)
         SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5 FROM events WHERE namespace = $1 RETURNING seq`,
        [event.namespace, event.type, event.memoryId, JSON.stringify(event.payload ?? null), event.at],
      );
      return r?.seq as number;
    },
    embedder: lockedEmbedder,
    setEmbedder: async (info) => {
      // Without a read before, exclusive as a reset (a replay records the embedder right after one).
      if (embedderLock === 'none') await lockEmbedder('exclusive');
      const existing = await lockedEmbedder();
      if (existing) {
        if (existing.id === info.id && existing.dimensions === info.dimensions) {
          ctx.dims = existing.dimensions;
          return;
        }
        throw new CairnError('EMBEDDER_MISMATCH', `the store already holds vectors from ${existing.id} (${existing.dimensions} dimensions)`, {
          hint: 'run `cairn reindex`',
        });
      }
      if (ctx.storage === 'pgvector' && !(await one<{ ok: boolean }>('SELECT to_regclass($1) IS NOT NULL AS ok', [hnswIndexName(info.dimensions)]))?.ok) {
        throw new CairnError('INTERNAL', `no HNSW index for ${info.dimensions} dimensions: Store.prepareVectors must run before the transaction that records the embedder`);
      }
      await q(`INSERT INTO meta (key, value) VALUES ('embedder', $1)`, [JSON.stringify(info)]);
      embedderSeen = info;
      ctx.dims = info.dimensions;
    },
    setVector: async (id, vector) => {
      const r = await memoryById(id);
      if (!r) throw new CairnError('NOT_FOUND', `no memory ${id}`);
      const pk = r['pk'] as number;
      await q('DELETE FROM memory_vectors WHERE memory_pk = $1', [pk]);
      await writeIndex(pk, rowToMemory(r), vector, null);
    },
    resetVectors: async () => {
      await lockEmbedder('exclusive');
      await q('DELETE FROM memory_vectors');
      await q('UPDATE memories SET vector_hash = NULL WHERE vector_hash IS NOT NULL');
      await q(`DELETE FROM meta WHERE key = 'embedder'`);
      embedderSeen = null;
      ctx.dims = null;
    },
    setSetting: async (namespace, key, value) => {
      await lockScope(namespace);
      await q('INSERT INTO settings (namespace, key, value) VALUES ($1, $2, $3) ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value', [
        namespace,
        key,
        JSON.stringify(value),
      ]);
    },
    putVectorBlob: async (hash, vector) => {
      await q('INSERT INTO vector_blobs (hash, data) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING', [hash, vectorBytes(vector)]);
      blobsPut.set(hash, Float32Array.from(vector));
    },
    getVectorBlob: async (hash) => {
      const put = blobsPut.get(hash);
      if (put) return Float32Array.from(put);
      const r = await one<{ data: Buffer }>('SELECT data FROM vector_blobs WHERE hash = $1', [hash]);
      return r ? vectorFromBytes(r.data) : null;
    },
    memoriesOf: async (namespace) => {
      await lockScope(namespace);
      const rows = await q(`SELECT ${MEMORY_SELECT}, m.vector_hash FROM memories m WHERE m.namespace = $1 ORDER BY m.id`, [namespace]);
      return rows.map((r) => ({ memory: rowToMemory(r), vectorHash: (r['vector_hash'] as string | null) ?? null }));
    },
    settingsOf: async (namespace) => {
      await lockScope(namespace);
      const rows = await q<{ key: string; value: string }>('SELECT key, value FROM settings WHERE namespace = $1 ORDER BY key', [namespace]);
      return rows.map((r) => ({ key: r.key, value: JSON.parse(r.value) as unknown }));
    },
    lastSeq: async (scope) => {
      await lockScope(scope);
      return (await one<{ n: number }>('SELECT COALESCE(MAX(seq), 0)::bigint AS n FROM events WHERE namespace = $1', [scope]))?.n ?? 0;
    },
    countEvents: async (scope, type) => {
      await lockScope(scope);
      return (await one<{ n: number }>('SELECT count(*) AS n FROM events WHERE namespace = $1 AND type = $2', [scope, type]))?.n ?? 0;
    },
    getSnapshot: async (scope) => {
      await lockScope(scope);
      const r = await one('SELECT * FROM snapshots WHERE scope = $1', [scope]);
      return r ? rowToSnapshot(r) : null;
    },
    snapshotHead: async (scope) => {
      await lockScope(scope);
      return snapshotHead(scope);
    },
    putSnapshot: async (snap, expectedVersion) => {
      await lockScope(snap.scope);
      const have = (await snapshotHead(snap.scope))?.version ?? null;
      if (have !== expectedVersion) {
        throw new CairnError('CONFLICT', `snapshot of scope ${JSON.stringify(snap.scope)} is at version ${have ?? 'none'}, expected ${expectedVersion ?? 'none'}: another writer checkpointed first`);
      }
      const version = (have ?? 0) + 1;
      await q(
        `INSERT INTO snapshots (scope, version, seq, blob, blob_sha256, checksum, engine_version, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (scope) DO UPDATE SET version = excluded.version, seq = excluded.seq, blob = excluded.blob, blob_sha256 = excluded.blob_sha256,
           checksum = excluded.checksum, engine_version = excluded.engine_version, created_at = excluded.created_at`,
        [snap.scope, version, snap.seq, Buffer.from(snap.blob), snap.blobSha256, snap.checksum, snap.engineVersion, snap.createdAt],
      );
      return version;
    },
    deleteSnapshot: async (scope) => {
      await lockScope(scope);
      await q('DELETE FROM snapshots WHERE scope = $1', [scope]);
    },
    clearProjection: async (namespace) => {
      await lockScope(namespace);
      await q('DELETE FROM memories WHERE namespace = $1', [namespace]);
      await q('DELETE FROM settings WHERE namespace = $1', [namespace]);
    },
    rewriteEvent: async (scope, seq, type, payload) => {
      await lockScope(scope);
      await q('UPDATE events SET type = $3, payload = $4, memory_id = NULL WHERE namespace = $1 AND seq = $2', [scope, seq, type, JSON.stringify(payload)]);
    },
    vectorBlobReferenced: async (hash) => {
      const r = await one(
        `SELECT 1 AS x WHERE EXISTS (SELECT 1 FROM memories WHERE vector_hash = $1) OR EXISTS (SELECT 1 FROM events WHERE strpos(payload, $1) > 0)`,
        [hash],
      );
      return r !== undefined;
    },
    deleteVectorBlob: async (hash) => {
      blobsPut.delete(hash);
      await q('DELETE FROM vector_blobs WHERE hash = $1', [hash]);
    },
    deleteQuarantineEntry: async (id) => {
      await q('DELETE FROM quarantine WHERE id = $1', [id]);
    },
    pendingErasures,
    putPendingErasure: async (e) => {
      const exists = await one('SELECT 1 AS x FROM pending_erasures WHERE id = $1', [e.id]);
      if (!exists && erasureLock !== 'exclusive') {
        // A new erasure waits for every writer that has read the erasure list, and blocks new ones until commit.
        await q(`SELECT pg_advisory_xact_lock(${keys.erasure})`);
        erasureLock = 'exclusive';
      }
      await q(
        `INSERT INTO pending_erasures (id, scope, plan, started_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET scope = excluded.scope, plan = excluded.plan, started_at = excluded.started_at`,
        [e.id, JSON.stringify(e.scope), e.plan === null || e.plan === undefined ? null : JSON.stringify(e.plan), e.startedAt],
      );
      await q(CLEAR_SAVED_LISTS_SQL);
      erasuresSeen = null;
    },
    putQuarantine: async (entry) => {
      await q(
        `INSERT INTO quarantine (id, hash, entry, status, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, entry = excluded.entry, status = excluded.status, created_at = excluded.created_at`,
        [entry.id, entry.hash, JSON.stringify(entry), entry.status, entry.createdAt],
      );
    },
    getQuarantine: async (id) => {
      const r = await one<{ entry: string }>('SELECT entry FROM quarantine WHERE id = $1', [id]);
      return r ? (JSON.parse(r.entry) as QuarantineEntry) : null;
    },
    findQuarantineByHash: async (hash) =>
      (await q<{ entry: string }>('SELECT entry FROM quarantine WHERE hash = $1 ORDER BY id', [hash])).map((r) => JSON.parse(r.entry) as QuarantineEntry),
    clearQuarantine: async () => {
      await q('DELETE FROM quarantine');
    },
    putQuarantineVault: async (id, text, request) => {
      await q('INSERT INTO quarantine_vault (id, text, request) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET text = excluded.text, request = excluded.request', [
        id,
        text,
        JSON.stringify(request),
      ]);
    },
    getQuarantineVault: async (id) => {
      const r = await one<{ text: string; request: string }>('SELECT text, request FROM quarantine_vault WHERE id = $1', [id]);
      return r ? { text: r.text, request: JSON.parse(r.request) as unknown } : null;
    },
    deleteQuarantineVault: async (id) => {
      await q('DELETE FROM quarantine_vault WHERE id = $1', [id]);
    },
    putLearnedAnchor: async (id, vector, at) => {
      await q('INSERT INTO learned_anchors (id, vector, created_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET vector = excluded.vector, created_at = excluded.created_at', [
        id,
        vectorBytes(vector),
        at,
      ]);
    },
    getLearnedAnchor: async (id) => {
      const r = await one<{ vector: Buffer }>('SELECT vector FROM learned_anchors WHERE id = $1', [id]);
      return r ? vectorFromBytes(r.vector) : null;
    },
    deleteLearnedAnchor: async (id) => {
      await q('DELETE FROM learned_anchors WHERE id = $1', [id]);
    },
    putAnchorCache: async (key, vectors) => {
      await q('INSERT INTO anchor_cache (key, vectors) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET vectors = excluded.vectors', [key, encodeAnchorCache(vectors)]);
    },
  };
}

export function rowToPendingErasure(r: Row): PendingErasure {
  return {
    id: r['id'] as string,
    scope: JSON.parse(r['scope'] as string) as PendingErasure['scope'],
    plan: r['plan'] === null ? null : (JSON.parse(r['plan'] as string) as unknown),
    startedAt: r['started_at'] as string,
  };
}

/** Dimension, the vectors, then a SHA-256 trailer (a flipped byte would silently move the filter's anchors). */
function encodeAnchorCache(vectors: Float32Array[]): Buffer {
  const dims = vectors[0]?.length ?? 0;
  const body = Buffer.alloc(4 + vectors.length * dims * 4);
  body.writeUInt32LE(dims, 0);
  vectors.forEach((v, i) => vectorBytes(v).copy(body, 4 + i * dims * 4));
  return Buffer.concat([body, createHash('sha256').update(body).digest()]);
}

export function decodeAnchorCache(buf: Buffer): Float32Array[] | null {
  if (buf.length < 36) return null;
  const body = buf.subarray(0, buf.length - 32);
  if (!createHash('sha256').update(body).digest().equals(buf.subarray(buf.length - 32))) return null;
  const dims = body.readUInt32LE(0);
  if (dims === 0 || (body.length - 4) % (dims * 4) !== 0) return null;
  const out: Float32Array[] = [];
  for (let at = 4; at + dims * 4 <= body.length; at += dims * 4) out.push(vectorFromBytes(body.subarray(at, at + dims * 4)));
  return out;
}
