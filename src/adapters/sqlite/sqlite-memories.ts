import { CairnError } from '../../interfaces/errors.js';
import { isCurrent, type Memory, type StoreStats } from '../../interfaces/memory.js';
import { vectorHash } from '../../core/checksum.js';
import type { CandidateFilter, ListFilter, RankingFields, StoreTx } from '../../interfaces/store.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { MEMORY_SELECT, memoryRecord, rowToMemory, rowToRankingFields, type Row } from '../sql/sql-rows.js';
import { ACTIVE_SQL, CURRENT_SQL, filterSql, nsToken } from './sqlite-rows.js';

/**
 * Ranking fields kept at most; past it the cache starts over. An entry takes about 500 bytes (an id, a
 * namespace string of its own, a timestamp, and for some a session, feedback or a code reference), so the
 * cache stays under about 25 MB.
 */
const RANKING_CACHE_MAX = 50_000;

/** The memories table: rows, their full-text terms and vectors kept beside them, lists and counts. */
export class SqliteMemories {
  constructor(private readonly c: SqliteConnection) {
    c.onCommit((effects) => {
      for (const id of effects.changed) this.ranking.delete(id);
    });
  }

  /**
   * Ranking fields read so far, kept across searches (a search reads several hundred): an entry leaves when a
   * transaction of this connection updates or deletes its memory, and all leave when another process commits.
   * A new memory is read when first asked for.
   */
  private readonly ranking = new Map<string, RankingFields>();
  private rankingVersion = -1;

  /** Refuses a vector the vector table cannot hold (before anything of the write is done). */
  private checkVector(vector: Float32Array): void {
    if (this.c.vectorDims === null) throw new CairnError('INTERNAL', 'no embedder recorded before writing a vector');
    if (vector.length !== this.c.vectorDims) {
      throw new CairnError('EMBEDDER_MISMATCH', `vector has ${vector.length} dimensions; the store holds ${this.c.vectorDims}`, { hint: 'run `cairn reindex`' });
    }
  }

  private insertVectorRow(rowid: bigint, memory: Memory, vector: Float32Array): void {
    this.c.stmt(`INSERT INTO ${this.c.vectorTable} (rowid, namespace, active, kind, embedding) VALUES (?, ?, ?, ?, ?)`)
      .run(rowid, memory.namespace, isCurrent(memory) ? 1n : 0n, memory.kind, vector);
  }

  /** The vector of an existing row: its vector table row and its hash. */
  private writeVector(rowid: bigint, memory: Memory, vector: Float32Array): void {
    this.checkVector(vector);
    this.insertVectorRow(rowid, memory, vector);
    this.c.stmt('UPDATE memories SET vector_hash = ? WHERE rowid = ?').run(vectorHash(vector), rowid);
  }

  private getMemorySync(id: string): Memory | null {
    const r = this.c.stmt('SELECT * FROM memories WHERE id = ?').get(id) as Row | undefined;
    return r ? rowToMemory(r) : null;
  }

  async getMemory(id: string): Promise<Memory | null> {
    return this.c.read('reading a memory', () => this.getMemorySync(id));
  }

  async findLiveByDedupeKey(namespace: string, key: string): Promise<Memory | null> {
    return this.c.read('reading a memory', () => this.findLiveSync(namespace, key));
  }

  private findLiveSync(namespace: string, key: string): Memory | null {
    const r = this.c.stmt(`SELECT * FROM memories m WHERE m.namespace = ? AND m.dedupe_key = ? AND ${CURRENT_SQL}`).get(namespace, key) as Row | undefined;
    return r ? rowToMemory(r) : null;
  }

  async getMemories(ids: string[]): Promise<Memory[]> {
    if (ids.length === 0) return [];
    return this.c.read('reading memories', () => {
      // One statement whatever the number of ids (a list of placeholders was prepared again for every new
      // length), and only the columns a Memory holds: a search reads several hundred candidates here.
      const rows = this.c.stmt(`SELECT ${MEMORY_SELECT} FROM memories m WHERE m.id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(ids)) as Row[];
      return rows.map(rowToMemory);
    });
  }

  async getRankingFields(ids: string[]): Promise<RankingFields[]> {
    if (ids.length === 0) return [];
    return this.c.read('reading memories', () => {
      // Inside an open write transaction of this connection the rows may be uncommitted: every id is read
      // from the table (what the whole rows of the results show too), and nothing read is kept.
      const cached = !this.c.db.inTransaction;
      if (cached) {
        const version = this.c.dataVersion();
        if (version !== this.rankingVersion || this.ranking.size > RANKING_CACHE_MAX) {
          this.ranking.clear();
          this.rankingVersion = version;
        }
      }
      const out: RankingFields[] = [];
      const missing: string[] = [];
      for (const id of ids) {
        const known = cached ? this.ranking.get(id) : undefined;
        if (known) out.push(known);
        else missing.push(id);
      }
      if (missing.length === 0) return out;
      // Rows as arrays (an object per row cost more than reading it), and metadata only when it names a session.
      const rows = this.c
        .stmt(
          `SELECT m.id, m.namespace, m.created_at, CASE WHEN instr(m.metadata, '"sessionId"') > 0 THEN m.metadata END, m.feedback, m.code
           FROM memories m WHERE m.id IN (SELECT value FROM json_each(?))`,
        )
        .raw(true)
        .all(JSON.stringify(missing)) as unknown[][];
      for (const row of rows) {
        const fields = rowToRankingFields(row);
        if (cached) this.ranking.set(fields.id, fields);
        out.push(fields);
      }
      return out;
    });
  }

  async listLikelyReplacing(ids: string[], filter: CandidateFilter): Promise<Memory[]> {
    if (ids.length === 0) return [];
    return this.c.read('reading memories', () => {
      const params: Row = { now: filter.now, namespace: filter.namespace, ids: JSON.stringify(ids) };
      // The partial index memories_replacing holds only the notes that name any.
      const sql = `SELECT m.* FROM memories m INDEXED BY memories_replacing WHERE m.namespace = @namespace AND m.likely_replaces IS NOT NULL
        AND ${filterSql(filter, params)} AND EXISTS (SELECT 1 FROM json_each(m.likely_replaces) r WHERE r.value IN (SELECT value FROM json_each(@ids)))`;
      return (this.c.stmt(sql).all(params) as Row[]).map(rowToMemory);
    });
  }

  async listMemories(filter: ListFilter): Promise<Memory[]> {
    return this.c.read('listing memories', () => {
      const params: Row = { now: filter.now, limit: filter.limit };
      const where = [filterSql(filter, params)];
      if (filter.namespace !== undefined) {
        where.push('m.namespace = @namespace');
        params['namespace'] = filter.namespace;
      }
      if (filter.before !== undefined) {
        where.push('m.id < @before');
        params['before'] = filter.before;
      }
      if (filter.createdFrom !== undefined) {
        where.push('m.created_at >= @createdFrom');
        params['createdFrom'] = filter.createdFrom;
      }
      if (filter.createdTo !== undefined) {
        where.push('m.created_at < @createdTo');
        params['createdTo'] = filter.createdTo;
      }
      for (const key of ['source', 'agent', 'sessionId'] as const) {
        const value = filter.provenance?.[key];
        if (value === undefined) continue;
        where.push(`json_extract(m.metadata, '$.${key}') = @p_${key}`);
        params[`p_${key}`] = value;
      }
      const rows = this.c.stmt(`SELECT m.* FROM memories m WHERE ${where.join(' AND ')} ORDER BY m.id DESC LIMIT @limit`).all(params) as Row[];
      return rows.map(rowToMemory);
    });
  }

  async *iterateMemories(namespace: string | undefined, pageSize = 500): AsyncIterable<Memory[]> {
    let after = '';
    for (;;) {
      const page = this.c.read('reading memories', () => {
        const rows = (
          namespace === undefined
            ? this.c.stmt('SELECT * FROM memories WHERE id > ? ORDER BY id LIMIT ?').all(after, pageSize)
            : this.c.stmt('SELECT * FROM memories WHERE namespace = ? AND id > ? ORDER BY id LIMIT ?').all(namespace, after, pageSize)
        ) as Row[];
        return rows.map(rowToMemory);
      });
      if (page.length === 0) return;
      after = (page[page.length - 1] as Memory).id;
      yield page;
    }
  }

  async listExpired(now: string, namespace?: string): Promise<Memory[]> {
    return this.c.read('listing expired memories', () => {
      const rows = (
        namespace === undefined
          ? this.c.stmt('SELECT * FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?').all(now)
          : this.c.stmt('SELECT * FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ? AND namespace = ?').all(now, namespace)
      ) as Row[];
      return rows.map(rowToMemory);
    });
  }

  async stats(now: string): Promise<StoreStats> {
    return this.c.read('counting', () => {
      const rows = this.c.stmt(
          `SELECT m.namespace AS namespace,
             SUM(CASE WHEN ${ACTIVE_SQL} THEN 1 ELSE 0 END) AS live,
             SUM(CASE WHEN m.forgotten_at IS NOT NULL THEN 1 ELSE 0 END) AS forgotten,
             SUM(CASE WHEN m.forgotten_at IS NULL AND m.superseded_by IS NOT NULL THEN 1 ELSE 0 END) AS superseded,
             SUM(CASE WHEN ${CURRENT_SQL} AND NOT (${ACTIVE_SQL}) THEN 1 ELSE 0 END) AS expired
           FROM memories m GROUP BY m.namespace ORDER BY m.namespace`,
        )
        .all({ now }) as StoreStats['namespaces'];
      const total = rows.reduce((s, r) => s + r.live + r.forgotten + r.superseded + r.expired, 0);
      const { n } = this.c.stmt('SELECT COUNT(*) AS n FROM events').get() as { n: number };
      return { namespaces: rows, total, events: n };
    });
  }

  /** This part's operations inside a write transaction (the caller holds the write lock). */
  tx(): Pick<StoreTx, 'getMemory' | 'findLiveByDedupeKey' | 'insertMemory' | 'updateMemory' | 'deleteMemory' | 'memoriesOf' | 'clearProjection' | 'setVector'> {
    return {
    getMemory: async (id) => this.getMemorySync(id),
    findLiveByDedupeKey: async (namespace, key) => this.findLiveSync(namespace, key),
    insertMemory: async (memory, vector, terms) => {
      if (vector) this.checkVector(vector);
      // The vector's hash goes in with the row rather than by an update after it: the same row, one write less,
      // and the same one vector_changes entry (from the insert trigger instead of the update trigger).
      const info = this.c.stmt(
          `INSERT INTO memories (id, namespace, text, kind, importance, tags, task_id, metadata, route, created_at, updated_at,
            expires_at, supersedes, superseded_by, forgotten_at, forget_reason, dedupe_key,
            code, feedback, likely_replaces, instruction_check, vector_hash)
           VALUES (@id, @namespace, @text, @kind, @importance, @tags, @task_id, @metadata, @route, @created_at, @updated_at,
            @expires_at, @supersedes, @superseded_by, @forgotten_at, @forget_reason, @dedupe_key,
            @code, @feedback, @likely_replaces, @instruction_check, @vector_hash)`,
        )
        .run({ ...memoryRecord(memory), vector_hash: vector ? vectorHash(vector) : null });
      const rowid = BigInt(info.lastInsertRowid);
      this.c.stmt('INSERT INTO memories_fts (rowid, ns, terms) VALUES (?, ?, ?)').run(rowid, nsToken(memory.namespace), terms.join(' '));
      if (vector) this.insertVectorRow(rowid, memory, vector);
      this.c.effects.inserted.push({ rowid: Number(rowid), namespace: memory.namespace, terms });
    },
    updateMemory: async (memory, index) => {
      const row = this.c.stmt('SELECT rowid, namespace FROM memories WHERE id = ?').get(memory.id) as { rowid: number; namespace: string } | undefined;
      if (!row) throw new CairnError('NOT_FOUND', `no memory ${memory.id}`);
      this.c.effects.changed.add(memory.id);
      if (index || row.namespace !== memory.namespace) this.c.effects.recounted.add(row.namespace).add(memory.namespace);
      const p = memoryRecord(memory);
      this.c.stmt(
        `UPDATE memories SET namespace=@namespace, text=@text, kind=@kind, importance=@importance, tags=@tags, task_id=@task_id,
          metadata=@metadata, route=@route, created_at=@created_at, updated_at=@updated_at, expires_at=@expires_at,
          supersedes=@supersedes, superseded_by=@superseded_by, forgotten_at=@forgotten_at, forget_reason=@forget_reason,
          dedupe_key=@dedupe_key,
          code=@code, feedback=@feedback, likely_replaces=@likely_replaces, instruction_check=@instruction_check WHERE id=@id`,
      ).run(p);
      const rowid = BigInt(row.rowid);
      if (index) {
        this.c.stmt('DELETE FROM memories_fts WHERE rowid = ?').run(rowid);
        this.c.stmt('INSERT INTO memories_fts (rowid, ns, terms) VALUES (?, ?, ?)').run(rowid, nsToken(memory.namespace), index.terms.join(' '));
        if (this.c.vectorDims !== null) this.c.stmt(`DELETE FROM ${this.c.vectorTable} WHERE rowid = ?`).run(rowid);
        this.c.stmt('UPDATE memories SET vector_hash = NULL WHERE rowid = ?').run(rowid);
        if (index.vector) this.writeVector(rowid, memory, index.vector);
      } else if (this.c.vectorDims !== null) {
        this.c.stmt(`UPDATE ${this.c.vectorTable} SET active = ?, kind = ? WHERE rowid = ?`).run(isCurrent(memory) ? 1n : 0n, memory.kind, rowid);
      }
    },
    deleteMemory: async (id) => {
      const row = this.c.stmt('SELECT rowid, namespace FROM memories WHERE id = ?').get(id) as { rowid: number; namespace: string } | undefined;
      if (!row) return;
      this.c.effects.changed.add(id);
      this.c.effects.recounted.add(row.namespace);
      const rowid = BigInt(row.rowid);
      this.c.stmt('DELETE FROM memories_fts WHERE rowid = ?').run(rowid);
      if (this.c.vectorDims !== null) this.c.stmt(`DELETE FROM ${this.c.vectorTable} WHERE rowid = ?`).run(rowid);
      this.c.stmt('DELETE FROM memories WHERE rowid = ?').run(rowid);
      this.c.stmt('DELETE FROM recall_counts WHERE memory_id = ?').run(id);
    },
    memoriesOf: async (namespace) => {
      const rows = this.c.stmt('SELECT * FROM memories WHERE namespace = ? ORDER BY id').all(namespace) as Row[];
      return rows.map((r) => ({ memory: rowToMemory(r), vectorHash: (r['vector_hash'] as string | null) ?? null }));
    },
    clearProjection: async (namespace) => {
      const rowids = this.c.stmt('SELECT rowid, id FROM memories WHERE namespace = ?').all(namespace) as { rowid: number; id: string }[];
      for (const { id } of rowids) this.c.effects.changed.add(id);
      this.c.effects.recounted.add(namespace);
      const delFts = this.c.stmt('DELETE FROM memories_fts WHERE rowid = ?');
      const delVec = this.c.vectorDims !== null ? this.c.stmt(`DELETE FROM ${this.c.vectorTable} WHERE rowid = ?`) : null;
      for (const { rowid } of rowids) {
        delFts.run(BigInt(rowid));
        delVec?.run(BigInt(rowid));
      }
      this.c.stmt('DELETE FROM memories WHERE namespace = ?').run(namespace);
      this.c.stmt('DELETE FROM settings WHERE namespace = ?').run(namespace);
    },
    setVector: async (id, vector) => {
      const r = this.c.stmt('SELECT * FROM memories WHERE id = ?').get(id) as Row | undefined;
      if (!r) throw new CairnError('NOT_FOUND', `no memory ${id}`);
      const rowid = BigInt(r['rowid'] as number);
      this.c.stmt(`DELETE FROM ${this.c.vectorTable} WHERE rowid = ?`).run(rowid);
      this.writeVector(rowid, rowToMemory(r), vector);
    },
    };
  }
}
