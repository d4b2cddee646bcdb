import type { Usearch } from '../vector-codes/usearch.js';
import type { QuantizedVectors } from '../vector-codes/quantized-vectors.js';
import { BackgroundBuilder } from '../vector-codes/background-build.js';
import { CoarseLists, coarseBuildParams, PROBE_MIN_ROWS, type CoarseBuild, type CoarseListsUse } from '../vector-codes/coarse-lists.js';
import type { CoarseBuildRequest, SqliteCoarseReply } from './sqlite-coarse-lists-worker.js';

/** What `cairn doctor` says about the coarse lists. */
export interface CoarseListsStatus {
  state: 'off' | 'idle' | 'building' | 'failed';
  reason: string | null;
  minVectors: number;
  /** Namespaces searched through their lists, with the rows they hold (of which in the far list) and the searches they answered. */
  namespaces: CoarseListsUse[];
  lastBuildMs: number | null;
  /**
   * Where the lists last installed came from: the file saved beside the database by an earlier process, or a
   * build, with why a saved file was not taken or the build not saved (`detail`).
   */
  lastSource: { namespace: string; from: 'file' | 'build'; detail: string | null } | null;
}

/**
 * The coarse lists of a store's large namespaces, for long-lived processes: built in a worker from one
 * snapshot of the namespace (k-means on a sample, then every row assigned) and saved beside the database, or
 * taken from that file by the next process (sqlite-coarse-lists-file.ts), installed once the codes have caught
 * up with the snapshot's change, then kept in step change by change. Until a namespace's lists are installed its
 * searches scan all its codes, as before. Only a process's first lists of a namespace may come from the file:
 * lists asked for again (drifted, or refused at install) are built.
 */
export class CoarseListSets {
  private readonly sets = new Map<string, CoarseLists>();
  private arrived: { namespace: string; seq: number; build: CoarseBuild; generation: number; source: SqliteCoarseReply['source'] } | null = null;
  /** Namespaces whose lists this process has asked for (the saved file is taken for the first request only). */
  private readonly requested = new Set<string>();
  private lastSource: CoarseListsStatus['lastSource'] = null;
  private readonly builder = new BackgroundBuilder(new URL('./sqlite-coarse-lists-worker.js', import.meta.url), 'coarse list builder');
  private generation = 0;
  private reason: string | null = null;
  private closed = false;

  constructor(
    private readonly dbPath: string,
    readonly minVectors: number,
    private readonly probeMinRows = PROBE_MIN_ROWS,
  ) {}

  /**
   * The namespace's lists when installed, otherwise null. A build starts when the namespace is large enough and has
   * none, or when its lists have drifted (see FAR_REBUILD_SHARE; they answer until the new ones are installed).
   */
  get(namespace: string, codes: QuantizedVectors): CoarseLists | null {
    const lists = this.sets.get(namespace);
    if (lists && !lists.drifted()) return lists;
    if (this.closed || codes.size() < this.minVectors || this.arrived?.namespace === namespace || !this.builder.canStart()) return lists ?? null;
    const request: CoarseBuildRequest = { dbPath: this.dbPath, namespace, ...coarseBuildParams(codes.dimensions, codes.size()), reuse: !this.requested.has(namespace) };
    this.requested.add(namespace);
    const generation = this.generation;
    this.builder.start<SqliteCoarseReply>(request, (reply) => {
      if (this.closed || generation !== this.generation) return;
      this.arrived = { namespace, seq: reply.seq, build: reply.coarse, generation, source: reply.source };
    });
    return lists ?? null;
  }

  /**
   * Installs arrived lists once the codes are at change `seq` or later: every snapshot row still held is placed in
   * its assigned list with its current codes, and every row changed since the snapshot is placed again (or left
   * out) from the codes. Lists older than the kept change log go, and are built again.
   */
  install(usearch: Usearch, seq: number, changedSince: (from: number, to: number) => number[] | null, codesOf: (namespace: string, rowid: number) => Int8Array | null): void {
    this.builder.poll();
    const arrived = this.arrived;
    if (!arrived || arrived.seq > seq) return;
    this.arrived = null;
    if (arrived.generation !== this.generation) return;
    const changed = changedSince(arrived.seq, seq);
    if (!changed) {
      this.reason = 'the built lists are older than the change log the database keeps';
      return;
    }
    const { dimensions, centroids, keys, assignment, farBelow } = arrived.build;
    const lists = new CoarseLists(usearch, dimensions, centroids, farBelow, this.probeMinRows);
    for (let i = 0; i < keys.length; i++) {
      const rowid = keys[i] as number;
      const codes = codesOf(arrived.namespace, rowid);
      if (codes) lists.set(rowid, codes, assignment[i] as number);
    }
    for (const rowid of changed) {
      lists.remove(rowid);
      const codes = codesOf(arrived.namespace, rowid);
      if (codes) lists.set(rowid, codes);
    }
    this.sets.set(arrived.namespace, lists);
    this.reason = null;
    const { source } = arrived;
    const detail = source.from === 'file' ? null : [source.refused && `saved lists not taken: ${source.refused}`, source.unsaved && `not saved: ${source.unsaved}`].filter(Boolean).join('; ') || null;
    this.lastSource = { namespace: arrived.namespace, from: source.from, detail };
  }

  /** One row changed: it leaves the lists of `from` and enters those of `to` with `codes` (when current). */
  update(rowid: number, from: string, to: { namespace: string; codes: Int8Array } | null): void {
    this.sets.get(from)?.remove(rowid);
    if (to) this.sets.get(to.namespace)?.set(rowid, to.codes);
  }

  has(namespace: string): boolean {
    return this.sets.has(namespace);
  }

  /** Every namespace's lists go (the codes were dropped or rebuilt), and a running build's answer with them. */
  clear(reason: string): void {
    this.generation++;
    this.sets.clear();
    this.arrived = null;
    this.reason = reason;
  }

  async whenIdle(): Promise<void> {
    await this.builder.whenIdle();
  }

  close(): void {
    this.closed = true;
    this.sets.clear();
    this.arrived = null;
    this.builder.terminate();
  }

  status(): CoarseListsStatus {
    return {
      state: this.builder.state(),
      reason: this.builder.failed?.reason ?? this.reason,
      minVectors: this.minVectors,
      namespaces: [...this.sets].map(([namespace, lists]) => lists.use(namespace)),
      lastBuildMs: this.builder.lastBuildMs,
      lastSource: this.lastSource,
    };
  }
}
