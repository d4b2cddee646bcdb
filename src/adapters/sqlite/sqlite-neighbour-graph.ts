import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { BackgroundBuilder, type BuildReply } from './sqlite-background-build.js';
import { addCodes, GRAPH_PARAMS, newGraph, type Graph } from './sqlite-neighbour-graph-file.js';
import type { GraphBuildRequest } from './sqlite-neighbour-graph-worker.js';
import { removeStaleTemporaries, type Usearch } from './sqlite-vector-index-file.js';

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
}

/**
 * Approximate nearest neighbours for searches that accept them (the write-time likely-update check): one usearch
 * HNSW graph per large namespace, over the same int8 codes as the quantised scan, so a search visits a few
 * hundred vectors instead of the whole namespace. The graphs follow the codes change for change (the vector
 * index applies each change to both); a graph is built in a worker thread from a snapshot of the database, then
 * brought to the codes' change from the change log before it answers. Held in memory only: a process that
 * opens the store builds them again, and until then the exact scan answers.
 */
export class NeighbourGraphs {
  private readonly graphs = new Map<string, Graph>();
  /** A graph built by the worker, waiting to be brought to the codes' change. */
  private arrived: { namespace: string; graph: Graph; seq: number } | null = null;
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

  /** Starts building the namespace's graph in a worker (one build at a time, none for a minute after a failure). */
  build(usearch: Usearch, namespace: string, dimensions: number): void {
    if (this.closed || !this.builder.canStart() || this.graphs.has(namespace) || this.arrived?.namespace === namespace) return;
    const target = `${this.dbPath}.graph-${process.pid}-${randomBytes(4).toString('hex')}`;
    const request: GraphBuildRequest = { dbPath: this.dbPath, namespace, dimensions, target };
    const generation = this.generation;
    this.builder.start<Extract<BuildReply, { ok: true }>>(
      request,
      (reply) => {
        if (this.closed || generation !== this.generation) return;
        const graph = newGraph(usearch, dimensions);
        try {
          graph.load(target);
        } catch (err) {
          throw new Error(`the built graph could not be loaded (${(err as Error).message})`);
        }
        this.arrived = { namespace, graph, seq: reply.seq };
      },
      () => rmSync(target, { force: true }),
    );
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
      return;
    }
    for (const rowid of changed) replace(arrived.graph, rowid, codesOf(arrived.namespace, rowid));
    this.graphs.set(arrived.namespace, arrived.graph);
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
    this.arrived = null;
    this.reason = reason;
  }

  async whenIdle(): Promise<void> {
    await this.builder.whenIdle();
  }

  close(): void {
    this.closed = true;
    this.graphs.clear();
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
    };
  }
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
