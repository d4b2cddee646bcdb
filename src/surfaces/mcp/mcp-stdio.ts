import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Engine } from '../../core/engine.js';
import type { Logger } from '../../interfaces/embedder.js';
import { buildMcpServer, createInflight } from './mcp-server.js';

export interface StdioServeConfig {
  engine: Engine;
  logger: Logger;
  version: string;
  /** The protocol streams; the process's own by default. Nothing else may write to `stdout`. */
  stdin?: Readable;
  stdout?: Writable;
  /** Aborting stops the server the same way the client hanging up does. */
  signal?: AbortSignal;
}

/**
 * Serves MCP over newline-delimited JSON-RPC on stdin/stdout. Resolves once the client closes stdin (or
 * `signal` aborts) and every tool call in progress has finished, so the caller can then close the engine.
 */
export async function serveStdio(config: StdioServeConfig): Promise<void> {
  const stdin = config.stdin ?? process.stdin;
  const stdout = config.stdout ?? process.stdout;
  const inflight = createInflight();
  const server = buildMcpServer({ engine: config.engine, logger: config.logger, version: config.version, inflight });
  const transport = new StdioServerTransport(stdin, stdout);

  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    config.logger.debug(`mcp stdio: stopping (${why})`);
    await inflight.idle();
    await server.close().catch((err: unknown) => config.logger.warn(`mcp stdio: closing: ${(err as Error).message}`));
    finish();
  };
  const onEnd = () => void stop('stdin closed');
  // A client that died leaves a broken pipe: stop quietly instead of crashing on EPIPE.
  const onWriteError = (err: Error) => void stop(`stdout: ${err.message}`);
  stdin.once('end', onEnd);
  stdin.once('close', onEnd);
  stdout.on('error', onWriteError);
  config.signal?.addEventListener('abort', () => void stop('signal'), { once: true });
  transport.onerror = (err) => config.logger.warn(`mcp stdio: ${err.message}`);

  await server.connect(transport);
  config.logger.debug('mcp stdio: ready');
  try {
    await finished;
  } finally {
    stdin.off('end', onEnd);
    stdin.off('close', onEnd);
    stdout.off('error', onWriteError);
  }
}
