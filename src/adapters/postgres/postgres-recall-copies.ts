import type { Logger } from '../../interfaces/embedder.js';
import { BackgroundBuilder } from '../vector-codes/background-build.js';
import type { HandedCoarseBuildRequest } from '../vector-codes/coarse-build-worker.js';
import { coarseBuildParams, type CoarseBuild, type CoarseBuildReply, type CoarseLists, type CoarseListsUse } from '../vector-codes/coarse-lists.js';
import { scanFetch } from '../vector-codes/scan-fetch.js';
import { ScanWorker, type ScanWorkerStatus } from '../vector-codes/scan-worker.js';
import { loadUsearch, type Usearch } from '../vector-codes/usearch.js';
import type { Pool } from './postgres-driver.js';
import { REANALYSIS_MARK } from './postgres-schema.js';
import { Params, vectorFromSend, type ArrayRows } from './postgres-rows.js';
import { PROPOSALS_STOOD } from './postgres-search.js';
import { NamespaceCopy, type CopyRow, type Proposals } from './postgres-recall-copy.js';
import { readRecallLists, saveRecallLists } from './postgres-saved-lists.js';
import type { CandidateFilter } from '../../interfaces/store.js';

/**
 * A long-lived process's copies of the namespaces it searches (postgres-recall-copy.ts), kept in step with the
 * log. Every change of a memory is an event, and each event gets its position in commit order (`gseq`, assigned
 * at commit under one lock: postgres-schema.ts), so the copies follow the log by position: before a search,
 * the events after the position followed are read and the memories they name are read again as they are now
 * (idempotent: reading a newer state than the event's is harmless, its own event comes later). Events that
 * change vectors or rows wholesale (an embedder recorded, vectors reset, an erasure) drop every copy, and so do
 * the changes no event records: a new schema version, and the re-analysis of postings that may follow one (no
 * copy is read while it runs).
 *
 * The fused statement checks, in its own snapshot, that the log ends at the position the proposal was made
 * at (`max(gseq)`); otherwise the search runs again without the proposal, as without a copy
 * (`proposedOrFull` below). So a search never ranks from a copy older than what it reads: another
 * process's commit between the catch-up and the statement costs that one search the copy's speed, not an answer.
 *
 * A copy is loaded in the background on the first search of its namespace (`read`); searches go on without it
 * meanwhile.
 */

/**
 * Runs a search statement (`sql` builds it with or without proposals, its parameters in `p`) with `proposals`,
 * and again without them when they did not stand, or when it found nothing (which cannot be told from a
 * proposal that did not stand). `run` is told which of the two it runs; `counted` hears whether each statement
 * with proposals stood. Rows come as arrays (postgres-rows.ts ArrayRows).
 */
export async function proposedOrFull(
  run: (sql: string, values: unknown[], proposed: boolean) => Promise<ArrayRows>,
  proposals: Proposals | undefined,
  sql: (p: Params, proposals?: Proposals) => string,
  counted?: (stood: boolean) => void,
): Promise<ArrayRows> {
  if (proposals) {
    const p = new Params();
    const result = await run(sql(p, proposals), p.values, true);
    const at = result.columns.get(PROPOSALS_STOOD);
    const stood = at === undefined ? undefined : result.rows[0]?.[at];
    if (typeof stood === 'boolean') counted?.(stood);
    if (result.rows.length > 0 && stood !== false) return result;
  }
  const p = new Params();
  return run(sql(p), p.values, false);
}

/** Events after which every copy is dropped (and loaded again when next searched), and saved lists are not taken. */
const WHOLESALE_TYPES = ['store.embedder', 'store.vectors-reset', 'erased', 'erasure.completed'];
const WHOLESALE = new Set(WHOLESALE_TYPES);
/** Events read per round of a catch-up; more behind than CATCH_UP_LIMIT and the copies are loaded anew. */
const EVENT_PAGE = 2_000;
const CATCH_UP_LIMIT = 50_000;
/** Memories read per statement of a load. */
const LOAD_PAGE = 5_000;
/**
 * A namespace holding more memories than this gets no copy (its searches run in full). A copy takes about 1.9 KB a
 * memory (heap and array buffers after collection, pg-scale's store of 100k: postgres-recall-copy.ts) and the scan
 * worker, or from COARSE_MIN_VECTORS the coarse lists, hold its codes again (512 bytes a memory at 512 dimensions),
 * so this bounds one copy near 3.6 GB (at 1M with its lists: 2,205 MiB, pg-scale-1m-copies-lists.json).
 */
export const MAX_COPY_MEMORIES = 1_500_000;
/**
 * A namespace with at least this many vectors is scanned in the scan worker, as the embedded store's long-lived
 * processes do (its default, `vectorIndex.scanWorkerMinVectors`); a smaller one on this thread.
 */
const SCAN_WORKER_MIN_VECTORS = 50_000;
/**
 * A namespace with at least this many vectors gets coarse lists (vector-codes/coarse-lists.ts), as the embedded
 * store's long-lived processes do (its default, `vectorIndex.coarseMinVectors`): its vector proposal scans the few
 * percent of its codes nearest the query instead of all of them (at 1M, 40 ms of the scan worker a search).
 */
const COARSE_MIN_VECTORS = 200_000;
/**
 * BM25 proposals beyond the k asked for: the copy adds a memory's weights in another order than the statement, so
 * scores that tie there may differ here in the last bits. (The vector proposal's margin is the int8 scan's own,
 * `scanFetch`.)
 */
export const PROPOSAL_MARGIN = 64;

/**
 * The columns a copy reads of a memory (over `m`), its postings aggregated in term order, as JSON: node-postgres
 * parses a JSON array natively, a PostgreSQL array one character at a time in JavaScript (loading the 100k copy
 * took 4.2–4.6 s against 4.5–4.8 s, four alternate runs).
 */
const ROW_SELECT = `m.pk, m.id, m.namespace, m.kind, m.tags, (m.forgotten_at IS NULL AND m.superseded_by IS NULL) AS current, m.expires_at, m.doc_length,
  p.terms, p.tfs`;
const POSTINGS_JOIN = `LEFT JOIN LATERAL (SELECT json_agg(t.term ORDER BY t.term) AS terms, json_agg(t.tf ORDER BY t.term) AS tfs
  FROM memory_terms t WHERE t.memory_pk = m.pk) p ON TRUE`;

interface RowRecord {
  pk: string;
  id: string;
  namespace: string;
  kind: string;
  tags: string;
  current: boolean;
  expires_at: string | null;
  doc_length: number;
  terms: string[] | null;
  tfs: number[] | null;
}

function copyRow(r: RowRecord, vector: Float32Array | null): CopyRow {
  let tags: string[] = [];
  try {
    const parsed: unknown = JSON.parse(r.tags);
    if (Array.isArray(parsed)) tags = parsed.filter((t): t is string => typeof t === 'string');
  } catch {
    tags = [];
  }
  return { pk: Number(r.pk), id: r.id, kind: r.kind, tags, current: r.current, expiresAt: r.expires_at, docLength: r.doc_length, terms: r.terms ?? [], tfs: r.tfs ?? [], vector };
}

export interface RecallCopiesStatus {
  namespaces: { namespace: string; memories: number; vectors: number }[];
  loading: string[];
  position: number;
  /** Namespaces searched that are too large for a copy (more than MAX_COPY_MEMORIES memories). */
  tooLarge: string[];
  /** Searches proposed from a copy / searches that found no copy ready. */
  proposed: number;
  without: number;
  /** Of the proposed fused searches that returned rows: those whose proposals all stood, and those that searched in full. */
  stood: number;
  fellBack: number;
  /** The worker scanning large namespaces' codes. */
  scanWorker: ScanWorkerStatus;
  /** Namespaces whose vector proposals come from coarse lists (rows, of which in the far list; searches), and their builds. */
  coarseLists: CoarseListsUse[];
  coarseBuild: 'idle' | 'building' | 'failed';
  /**
   * Lists built here, lists taken from the database as another process saved them (postgres-saved-lists.ts), builds
   * saved there, and why the last namespace that could have taken saved lists did not.
   */
  savedLists: { built: number; taken: number; saved: number; lastProblem: string | null };
  failed?: string;
}

export class RecallCopies {
  private readonly copies = new Map<string, NamespaceCopy>();
  private readonly loading = new Set<string>();
  private readonly tooLarge = new Set<string>();
  private position = 0;
  /** The schema version the copies were read under (null until one is installed). */
  private schema: number | null = null;
  /** Bumped whenever every copy is dropped: a load begun before it must not install. */
  private epoch = 0;
  /** Catch-ups and installs run one at a time, in order. */
  private serial: Promise<unknown> = Promise.resolve();
  private closed = false;
  private usearch: Usearch | null | undefined;
  private failure: string | undefined;
  private proposed = 0;
  private without = 0;
  private listsBuilt = 0;
  private listsTaken = 0;
  private listsSaved = 0;
  private listsProblem: string | null = null;
  private stood = 0;
  private fellBack = 0;
  /** Loads in flight, so close() can wait for them. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Scans a large namespace's codes in a worker thread (from a copy of them it keeps in step). */
  private readonly scanner: ScanWorker;
  /** Builds coarse lists of large namespaces in a worker thread, one at a time. */
  private readonly coarseBuilder = new BackgroundBuilder(new URL('../vector-codes/coarse-build-worker.js', import.meta.url), 'coarse list builder');

  constructor(
    private readonly pool: Pool,
    readonly dimensions: number,
    private readonly logger?: Logger,
    private readonly maxMemories = MAX_COPY_MEMORIES,
    scanWorkerMinVectors = SCAN_WORKER_MIN_VECTORS,
    private readonly coarseMinVectors = COARSE_MIN_VECTORS,
  ) {
    this.scanner = new ScanWorker(scanWorkerMinVectors);
  }

  private kernel(): Usearch | null {
    if (this.usearch === undefined) {
      const loaded = loadUsearch();
      this.usearch = 'usearch' in loaded ? loaded.usearch : null;
      if ('error' in loaded) this.failure = loaded.error;
    }
    return this.usearch;
  }

  /**
   * Proposals for one search of `filter.namespace`, from a copy brought up to the log's end; null when the
   * namespace has no copy yet (its load starts) or the copies cannot be used here.
   */
  async propose(request: { vector: Float32Array | null; terms: string[]; related?: { terms: string[]; k: number } | undefined; k: number; filter: CandidateFilter }): Promise<Proposals | null> {
    const usearch = this.kernel();
    if (this.closed || !usearch) return null;
    const namespace = request.filter.namespace;
    if (!this.copies.has(namespace)) {
      if (!this.tooLarge.has(namespace)) this.load(namespace);
      this.without++;
      return null;
    }
    await this.catchUp();
    const copy = this.copies.get(namespace);
    if (!copy) {
      this.without++;
      return null;
    }
    const out: Proposals = { position: this.position, schema: this.schema ?? 0 };
    const vector = request.vector && request.vector.length === this.dimensions ? request.vector : null;
    const nearest = scanFetch(request.k);
    const lists = vector ? this.listsOf(namespace, copy, usearch) : null;
    // A large namespace's vectors are scanned by the worker while this thread sums the lexical proposals; one with
    // coarse lists scans the lists nearest the query here.
    const scan = vector && !lists ? this.scanner.nearest(namespace, copy.codes, vector, Math.min(nearest, copy.codes.size())) : null;
    if (request.terms.length > 0) out.lexical = copy.proposeLexical(request.terms, request.k, request.k + PROPOSAL_MARGIN, request.filter);
    if (request.related && request.related.terms.length > 0) out.related = copy.proposeLexical(request.related.terms, request.related.k, request.related.k + PROPOSAL_MARGIN, request.filter);
    if (vector) {
      const scanned = (lists ? lists.nearest(vector, Math.min(nearest, copy.codes.size())) : await scan) ?? undefined;
      // Another search's catch-up may have moved the copy on meanwhile: the proposal then reads a newer state than
      // `out.position`, and the statement, finding the log past that position, searches in full.
      out.vector = copy.proposeVector(usearch, vector, request.k, nearest, request.filter, scanned);
    }
    this.proposed++;
    return out;
  }

  /**
   * The namespace's coarse lists, or null while it has none. A build starts when the namespace has
   * `coarseMinVectors` vectors and no lists, or when its lists have drifted (coarse-lists.ts FAR_REBUILD_SHARE; they
   * answer until the new ones are installed); the worker is handed a snapshot of the codes, and the copy places
   * again every row changed since. Once a namespace's lists answer, the scan worker's copy of its codes goes.
   */
  private listsOf(namespace: string, copy: NamespaceCopy, usearch: Usearch): CoarseLists | null {
    this.coarseBuilder.poll();
    const lists = copy.coarseLists();
    if (lists && !lists.drifted()) return lists;
    if (this.closed || copy.codes.size() < this.coarseMinVectors || !this.coarseBuilder.canStart()) return lists;
    const snapshot = copy.snapshotForLists();
    // The snapshot holds every change up to the position followed (the copy may hold later ones too).
    const position = this.position;
    const epoch = this.epoch;
    const request: HandedCoarseBuildRequest = { ...snapshot, ...coarseBuildParams(this.dimensions, snapshot.keys.length) };
    this.coarseBuilder.start<CoarseBuildReply>(
      request,
      (reply) => {
        if (this.closed || epoch !== this.epoch || this.copies.get(namespace) !== copy) return;
        this.installLists(namespace, copy, usearch, reply.coarse);
        this.listsBuilt++;
        this.track(
          saveRecallLists(this.pool, namespace, position, reply.coarse, WHOLESALE_TYPES).then(
            (saved) => {
              if (saved) this.listsSaved++;
            },
            (err: unknown) => {
              if (!this.closed) this.logger?.warn(`could not save the coarse lists of ${namespace} for the next process: ${err instanceof Error ? err.message : String(err)}`);
            },
          ),
        );
      },
      () => {},
      [snapshot.keys.buffer as ArrayBuffer, snapshot.data.buffer as ArrayBuffer],
    );
    return lists;
  }

  /** Counts one fused search's proposals as having stood, or not (the statement searched in full). */
  counted(stood: boolean): void {
    if (stood) this.stood++;
    else this.fellBack++;
  }

  status(): RecallCopiesStatus {
    return {
      namespaces: [...this.copies].map(([namespace, c]) => ({ namespace, memories: c.size(), vectors: c.codes.size() })),
      loading: [...this.loading],
      tooLarge: [...this.tooLarge],
      position: this.position,
      proposed: this.proposed,
      without: this.without,
      stood: this.stood,
      fellBack: this.fellBack,
      scanWorker: this.scanner.status(),
      coarseLists: [...this.copies].flatMap(([namespace, c]) => c.coarseLists()?.use(namespace) ?? []),
      coarseBuild: this.coarseBuilder.state(),
      savedLists: { built: this.listsBuilt, taken: this.listsTaken, saved: this.listsSaved, lastProblem: this.listsProblem },
      ...(this.failure ? { failed: this.failure } : {}),
    };
  }

  /** Waits for the loads in flight (tests, benchmarks); true when every searched namespace has its copy. */
  async settled(): Promise<boolean> {
    // A finished build starts its save: waited for too.
    do {
      while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
      await this.serial;
      await this.coarseBuilder.whenIdle();
    } while (this.inFlight.size > 0);
    return this.loading.size === 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.scanner.close();
    this.coarseBuilder.terminate();
    await Promise.allSettled([...this.inFlight]);
    this.copies.clear();
  }

  private dropAll(): void {
    this.copies.clear();
    this.scanner.clear();
    this.tooLarge.clear();
    this.schema = null;
    this.epoch++;
  }

  private run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.serial.then(fn, fn);
    this.serial = next.catch(() => undefined);
    return next;
  }

  /** Reads the events after the position followed and applies them to the copies. */
  private catchUp(): Promise<void> {
    return this.run(async () => {
      if (this.copies.size === 0) return;
      for (let behind = 0; ; ) {
        // One round trip: the schema version, whether a re-analysis is under way, and the next events.
        const [state] = (
          await this.pool.query<{ schema: number; reanalysing: boolean; events: { gseq: number; type: string; memory_id: string | null }[] }>(
            `SELECT (SELECT max(version) FROM schema_version)::int AS schema, EXISTS (SELECT 1 FROM meta WHERE key = $3) AS reanalysing,
               coalesce((SELECT json_agg(e ORDER BY e.gseq) FROM (SELECT gseq, type, memory_id FROM events WHERE gseq > $1 ORDER BY gseq LIMIT $2) e), '[]') AS events`,
            [this.position, EVENT_PAGE, REANALYSIS_MARK],
          )
        ).rows;
        if (!state) return;
        if (state.reanalysing || state.schema !== this.schema) {
          // Postings rewritten without events (a re-analysis), or rows another schema version wrote: read anew.
          this.dropAll();
          return;
        }
        const rows = state.events;
        if (rows.length === 0) return;
        behind += rows.length;
        const last = Number((rows[rows.length - 1] as { gseq: number }).gseq);
        if (behind > CATCH_UP_LIMIT || rows.some((r) => WHOLESALE.has(r.type))) {
          this.dropAll();
          this.position = last;
          return;
        }
        const ids = [...new Set(rows.map((r) => r.memory_id).filter((id): id is string => id !== null))];
        await this.refresh(ids);
        this.position = last;
        if (rows.length < EVENT_PAGE) return;
      }
    });
  }

  /** Reads the named memories as they are now into the copies holding their namespace (and out of any other). */
  private async refresh(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const { rows } = await this.pool.query<RowRecord>(`SELECT ${ROW_SELECT} FROM memories m ${POSTINGS_JOIN} WHERE m.id = ANY($1::text[])`, [ids]);
    const vectors = await this.vectorsOf(`m.id = ANY($1::text[])`, [ids]);
    for (const id of ids) {
      for (const copy of this.copies.values()) {
        const pk = copy.pkOf(id);
        if (pk !== undefined) copy.remove(pk);
      }
    }
    for (const r of rows) this.copies.get(r.namespace)?.put(copyRow(r, vectors.get(Number(r.pk)) ?? null));
  }

  private async vectorsOf(where: string, values: unknown[]): Promise<Map<number, Float32Array>> {
    const { rows } = await this.pool.query<{ pk: string; embedding: Buffer }>(
      `SELECT v.memory_pk AS pk, vector_send(v.embedding) AS embedding FROM memory_vectors v JOIN memories m ON m.pk = v.memory_pk
       WHERE ${where} AND vector_dims(v.embedding) = ${this.dimensions}`,
      values,
    );
    return new Map(rows.map((r) => [Number(r.pk), vectorFromSend(r.embedding)]));
  }

  /** Starts loading a namespace's copy in the background (once at a time per namespace). */
  private load(namespace: string): void {
    if (this.loading.has(namespace) || this.closed) return;
    this.loading.add(namespace);
    const epoch = this.epoch;
    const job = (async () => {
      try {
        const read = await this.read(namespace);
        if (read === 'too large') {
          this.tooLarge.add(namespace);
          return;
        }
        if (read === 'reanalysing') return; // tried again at a later search
        const { copy, position, schema } = read;
        await this.run(async () => {
          if (this.closed || epoch !== this.epoch) return;
          if (this.copies.size > 0 && schema !== this.schema) {
            this.dropAll(); // read under another schema version than the others: all are read anew
            return;
          }
          // The copy holds every change up to `position`; the others may be ahead of it. Following from the
          // earlier of the two reads some events twice, which only reads their memories again.
          this.position = this.copies.size === 0 ? position : Math.min(this.position, position);
          this.schema = schema;
          if (copy.codes.size() >= this.coarseMinVectors) await this.takeSavedLists(namespace, copy, position);
          this.copies.set(namespace, copy);
        });
      } catch (err) {
        if (!this.closed) this.logger?.warn(`could not load the search copy of ${namespace}: ${err instanceof Error ? err.message : String(err)}; searches go on without it`);
      } finally {
        this.loading.delete(namespace);
      }
    })();
    this.track(job);
  }

  /** Installs lists into the namespace's copy (NamespaceCopy.installLists); the scan worker's copy of its codes then goes. */
  private installLists(namespace: string, copy: NamespaceCopy, usearch: Usearch, build: CoarseBuild, savedChanged?: ReadonlySet<number>): void {
    copy.installLists(usearch, build, savedChanged);
    this.scanner.release(namespace, copy.codes);
  }

  /** Keeps `job` among the work close() and settled() wait for. */
  private track(job: Promise<void>): void {
    this.inFlight.add(job);
    void job.finally(() => this.inFlight.delete(job));
  }

  /**
   * Installs the coarse lists another process saved for the namespace into a copy just read (whose rows hold every
   * change up to `position`), when they may be taken (postgres-saved-lists.ts); otherwise the first search builds them.
   */
  private async takeSavedLists(namespace: string, copy: NamespaceCopy, position: number): Promise<void> {
    const usearch = this.kernel();
    if (!usearch) return;
    try {
      const saved = await readRecallLists(this.pool, namespace, this.dimensions, position, WHOLESALE_TYPES);
      if ('problem' in saved) {
        this.listsProblem = saved.problem;
        return;
      }
      this.installLists(namespace, copy, usearch, saved.build, new Set(saved.changedIds.flatMap((id) => copy.pkOf(id) ?? [])));
      this.listsTaken++;
      this.listsProblem = null;
    } catch (err) {
      this.listsProblem = err instanceof Error ? err.message : String(err);
      if (!this.closed) this.logger?.warn(`could not read the saved coarse lists of ${namespace}: ${this.listsProblem}; they are built anew`);
    }
  }

  /**
   * The namespace's rows, postings and vectors, and a log position they are at least as new as: the position is
   * read first, then the rows page by page, each page in a statement of its own. A page read later may already
   * hold changes made after the position; their events come after it, so following the log from there reads
   * those memories again, which changes nothing. No transaction spans the load, so no snapshot is held for its
   * length (at 1M memories, minutes), which would hold back vacuum and make index builds and erasures wait.
   */
  private async read(namespace: string): Promise<{ copy: NamespaceCopy; position: number; schema: number } | 'too large' | 'reanalysing'> {
    const [p] = (
      await this.pool.query<{ position: string; schema: number; reanalysing: boolean; documents: string | null }>(
        `SELECT coalesce(max(gseq), 0) AS position, (SELECT max(version) FROM schema_version)::int AS schema,
           EXISTS (SELECT 1 FROM meta WHERE key = $2) AS reanalysing, (SELECT documents FROM namespace_stats WHERE namespace = $1) AS documents
         FROM events`,
        [namespace, REANALYSIS_MARK],
      )
    ).rows;
    if (Number(p?.documents ?? 0) > this.maxMemories) return 'too large';
    if (p?.reanalysing) return 'reanalysing';
    const copy = new NamespaceCopy(this.dimensions);
    for (let after = 0; !this.closed; ) {
      const { rows } = await this.pool.query<RowRecord>(
        `SELECT ${ROW_SELECT} FROM memories m ${POSTINGS_JOIN} WHERE m.namespace = $1 AND m.pk > $2 ORDER BY m.pk LIMIT ${LOAD_PAGE}`,
        [namespace, after],
      );
      if (rows.length === 0) break;
      const first = Number((rows[0] as RowRecord).pk);
      after = Number((rows[rows.length - 1] as RowRecord).pk);
      const vectors = await this.vectorsOf('v.namespace = $1 AND v.memory_pk >= $2 AND v.memory_pk <= $3', [namespace, first, after]);
      for (const r of rows) copy.put(copyRow(r, vectors.get(Number(r.pk)) ?? null));
      if (rows.length < LOAD_PAGE) break;
    }
    return { copy, position: Number(p?.position ?? 0), schema: p?.schema ?? 0 };
  }
}
