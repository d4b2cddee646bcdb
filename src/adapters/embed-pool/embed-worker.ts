import { parentPort } from 'node:worker_threads';
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

export type EmbedReply = { id: number; vectors: Float32Array[] } | { id: number; error: string } | { ready: true; loadMs: number } | { ready: false; error: string };

const port = parentPort;
if (port) {
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
