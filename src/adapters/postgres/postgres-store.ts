import { randomBytes } from 'node:crypto';
import type { SessionStore } from '../../interfaces/sessions.js';
import { createPostgresSessions } from './postgres-sessions.js';
import type { Logger } from '../../interfaces/embedder.js';
import { CairnError } from '../../interfaces/errors.js';
import type { Memory, StoreStats } from '../../interfaces/memory.js';
import type { QuarantineEntry, QuarantineListOptions } from '../../interfaces/quarantine.js';
import type {
  AccessTokenRecord,
  CandidateFilter,
  EmbedderInfo,
  FusedRecall,
  FusedRecallRequest,
  LexicalHit,
  ListFilter,
  ErasureProof,
  PendingErasure,
  RecallStats,
  ScopeInfo,
  SnapshotRecord,
  Store,
  StoreCapabilities,
  StoreReport,
  StoredEvent,
  StoreTx,
  VectorHit,
  VectorIndexCheck,
} from '../../interfaces/store.js';
import { vectorFromBytes } from '../../core/checksum.js';
import type { PostgresStoreConfig } from './postgres-config.js';
import type pg from 'pg';
import { createPool, isPreparedStatementFault, isTransient, sleep, statementName, translatePgError, type Pool, type PoolClient, type StatementResult } from './postgres-driver.js';
import { CATALOG_NOT_VACUUMED, canReadServerFiles, canVacuumCatalog, compactAfterErasure, NOT_COVERED, rawFilesContain, STATISTICS_UNSETTLED, statisticsContain } from './postgres-erasure.js';
import { fusedResult } from './postgres-fusion.js';
import { continueReanalysis } from './postgres-follow-ups.js';
import { migrate, type ServerFacts } from './postgres-migrations.js';
import { MEMORY_SELECT, rowToEvent, rowToMemory, rowToSnapshot, rowToToken, type Row } from '../sql/sql-rows.js';
import { RecallBatch, type PendingRecall } from '../sql/recall-batch.js';
import { arrayRowsOf, Params, parseVector, vectorFromSend, vectorParam, type ArrayRows } from './postgres-rows.js';
import { hnswIndexName, hnswIndexSql } from './postgres-schema.js';
import { buildVectorIndex, describeVectorIndex, hnswBuildProblem, startVectorIndexBuild, vectorIndexState } from './postgres-vector-index.js';
import { activeSql, CURRENT_SQL, filterSql, fusedRecallSql, LIVE_BY_DEDUPE_SQL, lexicalCtes, listWhere, vectorCandidatesSql, type VectorSpace } from './postgres-search.js';
import { createPostgresTx, decodeAnchorCache, rowToPendingErasure, type TxContext } from './postgres-tx.js';
import { proposedOrFull, RecallCopies, type RecallCopiesStatus } from './postgres-recall-copies.js';
import type { Proposals } from './postgres-recall-copy.js';
import { CLEAR_SAVED_LISTS_SQL } from './postgres-saved-lists.js';

/** Attempts of a read, or of starting a transaction, when the connection fails; then STORE_UNAVAILABLE. */
const ATTEMPTS = 3;
const BACKOFF_MS = 200;

/**
 * The PostgreSQL store: one database shared by every process and machine of a team. The log, the
 * projection, the postings of the lexical index and the vectors (pgvector, HNSW cosine) live in the same
 * database and change in the same transaction. Hybrid recall runs as one statement (`fusedRecall`).
 *
 * Opening is lazy: the constructor connects nothing (and `pg` is not even loaded) until the first call,
 * which connects, migrates and detects pgvector; a failure there fails that call with STORE_UNAVAILABLE
 * naming the cause (server down, wrong password, missing database).
 */
/** How long `cairn verify`'s index build waits for each older transaction before it gives up. */
const VERIFY_LOCK_TIMEOUT_MS = 5_000;
/**
 * How long preparing vectors or verify waits for this process's background index build before going on
 * without it: a concurrent build waits for every older snapshot of the database, so it may not end while
 * another session's transaction lives.
 */
const BUILD_SETTLE_MS = 5_000;

export class PostgresStore implements Store {
  readonly location: string;
  private readonly config: PostgresStoreConfig;
  private readonly logger: Logger | undefined;
  private opening: Promise<Pool> | null = null;
  private pool: Pool | null = null;
  private facts: ServerFacts | null = null;
  private dims: number | null = null;
  private closed = false;
  private idleErrorLogged = false;
  /** Whether this role may read the server's files (the erasure proof); learnt on open. */
  private canReadFiles: boolean | null = null;
  /** A background build of a missing HNSW index (repairVectorIndex), until it ends; close() cancels it. */
  private indexBuild: { done: Promise<void>; cancel(): Promise<void> } | undefined;
  /** The searched namespaces' copies of a long-lived process (config.recallCopies), once vectors have a space. */
  private copies: RecallCopies | null = null;
  /** Recall counts wait here and are written in batches (sql/recall-batch.ts). */
  private readonly recalls = new RecallBatch(
    async (batch) => {
      const { text, values } = recallCountsStatement(batch);
      await this.smallWrite('counting recalls', text, values);
    },
    (message) => this.logger?.debug(message),
  );
  /** Whether `keptRows` prepares its statements (config.preparedStatements; off once the server loses one). */
  private prepare: boolean;
  /** Sessions and request budgets of every `cairn serve` on this database (postgres-sessions.ts). */
  readonly sessions: SessionStore = createPostgresSessions((what, sql, values) => this.rows(what, sql, values));

  constructor(config: PostgresStoreConfig, logger?: Logger) {
    this.config = config;
    this.logger = logger;
    this.location = config.location;
    this.prepare = config.preparedStatements ?? true;
  }

  /**
   * Before the first call has connected, the flags describe the pgvector path; `open()` settles them, and
   * the engine's first store call always comes through it.
   */
  get capabilities(): StoreCapabilities {
    const pgvector = (this.facts?.vectorStorage ?? 'pgvector') === 'pgvector';
    return { vectorSearch: true, fullText: true, serverSideFusion: pgvector };
  }

  /**
   * PostgreSQL's proof: VACUUM FULL of every cairn table, then its table, TOAST and index files read through
   * pg_read_binary_file. Present before the first call has connected (`open()` learns the role's rights, and
   * the engine's first store call always comes through it); absent for a role that may not read the files.
   */
  get erasureProof(): ErasureProof | undefined {
    return this.canReadFiles === false ? undefined : this.proof;
  }

  get noErasureProof(): string | undefined {
    return this.canReadFiles === false
      ? `the role connected to ${this.where()} may not read the server's files (it is neither superuser nor a member of pg_read_server_files), so the erased bytes cannot be looked for in the table and index files`
      : undefined;
  }

  private readonly proof: ErasureProof = {
    method: 'VACUUM FULL of every cairn table (indexes rebuilt), ANALYZE of them and VACUUM FULL pg_statistic, then the table, TOAST, index and statistics files are read through pg_read_binary_file and pg_stats is searched; the WAL is not covered',
    compact: () => this.read('compacting after an erasure', (pool) => compactAfterErasure(pool)),
    check: async (needles, compaction, terms = []) => {
      const { scan, stats, catalog } = await this.read('scanning the database files and statistics', async (pool) => {
        const rewritten = await canVacuumCatalog(pool);
        return { scan: await rawFilesContain(pool, needles, { statistics: rewritten }), stats: await statisticsContain(pool, needles, terms), catalog: rewritten };
      });
      if (!scan.readable) {
        throw new CairnError('UNSUPPORTED', `cannot read the database files to prove the erasure: ${scan.detail}`, {
          hint: 'grant the role pg_read_server_files (or run the check as a superuser)',
        });
      }
      const found = new Set([...scan.foundNeedles, ...stats.found]).size;
      const scanned = [...scan.scanned, { what: `planner statistics (pg_stats: ${stats.values} sampled values of ${stats.columns} columns)`, files: stats.columns, bytes: stats.bytes }];
      const notCovered = catalog ? [...NOT_COVERED] : [...NOT_COVERED, `the replaced tuples in pg_statistic's file (pg_stats was searched; ${CATALOG_NOT_VACUUMED})`];
      const unproven = compaction.includes(STATISTICS_UNSETTLED) ? [STATISTICS_UNSETTLED] : [];
      return { backend: 'postgres', compaction, scanned, found, termsSearched: terms.length, notCovered, unproven };
    },
  };

  /** Connects, migrates and detects capabilities once; every method awaits it. */
  open(): Promise<Pool> {
    if (this.closed) return Promise.reject(new CairnError('STORE_UNAVAILABLE', 'the store is closed'));
    this.opening ??= this.connect().catch((err: unknown) => {
      this.opening = null; // a later call tries again (the server may be up by then)
      throw err;
    });
    return this.opening;
  }

  private where(): string {
    return `${this.config.host}:${this.config.port}/${this.config.database}`;
  }

  private async connect(): Promise<Pool> {
    const pool = await createPool(this.config, (err) => {
      if (this.idleErrorLogged) return;
      this.idleErrorLogged = true;
      this.logger?.warn(`PostgreSQL closed an idle connection (${err.message}); the next call reconnects`);
    });
    try {
      const client = await this.withRetries('connecting', () => pool.connect());
      try {
        this.facts = await migrate(client, { createExtension: this.config.createExtension ?? true, location: this.location });
        await continueReanalysis(client);
        const e = await client.query<{ value: string }>(`SELECT value FROM meta WHERE key = 'embedder'`);
        this.dims = e.rows[0] ? (JSON.parse(e.rows[0].value) as EmbedderInfo).dimensions : null;
      } finally {
        client.release();
      }
      if (this.facts.fallbackReason) {
        this.logger?.warn(`PostgreSQL without pgvector: ${this.facts.fallbackReason}; vectors are kept without an index and recall fuses its signals in cairn`);
      }
      if (this.dims !== null) await this.repairVectorIndex(pool, this.dims);
      this.canReadFiles = await canReadServerFiles(pool);
      this.pool = pool;
      return pool;
    } catch (err) {
      await pool.end().catch(() => {});
      throw translatePgError(err, `opening the PostgreSQL store ${this.location}`, this.where());
    }
  }

  /**
   * Builds the HNSW index of one dimension if it is missing: a partial index, so rows of other sizes stay
   * out, and never dropped (an index left empty by a reindex to another dimension costs a few pages, and
   * dropping it could pull it from under another process that prepared it).
   */
  private async createVectorIndex(pool: Pool, dims: number): Promise<void> {
    if (this.facts?.vectorStorage !== 'pgvector') return;
    // CREATE INDEX IF NOT EXISTS takes the table's lock before it looks: every open would wait for the writers.
    const { rows } = await pool.query<{ ok: boolean }>(`SELECT to_regclass(format('%I.%I', current_schema(), $1::text)) IS NOT NULL AS ok`, [hnswIndexName(dims)]);
    if (rows[0]?.ok) return;
    try {
      await pool.query(hnswIndexSql(dims));
    } catch (err) {
      // Two processes building it at once: one wins, the other's duplicate name is harmless.
      if ((err as { code?: string }).code !== '23505' && (err as { code?: string }).code !== '42P07') throw err;
    }
  }

  /**
   * A store holding vectors whose HNSW index is missing or invalid. In a long-lived process
   * (`buildVectorIndexInBackground`: serve, mcp) the index is built in the background
   * (postgres-vector-index.ts), so opening does not wait for it nor run under the statement timeout; a
   * short command only reports it missing (doctor), since it would have to wait for the build or cut it
   * short. Vector search scans exactly until it is valid. `close()` cancels a build still running (a
   * concurrent build can wait for another session's old snapshot for as long as that lives).
   */
  private async repairVectorIndex(pool: Pool, dims: number): Promise<void> {
    if (this.config.buildVectorIndexInBackground !== true) return;
    if (this.facts?.vectorStorage !== 'pgvector' || (await vectorIndexState(pool, dims)) === 'valid') return;
    this.logger?.warn(`the HNSW index of ${dims} dimensions is missing: building it in the background (vector search scans exactly until it is ready)`);
    const build = startVectorIndexBuild(pool, dims);
    this.indexBuild = {
      done: build.done.then(
        () => undefined,
        (err: unknown) => this.logger?.warn(`building the HNSW index stopped (${(err as Error).message}); the next long-lived cairn or cairn verify builds it again`),
      ),
      cancel: () => build.cancel(),
    };
  }

  /** Waits for this process's background index build to end, at most BUILD_SETTLE_MS. */
  private async settleIndexBuild(): Promise<void> {
    if (!this.indexBuild) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.indexBuild.done, new Promise<void>((r) => (timer = setTimeout(r, BUILD_SETTLE_MS)))]);
    clearTimeout(timer);
  }

  /**
   * The HNSW index of `info.dimensions`, built before the transaction that records the embedder, so that
   * transaction's setEmbedder only checks it exists. Without pgvector there is nothing to prepare.
   */
  async prepareVectors(info: EmbedderInfo): Promise<void> {
    await this.read('preparing the vector index', async (pool) => {
      // A build still running after the bound has created its index (invalid, so search scans exactly until
      // it is valid), which is all the embedder's transaction checks; one of another dimension holds the
      // table's lock, so creating this one waits at most the statement timeout.
      await this.settleIndexBuild();
      await this.createVectorIndex(pool, info.dimensions);
    });
  }

  /**
   * For `cairn verify`: waits for a background build, then builds the HNSW index when it is still missing
   * or invalid (without the statement timeout; `rebuilt`). A build waiting more than VERIFY_LOCK_TIMEOUT_MS
   * for another session's transaction gives up: exhaustive, naming it. Without pgvector: exhaustive.
   */
  async checkVectorIndex(): Promise<VectorIndexCheck> {
    return this.read('checking the vector index', async (pool) => {
      if (this.facts?.vectorStorage !== 'pgvector') return { status: 'exhaustive', detail: 'no pgvector: vectors are scanned exactly' };
      await this.settleIndexBuild(); // one still running holds the build lock: `busy` below, exhaustive
      const dims = this.dims ?? (await this.space())?.dimensions ?? null;
      if (dims === null) return { status: 'consistent', detail: 'no vectors stored yet' };
      const state = await vectorIndexState(pool, dims);
      if (state === 'valid') return { status: 'consistent', detail: describeVectorIndex(state, dims) };
      const built = await buildVectorIndex(pool, dims, { lockTimeoutMs: VERIFY_LOCK_TIMEOUT_MS });
      if (built.outcome === 'blocked') return { status: 'exhaustive', detail: `${describeVectorIndex(state, dims)}; ${built.detail}` };
      if (built.outcome === 'busy') return { status: 'exhaustive', detail: `${describeVectorIndex(state, dims)}; another session is building it now` };
      return { status: 'rebuilt', detail: `the HNSW index of ${dims} dimensions was ${state}; built again (CONCURRENTLY)` };
    });
  }

  /**
   * An empty store in a schema of its own on the same database (the store `cairn verify` replays into, so the
   * proof runs on PostgreSQL itself), migrated on first use, with its own advisory locks; closing it drops
   * the schema with everything in it. Fails (FORBIDDEN or another CairnError) when the role may not create
   * a schema; a schema left by a killed run is named `cairn_scratch_…` and holds only a replay.
   */
  async createScratchStore(): Promise<PostgresStore & { readonly schema: string }> {
    const schema = `cairn_scratch_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
    const path = await this.read('creating a scratch schema', async (pool) => {
      const { rows } = await pool.query<{ path: string }>(`SELECT current_setting('search_path') AS path`);
      await pool.query(`CREATE SCHEMA ${schema}`);
      return rows[0]?.path ?? 'public';
    });
    const searchPath = [schema, ...path.split(',').map((p) => p.trim()).filter(Boolean)].join(',');
    // Never creates the extension: one made there would be dropped with the schema.
    const scratch = new PostgresStore({ ...this.config, poolSize: 2, schema, searchPath, createExtension: false, buildVectorIndexInBackground: false }, this.logger);
    const close = scratch.close.bind(scratch);
    scratch.close = async () => {
      await close();
      await this.read('dropping the scratch schema', (pool) => pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    };
    return Object.assign(scratch, { schema });
  }

  /** Runs `fn`, retrying a bounded number of times while the connection fails, then translating the error. */
  private async withRetries<T>(what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (!isTransient(err) || attempt >= ATTEMPTS || this.closed) throw translatePgError(err, what, this.where());
        await sleep(BACKOFF_MS * 2 ** (attempt - 1));
      }
    }
  }

  /** A read: one statement (or a few) on any pooled connection, retried when the connection fails. */
  private async read<T>(what: string, fn: (pool: Pool) => Promise<T>): Promise<T> {
    const pool = await this.open();
    return this.withRetries(what, () => fn(pool));
  }

  private async rows<R extends Row = Row>(what: string, sql: string, values: unknown[] = []): Promise<R[]> {
    return this.read(what, async (pool) => (await pool.query<R>(sql, values)).rows);
  }

  /**
   * `rows` for a statement whose plan does not depend on how the data is spread (a lookup by key, or the fused
   * search over a copy's proposals, which reads only the memories it names): prepared once per connection and
   * parsed once, each execution still planned for its values (postgres-driver.ts: a kept generic plan was slower at
   * 1M memories). A server that
   * loses or refuses a prepared statement (a pooler in transaction mode, DISCARD ALL) turns preparing off for
   * this store, and the statement runs again unprepared.
   */
  private async keptRows<R extends Row = Row>(what: string, sql: string, values: unknown[] = []): Promise<R[]> {
    return this.read(what, async (pool) => (await this.runStatement<R>(pool, { text: sql, values }, true)).rows);
  }

  /** A search statement's rows as arrays (postgres-rows.ts ArrayRows), prepared as `keptRows` prepares when `kept`. */
  private async arrayRows(what: string, sql: string, values: unknown[], kept: boolean): Promise<ArrayRows> {
    return this.read(what, async (pool) => arrayRowsOf(await this.runStatement<unknown[]>(pool, { text: sql, values, rowMode: 'array' }, kept)));
  }

  /**
   * Runs a statement, prepared (see keptRows) when `prepared` and while this store prepares, and again unprepared
   * when the server loses one.
   */
  private async runStatement<R>(pool: Pool, config: { text: string; values: unknown[]; rowMode?: 'array' }, prepared: boolean): Promise<StatementResult<R>> {
    const query = (c: typeof config & { name?: string }) => pool.query(c as pg.QueryConfig) as unknown as Promise<StatementResult<R>>;
    if (!prepared || !this.prepare) return query(config);
    try {
      return await query({ ...config, name: statementName(config.text) });
    } catch (err) {
      if (!isPreparedStatementFault(err)) throw err;
      if (this.prepare) this.logger?.warn(`PostgreSQL lost a prepared statement (${(err as Error).message}); statements are no longer prepared (set CAIRN_PG_PREPARED=off behind a pooler in transaction mode)`);
      this.prepare = false;
      return query(config);
    }
  }

  /**
   * One write transaction on one connection. Starting it (connect + BEGIN) is retried when the connection
   * fails; once `fn` runs, a lost connection rolls the whole transaction back on the server and fails the
   * call with STORE_UNAVAILABLE: a turn is committed whole or not at all, never in part.
   */
  async transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    const pool = await this.open();
    const client: PoolClient = await this.withRetries('starting a write', async () => {
      const c = await pool.connect();
      // A checked-out connection the server drops emits 'error' between statements; the next statement
      // then fails and is handled below. Without a listener the event would crash the process.
      if (c.listenerCount('error') === 0) c.on('error', () => {});
      try {
        await c.query('BEGIN');
        return c;
      } catch (err) {
        c.release(true);
        throw err;
      }
    });
    const ctx: TxContext = { storage: this.facts?.vectorStorage ?? 'pgvector', dims: this.dims, lockSpace: this.config.schema ?? null };
    let broken = false;
    let committing = false;
    try {
      const result = await fn(createPostgresTx(client, ctx));
      committing = true;
      await client.query('COMMIT');
      this.dims = ctx.dims;
      return result;
    } catch (err) {
      broken = isTransient(err);
      if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
      if (broken) {
        throw new CairnError(
          'STORE_UNAVAILABLE',
          committing
            ? `lost the connection to ${this.where()} while committing; the write may or may not have been committed (cairn verify tells)`
            : `lost the connection to ${this.where()} during a write; the server rolled it back, nothing of it was written`,
          { cause: err, hint: 'check the server and retry' },
        );
      }
      // What `fn` threw itself (a CairnError of core, any other error) is rethrown as it is; only what the
      // server or the driver raised (it carries a SQLSTATE or a socket code) is translated.
      if (typeof (err as { code?: unknown }).code !== 'string') throw err;
      throw translatePgError(err, 'writing', this.where());
    } finally {
      client.release(broken);
    }
  }

  async getMemory(id: string): Promise<Memory | null> {
    const [r] = await this.keptRows('reading a memory', `SELECT ${MEMORY_SELECT} FROM memories m WHERE m.id = $1`, [id]);
    return r ? rowToMemory(r) : null;
  }

  async findLiveByDedupeKey(namespace: string, key: string): Promise<Memory | null> {
    const [r] = await this.keptRows('reading a memory', LIVE_BY_DEDUPE_SQL, [namespace, key]);
    return r ? rowToMemory(r) : null;
  }

  async getMemories(ids: string[]): Promise<Memory[]> {
    if (ids.length === 0) return [];
    return (await this.keptRows('reading memories', `SELECT ${MEMORY_SELECT} FROM memories m WHERE m.id = ANY($1::text[])`, [ids])).map(rowToMemory);
  }

  async listMemories(filter: ListFilter): Promise<Memory[]> {
    const p = new Params();
    const where = listWhere(filter, p);
    return (await this.rows('listing memories', `SELECT ${MEMORY_SELECT} FROM memories m WHERE ${where} ORDER BY m.id DESC LIMIT ${p.add(filter.limit)}`, p.values)).map(rowToMemory);
  }

  async *iterateMemories(namespace: string | undefined, pageSize = 500): AsyncIterable<Memory[]> {
    let after = '';
    for (;;) {
      const rows =
        namespace === undefined
          ? await this.rows('reading memories', `SELECT ${MEMORY_SELECT} FROM memories m WHERE m.id > $1 ORDER BY m.id LIMIT $2`, [after, pageSize])
          : await this.rows('reading memories', `SELECT ${MEMORY_SELECT} FROM memories m WHERE m.namespace = $1 AND m.id > $2 ORDER BY m.id LIMIT $3`, [namespace, after, pageSize]);
      if (rows.length === 0) return;
      const page = rows.map(rowToMemory);
      after = (page[page.length - 1] as Memory).id;
      yield page;
    }
  }

  async listLikelyReplacing(ids: string[], filter: CandidateFilter): Promise<Memory[]> {
    if (ids.length === 0) return [];
    const p = new Params();
    const ns = p.add(filter.namespace);
    const where = filterSql(filter, p);
    // The partial index memories_replacing holds only the notes that name any.
    const sql = `SELECT ${MEMORY_SELECT} FROM memories m WHERE m.namespace = ${ns} AND m.likely_replaces IS NOT NULL AND ${where}
      AND m.likely_replaces::jsonb ?| ${p.add(ids)}::text[]`;
    return (await this.keptRows('reading memories', sql, p.values)).map(rowToMemory);
  }

  async listExpired(now: string, namespace?: string): Promise<Memory[]> {
    const rows =
      namespace === undefined
        ? await this.rows('listing expired memories', `SELECT ${MEMORY_SELECT} FROM memories m WHERE m.expires_at IS NOT NULL AND m.expires_at <= $1`, [now])
        : await this.rows('listing expired memories', `SELECT ${MEMORY_SELECT} FROM memories m WHERE m.expires_at IS NOT NULL AND m.expires_at <= $1 AND m.namespace = $2`, [now, namespace]);
    return rows.map(rowToMemory);
  }

  /** The vector space queries run in, or null when no embedder is recorded (re-read when this process has none). */
  private async space(): Promise<VectorSpace | null> {
    await this.open();
    if (this.dims === null) {
      const [e] = await this.keptRows<{ value: string }>('reading the embedder record', `SELECT value FROM meta WHERE key = 'embedder'`);
      this.dims = e ? (JSON.parse(e.value) as EmbedderInfo).dimensions : null;
    }
    if (this.dims === null) return null;
    return { storage: this.facts?.vectorStorage ?? 'pgvector', dimensions: this.dims };
  }

  private async checkQueryVector(vector: Float32Array): Promise<VectorSpace | null> {
    const space = await this.space();
    if (space && vector.length !== space.dimensions) {
      throw new CairnError('EMBEDDER_MISMATCH', `query vector has ${vector.length} dimensions; the store holds ${space.dimensions}`, { hint: 'run `cairn reindex`' });
    }
    return space;
  }

  /**
   * Proposals for one search from this process's copies (config.recallCopies, pgvector only), or undefined:
   * the statement then searches in full.
   */
  private async proposals(space: VectorSpace | null, request: Parameters<RecallCopies['propose']>[0]): Promise<Proposals | undefined> {
    if (!this.config.recallCopies || this.config.copyMaxMemories === 0 || !this.pool || this.closed || !space || space.storage !== 'pgvector') return undefined;
    if (this.copies && this.copies.dimensions !== space.dimensions) {
      const old = this.copies;
      this.copies = null;
      await old.close();
    }
    this.copies ??= new RecallCopies(this.pool, space.dimensions, this.logger, this.config.copyMaxMemories);
    try {
      return (await this.copies.propose(request)) ?? undefined;
    } catch (err) {
      // A copy only speeds searches up: one that cannot catch up (a lost connection) leaves this search to the
      // full statement, which reports its own faults; the next search tries the copy again.
      this.logger?.debug(`search copy not used: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }

  /** What this process's search copies hold (tests, benchmarks); null when it keeps none. */
  recallCopiesStatus(): RecallCopiesStatus | null {
    return this.copies?.status() ?? null;
  }

  /** Waits for the copies being loaded; true when every searched namespace has its copy. */
  async recallCopiesSettled(): Promise<boolean> {
    return (await this.copies?.settled()) ?? false;
  }

  async vectorCandidates(vector: Float32Array, k: number, filter: CandidateFilter): Promise<VectorHit[]> {
    const space = await this.checkQueryVector(vector);
    if (!space || k <= 0) return [];
    const { rows, columns } = await this.proposedOrFull('vector search', await this.proposals(space, { vector, terms: [], k, filter }), (p, proposals) =>
      vectorCandidatesSql(p, vectorParam(vector, space.storage), k, filter, space, proposals),
    );
    const id = columns.get('id') as number;
    const similarity = columns.get('similarity') as number;
    return rows.map((r) => ({ id: r[id] as string, similarity: r[similarity] as number }));
  }

  /** A search statement with this process's proposals, and in full when they do not stand (postgres-search.ts). */
  private proposedOrFull(what: string, proposals: Proposals | undefined, sql: (p: Params, proposals?: Proposals) => string): Promise<ArrayRows> {
    // Over proposals the statement reads only the memories they name: it is prepared (parsed once). In full, its plan
    // depends on the namespace's size and the terms' frequencies: it is not prepared. Rows come as arrays.
    return proposedOrFull((text, values, proposed) => this.arrayRows(what, text, values, proposed), proposals, sql, (stood) => this.copies?.counted(stood));
  }

  async lexicalCandidates(terms: string[], k: number, filter: CandidateFilter): Promise<LexicalHit[]> {
    if (terms.length === 0 || k <= 0) return [];
    const p = new Params();
    const ctes = lexicalCtes(p, [...new Set(terms)], k, filter);
    return this.rows<{ id: string; score: number }>(
      'full-text search',
      `WITH ${ctes} SELECT m.id, lex.score FROM lex JOIN memories m ON m.pk = lex.pk ORDER BY lex.score DESC, m.pk`,
      p.values,
    );
  }

  /** Present only with pgvector: without it, core fuses (the capability flag says so). */
  async fusedRecall(request: FusedRecallRequest): Promise<FusedRecall> {
    const space = request.vector ? await this.checkQueryVector(request.vector) : await this.space();
    const related = request.related ? { ...request.related, terms: [...new Set(request.related.terms)] } : undefined;
    const terms = [...new Set(request.terms)];
    const useVector = request.vector !== null && request.weights.vector > 0;
    const useLexical = terms.length > 0 && request.weights.lexical > 0;
    const proposals = await this.proposals(space, {
      vector: useVector ? request.vector : null,
      terms: useLexical ? terms : [],
      related: useLexical ? related : undefined,
      k: request.k,
      filter: request.filter,
    });
    const rows = await this.proposedOrFull('hybrid recall', proposals, (p, proposed) => fusedRecallSql(p, { ...request, terms, related }, space, proposed));
    return fusedResult(rows);
  }

  async embedder(): Promise<EmbedderInfo | null> {
    const [r] = await this.keptRows<{ value: string }>('reading the embedder record', `SELECT value FROM meta WHERE key = 'embedder'`);
    return r ? (JSON.parse(r.value) as EmbedderInfo) : null;
  }

  async getSetting(namespace: string, key: string): Promise<unknown> {
    const [r] = await this.keptRows<{ value: string }>('reading a setting', 'SELECT value FROM settings WHERE namespace = $1 AND key = $2', [namespace, key]);
    return r ? (JSON.parse(r.value) as unknown) : null;
  }

  async events(namespace: string, afterSeq = 0, limit = 1000): Promise<StoredEvent[]> {
    return (await this.rows('reading events', 'SELECT * FROM events WHERE namespace = $1 AND seq > $2 ORDER BY seq LIMIT $3', [namespace, afterSeq, limit])).map(rowToEvent);
  }

  async *iterateEvents(afterGseq = 0, pageSize = 1000): AsyncIterable<StoredEvent[]> {
    let after = afterGseq;
    for (;;) {
      const page = (await this.rows('reading the event log', 'SELECT * FROM events WHERE gseq > $1 ORDER BY gseq LIMIT $2', [after, pageSize])).map(rowToEvent);
      if (page.length === 0) return;
      after = (page[page.length - 1] as StoredEvent).gseq;
      yield page;
    }
  }

  async scopes(): Promise<ScopeInfo[]> {
    return this.rows<ScopeInfo & Row>(
      'reading the event log',
      'SELECT namespace AS scope, count(*) AS events, max(seq) AS "lastSeq" FROM events GROUP BY namespace ORDER BY namespace',
    );
  }

  async getVectors(ids: string[]): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    if (ids.length === 0) return out;
    await this.open();
    // pgvector's binary form (vector_send) costs neither side a float-to-text conversion; real[] is read as text.
    const binary = this.facts?.vectorStorage === 'pgvector';
    const rows = await this.keptRows<{ id: string; embedding: string | Buffer }>(
      'reading vectors',
      `SELECT m.id, ${binary ? 'vector_send(v.embedding)' : 'v.embedding::text'} AS embedding FROM memories m JOIN memory_vectors v ON v.memory_pk = m.pk WHERE m.id = ANY($1::text[])`,
      [ids],
    );
    for (const r of rows) out.set(r.id, typeof r.embedding === 'string' ? parseVector(r.embedding) : vectorFromSend(r.embedding));
    return out;
  }

  async getVectorBlob(hash: string): Promise<Float32Array | null> {
    const [r] = await this.rows<{ data: Buffer }>('reading a vector', 'SELECT data FROM vector_blobs WHERE hash = $1', [hash]);
    return r ? vectorFromBytes(r.data) : null;
  }

  async getSnapshot(scope: string): Promise<SnapshotRecord | null> {
    const [r] = await this.rows('reading a snapshot', 'SELECT * FROM snapshots WHERE scope = $1', [scope]);
    return r ? rowToSnapshot(r) : null;
  }

  async listSettings(namespace: string): Promise<{ key: string; value: unknown }[]> {
    const rows = await this.rows<{ key: string; value: string }>('reading settings', 'SELECT key, value FROM settings WHERE namespace = $1 ORDER BY key', [namespace]);
    return rows.map((r) => ({ key: r.key, value: JSON.parse(r.value) as unknown }));
  }

  async stats(now: string): Promise<StoreStats> {
    const p = new Params();
    const active = activeSql(p, now);
    const namespaces = await this.rows<StoreStats['namespaces'][number] & Row>(
      'counting',
      `SELECT m.namespace,
         count(*) FILTER (WHERE ${active})::int AS live,
         count(*) FILTER (WHERE m.forgotten_at IS NOT NULL)::int AS forgotten,
         count(*) FILTER (WHERE m.forgotten_at IS NULL AND m.superseded_by IS NOT NULL)::int AS superseded,
         count(*) FILTER (WHERE ${CURRENT_SQL} AND NOT (${active}))::int AS expired
       FROM memories m GROUP BY m.namespace ORDER BY m.namespace`,
      p.values,
    );
    const [e] = await this.rows<{ n: number }>('counting', 'SELECT count(*) AS n FROM events');
    const total = namespaces.reduce((s, r) => s + r.live + r.forgotten + r.superseded + r.expired, 0);
    return { namespaces, total, events: e?.n ?? 0 };
  }

  async getQuarantine(id: string): Promise<QuarantineEntry | null> {
    const [r] = await this.rows<{ entry: string }>('reading the quarantine', 'SELECT entry FROM quarantine WHERE id = $1', [id]);
    return r ? (JSON.parse(r.entry) as QuarantineEntry) : null;
  }

  async listQuarantine(options: QuarantineListOptions): Promise<QuarantineEntry[]> {
    const status = options.status ?? 'held';
    const limit = options.limit ?? 50;
    const rows =
      status === 'all'
        ? await this.rows<{ entry: string }>('reading the quarantine', 'SELECT entry FROM quarantine ORDER BY id DESC LIMIT $1', [limit])
        : await this.rows<{ entry: string }>('reading the quarantine', 'SELECT entry FROM quarantine WHERE status = $1 ORDER BY id DESC LIMIT $2', [status, limit]);
    return rows.map((r) => JSON.parse(r.entry) as QuarantineEntry);
  }

  async findQuarantineByHash(hash: string): Promise<QuarantineEntry[]> {
    const rows = await this.rows<{ entry: string }>('reading the quarantine', 'SELECT entry FROM quarantine WHERE hash = $1 ORDER BY id', [hash]);
    return rows.map((r) => JSON.parse(r.entry) as QuarantineEntry);
  }

  async getQuarantineVault(id: string): Promise<{ text: string; request: unknown } | null> {
    const [r] = await this.rows<{ text: string; request: string }>('reading the quarantine vault', 'SELECT text, request FROM quarantine_vault WHERE id = $1', [id]);
    return r ? { text: r.text, request: JSON.parse(r.request) as unknown } : null;
  }

  async learnedAnchors(): Promise<{ id: string; vector: Float32Array }[]> {
    const rows = await this.rows<{ id: string; vector: Buffer }>('reading learned anchors', 'SELECT id, vector FROM learned_anchors ORDER BY id');
    return rows.map((r) => ({ id: r.id, vector: vectorFromBytes(r.vector) }));
  }

  async getAnchorCache(key: string): Promise<Float32Array[] | null> {
    const [r] = await this.rows<{ vectors: Buffer }>('reading the anchor cache', 'SELECT vectors FROM anchor_cache WHERE key = $1', [key]);
    return r ? decodeAnchorCache(r.vectors) : null;
  }

  async countLiveEventsOf(memoryIds: string[], namespace: string | null): Promise<number> {
    const [r] = await this.rows<{ n: number }>(
      'counting events',
      `SELECT (SELECT count(*) FROM events WHERE $2::text IS NOT NULL AND namespace = $2 AND type <> 'erased')
            + (SELECT count(*) FROM events WHERE memory_id = ANY($1::text[]) AND type <> 'erased') AS n`,
      [memoryIds, namespace],
    );
    return r?.n ?? 0;
  }

  async pendingErasures(): Promise<PendingErasure[]> {
    return (await this.rows('reading erasures in progress', 'SELECT id, scope, plan, started_at FROM pending_erasures ORDER BY started_at, id')).map(rowToPendingErasure);
  }

  async finishErasure(id: string): Promise<void> {
    await this.read('finishing the erasure', async (pool) => {
      await pool.query('DELETE FROM pending_erasures WHERE id = $1', [id]);
      // A build saved while the erasure ran is from before it.
      await pool.query(CLEAR_SAVED_LISTS_SQL);
      await compactAfterErasure(pool, ['pending_erasures', 'recall_lists']);
    });
  }

  /** For `cairn doctor`: the server, pgvector, the vector index, whether recall fuses server-side, and why not. */
  async diagnostics(): Promise<StoreReport> {
    await this.open();
    const facts = this.facts as ServerFacts;
    const space = await this.space();
    const [size] = await this.rows<{ bytes: number }>('diagnostics', 'SELECT pg_database_size(current_database()) AS bytes');
    const pgvector = facts.vectorStorage === 'pgvector';
    const notes: string[] = [];
    const indexState = pgvector && space ? await this.read('diagnostics', (pool) => vectorIndexState(pool, space.dimensions)) : null;
    if (indexState !== null && indexState !== 'valid' && space) notes.push(describeVectorIndex(indexState, space.dimensions));
    const oldBuild = indexState === 'valid' && space ? await this.read('diagnostics', (pool) => hnswBuildProblem(pool, space.dimensions)) : null;
    if (oldBuild !== null) notes.push(oldBuild);
    if (!pgvector) notes.push(`no pgvector: ${facts.fallbackReason ?? 'vectors stored without an index'}; vectors are scanned exactly and recall fuses in cairn`);
    return {
      backend: 'postgres',
      location: this.location,
      schemaVersion: facts.schemaVersion,
      bytes: size?.bytes ?? null,
      facts: {
        postgres: facts.serverVersion,
        pgvector: facts.pgvectorVersion ?? 'not installed',
        vectorIndex: pgvector ? (space && indexState ? describeVectorIndex(indexState, space.dimensions) : 'hnsw, built when the first vector is stored') : 'none (real[], exact scan)',
        serverSideFusion: this.capabilities.serverSideFusion ? 'yes (one SQL statement)' : 'no (fused in cairn)',
        lexical: 'BM25 over the analysed terms (postings, per-namespace statistics)',
        tls: this.config.tls.mode,
        poolSize: this.config.poolSize ?? 10,
        statementTimeoutMs: this.config.statementTimeoutMs ?? 30_000,
        preparedStatements: this.prepare ? 'on' : (this.config.preparedStatements ?? true) ? 'off (the server lost one)' : 'off',
        vectorDimensions: space?.dimensions ?? null,
      },
      notes,
      failures: [],
    };
  }

  private async smallWrite(what: string, sql: string, values: unknown[]): Promise<number> {
    return this.read(what, async (pool) => (await pool.query(sql, values)).rowCount ?? 0);
  }

  async putToken(t: AccessTokenRecord): Promise<void> {
    await this.smallWrite(
      'storing the token',
      'INSERT INTO access_tokens (id, hash, name, namespaces, scope, created_at, expires_at, revoked_at, last_used_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
      [t.id, t.hash, t.name, JSON.stringify(t.namespaces), t.scope, t.createdAt, t.expiresAt, t.revokedAt, t.lastUsedAt],
    );
  }

  async getTokenByHash(hash: string): Promise<AccessTokenRecord | null> {
    const [r] = await this.rows('reading tokens', 'SELECT * FROM access_tokens WHERE hash = $1', [hash]);
    return r ? rowToToken(r) : null;
  }

  async listTokens(): Promise<AccessTokenRecord[]> {
    return (await this.rows('reading tokens', 'SELECT * FROM access_tokens ORDER BY created_at, id')).map(rowToToken);
  }

  async revokeToken(id: string, at: string): Promise<boolean> {
    return (await this.smallWrite('revoking the token', 'UPDATE access_tokens SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1', [id, at])) > 0;
  }

  async touchToken(id: string, at: string): Promise<void> {
    await this.smallWrite('recording token use', 'UPDATE access_tokens SET last_used_at = $2 WHERE id = $1', [id, at]);
  }

  async recordRecalls(namespace: string, ids: string[], at: string): Promise<void> {
    return this.recalls.record(namespace, ids, at);
  }

  async recallStats(namespace: string, now: string, top: number): Promise<RecallStats> {
    await this.recalls.flush().catch(() => undefined);
    const p = new Params();
    const live = `m.namespace = ${p.add(namespace)} AND ${activeSql(p, now)}`;
    const buckets = await this.rows<{ bucket: string; memories: number }>(
      'counting recalls',
      `SELECT CASE WHEN r.count IS NULL THEN '0' WHEN r.count = 1 THEN '1' WHEN r.count < 5 THEN '2-4' WHEN r.count < 10 THEN '5-9' ELSE '10+' END AS bucket,
              count(*)::int AS memories
         FROM memories m LEFT JOIN recall_counts r ON r.memory_id = m.id WHERE ${live} GROUP BY bucket`,
      p.values,
    );
    const topRows = await this.rows<{ id: string; text: string; kind: string; count: number; last_at: string }>(
      'counting recalls',
      `SELECT m.id, m.text, m.kind, r.count, r.last_at FROM recall_counts r JOIN memories m ON m.id = r.memory_id
        WHERE ${live} ORDER BY r.count DESC, r.last_at DESC LIMIT ${p.add(top)}`,
      p.values,
    );
    const byBucket = new Map(buckets.map((r) => [r.bucket, r.memories]));
    const histogram = ['0', '1', '2-4', '5-9', '10+'].map((bucket) => ({ bucket, memories: byBucket.get(bucket) ?? 0 }));
    return {
      live: histogram.reduce((s, b) => s + b.memories, 0),
      neverRecalled: byBucket.get('0') ?? 0,
      top: topRows.map((r) => ({ id: r.id, text: r.text, kind: r.kind, count: r.count, lastAt: r.last_at })),
      histogram,
    };
  }

  /**
   * Documents and per-term document frequencies of one namespace (the statistics the lexical candidates and
   * the fused statement score with), or of the whole store when no namespace is given: one row per term from
   * the trigger-kept `term_stats` and `namespace_stats` (postgres-schema.ts), not a count of postings.
   */
  async termDocumentFrequencies(terms: string[], namespace?: string): Promise<{ documents: number; frequencies: Map<string, number> }> {
    const unique = [...new Set(terms)];
    const rows = await this.keptRows<{ term: string | null; df: number }>(
      'counting terms',
      namespace === undefined
        ? `SELECT NULL AS term, coalesce(sum(documents), 0)::bigint AS df FROM namespace_stats
           UNION ALL SELECT term, sum(documents)::bigint FROM term_stats WHERE term = ANY($1::text[]) GROUP BY term`
        : `SELECT NULL AS term, coalesce(sum(documents), 0)::bigint AS df FROM namespace_stats WHERE namespace = $2
           UNION ALL SELECT term, documents FROM term_stats WHERE namespace = $2 AND term = ANY($1::text[])`,
      namespace === undefined ? [unique] : [unique, namespace],
    );
    const frequencies = new Map<string, number>();
    let documents = 0;
    for (const r of rows) {
      if (r.term === null) documents = r.df;
      else if (r.df > 0) frequencies.set(r.term, r.df);
    }
    return { documents, frequencies };
  }

  async createdPerDay(namespace: string): Promise<{ day: string; count: number }[]> {
    return this.rows<{ day: string; count: number }>(
      'counting memories',
      'SELECT substr(created_at, 1, 10) AS day, count(*)::int AS count FROM memories WHERE namespace = $1 GROUP BY day ORDER BY day',
      [namespace],
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const opening = this.opening;
    this.opening = null;
    const pool = this.pool ?? (await opening?.catch(() => null)) ?? null;
    // The recall counts still waiting (statistics: a failed write loses them, as it would have a search's).
    const recalls = this.recalls.close();
    if (pool && recalls.length > 0) await pool.query(recallCountsStatement(recalls)).catch(() => undefined);
    this.pool = null;
    await this.indexBuild?.cancel(); // bounded: a build held up by another session's snapshot must not hold the exit
    await this.copies?.close();
    await pool?.end();
  }
}

/** How long a batch of recall counts waits for a row another transaction holds before it gives up (and is lost). */
const RECALL_LOCK_TIMEOUT_MS = 2000;

/**
 * A batch of searches' recall counts in one statement: each search counts a memory once, the latest time is kept
 * (also when two batches commit out of order). Only for memories that still exist: a search answered just before an
 * erasure must not leave a count. The memory rows are locked against deletion (FOR KEY SHARE) until the counts commit:
 * a delete under way is waited for and its memory skipped, and a delete that comes after waits, then removes the count
 * (deleteMemory removes the row before the count). Sorted, so two processes counting the same memories lock their rows in the same
 * order. Committed without waiting for the WAL to reach the disk (synchronous_commit off for this statement's own
 * transaction only): usage statistics need not survive a crash of the server in the moment after they were written,
 * and the write would wait for a flush. Nor do they wait long for a row lock (RECALL_LOCK_TIMEOUT_MS): a store
 * closing must not hang on a count.
 */
function recallCountsStatement(batch: PendingRecall[]): { text: string; values: unknown[] } {
  const ids: string[] = [];
  const namespaces: string[] = [];
  const times: string[] = [];
  for (const search of batch) {
    for (const id of new Set(search.ids)) {
      ids.push(id);
      namespaces.push(search.namespace);
      times.push(search.at);
    }
  }
  return {
    text: `INSERT INTO recall_counts (memory_id, namespace, count, last_at)
       SELECT m.id, r.namespace, r.n, r.last_at FROM (
         SELECT u.id, min(u.namespace) AS namespace, count(*)::int AS n, max(u.at COLLATE "C") AS last_at
         FROM unnest($1::text[], $2::text[], $3::text[]) AS u(id, namespace, at) GROUP BY u.id) r
       JOIN memories m ON m.id = r.id
       WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL AND set_config('lock_timeout', '${RECALL_LOCK_TIMEOUT_MS}', true) IS NOT NULL
       ORDER BY m.id
       FOR KEY SHARE OF m
       ON CONFLICT (memory_id) DO UPDATE SET count = recall_counts.count + excluded.count, last_at = greatest(recall_counts.last_at, excluded.last_at)`,
    values: [ids, namespaces, times],
  };
}

export function createPostgresStore(config: PostgresStoreConfig, logger?: Logger): PostgresStore {
  return new PostgresStore(config, logger);
}
