import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
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
  const transport = new LineTransport(stdin, stdout);

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

/** The longest message accepted on stdin, as on HTTP: 4 MiB. */
export const MAX_STDIO_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Newline-delimited JSON-RPC over a pair of streams. Unlike a transport that gives up on bad input, a
 * message that is not JSON is answered with -32700, one that is not JSON-RPC with -32600, and a line over
 * MAX_STDIO_MESSAGE_BYTES is skipped up to its newline (never buffered) and answered with -32600: the
 * server keeps serving, and calls in progress still get their answers.
 */
class LineTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  private chunks: Buffer[] = [];
  private size = 0;
  /** Bytes of an oversized line skipped so far (its first bytes are kept to find its id). */
  private skipping: { head: string; bytes: number } | null = null;
  private closed = false;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
  ) {}

  private readonly onData = (chunk: Buffer | string) => {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (;;) {
      const nl = buf.indexOf(0x0a);
      const part = nl === -1 ? buf : buf.subarray(0, nl);
      if (this.skipping) this.skipping.bytes += part.length;
      else if (this.size + part.length > MAX_STDIO_MESSAGE_BYTES) {
        this.skipping = { head: Buffer.concat([...this.chunks, part]).subarray(0, 256).toString('utf8'), bytes: this.size + part.length };
        this.chunks = [];
        this.size = 0;
      } else if (part.length > 0) {
        this.chunks.push(Buffer.from(part));
        this.size += part.length;
      }
      if (nl === -1) return;
      this.endLine();
      buf = buf.subarray(nl + 1);
    }
  };

  private readonly onStreamError = (err: Error) => this.onerror?.(err);

  private endLine(): void {
    if (this.skipping) {
      const { head, bytes } = this.skipping;
      this.skipping = null;
      this.reply(idIn(head), -32600, `Invalid Request: the message is ${bytes} bytes; the limit is ${MAX_STDIO_MESSAGE_BYTES}`);
      return;
    }
    const line = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/u, '');
    this.chunks = [];
    this.size = 0;
    if (line.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      this.reply(null, -32700, 'Parse error: the message is not JSON');
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(parsed);
    if (!message.success) {
      const id = parsed !== null && typeof parsed === 'object' && 'id' in parsed ? (parsed as { id: unknown }).id : null;
      this.reply(typeof id === 'string' || typeof id === 'number' ? id : null, -32600, 'Invalid Request: not a JSON-RPC 2.0 message');
      return;
    }
    this.onmessage?.(message.data);
  }

  private reply(id: string | number | null, code: number, message: string): void {
    this.onerror?.(new Error(message));
    void this.write({ jsonrpc: '2.0', id, error: { code, message } });
  }

  private write(value: unknown): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(value)}\n`)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  async start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onStreamError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onStreamError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.chunks = [];
    this.onclose?.();
  }
}

/** The id of a request from its first bytes, so an oversized one can still be answered by id. */
function idIn(head: string): string | number | null {
  const m = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")/u.exec(head);
  if (!m?.[1]) return null;
  return m[1].startsWith('"') ? (JSON.parse(m[1]) as string) : Number(m[1]);
}
