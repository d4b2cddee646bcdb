import { rmSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { CandidateFilter, VectorHit, VectorIndexCheck } from '../../interfaces/store.js';
import {
  databaseIdentity,
  changeFingerprint,
  DEFAULT_INDEX_PARAMS,
  erasureCount,
  historyProblem,
  tooFarBehind,
  floats,
  loadIndexSegments,
  readIndexHeader,
  writeIndexFile,
  type IndexIdentity,
  type IndexParams,
} from './sqlite-vector-index-file.js';
import { loadUsearch, type Usearch } from '../vector-codes/usearch.js';
import type { BuildRequest } from './sqlite-vector-index-worker.js';
import { codesCosine, QuantizedVectors } from '../vector-codes/quantized-vectors.js';
import { indexedVectorsSql, vectorTableName } from './sqlite-vector-table.js';
import { BackgroundBuilder, type BuildReply } from '../vector-codes/background-build.js';
import { scanFetch, widening } from '../vector-codes/scan-fetch.js';
import { NeighbourGraphs, type GraphContext, type NeighbourGraphStatus } from './sqlite-neighbour-graph.js';
import { removeStaleTemporaries, savedFileProblem } from './sqlite-saved-files.js';
import { ScanWorker, type ScanWorkerStatus } from '../vector-codes/scan-worker.js';
import { removeCoarseListsFiles } from './sqlite-coarse-lists-file.js';
import { CoarseListSets, type CoarseListsStatus } from './sqlite-coarse-lists.js';

export interface SqliteVectorIndexConfig {
  /**
   * The codes are built once some namespace holds this many vectors; until then every search is sqlite-vec's
   * exhaustive KNN, as fast at that size and exact. Default 2,000 (sqlite-vec's KNN over 1,000 vectors took 1.5 ms
   * p50 in the latency bench). Once they are built every namespace is searched from them, the small ones too:
   * in a large store sqlite-vec's KNN costs more than its namespace's size says (4.5 ms for a namespace of 620
   * vectors, 15 of the table's 20,383 chunks, in a store of 1.3M), and a namespace of at most k + 64 vectors is
   * rescored whole, so exactly. A search of one kind in such a namespace stays with sqlite-vec, which filters it
   * inside its KNN.
   */
  minVectors?: number;
  /** Changes applied in memory between two saves of the file. Default 5,000 (and always on close). */
  saveEvery?: number;
  /**
   * A namespace with at least this many vectors gets a neighbour graph for searches that accept an approximate
   * answer (sqlite-neighbour-graph.ts). Default 50,000: below it the exact int8 scan costs at most about 1.5 ms
   * (3 ms at 100k on a quiet machine) and is exact, while a graph costs a build in a worker at each process
   * start, its memory, and recall (0.76 of the exact ten at 1M on the latency bench's clustered vectors).
   */
  graphMinVectors?: number;
  /**
   * Whether approximate searches may use neighbour graphs at all. Default false: a graph is built in a worker
   * from the whole namespace, which a short command (a CLI save, a hook, the capture worker) would stop on
   * close, having read the namespace for nothing; those use the exact scan. The composition root turns it on
   * for long-lived processes (serve, mcp).
   */
  neighbourGraphs?: boolean;
  /**
   * Whether a scan worker may scan large namespaces off the main thread (vector-codes/scan-worker.ts). Default false:
   * the worker holds a second copy of their codes, which only a long-lived process keeps using; the composition
   * root turns it on for those.
   */
  scanWorker?: boolean;
  /**
   * A namespace with at least this many vectors is scanned by the scan worker. Default 50,000: smaller
   * namespaces scan in about 3 ms or less, little more than what the round trip and the copy cost.
   */
  scanWorkerMinVectors?: number;
  /**
   * Whether large namespaces get coarse lists (sqlite-coarse-lists.ts): their codes split by nearest centroid,
   * so a search scans the few percent of lists nearest the query. Default false: the lists are built in a
   * worker from the whole namespace and hold a copy of its codes, which only a long-lived process keeps using;
   * the composition root turns it on for those.
   */
  coarseLists?: boolean;
  /**
   * A namespace with at least this many vectors gets coarse lists. Default 200,000: the full int8 scan of a
   * smaller one takes about 15 ms or less and is exact.
   */
  coarseMinVectors?: number;
  /** The fewest rows a search through coarse lists scans (sqlite-coarse-lists.ts PROBE_MIN_ROWS, 40,000). */
  coarseProbeMinRows?: number;
}

/** What `cairn doctor` and `cairn verify` say about the index. */
export interface VectorIndexStatus {
  engine: 'int8 scan (usearch)' | 'exhaustive';
  state: 'ready' | 'building' | 'not built' | 'unavailable' | 'failed';
  /** Why the index is not in use, or why it was last rebuilt. */
  reason: string | null;
  file: string;
  vectors: number;
  namespaces: number;
  seq: number | null;
  builds: number;
  lastBuildMs: number | null;
  /** Searches the codes answered (in this process). */
  searches: number;
  params: IndexParams;
  minVectors: number;
  graphs: NeighbourGraphStatus;
  scanWorker: ScanWorkerStatus;
  coarseLists: CoarseListsStatus;
}

type Prepare = (sql: string) => Database.Statement;

/**
 * The embedded store's fast vector search: quantised candidates with exact rescoring. Every namespace's
 * current vectors are held in memory as int8 (vector-codes/quantized-vectors.ts) and scanned with usearch's SIMD
 * kernel; the best k + 64 are rescored with the exact float cosine of the stored vector in SQL. They are kept
 * consistent with the database through its `vector_changes` counter (bumped by triggers on every change of a
 * memory's vector, namespace or currency) and saved beside it as `<db>.usearch`.
 *
 * Consistency: before every search the codes are brought to the database's latest change: patched from the
 * change log when few changes are pending, otherwise (file missing, damaged, from another database or embedder,
 * ahead of the database, or older than the kept change log) rebuilt in a worker thread while searches stay
 * exhaustive. Correctness: the codes only propose candidates; each is rescored exactly (an advisory search, which
 * accepts an approximate answer, scores them from the codes instead) and filtered in SQL by namespace, currency,
 * expiry, kind and tags, and when fewer than k pass even after widening, the caller's exhaustive search answers.
 * So stale codes can cost recall, never a wrong hit. Filtering: per-namespace
 * arrays (no cross-namespace over-fetch), then over-fetch (k + 64, ×4 up to 4,096) for the other filters.
 */
export class SqliteVectorIndex {
  private readonly minVectors: number;
  private readonly params: IndexParams;
  private readonly saveEvery: number;
  private usearch: Usearch | null = null;
  private unavailable: string | null = null;
  private indexes: Map<string, QuantizedVectors> | null = null;
  private identity: IndexIdentity | null = null;
  private unsaved = 0;
  private readonly builder = new BackgroundBuilder(new URL('./sqlite-vector-index-worker.js', import.meta.url), 'index builder');
  private reason: string | null = null;
  /** The largest namespace's indexed vectors when last counted, and at which change. */
  private counted: { seq: number; largest: number } | null = null;
  private closed = false;
  private searches = 0;
  private readonly graphs: NeighbourGraphs;
  private readonly useGraphs: boolean;
  private readonly scanner: ScanWorker | null;
  private readonly coarse: CoarseListSets | null;

  constructor(
    private readonly prepare: Prepare,
    private readonly dbPath: string,
    config: SqliteVectorIndexConfig = {},
  ) {
    this.minVectors = config.minVectors ?? 2_000;
    this.params = DEFAULT_INDEX_PARAMS;
    this.saveEvery = config.saveEvery ?? 5_000;
    this.graphs = new NeighbourGraphs(dbPath, config.graphMinVectors ?? 50_000);
    this.useGraphs = config.neighbourGraphs === true;
    this.scanner = config.scanWorker === true ? new ScanWorker(config.scanWorkerMinVectors ?? 50_000) : null;
    this.coarse = config.coarseLists === true ? new CoarseListSets(dbPath, config.coarseMinVectors ?? 200_000, config.coarseProbeMinRows) : null;
    // Index files of processes killed mid-save; the next save sweeps them too, but a process whose index is
    // caught up may never save.
    removeStaleTemporaries(`${this.file}.tmp-`);
  }

  /** The index file's path. */
  get file(): string {
    return `${this.dbPath}.usearch`;
  }

  /**
   * Up to k nearest current memories of the namespace passing the filter, best first, exactly scored (from their
   * codes for an approximate search, `filter.approximate`); null
   * when the caller must search exhaustively (index not ready, namespace without vectors, inactive memories
   * wanted, or not enough hits passed the filter).
   */
  async search(vector: Float32Array, k: number, filter: CandidateFilter, postSql: string, params: Record<string, unknown>): Promise<VectorHit[] | null> {
    if (filter.includeInactive || k <= 0) return null;
    if (!this.sync()) return null;
    const index = this.indexes?.get(filter.namespace);
    if (!index || index.size() === 0) return null;
    // One kind is filtered inside sqlite-vec's KNN; from the codes, a rare kind means rescoring the whole namespace
    // (a search for routes in a namespace of 1,300 notes and none: 1.5 ms there, 12.7 ms from the codes).
    if (index.size() < this.minVectors && filter.kinds?.length === 1) return null;
    const rescore = () => this.prepare(
      // The log's copy of the vector (one B-tree lookup; a vec0 lookup by rowid costs several times more),
      // or the vector table's when the blob is missing. `+m.namespace` keeps the planner on the rowid lookups:
      // with the namespace index it scanned the whole namespace through a bloom filter (at 100k, most of a
      // save's write-time `likelyReplaces` search).
      `SELECT m.id AS id, vec_distance_cosine(COALESCE(b.data, (SELECT embedding FROM ${vectorTableName(vector.length)} WHERE rowid = m.rowid)), @q) AS distance,
         (${postSql}) AS ok FROM memories m LEFT JOIN vector_blobs b ON b.hash = m.vector_hash
       WHERE m.rowid IN (SELECT value FROM json_each(@annKeys)) AND +m.namespace = @namespace ORDER BY distance`,
    );
    const rescored = (found: number[]) =>
      (rescore().all({ ...params, annKeys: `[${found.join(',')}]` }) as { id: string; distance: number; ok: number }[]).filter((r) => r.ok === 1).slice(0, k);
    // An advisory search's candidates are scored from the codes this index holds: the filter reads their memory rows
    // only, not their vectors (at 1M, reading 20 candidates' vectors from an 8 GB file was 0.5–1.3 ms of a 3–4 ms
    // save). Codes read before the scan worker answered may be a change behind the row; the check is advisory.
    const passing = () =>
      this.prepare(`SELECT m.rowid AS rowid, m.id AS id FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(@annKeys)) AND +m.namespace = @namespace AND (${postSql})`);
    const estimated = (found: number[]) => {
      const cosine = new Map<number, number>();
      for (const rowid of found) {
        const codes = index.codes(rowid);
        if (codes) cosine.set(rowid, codesCosine(vector, codes));
      }
      const rows = passing().all({ ...params, annKeys: `[${[...cosine.keys()].join(',')}]` }) as { rowid: number; id: string }[];
      return rows
        .map((r) => ({ id: r.id, distance: 1 - (cosine.get(r.rowid) as number) }))
        .sort((a, b) => a.distance - b.distance || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, k);
    };
    const scored = filter.approximate ? estimated : rescored;
    const answer = (hits: { id: string; distance: number }[]) => {
      this.searches++;
      return hits.map((r) => ({ id: r.id, similarity: 1 - r.distance }));
    };
    if (filter.approximate && this.useGraphs && index.size() >= this.graphs.minVectors) {
      // An advisory search: the namespace's graph proposes 4 × k candidates (a few hundred vectors visited, not the
      // namespace), scored from their codes. Until the graph is built, and when too few pass the filter, the scan answers.
      // A saved graph is loaded here and installed at once; otherwise a build starts and a later search installs it.
      // A graph from before an erasure (made by any process) may hold the erased vector's bytes: it goes.
      this.graphs.dropErased(this.erasures());
      if (!this.graphs.has(filter.namespace)) this.graphs.build(this.graphContext(), filter.namespace, vector.length);
      this.graphs.install(
        (this.identity as IndexIdentity).seq,
        (from, to) => this.changedRows(from, to),
        (namespace, rowid) => this.indexes?.get(namespace)?.codes(rowid) ?? null,
      );
      for (let fetch = 4 * k; fetch <= 4096; fetch *= 4) {
        const found = this.graphs.nearest(filter.namespace, vector, fetch);
        if (!found) break;
        const hits = scored(found);
        if (hits.length >= k || found.length < fetch) return answer(hits);
      }
    }
    // A large namespace's coarse lists scan the few percent of its codes nearest the query; when too few of their
    // candidates pass the filter, the full scan below answers.
    this.coarse?.install(this.usearch as Usearch, (this.identity as IndexIdentity).seq, (from, to) => this.changedRows(from, to), (namespace, rowid) => this.indexes?.get(namespace)?.codes(rowid) ?? null);
    const coarse = this.coarse?.get(filter.namespace, index);
    if (coarse) {
      // The lists answer for the namespace now: the scan worker's copy of its codes goes (and the rare full scan
      // below runs on this thread).
      this.scanner?.release(filter.namespace, index);
      for (const fetch of widening(filter.approximate ? 2 * k : scanFetch(k), 4096)) {
        const found = coarse.nearest(vector, fetch, filter.approximate === true);
        const hits = scored(found);
        if (hits.length >= k) return answer(hits);
        if (found.length < fetch) break;
      }
    }
    // int8 ranks close to the float order, so k + 64 candidates are rescored (scanFetch): rescoring is most of the
    // cost (a CPU profile of the engine's k = 300 search at 10k put 14 % of the search in rescoring 450 candidates).
    // An advisory search takes 2 × k here (room for rows the filter drops), 4 × k from the graph, scored from their codes.
    // A large namespace's first scan runs in the scan worker when there is one (long-lived processes), while
    // this thread goes on with the query's other signal; widening, rare, scans here.
    let first = true;
    for (const fetch of widening(filter.approximate ? 2 * k : scanFetch(k), 4096)) {
      const offThread = first && !coarse ? this.scanner?.nearest(filter.namespace, index, vector, fetch) : null;
      first = false;
      const found = (offThread && (await offThread)) ?? index.nearest(this.usearch as Usearch, vector, fetch);
      const hits = scored(found);
      if (hits.length >= k || found.length < fetch) return answer(hits);
    }
    return null;
  }

  /** Whether the namespace's scans run in the scan worker now. */
  scansOffThread(namespace: string): boolean {
    return this.scanner?.holds(namespace) === true && this.coarse?.has(namespace) !== true;
  }

  /** What the neighbour graphs need of the index (call with the codes loaded). */
  private graphContext(): GraphContext {
    return {
      usearch: this.usearch as Usearch,
      identity: this.identity as IndexIdentity,
      changedSince: (from, to) => this.changedRows(from, to),
      changeLogCovers: (from, to) => this.changeLogCovers(from, to),
      erasures: () => this.erasures(),
      historyProblem: (seq, at) => historyProblem(this.sqlite(), seq, at),
    };
  }

  /** The database's erasure counter: meta `erasures`, bumped in the compaction of every erasure that removed vectors. */
  private erasures(): number {
    return erasureCount(this.sqlite());
  }

  /** Rows whose vector changed after change `from` up to `to`; null when the kept change log starts later. */
  private changedRows(from: number, to: number): number[] | null {
    if (!this.changeLogCovers(from, to)) return null;
    return (this.prepare('SELECT DISTINCT memory_rowid AS rowid FROM vector_changes WHERE seq > ? AND seq <= ?').all(from, to) as { rowid: number }[]).map((r) => r.rowid);
  }

  /**
   * Brings the codes to the database's latest vector change; true when they are usable now. Never throws for
   * an index problem: it records why and answers false (exhaustive search).
   */
  private sync(): boolean {
    this.builder.poll();
    if (this.closed || this.unavailable !== null || this.builder.busy) return false;
    if (!this.usearch) {
      const loaded = loadUsearch();
      if ('error' in loaded) {
        this.unavailable = loaded.error;
        return false;
      }
      this.usearch = loaded.usearch;
    }
    const want = databaseIdentity(this.sqlite(), this.params);
    if (!want) return false;
    if (this.indexes && this.identity) {
      // Codes in memory follow an erasure through the change log (a removed row's codes are gone, unlike a graph's).
      const problem = this.mismatch({ ...this.identity, erasures: want.erasures }, want);
      if (problem === null) {
        if (this.identity.seq === want.seq || this.catchUp(want.seq, want.erasures)) {
          this.identity.erasures = want.erasures;
          return true;
        }
      }
      this.drop(problem ?? 'too many changes since the index was built');
    }
    const file = readIndexHeader(this.file);
    let problem = 'problem' in file ? file.problem : this.mismatch(file.header, want);
    if (problem === null && !('problem' in file)) {
      const loaded = loadIndexSegments(this.file, file);
      if ('indexes' in loaded) {
        this.indexes = loaded.indexes;
        this.identity = {
          format: file.header.format,
          storeId: file.header.storeId,
          embedder: file.header.embedder,
          seq: file.header.seq,
          params: file.header.params,
          erasures: file.header.erasures ?? 0,
          at: file.header.at,
        };
        if (this.identity.seq === want.seq || this.catchUp(want.seq)) return true;
        this.drop('too many changes since the index file was saved');
        problem = 'too many changes since the index file was saved';
      } else problem = loaded.problem;
    }
    this.reason = problem;
    this.maybeBuild(problem ?? 'no index file', want.seq);
    return false;
  }

  /** Why codes described by `have` cannot serve the database described by `want`, or null. */
  private mismatch(have: IndexIdentity, want: IndexIdentity): string | null {
    return (
      savedFileProblem('the index file', have, {
        want,
        sameParams: have.params?.quantization === this.params.quantization,
        covers: (from, to) => this.changeLogCovers(from, to),
        // The database's fingerprint of its own change was just read with `want`: not read again.
        history: (seq, at) => historyProblem(this.sqlite(), seq, at, seq === want.seq ? want.at : undefined),
      })?.problem ?? null
    );
  }

  /** Whether the kept change log still holds every change after `from` up to `to`. */
  private changeLogCovers(from: number, to: number): boolean {
    if (from >= to) return true;
    const { first } = this.prepare('SELECT MIN(seq) AS first FROM vector_changes').get() as { first: number | null };
    return (first ?? to + 1) <= from + 1;
  }

  /** Applies the changes after the codes' counter up to `to`; false when too many are pending to patch. */
  private catchUp(to: number, erasures?: number): boolean {
    const identity = this.identity as IndexIdentity;
    const indexes = this.indexes as Map<string, QuantizedVectors>;
    const size = [...indexes.values()].reduce((s, i) => s + i.size(), 0);
    if (tooFarBehind(to - identity.seq, size)) return false;
    const changes = this.prepare('SELECT DISTINCT memory_rowid AS rowid, namespace FROM vector_changes WHERE seq > ? AND seq <= ?').all(identity.seq, to) as {
      rowid: number;
      namespace: string;
    }[];
    // The log's copy of the vector (a vec0 lookup by rowid costs several times more), or the vector table's when
    // the blob is missing; a memory has a vector row exactly when it has a vector hash (sqlite-search.ts getVectors).
    const current = this.prepare(
      `SELECT m.namespace AS namespace, COALESCE(b.data, (SELECT embedding FROM ${vectorTableName(identity.embedder.dimensions)} WHERE rowid = m.rowid)) AS data
        FROM memories m LEFT JOIN vector_blobs b ON b.hash = m.vector_hash
        WHERE m.rowid = ? AND m.vector_hash IS NOT NULL AND m.forgotten_at IS NULL AND m.superseded_by IS NULL`,
    );
    const dims = identity.embedder.dimensions;
    const rowids = new Set<number>();
    const left = new Map<number, string>();
    for (const c of changes) {
      indexes.get(c.namespace)?.remove(c.rowid);
      rowids.add(c.rowid);
      left.set(c.rowid, c.namespace);
    }
    for (const rowid of rowids) {
      // Read now, possibly newer than `to`: a later change is applied again at the next sync, to the same end.
      const row = current.get(rowid) as { namespace: string; data: Buffer | null } | undefined;
      if (!row?.data || row.data.length !== dims * 4) {
        this.graphs.update(rowid, left.get(rowid) as string, null);
        this.coarse?.update(rowid, left.get(rowid) as string, null);
        continue;
      }
      let index = indexes.get(row.namespace);
      if (!index) indexes.set(row.namespace, (index = new QuantizedVectors(dims)));
      index.set(rowid, floats(row.data, dims));
      const now = { namespace: row.namespace, codes: index.codes(rowid) as Int8Array };
      this.graphs.update(rowid, left.get(rowid) as string, now);
      this.coarse?.update(rowid, left.get(rowid) as string, now);
    }
    identity.seq = to;
    // Caught up past every erasure counted in `erasures` (its rows left the codes), so a save now may say so.
    if (erasures !== undefined) identity.erasures = erasures;
    identity.at = changeFingerprint(this.sqlite(), to);
    this.unsaved += changes.length;
    if (this.unsaved >= this.saveEvery) this.save();
    return true;
  }

  /** Writes the in-memory codes to the file (best effort: a failed save only means a rebuild later). */
  private save(): void {
    if (!this.indexes || !this.identity) return;
    try {
      writeIndexFile(this.file, this.identity, this.indexes);
      this.unsaved = 0;
      if (this.useGraphs) this.graphs.persistIfFarBehind(this.graphContext());
    } catch (err) {
      this.reason = `the index file could not be saved (${(err as Error).message})`;
    }
  }

  private drop(reason: string): void {
    this.graphs.clear(reason);
    this.coarse?.clear(reason);
    this.scanner?.clear();
    this.indexes = null;
    this.identity = null;
    this.unsaved = 0;
    this.reason = reason;
  }

  /** Connection-shaped access for the shared reads of sqlite-vector-index-file.ts. */
  private sqlite(): { prepare(sql: string): Database.Statement } {
    return { prepare: (sql: string) => this.prepare(sql) };
  }

  /** Starts a rebuild in a worker when some namespace is large enough for the index to pay. */
  private maybeBuild(reason: string, seq: number): void {
    if (!this.builder.canStart() || this.closed) return;
    if (!this.counted || seq - this.counted.seq >= Math.max(1, this.minVectors / 4)) {
      const row = this.prepare(
        `SELECT COUNT(*) AS n FROM memories WHERE vector_hash IS NOT NULL AND forgotten_at IS NULL AND superseded_by IS NULL
          GROUP BY namespace ORDER BY n DESC LIMIT 1`,
      ).get() as { n: number } | undefined;
      this.counted = { seq, largest: row?.n ?? 0 };
    }
    if (this.counted.largest < this.minVectors) {
      this.reason = `no namespace holds ${this.minVectors} vectors yet`;
      return;
    }
    this.reason = reason;
    const request: BuildRequest = { dbPath: this.dbPath, target: this.file, params: this.params };
    this.builder.start<Extract<BuildReply, { ok: true }>>(request, () => {});
  }

  /** Resolves when no rebuild is running (at once when none is). */
  async whenIdle(): Promise<void> {
    await this.builder.whenIdle();
    await this.graphs.whenIdle();
    await this.coarse?.whenIdle();
  }

  status(): VectorIndexStatus {
    const vectors = this.indexes ? [...this.indexes.values()].reduce((s, i) => s + i.size(), 0) : 0;
    const state: VectorIndexStatus['state'] =
      this.unavailable !== null ? 'unavailable' : this.builder.busy ? 'building' : this.indexes ? 'ready' : this.builder.failed ? 'failed' : 'not built';
    return {
      engine: state === 'ready' ? 'int8 scan (usearch)' : 'exhaustive',
      state,
      reason: this.unavailable ?? this.builder.failed?.reason ?? this.reason,
      file: this.file,
      vectors,
      namespaces: this.indexes?.size ?? 0,
      seq: this.identity?.seq ?? null,
      builds: this.builder.builds,
      lastBuildMs: this.builder.lastBuildMs,
      searches: this.searches,
      params: this.params,
      minVectors: this.minVectors,
      graphs: this.useGraphs ? this.graphs.status() : { ...this.graphs.status(), reason: 'off: this process is short-lived, approximate searches scan exactly' },
      scanWorker: this.scanner?.status() ?? { state: 'off', namespaces: [], minVectors: 0, scans: 0, reason: 'off: this process is short-lived, it scans on its own thread' },
      coarseLists: this.coarse?.status() ?? { state: 'off', reason: 'off: this process is short-lived, it scans every vector of a namespace', minVectors: 0, namespaces: [], lastBuildMs: null, lastSource: null },
    };
  }

  /**
   * For `cairn verify`: brings the index up to date (building it if a namespace is large enough), then checks
   * it holds exactly the current vectors of every namespace (same keys; each sampled vector finds itself).
   * An index that does not is deleted and rebuilt, and the answer says why.
   */
  async check(): Promise<VectorIndexCheck> {
    let cause: string | null = null;
    for (let attempt = 0; attempt < 2; attempt++) {
      await this.whenIdle();
      if (!this.sync()) {
        cause ??= this.reason;
        await this.whenIdle();
        if (!this.sync()) {
          if (this.unavailable !== null) return { status: 'exhaustive', detail: this.unavailable };
          return { status: 'exhaustive', detail: this.builder.failed?.reason ?? this.reason ?? 'no index' };
        }
      }
      const problem = this.compareWithDatabase();
      if (problem === null) {
        const s = this.status();
        const graphs = this.graphs.check(this.graphContext(), this.indexes as Map<string, QuantizedVectors>);
        const graphDetail = [
          ...(graphs.consistent.length ? [`saved neighbour graphs consistent: ${graphs.consistent.map((n) => JSON.stringify(n)).join(', ')}`] : []),
          ...graphs.removed.map((g) => `the saved neighbour graph of ${JSON.stringify(g.namespace)} was deleted (${g.problem}); the next long-lived process builds it again`),
        ]
          .map((d) => `; ${d}`)
          .join('');
        return cause === null && graphs.removed.length === 0
          ? { status: 'consistent', detail: `${s.vectors} vectors in ${s.namespaces} namespaces at change ${s.seq}${graphDetail}` }
          : { status: 'rebuilt', detail: `${cause ?? 'index consistent'}${cause === null ? '' : `; rebuilt, now ${s.vectors} vectors at change ${s.seq}`}${graphDetail}` };
      }
      cause = problem;
      this.drop(`verify found the index inconsistent: ${problem}`);
      rmSync(this.file, { force: true });
      this.counted = null;
    }
    return { status: 'exhaustive', detail: `the rebuilt index is still inconsistent: ${cause ?? ''}` };
  }

  /** The first difference between the codes and the database's current vectors, or null. */
  private compareWithDatabase(): string | null {
    const indexes = this.indexes as Map<string, QuantizedVectors>;
    const dims = (this.identity as IndexIdentity).embedder.dimensions;
    const counts = new Map<string, number>();
    let sampled = 0;
    for (const raw of this.prepare(indexedVectorsSql(dims)).iterate()) {
      const row = raw as { rowid: number; namespace: string; data: Buffer };
      counts.set(row.namespace, (counts.get(row.namespace) ?? 0) + 1);
      const index = indexes.get(row.namespace);
      if (!index || !index.has(row.rowid)) return `memory row ${row.rowid} of ${JSON.stringify(row.namespace)} is missing from the index`;
      // Every 97th row's codes must still be its vector (int8 keeps a cosine above 0.999 to the float vector).
      if (row.rowid % 97 === 0 && sampled < 2048) {
        sampled++;
        const cosine = index.cosine(row.rowid, floats(row.data, dims)) ?? 0;
        if (cosine < 0.995) return `memory row ${row.rowid} of ${JSON.stringify(row.namespace)} holds another vector in the index (cosine ${cosine.toFixed(3)})`;
      }
    }
    for (const [namespace, index] of indexes) {
      if (index.size() !== (counts.get(namespace) ?? 0)) return `the index of ${JSON.stringify(namespace)} holds ${index.size()} vectors, the database ${counts.get(namespace) ?? 0}`;
    }
    return null;
  }

  /** After an erasure: the file may hold erased vectors, so it goes and is rebuilt from what is left. */
  discard(): void {
    this.drop('rebuilt after an erasure');
    this.graphs.discardFiles('rebuilt after an erasure');
    rmSync(this.file, { force: true });
    // Their centroids are means of the namespace's vectors, the erased ones among them.
    removeCoarseListsFiles(this.dbPath);
  }

  /**
   * Saves unsaved changes and stops a running rebuild; the index is unusable afterwards. A stopped rebuild
   * leaves the old file or none (it writes a temporary file and renames it whole, and the next save removes
   * a dead process's temporary), so the next process that opens the store builds again.
   */
  close(): void {
    if (this.closed) return;
    if (this.unsaved > 0) this.save();
    // The graphs follow the codes, so they are at the codes' change: saved for the next process when their files are behind.
    if (this.useGraphs && this.indexes && this.identity) this.graphs.persist(this.graphContext(), 1);
    this.builder.terminate();
    this.graphs.close();
    this.coarse?.close();
    this.scanner?.close();
    this.closed = true;
    this.indexes = null;
  }
}
