import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Engine } from '../../core/engine.js';
import type { Logger } from '../../interfaces/embedder.js';
import { CairnError } from '../../interfaces/errors.js';
import { buildMcpServer, createInflight, type Inflight } from './mcp-server.js';

/**
 * The HTTP side of cairn: one Hono app on one port. Today it carries MCP (Streamable HTTP) at `/mcp`;
 * other surfaces add their routes to the same app (`createHttpApp(...).app.route('/api', api)`).
 */

export interface HttpAppConfig {
  engine: Engine;
  logger: Logger;
  version: string;
  /** The address the server binds; a loopback bind only accepts loopback Host headers. */
  host: string;
  /** Idle MCP sessions are closed after this long. Default 30 minutes. */
  sessionIdleMs?: number;
  /** At most this many MCP sessions; the least recently used is closed to admit a new one. Default 256. */
  maxSessions?: number;
}

export interface HttpApp {
  app: Hono;
  /** Open MCP sessions (for tests and diagnostics). */
  sessionCount(): number;
  /** Closes every MCP session after its tool calls finish. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;
const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export function isLoopback(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || /^127(\.\d{1,3}){3}$/u.test(host);
}

/** `example.com:8080` → `example.com`; `[::1]:80` → `[::1]`. */
function hostnameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  return h.split(':')[0] ?? h;
}

/**
 * DNS-rebinding and cross-site guard: on a loopback bind the Host header must name a loopback address,
 * and a browser's Origin (when sent) must be the same host the request was addressed to.
 */
function hostGuard(bindHost: string): MiddlewareHandler {
  const loopbackOnly = isLoopback(bindHost);
  return async (c, next) => {
    const host = c.req.header('host') ?? '';
    if (loopbackOnly && !isLoopback(hostnameOf(host))) return c.json({ error: `forbidden host ${JSON.stringify(host)}` }, 403);
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      let originHost = '';
      try {
        originHost = new URL(origin).host.toLowerCase();
      } catch {
        // unparsable (e.g. "null"): forbidden below
      }
      if (originHost !== host.toLowerCase()) return c.json({ error: `forbidden origin ${JSON.stringify(origin)}` }, 403);
    }
    await next();
  };
}

function rpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  close(): Promise<void>;
  lastSeen: number;
}

/**
 * MCP over Streamable HTTP. An `initialize` opens a session (its own McpServer, so the client's name is
 * known for provenance); requests carrying `Mcp-Session-Id` go to it; a request without a session that is
 * not an `initialize` is served statelessly by a throwaway server. Every session shares the one engine.
 */
function mcpRoutes(config: HttpAppConfig, inflight: Inflight): { app: Hono; sessions: Map<string, Session>; closeAll(): Promise<void> } {
  const { engine, logger, version } = config;
  const idleMs = config.sessionIdleMs ?? 30 * 60_000;
  const maxSessions = config.maxSessions ?? 256;
  const sessions = new Map<string, Session>();

  const openSession = async (): Promise<WebStandardStreamableHTTPServerTransport> => {
    if (sessions.size >= maxSessions) {
      const oldest = [...sessions.entries()].sort((a, b) => a[1].lastSeen - b[1].lastSeen)[0];
      if (oldest) await oldest[1].close();
    }
    const server = buildMcpServer({ engine, logger, version, inflight });
    let session: Session | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        session = { transport, lastSeen: Date.now(), close: () => server.close() };
        sessions.set(id, session);
        logger.debug('mcp http: session opened', { id, client: server.server.getClientVersion()?.name });
      },
      onsessionclosed: (id) => void sessions.delete(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    transport.onerror = (err) => logger.debug(`mcp http: ${err.message}`);
    await server.connect(transport);
    return transport;
  };

  const sweep = setInterval(() => {
    const cutoff = Date.now() - idleMs;
    for (const s of sessions.values()) if (s.lastSeen < cutoff) void s.close();
  }, Math.min(idleMs, 60_000));
  sweep.unref();

  const app = new Hono();
  app.use(bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => c.json({ error: `request body over ${MAX_BODY_BYTES} bytes` }, 413) }));
  app.all('/', async (c) => {
    const sessionId = c.req.header('mcp-session-id');
    if (sessionId) {
      const session = sessions.get(sessionId);
      if (!session) return rpcError(404, -32001, 'Session not found');
      session.lastSeen = Date.now();
      return session.transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== 'POST') return rpcError(405, -32000, 'Method not allowed without an Mcp-Session-Id');
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return rpcError(400, -32700, 'Parse error: the body is not JSON');
    }
    const initializing = isInitializeRequest(body) || (Array.isArray(body) && body.some((m) => isInitializeRequest(m)));
    if (initializing) return (await openSession()).handleRequest(c.req.raw, { parsedBody: body });

    const server = buildMcpServer({ engine, logger, version, inflight });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw, { parsedBody: body });
    } finally {
      await server.close();
    }
  });

  return {
    app,
    sessions,
    closeAll: async () => {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((s) => s.close().catch(() => {})));
      sessions.clear();
    },
  };
}

/** The app: guard, `/mcp`, and a JSON 404 for anything else. */
export function createHttpApp(config: HttpAppConfig): HttpApp {
  const inflight = createInflight();
  const mcp = mcpRoutes(config, inflight);
  const app = new Hono();
  app.use('*', hostGuard(config.host));
  app.route('/mcp', mcp.app);
  app.notFound((c) => c.json({ error: 'not found' }, 404));
  app.onError((err, c) => {
    config.logger.error(`http: ${c.req.method} ${c.req.path}: ${err.message}`, { stack: err.stack });
    return c.json({ error: 'internal error' }, 500);
  });
  return {
    app,
    sessionCount: () => mcp.sessions.size,
    close: async () => {
      await inflight.idle();
      await mcp.closeAll();
    },
  };
}

export interface RunningHttpServer {
  host: string;
  port: number;
  /** Base URL, e.g. `http://127.0.0.1:7337`. */
  url: string;
  /** Stops accepting, lets tool calls in progress finish, closes sessions and connections. */
  close(): Promise<void>;
}

/** Binds `app` to host:port (0 picks a free port). Fails with INVALID_INPUT when the address is taken. */
export async function listen(http: HttpApp, host: string, port: number): Promise<RunningHttpServer> {
  const server = createAdaptorServer({ fetch: http.app.fetch, hostname: host }) as Server;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      reject(
        new CairnError('INVALID_INPUT', `cannot listen on ${host}:${port}: ${err.code === 'EADDRINUSE' ? 'the address is in use' : err.message}`, {
          field: 'port',
          cause: err,
        }),
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    host: address.address,
    port: address.port,
    url: `http://${urlHost}:${address.port}`,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await http.close();
      server.closeAllConnections();
      await closed;
    },
  };
}
