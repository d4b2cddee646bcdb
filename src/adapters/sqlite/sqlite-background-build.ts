import { Worker } from 'node:worker_threads';

/**
 * One build at a time in a worker thread that does not keep the process alive (a short command answered
 * without it and may exit; whoever awaits `whenIdle` refs it), with what `cairn doctor` reports about it.
 */
export class BackgroundBuilder {
  private running: Promise<void> | null = null;
  private worker: Worker | null = null;
  builds = 0;
  lastBuildMs: number | null = null;
  failed: { reason: string; at: number } | null = null;

  constructor(
    private readonly script: URL,
    /** Named in the reason when the worker exits without replying. */
    private readonly name: string,
  ) {}

  get busy(): boolean {
    return this.running !== null;
  }

  /** False while a build runs, and for a minute after one failed. */
  canStart(): boolean {
    return !this.running && !(this.failed && Date.now() - this.failed.at < 60_000);
  }

  /**
   * Starts a build. `accept` takes a successful reply (what it throws counts as the build's failure); `after`
   * runs once the build is over, whatever happened. The reply is handled once: a worker's exit comes after it.
   */
  start<R extends { ok: true; ms: number }>(request: unknown, accept: (reply: R) => void, after: () => void = () => {}): void {
    const worker = new Worker(this.script, { workerData: request });
    worker.unref();
    this.worker = worker;
    this.running = new Promise<void>((resolve) => {
      let finished = false;
      const finish = (reply: R | { ok: false; error: string }) => {
        if (finished) return;
        finished = true;
        this.running = null;
        this.worker = null;
        this.builds++;
        try {
          if (!reply.ok) throw new Error(reply.error);
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
      worker.once('message', (reply: R | { ok: false; error: string }) => finish(reply));
      worker.once('error', (err) => finish({ ok: false, error: err.message }));
      worker.once('exit', (code) => finish({ ok: false, error: `the ${this.name} exited with code ${code}` }));
    });
  }

  /** Resolves when no build is running (at once when none is). */
  async whenIdle(): Promise<void> {
    while (this.running) {
      // Whoever waits keeps the process alive until the build ends.
      this.worker?.ref();
      await this.running;
    }
  }

  terminate(): void {
    void this.worker?.terminate();
  }
}
