import { MessageChannel, receiveMessageOnPort, Worker, workerData, type MessagePort } from 'node:worker_threads';

/** What a build worker answers: what it built, or why it could not. */
export type BuildReply =
  | { ok: true; seq: number; vectors: number; ms: number; at?: string | null; /** The written file's SHA-256 and size, hashed in the worker (graph builds). */ digest?: FileDigest }
  | { ok: false; error: string };

export interface FileDigest {
  sha256: string;
  bytes: number;
}

/**
 * The worker's side: runs `build` on the request it was started with and posts the reply (or the error it
 * threw) on the port `BackgroundBuilder.start` gave it, which the store polls.
 */
export function replyToStore<R>(build: (request: R) => BuildReply): void {
  const { replyPort, ...request } = workerData as R & { replyPort: MessagePort };
  try {
    replyPort.postMessage(build(request as R));
  } catch (err) {
    replyPort.postMessage({ ok: false, error: (err as Error).message } satisfies BuildReply);
  }
}

/**
 * One build at a time in a worker thread that does not keep the process alive (a short command answered
 * without it and may exit; whoever awaits `whenIdle` refs it), with what `cairn doctor` reports about it.
 */
export class BackgroundBuilder {
  private running: Promise<void> | null = null;
  private worker: Worker | null = null;
  private replies: MessagePort | null = null;
  private finish: ((reply: unknown) => void) | null = null;
  builds = 0;
  lastBuildMs: number | null = null;
  failed: { reason: string; at: number } | null = null;
  /** Set by cancel(): the running build's end is not counted as a failure. */
  private cancelled = false;

  constructor(
    private readonly script: URL,
    /** Named in the reason when the worker exits without replying. */
    private readonly name: string,
  ) {}

  get busy(): boolean {
    return this.running !== null;
  }

  /** Building now, failed last time (and not since succeeded), or neither. */
  state(): 'idle' | 'building' | 'failed' {
    return this.busy ? 'building' : this.failed ? 'failed' : 'idle';
  }

  /** False while a build runs, and for a minute after one failed. */
  canStart(): boolean {
    return !this.running && !(this.failed && Date.now() - this.failed.at < 60_000);
  }

  /**
   * Starts a build. `accept` takes a successful reply (what it throws counts as the build's failure); `after`
   * runs once the build is over, whatever happened. The reply is handled once: a worker's exit comes after it.
   */
  start<R extends { ok: true; ms: number }>(request: object, accept: (reply: R) => void, after: () => void = () => {}, transfer: ArrayBuffer[] = []): void {
    // The reply comes on a port of its own, so `poll` can take it synchronously: a caller that writes in a loop
    // of awaits on synchronous SQLite never lets the event loop deliver a worker's message.
    this.cancelled = false;
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(this.script, { workerData: { ...request, replyPort: port2 }, transferList: [port2, ...transfer] });
    this.worker = worker;
    this.replies = port1;
    this.running = new Promise<void>((resolve) => {
      let finished = false;
      this.finish = (raw: unknown) => {
        const reply = raw as R | { ok: false; error: string };
        if (finished) return;
        finished = true;
        this.running = null;
        this.worker = null;
        this.replies = null;
        this.finish = null;
        port1.close();
        this.builds++;
        try {
          if (!reply.ok) {
            if (this.cancelled) return;
            throw new Error(reply.error);
          }
          accept(reply);
          this.lastBuildMs = reply.ms;
          this.failed = null;
        } catch (err) {
          this.failed = { reason: (err as Error).message, at: Date.now() };
        } finally {
          after();
          resolve();
        }
      };
      const finish = this.finish;
      port1.on('message', (reply: unknown) => finish(reply));
      worker.once('error', (err) => finish({ ok: false, error: err.message }));
      worker.once('exit', (code) => {
        // A reply posted just before the exit may still wait on the port.
        const last = receiveMessageOnPort(port1);
        finish(last ? last.message : { ok: false, error: `the ${this.name} exited with code ${code}` });
      });
      // Only now: a port refs itself again when its first 'message' listener is added, and would then keep a
      // short command alive for the whole build.
      worker.unref();
      port1.unref();
    });
  }

  /** Takes the worker's reply if it has come, without waiting for the event loop. */
  poll(): void {
    if (!this.replies || !this.finish) return;
    const reply = receiveMessageOnPort(this.replies);
    if (reply) this.finish(reply.message);
  }

  /** Resolves when no build is running (at once when none is). */
  async whenIdle(): Promise<void> {
    while (this.running) {
      // Whoever waits keeps the process alive until the build ends.
      this.worker?.ref();
      this.replies?.ref();
      await this.running;
    }
  }

  /** Stops a running build; its worker's exit ends it as failed, and nothing it wrote is taken. */
  terminate(): void {
    void this.worker?.terminate();
  }

  /** Stops a running build whose result is no longer wanted; its end is not a failure, so another may start. */
  cancel(): void {
    if (!this.worker) return;
    this.cancelled = true;
    this.terminate();
  }
}
