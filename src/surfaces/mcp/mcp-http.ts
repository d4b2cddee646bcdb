import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Hono, type MiddlewareHandler } from 'hono';
import { authorize, type AccessControl } from '../../core/access.js';
import type { Engine } from '../../core/engine.js';
import type { Logger } from '../../interfaces/embedder.js';
import { CairnError } from '../../interfaces/errors.js';
import { createApi } from '../http/api.js';
import { clientAddress, createAuth, type AuthEnv, type Principal } from '../http/auth.js';
import { bodyLimit, errorResponse, MAX_BODY_BYTES } from '../http/http-errors.js';
import { webRoutes } from '../http/web.js';
import { buildMcpServer, createInflight, toolScope, type Inflight } from './mcp-server.js';

/**
 * The HTTP side of cairn: one Hono app on one port carrying MCP (Streamable HTTP) at `/mcp`, the JSON
 * REST API at `/api` and the brain page at `/`. With authentication on, every call but the page's files,
 * `/api/health` and `/api/login` needs a token (bearer, or the session cookie the page gets at login).
 */

/** One structured line per request: never memory text, query strings or tokens. */
export interface RequestLogEntry {
  ts: string;
  method: string;
  path: string;
  status: number;
  ms: number;
  token: string | null;
  ip: string;
}

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
  /** Token checks; null or absent: authentication off (allowed on loopback binds only). */
  access?: AccessControl | null;
  /** Requests a minute per token. Default 600; 0 disables. */
  rateLimitPerMinute?: number;
  /** PEM private key for erasure certificates; absent: erasure over HTTP is off. */
  eraseKeyPem?: string | null;
  /** Runs after each erasure over HTTP (removing files outside the store that may hold its data). */
  afterErasure?: () => void;
  requestLog?: (entry: RequestLogEntry) => void;
}

export interface HttpApp {
  app: Hono;
  /** Open MCP sessions (for tests and diagnostics). */
  sessionCount(): number;
  /** Closes every MCP session after its tool calls finish. */
  close(): Promise<void>;
}

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
    if (loopbackOnly && !isLoopback(hostnameOf(host))) return errorResponse(c, new CairnError('FORBIDDEN', `forbidden host ${JSON.stringify(host)}`));
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      let originHost = '';
      try {
        originHost = new URL(origin).host.toLowerCase();
      } catch {
        // unparsable (e.g. "null"): forbidden below
      }
      if (originHost !== host.toLowerCase()) return errorResponse(c, new CairnError('FORBIDDEN', `forbidden origin ${JSON.stringify(origin)}`));
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
  /** The token that opened it; another token may not use it. */
  owner: string;
  close(): Promise<void>;
  lastSeen: number;
}

/**
 * MCP over Streamable HTTP. An `initialize` opens a session (its own McpServer, so the client's name is
 * known for provenance); requests carrying `Mcp-Session-Id` go to it; a request without a session that is
 * not an `initialize` is served statelessly by a throwaway server. Every session shares the one engine.
 */
/**
 * Authorises every tool call of a JSON-RPC message (or batch) for the principal before the MCP server sees
 * it, and fills in the principal's default namespace where a call names none. Returns the refusal, if any.
 */
function authorizeMcp(body: unknown, principal: Principal): CairnError | null {
  const messages = Array.isArray(body) ? body : [body];
  for (const m of messages) {
    if (m === null || typeof m !== 'object') continue;
    const msg = m as { method?: unknown; params?: { name?: unknown; arguments?: Record<string, unknown> } };
    if (msg.method !== 'tools/call' || !msg.params || typeof msg.params !== 'object') continue;
    const name = typeof msg.params.name === 'string' ? msg.params.name : '';
    const args = msg.params.arguments && typeof msg.params.arguments === 'object' ? msg.params.arguments : {};
    const ns = typeof args['namespace'] === 'string' && args['namespace'] !== '' ? args['namespace'] : principal.defaultNamespace;
    try {
      authorize(principal.token, toolScope(name), ns);
    } catch (err) {
      return err as CairnError;
    }
    msg.params.arguments = { ...args, namespace: ns };
  }
  return null;
}

function mcpRoutes(config: HttpAppConfig, inflight: Inflight): { app: Hono<AuthEnv>; sessions: Map<string, Session>; closeAll(): Promise<void> } {
  const { engine, logger, version } = config;
  const idleMs = config.sessionIdleMs ?? 30 * 60_000;
  const maxSessions = config.maxSessions ?? 256;
  const sessions = new Map<string, Session>();

  const openSession = async (owner: string): Promise<WebStandardStreamableHTTPServerTransport> => {
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
        session = { transport, owner, lastSeen: Date.now(), close: () => server.close() };
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

  const app = new Hono<AuthEnv>();
  app.use(bodyLimit(MAX_BODY_BYTES));
  app.all('/', async (c) => {
    const principal = c.get('principal');
    let body: unknown;
    if (c.req.method === 'POST') {
      try {
        body = await c.req.json();
      } catch {
        return rpcError(400, -32700, 'Parse error: the body is not JSON');
      }
      const refused = authorizeMcp(body, principal);
      if (refused) return rpcError(403, -32003, `${refused.code}: ${refused.message}`);
    }
    const sessionId = c.req.header('mcp-session-id');
    if (sessionId) {
      const session = sessions.get(sessionId);
      if (!session) return rpcError(404, -32001, 'Session not found');
      if (session.owner !== principal.token.id) return rpcError(403, -32003, 'FORBIDDEN: this session belongs to another token');
      session.lastSeen = Date.now();
      return session.transport.handleRequest(c.req.raw, body === undefined ? undefined : { parsedBody: body });
    }
    if (c.req.method !== 'POST') return rpcError(405, -32000, 'Method not allowed without an Mcp-Session-Id');
    const initializing = isInitializeRequest(body) || (Array.isArray(body) && body.some((m) => isInitializeRequest(m)));
    if (initializing) return (await openSession(principal.token.id)).handleRequest(c.req.raw, { parsedBody: body });

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

/** The app: request log, guard, `/mcp`, `/api`, the page, and a JSON 404 for anything else. */
export function createHttpApp(config: HttpAppConfig): HttpApp {
  const access = config.access ?? null;
  if (!access && !isLoopback(config.host)) {
    throw new CairnError('INVALID_INPUT', `binding ${config.host} (not loopback) needs authentication on`, {
      field: 'host',
      hint: 'start with --auth and hand out tokens (cairn token create), or bind 127.0.0.1',
    });
  }
  const inflight = createInflight();
  // Sessions and rate limits live in the store when many server processes share it, else in this process.
  const auth = createAuth({ access, defaultNamespace: config.engine.defaultNamespace, rateLimitPerMinute: config.rateLimitPerMinute ?? 600, sessions: config.engine.store.sessions });
  const mcp = mcpRoutes(config, inflight);
  const app = new Hono<AuthEnv>();
  if (config.requestLog) {
    const sink = config.requestLog;
    app.use('*', async (c, next) => {
      const t = performance.now();
      await next();
      sink({
        ts: new Date().toISOString(),
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round((performance.now() - t) * 10) / 10,
        token: c.get('principal')?.token.id ?? null,
        ip: clientAddress(c),
      });
    });
  }
  app.use('*', hostGuard(config.host));
  app.use('/mcp', auth.middleware);
  app.use('/mcp/*', auth.middleware);
  app.route('/mcp', mcp.app);
  app.route(
    '/api',
    createApi({ engine: config.engine, auth, access, eraseKeyPem: config.eraseKeyPem ?? null, afterErasure: config.afterErasure ?? (() => {}), track: (fn) => inflight.run(fn) }),
  );
  app.route('/', webRoutes());
  // The one error boundary: whatever a route throws answers with the status of its code (http-errors.ts).
  app.notFound((c) => errorResponse(c, new CairnError('NOT_FOUND', `nothing at ${c.req.method} ${c.req.path}`)));
  app.onError((err, c) => errorResponse(c, err, config.logger));
  return {
    app: app as unknown as Hono,
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
