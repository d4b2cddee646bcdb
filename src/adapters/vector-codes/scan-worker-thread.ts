/**
 * The scan worker (scan-worker.ts): holds copies of namespaces' int8 codes, applies their changes in the
 * order they come, and answers each scan with the rowids of the nearest rows, as the main thread's scan would.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { QuantizedVectors } from './quantized-vectors.js';
import { loadUsearch } from './usearch.js';
import type { ScanMessage, ScanReply } from './scan-worker.js';

const replies = (workerData as { replyPort: MessagePort }).replyPort;
/** Each namespace's copy, with the main thread's instance it copies. */
const copies = new Map<string, { source: number; vectors: QuantizedVectors }>();
const loaded = loadUsearch();

function handle(message: ScanMessage): ScanReply | null {
  switch (message.kind) {
    case 'load': {
      copies.delete(message.namespace);
      if ('error' in loaded) return { kind: 'loaded', namespace: message.namespace, instance: message.instance, error: loaded.error };
      const body = Buffer.from(message.body.buffer, message.body.byteOffset, message.body.byteLength);
      const vectors = QuantizedVectors.fromBuffer(message.dimensions, message.rows, body);
      if (!vectors) return { kind: 'loaded', namespace: message.namespace, instance: message.instance, error: 'the codes sent do not match their size' };
      copies.set(message.namespace, { source: message.instance, vectors });
      return { kind: 'loaded', namespace: message.namespace, instance: message.instance, error: null };
    }
    case 'changes': {
      const copy = copies.get(message.namespace);
      if (copy?.source !== message.instance) return null;
      try {
        for (const change of message.changes) {
          if (change.codes) copy.vectors.setCodes(change.rowid, change.codes);
          else copy.vectors.remove(change.rowid);
        }
      } catch (err) {
        // A copy that missed a change is dropped: its next scan answers null and the store sends it again.
        copies.delete(message.namespace);
        throw err;
      }
      return null;
    }
    case 'clear':
      copies.clear();
      return null;
    case 'release':
      copies.delete(message.namespace);
      return null;
    case 'nearest': {
      const copy = copies.get(message.namespace);
      if (copy?.source !== message.instance || 'error' in loaded) return { kind: 'found', id: message.id, rowids: null, error: null };
      return { kind: 'found', id: message.id, rowids: Float64Array.from(copy.vectors.nearest(loaded.usearch, message.query, message.count)), error: null };
    }
  }
}

parentPort?.on('message', (message: ScanMessage) => {
  let reply: ScanReply | null;
  try {
    reply = handle(message);
  } catch (err) {
    const error = (err as Error).message;
    reply = message.kind === 'nearest' ? { kind: 'found', id: message.id, rowids: null, error } : message.kind === 'load' ? { kind: 'loaded', namespace: message.namespace, instance: message.instance, error } : null;
  }
  if (reply) replies.postMessage(reply);
});
