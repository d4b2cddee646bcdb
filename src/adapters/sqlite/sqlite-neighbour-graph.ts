import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { BackgroundBuilder, type BuildReply } from '../vector-codes/background-build.js';
import {
  addCodes,
  GRAPH_PARAMS,
  graphFileProblem,
  newGraph,
  openNamedGraphFile,
  publishGraphFile,
  readGraphHeader,
  removeGraphFiles,
  savedGraphNamespaces,
  type Graph,
  type GraphFileHeader,
  type GraphFileRefusal,
  unreadGraphFile,
} from './sqlite-neighbour-graph-file.js';
import type { GraphBuildRequest } from './sqlite-neighbour-graph-worker.js';
import type { QuantizedVectors } from '../vector-codes/quantized-vectors.js';
import { removeStaleTemporaries, savedFileProblem } from './sqlite-saved-files.js';
import { tooFarBehind, type IndexIdentity } from './sqlite-vector-index-file.js';
import type { Usearch } from '../vector-codes/usearch.js';

/** What the graphs need of the vector index: the database's identity, and the change log. */
export interface GraphContext {
  usearch: Usearch;
  identity: IndexIdentity;
  /** Rows whose vector changed after change `from` up to `to`; null when the kept change log starts later. */
  changedSince: (from: number, to: number) => number[] | null;
  /** Whether the kept change log still holds every change after `from` up to `to`. */
  changeLogCovers: (from: number, to: number) => boolean;
  /** The database's erasure counter (meta `erasures`, bumped in an erasure's compaction), read now. */
  erasures: () => number;
  /** Why a file at change `seq` with fingerprint `at` is not of the database's history, or null (see historyProblem). */
  historyProblem: (seq: number, at: string | null | undefined) => string | null;
}

/** A live graph is saved again once this many changes are past its file (the kept change log holds 200,000). */
const RESAVE_AFTER = 50_000;

/** What `cairn doctor` says about the neighbour graphs. */
export interface NeighbourGraphStatus {
  state: 'ready' | 'building' | 'none' | 'failed';
  reason: string | null;
  /** Vectors in each namespace's graph. */
  namespaces: Record<string, number>;
  minVectors: number;
  builds: number;
  lastBuildMs: number | null;
  /** Searches the graphs answered since the store opened. */
  searches: number;
  params: typeof GRAPH_PARAMS;
  /** Where the last graph taken came from: its saved file (loaded in lastLoadMs) or a build in the worker. */
  lastSource: 'file' | 'build' | null;
  lastLoadMs: number | null;
}

/**
 * Approximate nearest neighbours for searches that accept them (the write-time likely-update check): one usearch
 * HNSW graph per large namespace, over the same int8 codes as the quantised scan, so a search visits a few
 * hundred vectors instead of the whole namespace. The graphs follow the codes change for change (the vector
 * index applies each change to both); a graph is built in a worker thread from a snapshot of the database, then
 * brought to the codes' change from the change log before it answers, and saved beside the database for the
 * next process (sqlite-neighbour-graph-file.ts).
 *
 * Erasures: usearch keeps a removed vector's bytes, so a graph holds every vector it ever held. Each graph
 * remembers the database's erasure counter it was built or loaded under; a graph from before the latest
 * erasure (in any process) is dropped, never saved, and built again from the database.
 */
export class NeighbourGraphs {
  private readonly graphs = new Map<string, Graph>();
  /** A graph built by the worker, waiting to be brought to the codes' change. */
  private arrived: { namespace: string; graph: Graph; seq: number; erasures: number } | null = null;
  /** The erasure counter each live graph was built or loaded under. */
  private readonly erasuresOf = new Map<string, number>();
  private readonly builder = new BackgroundBuilder(new URL('./sqlite-neighbour-graph-worker.js', import.meta.url), 'graph builder');
  private reason: string | null = null;
  private searches = 0;
  private closed = false;
  /** Bumped by clear(): a build started before it brings a graph of codes that are gone, and is not taken. */
  private generation = 0;

  constructor(
    private readonly dbPath: string,
    /** A namespace with fewer vectors has no graph: the exact scan is fast enough there. */
    readonly minVectors: number,
  ) {
    // Graph files of processes that died before loading and deleting them.
    removeStaleTemporaries(`${dbPath}.graph-`);
  }

  /** The change each namespace's saved graph file reflects (as loaded or last written by this process). */
  private readonly saved = new Map<string, number>();
  /** Namespaces whose saved graph this process already tried to load (a rejected file is not tried again). */
  private readonly triedFile = new Set<string>();
  /** Where the graph last installed came from: its file or a build (for doctor and the bench). */
  private lastSource: 'file' | 'build' | null = null;
  private lastLoadMs: number | null = null;

  /** Rowids of about `count` nearest rows of the namespace by int8 cosine, nearest first; null without a graph. */
  nearest(namespace: string, vector: Float32Array, count: number): number[] | null {
    const graph = this.graphs.get(namespace);
    if (!graph) return null;
    this.searches++;
    const found = graph.search(scaled(vector), count, 1);
    return Array.from(found.keys as BigUint64Array, Number);
  }

  has(namespace: string): boolean {
    return this.graphs.has(namespace);
  }

  /**
   * Brings the namespace's graph: its saved file when one matches the database (loaded here, then caught up from
   * the change log by install), otherwise a build in a worker (one build at a time, none for a minute after a
   * failure), whose file is then saved for the next process.
   */
  build(ctx: GraphContext, namespace: string, dimensions: number): void {
    if (this.closed || this.graphs.has(namespace) || this.arrived?.namespace === namespace) return;
    if (!this.triedFile.has(namespace)) {
      this.triedFile.add(namespace);
      if (this.loadSaved(ctx, namespace)) return;
    }
    if (!this.builder.canStart()) return;
    const { usearch, identity } = ctx;
    const target = `${this.dbPath}.graph-${process.pid}-${randomBytes(4).toString('hex')}`;
    const request: GraphBuildRequest = { dbPath: this.dbPath, namespace, dimensions, target };
    const generation = this.generation;
    // Read before the worker's snapshot: an erasure after this, before or after the snapshot, drops the build.
    const erasures = ctx.erasures();
    this.builder.start<Extract<BuildReply, { ok: true }>>(
      request,
      (reply) => {
        if (this.closed || generation !== this.generation) return;
        if (ctx.erasures() !== erasures) {
          this.reason = 'an erasure came during the graph build: it is built again';
          return;
        }
        let path = target;
        try {
          publishGraphFile(this.dbPath, target, { storeId: identity.storeId, embedder: identity.embedder, params: GRAPH_PARAMS, namespace, seq: reply.seq, erasures, at: reply.at ?? null, vectors: reply.vectors }, reply.digest);
          if (ctx.erasures() !== erasures) {
            // An erasure committed while the file was published: what was just published goes, and so does the graph.
            removeGraphFiles(this.dbPath, namespace);
            this.reason = 'an erasure came during the graph build: it is built again';
            return;
          }
          const saved = readGraphHeader(this.dbPath, namespace);
          if ('path' in saved) {
            path = saved.path;
            this.saved.set(namespace, reply.seq);
          }
        } catch (err) {
          // Not saved: this process uses it all the same, and the next one builds again.
          this.reason = `the built graph could not be saved (${(err as Error).message})`;
        }
        const graph = newGraph(usearch, dimensions);
        try {
          graph.load(path);
        } catch (err) {
          throw new Error(`the built graph could not be loaded (${(err as Error).message})`);
        }
        if (graph.size() !== reply.vectors) throw new Error(`the built graph holds ${graph.size()} vectors, not ${reply.vectors}`);
        this.arrived = { namespace, graph, seq: reply.seq, erasures };
        this.lastSource = 'build';
      },
      () => rmSync(target, { force: true }),
    );
  }

  /** Loads the namespace's saved graph when it matches the database; false (with the reason) when it does not. */
  private loadSaved(ctx: GraphContext, namespace: string): boolean {
    const started = performance.now();
    const loaded = openSavedGraph(this.dbPath, ctx, namespace);
    if ('problem' in loaded) {
      if (loaded.problem !== 'no graph file') this.reason = `the saved graph of ${JSON.stringify(namespace)} was not used: ${loaded.problem}`;
      return false;
    }
    this.arrived = { namespace, graph: loaded.graph, seq: loaded.seq, erasures: loaded.erasures };
    this.saved.set(namespace, loaded.seq);
    this.lastSource = 'file';
    this.lastLoadMs = Math.round(performance.now() - started);
    return true;
  }

  /**
   * Saves each live graph whose file is `atLeast` changes behind the codes' change `seq` (the graphs follow the
   * codes, so they are at `seq`): usearch writes a temporary file, published as the builds' files are. Best
   * effort: a graph that cannot be saved is built again by the next process.
   */
  persist(ctx: GraphContext, atLeast: number): void {
    this.dropErased(ctx.erasures());
    for (const [namespace, graph] of this.graphs) {
      const saved = this.saved.get(namespace);
      if (saved !== undefined && ctx.identity.seq - saved < Math.max(1, atLeast)) continue;
      const tmp = `${this.dbPath}.graph-${process.pid}-${randomBytes(4).toString('hex')}`;
      const erasures = this.erasuresOf.get(namespace) as number;
      try {
        graph.save(tmp);
        publishGraphFile(this.dbPath, tmp, { storeId: ctx.identity.storeId, embedder: ctx.identity.embedder, params: GRAPH_PARAMS, namespace, seq: ctx.identity.seq, erasures, at: ctx.identity.at ?? null, vectors: graph.size() });
        if (ctx.erasures() !== erasures) {
          // An erasure committed while it was published: the file goes (a reader would refuse it anyway).
          removeGraphFiles(this.dbPath, namespace);
          this.saved.delete(namespace);
          continue;
        }
        this.saved.set(namespace, ctx.identity.seq);
      } catch (err) {
        rmSync(tmp, { force: true });
        this.reason = `the graph of ${JSON.stringify(namespace)} could not be saved (${(err as Error).message})`;
      }
    }
  }

  /** Saves graphs far behind their files (called with the index's periodic save). */
  persistIfFarBehind(ctx: GraphContext): void {
    this.persist(ctx, RESAVE_AFTER);
  }

  /**
   * For `cairn verify`: every saved graph file (and every live graph) against the codes of its namespace, after
   * catching up from the change log. A file that does not hold exactly the namespace's current rows, each found
   * by its own codes, is deleted (the next long-lived process builds it again); the answer lists what was found.
   */
  check(ctx: GraphContext, indexes: Map<string, QuantizedVectors>): { consistent: string[]; removed: { namespace: string; problem: string }[] } {
    const consistent: string[] = [];
    const removed: { namespace: string; problem: string }[] = [];
    for (const namespace of savedGraphNamespaces(this.dbPath)) {
      const live = this.graphs.get(namespace);
      const opened = live ? null : openSavedGraph(this.dbPath, ctx, namespace);
      let problem: string | null = null;
      if (opened && 'problem' in opened) problem = opened.problem;
      else {
        const graph = live ?? (opened as { graph: Graph }).graph;
        if (!live && opened && 'graph' in opened) {
          const changed = ctx.changedSince(opened.seq, ctx.identity.seq);
          if (!changed) problem = 'the graph file is older than the change log the database keeps';
          else for (const rowid of changed) replace(graph, rowid, indexes.get(namespace)?.codes(rowid) ?? null);
        }
        problem ??= compareGraph(graph, indexes.get(namespace));
      }
      if (problem === null) consistent.push(namespace);
      else {
        removed.push({ namespace, problem });
        removeGraphFiles(this.dbPath, namespace);
        this.saved.delete(namespace);
        if (live) {
          this.graphs.delete(namespace);
          this.erasuresOf.delete(namespace);
        }
      }
    }
    return { consistent, removed };
  }

  /**
   * Every saved graph and graph temporary goes (after an erasure: they may hold erased vectors), with the live
   * graphs; a running build is stopped (it reads a snapshot from before the erasure).
   */
  discardFiles(reason: string): void {
    this.clear(reason);
    this.builder.cancel();
    this.saved.clear();
    removeGraphFiles(this.dbPath);
  }

  /**
   * Drops every graph built or loaded before the latest erasure (`erasures`, the database's counter): its bytes
   * may hold an erased vector. Its namespace's graph is then built again from the database.
   */
  dropErased(erasures: number): void {
    if (this.arrived && this.arrived.erasures !== erasures) this.arrived = null;
    for (const [namespace, at] of this.erasuresOf) {
      if (at === erasures) continue;
      this.graphs.delete(namespace);
      this.erasuresOf.delete(namespace);
      this.saved.delete(namespace);
      this.reason = 'the graphs were dropped after an erasure and are built again';
    }
  }

  /**
   * Installs a graph the worker built once the codes are at change `seq`: every row changed after the graph's
   * snapshot is removed from it and added again from the codes. A graph older than the kept change log, or
   * newer than the codes (they catch up at the next search), waits or goes.
   */
  install(seq: number, changedSince: (from: number, to: number) => number[] | null, codesOf: (namespace: string, rowid: number) => Int8Array | null): void {
    this.builder.poll();
    const arrived = this.arrived;
    if (!arrived || arrived.seq > seq) return;
    this.arrived = null;
    const changed = changedSince(arrived.seq, seq);
    if (!changed) {
      this.reason = 'the built graph is older than the change log the database keeps';
      if (this.saved.get(arrived.namespace) === arrived.seq) {
        removeGraphFiles(this.dbPath, arrived.namespace);
        this.saved.delete(arrived.namespace);
      }
      return;
    }
    for (const rowid of changed) replace(arrived.graph, rowid, codesOf(arrived.namespace, rowid));
    this.graphs.set(arrived.namespace, arrived.graph);
    this.erasuresOf.set(arrived.namespace, arrived.erasures);
    this.reason = null;
  }

  /** One row changed: it leaves the graph of `from` and enters the graph of `to` with `codes` (when current). */
  update(rowid: number, from: string, to: { namespace: string; codes: Int8Array } | null): void {
    const old = this.graphs.get(from);
    if (old) old.remove(BigInt(rowid));
    const graph = to && this.graphs.get(to.namespace);
    if (graph && to) replace(graph, rowid, to.codes);
  }

  /** Every graph goes (the codes were dropped or rebuilt); they are built again when a search wants them. */
  clear(reason: string): void {
    this.generation++;
    this.graphs.clear();
    this.erasuresOf.clear();
    this.arrived = null;
    this.reason = reason;
  }

  async whenIdle(): Promise<void> {
    await this.builder.whenIdle();
  }

  close(): void {
    this.closed = true;
    this.graphs.clear();
    this.erasuresOf.clear();
    this.arrived = null;
    this.builder.terminate();
  }

  status(): NeighbourGraphStatus {
    const namespaces = Object.fromEntries([...this.graphs].map(([ns, g]) => [ns, g.size()]));
    const state: NeighbourGraphStatus['state'] = this.builder.busy ? 'building' : this.graphs.size ? 'ready' : this.builder.failed ? 'failed' : 'none';
    return {
      state,
      reason: this.builder.failed?.reason ?? this.reason,
      namespaces,
      minVectors: this.minVectors,
      builds: this.builder.builds,
      lastBuildMs: this.builder.lastBuildMs,
      searches: this.searches,
      params: GRAPH_PARAMS,
      lastSource: this.lastSource,
      lastLoadMs: this.lastLoadMs,
    };
  }
}

/**
 * The namespace's saved graph when its header matches the database and the loaded graph holds the vectors it
 * names; it reflects change `seq`, which the change log must still reach back to.
 */
function openSavedGraph(dbPath: string, ctx: GraphContext, namespace: string): { graph: Graph; seq: number; erasures: number } | GraphFileRefusal {
  return openNamedGraphFile(dbPath, namespace, (file) => openGraphFile(dbPath, ctx, namespace, file));
}

function openGraphFile(dbPath: string, ctx: GraphContext, namespace: string, file: { header: GraphFileHeader; path: string }): { graph: Graph; seq: number; erasures: number } | GraphFileRefusal {
  const { header } = file;
  const want = ctx.identity;
  const erasures = ctx.erasures();
  // Only the build's parameters: the search's expansion is this process's setting, not the file's.
  const sameParams = header.params?.connectivity === GRAPH_PARAMS.connectivity && header.params?.expansionAdd === GRAPH_PARAMS.expansionAdd;
  const refused = savedFileProblem('the graph file', { ...header, at: typeof header.at === 'string' ? header.at : null }, {
    want: { ...want, erasures },
    sameParams,
    covers: ctx.changeLogCovers,
    history: ctx.historyProblem,
  });
  if (refused !== null) {
    // Saved before an erasure (or by a process that missed it): it may hold erased vectors, so it goes.
    if (refused.erased) removeGraphFiles(dbPath, namespace);
    return { problem: refused.problem };
  }
  // Caught up on the main thread at install: beyond this a build in the worker costs the searches less.
  if (tooFarBehind(want.seq - header.seq, header.vectors)) return { problem: `the graph file is ${want.seq - header.seq} changes behind: it is built again instead` };
  const damaged = graphFileProblem(file);
  if (damaged !== null) return unreadGraphFile(file, damaged);
  const graph = newGraph(ctx.usearch, want.embedder.dimensions);
  try {
    graph.load(file.path);
  } catch (err) {
    return unreadGraphFile(file, `the graph file cannot be loaded (${(err as Error).message.split('\n')[0]})`);
  }
  if (graph.size() !== header.vectors) return { problem: `the graph file holds ${graph.size()} vectors, its header says ${header.vectors}` };
  return { graph, seq: header.seq, erasures };
}

/** The first difference between a graph and its namespace's codes: the same rows, each sampled one found by its codes. */
function compareGraph(graph: Graph, codes: QuantizedVectors | undefined): string | null {
  const n = codes?.size() ?? 0;
  if (graph.size() !== n) return `the graph holds ${graph.size()} vectors, the namespace ${n}`;
  if (!codes) return null;
  const { keys } = codes.rows();
  let sampled = 0;
  for (let i = 0; i < keys.length; i += 97) {
    const rowid = keys[i] as number;
    if (!graph.contains(BigInt(rowid))) return `memory row ${rowid} is missing from the graph`;
    if (sampled++ < 64) {
      const own = codes.codes(rowid) as Int8Array;
      const query = Float32Array.from(own, (c) => c / 127);
      const found = graph.search(query, 10, 1);
      // A row's own codes are at distance 0: it is among the first ten unless ten rows share its exact codes.
      const hit = Array.from(found.keys as BigUint64Array, Number).includes(rowid) || Array.from(found.distances as Float32Array).every((d) => d <= 1e-6);
      if (!hit) return `memory row ${rowid} is not found by its own vector in the graph`;
    }
  }
  return null;
}

/** The row leaves the graph and, with codes (a current vector), enters it again. */
function replace(graph: Graph, rowid: number, codes: Int8Array | null): void {
  graph.remove(BigInt(rowid));
  if (codes) addCodes(graph, [rowid], codes, codes.length, 1);
}

/** The query as the graph's int8 codes see a vector: its largest component ±1 (see addCodes). */
function scaled(vector: Float32Array): Float32Array {
  let max = 0;
  for (let i = 0; i < vector.length; i++) max = Math.max(max, Math.abs(vector[i] as number));
  const out = new Float32Array(vector.length);
  if (max > 0) for (let i = 0; i < vector.length; i++) out[i] = (vector[i] as number) / max;
  return out;
}
