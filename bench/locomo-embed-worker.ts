/**
 * Worker thread of the LoCoMo bench: embeds a share of the texts with its own USE-lite instance so both
 * cores work during ingest. Same model, same weights, same vectors as the in-process embedder.
 */
import { parentPort } from 'node:worker_threads';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';

const embedder = createUseEmbedder();

parentPort?.on('message', (msg: { texts: string[] }) => {
  embedder
    .embed(msg.texts)
    .then((vectors) => {
      const buffers = vectors.map((v) => v.buffer as ArrayBuffer);
      parentPort?.postMessage({ vectors, loadMs: embedder.loadTimeMs() }, buffers);
    })
    .catch((err: unknown) => parentPort?.postMessage({ error: (err as Error).message }));
});
