import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { CairnError } from '../../interfaces/errors.js';
import type { Embedder } from '../../interfaces/embedder.js';
import type { EmbedReply, EmbedRequest, EmbedWorkerData } from './embed-worker.js';

export interface PoolEmbedderConfig {
  /** Threads, each with its own copy of the model. Default: the machine's cores. */
  workers?: number;
  /** Most texts one thread takes at once; the rest of the queue waits for the next free thread. Default 32. */
  maxBatch?: number;
  /** Texts per model call, as UseEmbedder's batchSize (default 8, the same, so vectors are the same). */
  modelBatch?: number;
  /**
   * Added to each thread's nice value on Linux (0 to 19; default 0), so that when the model and the event
   * loop want the same core (a search ranks on the event loop while other queries are embedded), the event
   * loop goes first. A thread still takes any core the event loop leaves idle.
   */
  nice?: number;
  /** The thread's script (default: embed-worker.js next to this module). */
  workerUrl?: URL;
}

/** The embedding threads' nice value above the event loop's (PoolEmbedderConfig.nice). */
export const DEFAULT_NICE = 0;

/** What the pool has done: `batches` counts the messages sent to threads, each holding one or more texts. */
export interface PoolStats {
  workers: number;
  batches: number;
  texts: number;
  largestBatch: number;
  restarts: number;
}

/** One model call's worth of a request: texts that UseEmbedder would embed together on the main thread. */
interface Pending {
  texts: string[];
  request: Waiting;
  offset: number;
}

interface Waiting {
  vectors: Float32Array[];
  left: number;
  failed: boolean;
  resolve(vectors: Float32Array[]): void;
  reject(err: CairnError): void;
}

interface Slot {
  worker: Worker;
  busy: Pending[] | null;
  batchId: number;
}

/**
 * The Universal Sentence Encoder on a pool of worker threads, so a long-lived server's event loop never
 * runs the model. Texts of concurrent calls are queued and handed out together: while every thread is
 * busy, texts that arrive wait and join the next batch (one message to a thread, one model call per
 * request's chunk of 8 inside it). A thread that dies fails only the texts it held
 * (EMBEDDER_UNAVAILABLE) and is replaced; `close` stops every thread. Vectors are those of UseEmbedder,
 * which each thread runs.
 */
export class PoolEmbedder implements Embedder {
  readonly id = 'use-lite-512';
  readonly dimensions = 512;
  private readonly size: number;
  private readonly maxBatch: number;
  private readonly modelBatch: number;
  private readonly workerUrl: URL;
  private readonly nice: number;
  private slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private loadedMs: number | null = null;
  private started = 0;
  private closed = false;
  private nextBatchId = 1;
  private readonly counts = { batches: 0, texts: 0, largestBatch: 0, restarts: 0 };

  constructor(config: PoolEmbedderConfig = {}) {
    this.size = Math.max(1, config.workers ?? availableParallelism());
    this.maxBatch = Math.max(1, config.maxBatch ?? 32);
    this.modelBatch = Math.max(1, config.modelBatch ?? 8);
    this.workerUrl = config.workerUrl ?? new URL('./embed-worker.js', import.meta.url);
    this.nice = Math.min(19, Math.max(0, Math.trunc(config.nice ?? DEFAULT_NICE)));
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return Promise.resolve([]);
    if (this.closed) return Promise.reject(new CairnError('EMBEDDER_UNAVAILABLE', 'the embedding pool is closed'));
    if (this.slots.length === 0) {
      this.started = performance.now();
      for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
    }
    return new Promise<Float32Array[]>((resolve, reject) => {
      const request: Waiting = { vectors: new Array<Float32Array>(texts.length), left: texts.length, failed: false, resolve, reject };
      // Cut where UseEmbedder cuts: the model's output varies in its last bits with what shares a call
      // (measured: up to 1e-7), so each call holds one request's texts, exactly as on the main thread.
      for (let offset = 0; offset < texts.length; offset += this.modelBatch) this.queue.push({ texts: texts.slice(offset, offset + this.modelBatch), request, offset });
      this.dispatch();
    });
  }

  loadTimeMs(): number | null {
    return this.loadedMs;
  }

  stats(): PoolStats {
    return { workers: this.slots.length, ...this.counts };
  }

  /** Stops every thread; texts still queued or in flight fail with EMBEDDER_UNAVAILABLE. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots;
    this.slots = [];
    const stopped = new CairnError('EMBEDDER_UNAVAILABLE', 'the embedding pool was closed before the text was embedded');
    for (const slot of slots) if (slot.busy) fail(slot.busy, stopped);
    fail(this.queue.splice(0), stopped);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private spawn(): Slot {
    const worker = new Worker(this.workerUrl, { workerData: { nice: this.nice } satisfies EmbedWorkerData });
    const slot: Slot = { worker, busy: null, batchId: 0 };
    worker.unref(); // an idle pool never keeps the process alive; a busy thread is ref'd in dispatch
    worker.on('message', (reply: EmbedReply) => this.onReply(slot, reply));
    worker.on('error', (err) => this.onExit(slot, err.message));
    worker.on('exit', (code) => this.onExit(slot, `exit code ${code}`));
    return slot;
  }

  private onReply(slot: Slot, reply: EmbedReply): void {
    if ('ready' in reply) {
      if (reply.ready) this.loadedMs ??= performance.now() - this.started;
      return; // a model that fails to load answers every batch with the error, which is reported there
    }
    const batch = slot.busy;
    if (!batch || reply.id !== slot.batchId) return;
    slot.busy = null;
    slot.worker.unref();
    if ('error' in reply) fail(batch, new CairnError('EMBEDDER_UNAVAILABLE', `could not embed: ${reply.error}`));
    else {
      let next = 0;
      for (const { texts, request, offset } of batch) {
        const vectors = reply.vectors.slice(next, (next += texts.length));
        if (request.failed) continue;
        vectors.forEach((v, i) => (request.vectors[offset + i] = v));
        request.left -= texts.length;
        if (request.left === 0) request.resolve(request.vectors);
      }
    }
    this.dispatch();
  }

  /** A thread died (crash, out of memory, terminated): fail what it held and put a new one in its place. */
  private onExit(slot: Slot, reason: string): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return; // already replaced, or the pool is closed
    const batch = slot.busy;
    slot.busy = null;
    if (batch) fail(batch, new CairnError('EMBEDDER_UNAVAILABLE', `the embedding thread stopped (${reason}); the request was not embedded, retry it`));
    void slot.worker.terminate();
    this.counts.restarts++;
    this.slots[index] = this.spawn();
    this.dispatch();
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.busy) continue;
      // Whole model calls, oldest first, up to maxBatch texts (always at least one call).
      const batch: Pending[] = [];
      let size = 0;
      while (this.queue.length > 0) {
        const head = this.queue[0] as Pending;
        if (batch.length > 0 && size + head.texts.length > this.maxBatch) break;
        this.queue.shift();
        if (head.request.failed) continue;
        batch.push(head);
        size += head.texts.length;
      }
      if (batch.length === 0) return;
      slot.busy = batch;
      slot.batchId = this.nextBatchId++;
      slot.worker.ref();
      this.counts.batches++;
      this.counts.texts += size;
      this.counts.largestBatch = Math.max(this.counts.largestBatch, size);
      slot.worker.postMessage({ id: slot.batchId, calls: batch.map((p) => p.texts) } satisfies EmbedRequest);
    }
  }
}

/** Rejects every request that has a text in `items` (once each). */
function fail(items: Pending[], err: CairnError): void {
  for (const { request } of items) {
    if (request.failed) continue;
    request.failed = true;
    request.reject(err);
  }
}

export function createPoolEmbedder(config: PoolEmbedderConfig = {}): PoolEmbedder {
  return new PoolEmbedder(config);
}
