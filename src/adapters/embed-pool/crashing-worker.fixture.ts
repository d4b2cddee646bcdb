// Test fixture: the real embedding thread, which also dies (exit code 3) on a batch holding the text `__crash__`.
import { parentPort } from 'node:worker_threads';
import './embed-worker.js';
import type { EmbedRequest } from './embed-worker.js';

parentPort?.on('message', (request: EmbedRequest) => {
  if (request.calls.some((texts) => texts.includes('__crash__'))) process.exit(3);
});
