import type { Memory, StoreStats } from '../../interfaces/memory.js';
import type { QuarantineEntry, QuarantineListOptions } from '../../interfaces/quarantine.js';
import type {
  AccessTokenRecord,
  CandidateFilter,
  EmbedderInfo,
  LexicalHit,
  ListFilter,
  ErasureProof,
  RankingFields,
  PendingErasure,
  RecallStats,
  ScopeInfo,
  SnapshotRecord,
  Store,
  StoreCapabilities,
  StoreReport,
  StoredEvent,
  StoreTx,
  TransactionOptions,
  VectorHit,
  VectorIndexCheck,
} from '../../interfaces/store.js';
import type { SqliteVectorIndex } from './sqlite-vector-index.js';
import { SqliteConnection, translate, type SqliteStoreConfig } from './sqlite-connection.js';
import { SqliteMemories } from './sqlite-memories.js';
import { SqliteSearch } from './sqlite-search.js';
import type { PostingStats } from './sqlite-postings.js';
import { SqliteLog } from './sqlite-log.js';
import { SqliteQuarantine } from './sqlite-quarantine.js';
import { SqliteAccess } from './sqlite-access.js';
import { SqliteUsage } from './sqlite-usage.js';
import { SqliteErasure } from './sqlite-erasure.js';

export type { SqliteStoreConfig } from './sqlite-connection.js';

/**
 * The embedded store: one SQLite file with WAL, FTS5 for BM25 and sqlite-vec for cosine KNN. Several
 * processes share the file: writes take the database's write lock (BEGIN IMMEDIATE) and retry while another
 * process holds it, so no write is lost and SQLITE_BUSY never reaches the user before `maxBusyWaitMs`.
 *
 * This class composes the parts, one file each: sqlite-connection.ts (opening, locking, retries, errors),
 * sqlite-memories.ts, sqlite-search.ts, sqlite-log.ts (events, snapshots, settings, vector blobs),
 * sqlite-quarantine.ts, sqlite-access.ts (tokens), sqlite-usage.ts and sqlite-erasure.ts.
 */
export class SqliteStore implements Store {
  readonly capabilities: StoreCapabilities = { vectorSearch: true, fullText: true, serverSideFusion: false };
  readonly location: string;
  private readonly c: SqliteConnection;
  private readonly memories: SqliteMemories;
  private readonly search: SqliteSearch;
  private readonly log: SqliteLog;
  private readonly quarantine: SqliteQuarantine;
  private readonly access: SqliteAccess;
  private readonly usage: SqliteUsage;
  private readonly erasure: SqliteErasure;
  readonly erasureProof: ErasureProof | undefined;
  readonly noErasureProof: string | undefined;
  /** The parts' operations inside a write transaction: made once (they hold no state of a transaction). */
  private readonly txOps: StoreTx;

  constructor(config: SqliteStoreConfig) {
    this.c = new SqliteConnection(config);
    this.location = this.c.location;
    this.memories = new SqliteMemories(this.c);
    this.search = new SqliteSearch(this.c, config.postingCache);
    this.log = new SqliteLog(this.c);
    this.quarantine = new SqliteQuarantine(this.c);
    this.access = new SqliteAccess(this.c);
    this.usage = new SqliteUsage(this.c);
    this.erasure = new SqliteErasure(this.c);
    this.erasureProof = this.erasure.proof();
    this.noErasureProof = this.erasureProof ? undefined : 'an in-memory database has no files to compact and scan';
    this.txOps = this.makeTx();
  }

  /** True when this process may not write the file: reads work, every write fails STORE_UNAVAILABLE. */
  get readOnly(): boolean {
    return this.c.readOnly;
  }

  async transaction<T>(fn: (tx: StoreTx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    this.c.ensureOpen();
    this.c.refuseWrite('writing');
    // A bulk transaction's statement journals (one statement updating every row fires a trigger per row) are as
    // large as the rows it changes: on disk, not in memory. The pragma is switched outside the transaction.
    return this.c.mutex.run(() => (options.bulk ? this.c.withTempFiles(() => this.run(fn)) : this.run(fn)));
  }

  private async run<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    await this.c.whileBusy('starting a write', () => this.c.db.exec('BEGIN IMMEDIATE'));
    this.c.beginEffects();
    const vectorDimsBefore = this.c.vectorDims;
    try {
      this.c.loadVectorInfo(); // another process may have created or reset the vector index
      const result = await fn(this.txOps);
      this.c.db.exec('COMMIT');
      this.c.committed();
      return result;
    } catch (err) {
      if (this.c.db.inTransaction) this.c.db.exec('ROLLBACK');
      this.c.rolledBack();
      this.c.vectorDims = vectorDimsBefore;
      throw translate(err, 'writing');
    }
  }

  private makeTx(): StoreTx {
    return {
      ...this.memories.tx(),
      ...this.search.tx(),
      ...this.log.tx(),
      ...this.quarantine.tx(),
      ...this.erasure.tx(),
    };
  }

  getMemory(id: string): Promise<Memory | null> {
    return this.memories.getMemory(id);
  }

  getMemories(ids: string[]): Promise<Memory[]> {
    return this.memories.getMemories(ids);
  }

  getRankingFields(ids: string[]): Promise<RankingFields[]> {
    return this.memories.getRankingFields(ids);
  }

  findLiveByDedupeKey(namespace: string, dedupeKey: string): Promise<Memory | null> {
    return this.memories.findLiveByDedupeKey(namespace, dedupeKey);
  }

  listMemories(filter: ListFilter): Promise<Memory[]> {
    return this.memories.listMemories(filter);
  }

  iterateMemories(namespace: string | undefined, pageSize?: number): AsyncIterable<Memory[]> {
    return this.memories.iterateMemories(namespace, pageSize);
  }

  listExpired(now: string, namespace?: string): Promise<Memory[]> {
    return this.memories.listExpired(now, namespace);
  }

  listLikelyReplacing(ids: string[], filter: CandidateFilter): Promise<Memory[]> {
    return this.memories.listLikelyReplacing(ids, filter);
  }

  stats(now: string): Promise<StoreStats> {
    return this.memories.stats(now);
  }

  getVectors(ids: string[]): Promise<Map<string, Float32Array>> {
    return this.search.getVectors(ids);
  }

  vectorCandidates(vector: Float32Array, k: number, filter: CandidateFilter): Promise<VectorHit[]> {
    return this.search.vectorCandidates(vector, k, filter);
  }

  vectorSearchRunsBeside(namespace: string): boolean {
    return this.c.vectorIndex?.scansOffThread(namespace) === true;
  }

  lexicalCandidates(terms: string[], k: number, filter: CandidateFilter): Promise<LexicalHit[]> {
    return this.search.lexicalCandidates(terms, k, filter);
  }

  /** Lexical searches that split for pruning since the store opened: answered from the parts, or by the whole query. */
  lexicalPruning(): { proved: number; wholeQuery: number } {
    return { ...this.search.pruning };
  }

  /** The BM25 posting lists kept in memory (long-lived processes), or null when the store keeps none. */
  lexicalPostings(): PostingStats | null {
    return this.search.postingStats();
  }

  termDocumentFrequencies(terms: string[], namespace?: string): Promise<{ documents: number; frequencies: Map<string, number> }> {
    return this.search.termDocumentFrequencies(terms, namespace);
  }

  embedder(): Promise<EmbedderInfo | null> {
    return this.search.embedder();
  }

  prepareVectors(info: EmbedderInfo): Promise<void> {
    return this.search.prepareVectors(info);
  }

  getVectorBlob(hash: string): Promise<Float32Array | null> {
    return this.log.getVectorBlob(hash);
  }

  listSettings(namespace: string): Promise<{ key: string; value: unknown }[]> {
    return this.log.listSettings(namespace);
  }

  getSnapshot(scope: string): Promise<SnapshotRecord | null> {
    return this.log.getSnapshot(scope);
  }

  iterateEvents(afterGseq?: number, pageSize?: number): AsyncIterable<StoredEvent[]> {
    return this.log.iterateEvents(afterGseq, pageSize);
  }

  scopes(): Promise<ScopeInfo[]> {
    return this.log.scopes();
  }

  getSetting(namespace: string, key: string): Promise<unknown> {
    return this.log.getSetting(namespace, key);
  }

  events(namespace: string, afterSeq?: number, limit?: number): Promise<StoredEvent[]> {
    return this.log.events(namespace, afterSeq, limit);
  }

  countLiveEventsOf(memoryIds: string[], namespace: string | null): Promise<number> {
    return this.log.countLiveEventsOf(memoryIds, namespace);
  }

  getQuarantine(id: string): Promise<QuarantineEntry | null> {
    return this.quarantine.getQuarantine(id);
  }

  listQuarantine(options: QuarantineListOptions): Promise<QuarantineEntry[]> {
    return this.quarantine.listQuarantine(options);
  }

  findQuarantineByHash(hash: string): Promise<QuarantineEntry[]> {
    return this.quarantine.findQuarantineByHash(hash);
  }

  getQuarantineVault(id: string): Promise<{ text: string; request: unknown } | null> {
    return this.quarantine.getQuarantineVault(id);
  }

  learnedAnchors(): Promise<{ id: string; vector: Float32Array }[]> {
    return this.quarantine.learnedAnchors();
  }

  getAnchorCache(key: string): Promise<Float32Array[] | null> {
    return this.quarantine.getAnchorCache(key);
  }

  putToken(t: AccessTokenRecord): Promise<void> {
    return this.access.putToken(t);
  }

  getTokenByHash(hash: string): Promise<AccessTokenRecord | null> {
    return this.access.getTokenByHash(hash);
  }

  listTokens(): Promise<AccessTokenRecord[]> {
    return this.access.listTokens();
  }

  revokeToken(id: string, at: string): Promise<boolean> {
    return this.access.revokeToken(id, at);
  }

  touchToken(id: string, at: string): Promise<void> {
    return this.access.touchToken(id, at);
  }

  recordRecalls(namespace: string, ids: string[], at: string): Promise<void> {
    return this.usage.recordRecalls(namespace, ids, at);
  }

  recallStats(namespace: string, now: string, top: number): Promise<RecallStats> {
    return this.usage.recallStats(namespace, now, top);
  }

  createdPerDay(namespace: string): Promise<{ day: string; count: number }[]> {
    return this.usage.createdPerDay(namespace);
  }

  pendingErasures(): Promise<PendingErasure[]> {
    return this.erasure.pendingErasures();
  }

  finishErasure(id: string): Promise<void> {
    return this.erasure.finishErasure(id);
  }

  async diagnostics(): Promise<StoreReport> {
    return this.c.read('diagnostics', () => {
      const versions = this.c.stmt('SELECT sqlite_version() AS sqlite, vec_version() AS vec').get() as { sqlite: string; vec: string };
      const fts5 = (this.c.stmt(`SELECT sqlite_compileoption_used('ENABLE_FTS5') AS f`).get() as { f: number }).f === 1;
      const schema = (this.c.stmt('SELECT MAX(version) AS v FROM schema_version').get() as { v: number }).v;
      const pageCount = this.c.db.pragma('page_count', { simple: true }) as number;
      const pageSize = this.c.db.pragma('page_size', { simple: true }) as number;
      const journal = this.c.db.pragma('journal_mode', { simple: true }) as string;
      const integrity = this.c.db.pragma('quick_check', { simple: true }) as string;
      return {
        backend: 'sqlite',
        location: this.c.location,
        schemaVersion: schema,
        bytes: pageCount * pageSize,
        facts: {
          sqlite: versions.sqlite,
          fts5,
          sqliteVec: versions.vec,
          journalMode: journal,
          quickCheck: integrity,
          vectorDimensions: this.c.vectorDims,
          vectorIndex: this.c.vectorIndex?.status() ?? { engine: 'exhaustive', state: 'off', reason: this.c.readOnly ? 'read-only store' : 'disabled' },
        },
        notes: fts5 ? [] : ['SQLite was built without FTS5: the lexical signal is off'],
        failures: integrity === 'ok' ? [] : [`database integrity check: ${integrity}`],
      };
    });
  }

  /** For `cairn verify`: the approximate index checked against the stored vectors (rebuilt when it differs). */
  async checkVectorIndex(): Promise<VectorIndexCheck> {
    this.c.ensureOpen();
    return this.c.vectorIndex ? this.c.vectorIndex.check() : { status: 'exhaustive', detail: 'no approximate index for this store' };
  }

  /** The approximate vector index, or null when this store searches exhaustively only. */
  get vectorIndex(): SqliteVectorIndex | null {
    return this.c.vectorIndex;
  }

  async close(): Promise<void> {
    // The recall counts still waiting are written first (statistics: a failure to write them does not stop the close).
    await this.usage.flushRecalls().catch(() => undefined);
    await this.c.close();
  }
}

export function createSqliteStore(config: SqliteStoreConfig): SqliteStore {
  return new SqliteStore(config);
}
