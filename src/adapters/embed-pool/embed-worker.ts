import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createUseEmbedder } from '../embed-use/use-embedder.js';

/**
 * One thread of the embedding pool: loads the Universal Sentence Encoder once, then answers each batch
 * with its vectors (or the error's message). Messages: in `{ id, calls }`, out `{ id, vectors }` or
 * `{ id, error }`; `{ ready, loadMs }` once the model has loaded.
 */
export interface EmbedRequest {
  id: number;
  /** Model calls, in order; the reply's vectors are theirs, concatenated. */
  calls: string[][];
}

/** What the pool passes each thread at start. */
export interface EmbedWorkerData {
  /** Added to the thread's nice value (Linux only, where the nice value is a thread's own), so the event loop's thread goes first. */
  nice: number;
}

export type EmbedReply = { id: number; vectors: Float32Array[] } | { id: number; error: string } | { ready: true; loadMs: number } | { ready: false; error: string };

const port = parentPort;
if (port) {
  lowerPriority((workerData as EmbedWorkerData | null)?.nice ?? 0);
  const embedder = createUseEmbedder();
  // Load at once: the pool starts its threads on the first request, so the model is needed now.
  embedder.embed(['ready']).then(
    () => port.postMessage({ ready: true, loadMs: embedder.loadTimeMs() ?? 0 } satisfies EmbedReply),
    (err: unknown) => port.postMessage({ ready: false, error: (err as Error).message } satisfies EmbedReply),
  );
  const run = async (calls: string[][]): Promise<Float32Array[]> => {
    const out: Float32Array[] = [];
    for (const texts of calls) out.push(...(await embedder.embed(texts)));
    return out;
  };
  port.on('message', (request: EmbedRequest) => {
    run(request.calls).then(
      (vectors) => port.postMessage({ id: request.id, vectors } satisfies EmbedReply, vectors.map((v) => v.buffer as ArrayBuffer)),
      (err: unknown) => port.postMessage({ id: request.id, error: (err as Error).message } satisfies EmbedReply),
    );
  });
}

/**
 * On Linux the nice value belongs to the calling thread (setpriority with pid 0), so this thread yields to
 * the server's event loop when both want a core (with autogroup scheduling the process's share against other
 * sessions is unchanged). Elsewhere pid 0 means the whole process, so nothing is changed there.
 */
function lowerPriority(nice: number): void {
  if (process.platform !== 'linux' || nice <= 0) return;
  try {
    setPriority(Math.min(19, getPriority() + nice));
  } catch {
    // A sandbox that forbids it: the thread keeps the process's priority.
  }
}
