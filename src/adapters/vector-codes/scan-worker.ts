import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { CodeChange, QuantizedVectors } from './quantized-vectors.js';

/** What the store sends the scan worker, in order: a namespace's codes whole, then each change before a scan must see it. */
export type ScanMessage =
  | { kind: 'load'; namespace: string; instance: number; dimensions: number; rows: number; body: Uint8Array }
  | { kind: 'changes'; namespace: string; instance: number; changes: CodeChange[] }
  | { kind: 'clear' }
  | { kind: 'release'; namespace: string }
  | { kind: 'nearest'; id: number; namespace: string; instance: number; query: Float32Array; count: number };

/** What it answers: a copy made (or why not), or a scan's rowids nearest first (null when it holds no such copy). */
export type ScanReply =
  | { kind: 'loaded'; namespace: string; instance: number; error: string | null }
  | { kind: 'found'; id: number; rowids: Float64Array | null; error: string | null };

/** What `cairn doctor` says about the scan worker. */
export interface ScanWorkerStatus {
  state: 'off' | 'idle' | 'running' | 'failed';
  /** Namespaces whose codes the worker holds a current copy of. */
  namespaces: string[];
  /** Namespaces with at least this many vectors are scanned by the worker. */
  minVectors: number;
  scans: number;
  reason: string | null;
}

/**
 * Exact int8 scans of the large namespaces in a worker thread, for a long-lived process: the main thread sums the
 * query's BM25 meanwhile (recall asks for the vector side first, Store.vectorSearchRunsBeside), so the two overlap
 * (in part on this 2-core machine: the scan slows while the main thread works; ×0.70 at 1M in the latency bench). The worker holds a copy of each such namespace's codes, made once
 * (sent whole when first scanned, or after the namespace's codes were rebuilt) and then kept up by the changes
 * the codes journal (QuantizedVectors.startJournal), each sent before the next scan: a scan sees exactly the codes
 * the main thread held when it was asked for, so its answer is the one the main thread's own scan would give.
 * Until a copy is made, and if the worker fails, the caller scans itself. The copy costs the namespace's codes
 * once more in memory (512 bytes a 512-dimension vector).
 */
export class ScanWorker {
  private worker: Worker | null = null;
  /** The worker's answers, read as they come and also polled (see poll). */
  private replies: MessagePort | null = null;
  private failure: string | null = null;
  private readonly copies = new Map<string, { instance: number; ready: boolean }>();
  private readonly waiting = new Map<number, { namespace: string; resolve: (rowids: number[] | null) => void }>();
  private nextId = 0;
  private closed = false;
  scans = 0;

  constructor(readonly minVectors: number) {}

  /**
   * The `count` nearest rows of the namespace's codes `vectors` to `query`, scanned by the worker, or null when it
   * cannot answer now (the namespace is small, its copy is being made, or the worker failed): the caller scans.
   */
  nearest(namespace: string, vectors: QuantizedVectors, query: Float32Array, count: number): Promise<number[] | null> | null {
    if (this.closed || this.failure !== null || vectors.size() < this.minVectors) return null;
    this.poll();
    const worker = this.worker ?? this.start();
    const copy = this.copies.get(namespace);
    const changes = copy?.instance === vectors.instance ? vectors.takeJournal() : null;
    if (!copy || changes === null) {
      this.load(worker, namespace, vectors);
      return null;
    }
    if (changes.length > 0) worker.postMessage({ kind: 'changes', namespace, instance: vectors.instance, changes } satisfies ScanMessage);
    if (!copy.ready) return null;
    const id = ++this.nextId;
    return new Promise((resolve) => {
      this.waiting.set(id, { namespace, resolve });
      // Referenced while a scan is awaited, so a process with nothing else to do waits for it.
      this.replies?.ref();
      worker.postMessage({ kind: 'nearest', id, namespace, instance: vectors.instance, query, count } satisfies ScanMessage);
    });
  }

  /** Whether the worker holds a copy of the namespace's codes. */
  holds(namespace: string): boolean {
    return this.copies.get(namespace)?.ready === true;
  }

  /**
   * Drops the namespace's copy for good (its coarse lists answer now): the worker frees it and the codes stop
   * journaling for it. A later `nearest` of the namespace would send it again.
   */
  release(namespace: string, vectors: QuantizedVectors): void {
    if (!this.copies.delete(namespace)) return;
    vectors.stopJournal();
    this.worker?.postMessage({ kind: 'release', namespace } satisfies ScanMessage);
  }

  /** Drops every copy (after an erasure, or when the codes are dropped): the worker holds no vector they left. */
  clear(): void {
    this.copies.clear();
    if (this.worker) this.worker.postMessage({ kind: 'clear' } satisfies ScanMessage);
  }

  status(): ScanWorkerStatus {
    return {
      state: this.closed ? 'off' : this.failure !== null ? 'failed' : this.worker ? 'running' : 'idle',
      namespaces: [...this.copies].filter(([, c]) => c.ready).map(([n]) => n),
      minVectors: this.minVectors,
      scans: this.scans,
      reason: this.failure,
    };
  }

  /** Stops the worker; scans awaited answer null (their callers scan themselves). */
  close(): void {
    this.closed = true;
    const worker = this.worker;
    this.stop(null);
    void worker?.terminate();
  }

  private start(): Worker {
    // Answers come on a port of their own, so `poll` can take them synchronously: a caller that searches in a loop
    // of awaits on synchronous SQLite never lets the event loop deliver a message, and the copy would never be
    // known as made.
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(new URL('./scan-worker-thread.js', import.meta.url), { workerData: { replyPort: port2 }, transferList: [port2] });
    worker.unref();
    port1.on('message', (reply: ScanReply) => this.receive(reply));
    port1.unref();
    this.replies = port1;
    worker.on('error', (err) => this.stop(`the scan worker failed: ${err.message}`));
    worker.on('exit', (code) => this.stop(this.closed ? null : `the scan worker exited (code ${code})`));
    this.worker = worker;
    return worker;
  }

  private load(worker: Worker, namespace: string, vectors: QuantizedVectors): void {
    // The journal starts with the copy, so the changes it keeps are exactly those the copy lacks.
    vectors.startJournal();
    const bytes = vectors.toBuffer();
    // Sent without a copy when the buffer is its own (a small one sits in a shared pool and is copied).
    const body = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? new Uint8Array(bytes.buffer) : new Uint8Array(bytes);
    this.copies.set(namespace, { instance: vectors.instance, ready: false });
    worker.postMessage({ kind: 'load', namespace, instance: vectors.instance, dimensions: vectors.dimensions, rows: vectors.size(), body } satisfies ScanMessage, [body.buffer as ArrayBuffer]);
  }

  /** Takes the answers already come (the copies made), without waiting for the event loop. */
  private poll(): void {
    for (let m = this.replies && receiveMessageOnPort(this.replies); m; m = this.replies && receiveMessageOnPort(this.replies)) this.receive(m.message as ScanReply);
  }

  private receive(reply: ScanReply): void {
    if (reply.kind === 'loaded') {
      const copy = this.copies.get(reply.namespace);
      if (copy?.instance !== reply.instance) return;
      if (reply.error !== null) this.stop(`the scan worker could not copy ${JSON.stringify(reply.namespace)}: ${reply.error}`);
      else copy.ready = true;
      return;
    }
    const asked = this.waiting.get(reply.id);
    if (!asked) return;
    this.waiting.delete(reply.id);
    if (this.waiting.size === 0) this.replies?.unref();
    if (reply.error !== null) this.stop(`the scan worker failed a scan: ${reply.error}`);
    else if (reply.rowids) this.scans++;
    // No copy there (one that missed a change is dropped): it is sent again at the next scan.
    else this.copies.delete(asked.namespace);
    asked.resolve(reply.rowids ? Array.from(reply.rowids) : null);
  }

  /** Ends the worker's use: every awaited scan answers null; with a reason, none is asked again. */
  private stop(reason: string | null): void {
    if (reason !== null && this.failure === null) this.failure = reason;
    this.worker = null;
    this.replies?.close();
    this.replies = null;
    this.copies.clear();
    for (const asked of this.waiting.values()) asked.resolve(null);
    this.waiting.clear();
  }
}
