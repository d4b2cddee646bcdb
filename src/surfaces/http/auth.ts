import { randomBytes } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { ALL_NAMESPACES, tokenDefaultNamespace, type AccessControl } from '../../core/access.js';
import { CairnError } from '../../interfaces/errors.js';
import { errorResponse } from './http-errors.js';
import type { AccessScope, AccessTokenRecord } from '../../interfaces/store.js';

/**
 * Who is calling, for every HTTP request: a bearer token (agents, scripts), a browser session opened by
 * logging in with a token (the brain page; a cookie plus a CSRF header on every change), or, with
 * authentication off (loopback binds only), the local operator with every right.
 */

export interface Principal {
  token: Pick<AccessTokenRecord, 'id' | 'scope' | 'namespaces' | 'name'>;
  via: 'bearer' | 'session' | 'local';
  /** The namespace a call that names none works in. */
  defaultNamespace: string;
  /** Browser sessions: the value the X-CSRF-Token header must carry on changes. */
  csrf?: string;
}

export type AuthEnv = { Variables: { principal: Principal; requestId: string } };

export const SESSION_COOKIE = 'cairn_session';
export const CSRF_HEADER = 'x-csrf-token';
const SESSION_TTL_MS = 12 * 3_600_000;
const MAX_SESSIONS = 10_000;

interface BrowserSession {
  tokenHash: string;
  tokenId: string;
  csrf: string;
  expires: number;
}

/** A token bucket per key: `perMinute` requests a minute, bursts up to the same number. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(private readonly perMinute: number) {}

  /** Seconds to wait before retrying, or 0 when the request may go. */
  take(key: string, now = Date.now()): number {
    if (this.perMinute <= 0) return 0;
    const perMs = this.perMinute / 60_000;
    const b = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    b.tokens = Math.min(this.perMinute, b.tokens + (now - b.at) * perMs);
    b.at = now;
    this.buckets.set(key, b);
    if (this.buckets.size > 50_000) this.prune(now);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
  }

  private prune(now: number): void {
    for (const [k, b] of this.buckets) if (now - b.at > 60_000) this.buckets.delete(k);
  }
}

export interface AuthConfig {
  /** Null: authentication off (loopback binds only); every caller is the local operator. */
  access: AccessControl | null;
  defaultNamespace: string;
  /** Requests a minute per token (and per client address before authentication). 0 disables. */
  rateLimitPerMinute: number;
}

export interface Auth {
  /** Sets `principal` or answers 401 / 429 / 403 (CSRF). */
  middleware: MiddlewareHandler<AuthEnv>;
  /** Opens a browser session for a token secret; returns the cookie value and the CSRF value. */
  login(secret: string): Promise<{ sessionId: string; principal: Principal }>;
  logout(sessionId: string | undefined): void;
  /** Rate limit by client address (login attempts, unauthenticated calls). */
  limitAddress(address: string): number;
  enabled: boolean;
}


function bearerOf(c: Context): string | undefined {
  const h = c.req.header('authorization');
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/iu.exec(h);
  return m ? m[1] : '';
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function clientAddress(c: Context): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? 'unknown';
}

export function createAuth(config: AuthConfig): Auth {
  const { access } = config;
  const sessions = new Map<string, BrowserSession>();
  const limiter = new RateLimiter(config.rateLimitPerMinute);
  const local: Principal = {
    token: { id: 'local', scope: 'admin' as AccessScope, namespaces: [ALL_NAMESPACES], name: 'local operator (authentication off)' },
    via: 'local',
    defaultNamespace: config.defaultNamespace,
  };

  const tooMany = (c: Context, wait: number) => {
    c.header('retry-after', String(wait));
    return errorResponse(c, new CairnError('RATE_LIMITED', `too many requests; retry in ${wait} s`));
  };

  const middleware: MiddlewareHandler<AuthEnv> = async (c, next) => {
    if (!access) {
      // Authentication off: the bind is loopback-only and the host guard has checked Host and Origin.
      c.set('principal', local);
      return next();
    }
    const bearer = bearerOf(c);
    let principal: Principal;
    try {
      if (bearer !== undefined) {
        const token = await access.authenticate(bearer);
        principal = { token, via: 'bearer', defaultNamespace: tokenDefaultNamespace(token, config.defaultNamespace) };
      } else {
        const sid = getCookie(c, SESSION_COOKIE);
        const session = sid ? sessions.get(sid) : undefined;
        if (!session || session.expires < Date.now()) {
          if (sid) sessions.delete(sid);
          throw new CairnError('UNAUTHORIZED', sid ? 'session expired; log in again' : 'missing access token', {
            hint: 'send Authorization: Bearer <token> (cairn token create)',
          });
        }
        // Revoked or expired since login: the session ends with its token.
        const token = await access.authenticateHash(session.tokenHash);
        principal = { token, via: 'session', defaultNamespace: tokenDefaultNamespace(token, config.defaultNamespace), csrf: session.csrf };
        if (UNSAFE.has(c.req.method) && c.req.header(CSRF_HEADER) !== session.csrf) {
          return errorResponse(c, new CairnError('FORBIDDEN', 'missing or wrong CSRF token', { hint: `send the ${CSRF_HEADER} header given at login` }));
        }
        if (UNSAFE.has(c.req.method) && c.req.header('origin') === undefined && c.req.header('sec-fetch-site') !== 'same-origin') {
          return errorResponse(c, new CairnError('FORBIDDEN', 'a browser change must come from this page (Origin missing)'));
        }
      }
    } catch (err) {
      const wait = limiter.take(`addr:${clientAddress(c)}`);
      if (wait > 0) return tooMany(c, wait);
      return errorResponse(c, err);
    }
    const wait = limiter.take(`token:${principal.token.id}`);
    if (wait > 0) return tooMany(c, wait);
    c.set('principal', principal);
    return next();
  };

  return {
    enabled: access !== null,
    middleware,
    limitAddress: (address) => limiter.take(`addr:${address}`),
    async login(secret) {
      if (!access) throw new CairnError('UNSUPPORTED', 'authentication is off on this server; no login needed');
      const token = await access.authenticate(secret);
      if (sessions.size >= MAX_SESSIONS) {
        const now = Date.now();
        for (const [k, s] of sessions) if (s.expires < now) sessions.delete(k);
        if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value as string);
      }
      const sessionId = randomBytes(32).toString('base64url');
      const csrf = randomBytes(24).toString('base64url');
      sessions.set(sessionId, { tokenHash: token.hash, tokenId: token.id, csrf, expires: Date.now() + SESSION_TTL_MS });
      return { sessionId, principal: { token, via: 'session', defaultNamespace: tokenDefaultNamespace(token, config.defaultNamespace), csrf } };
    },
    logout(sessionId) {
      if (sessionId) sessions.delete(sessionId);
    },
  };
}

export { SESSION_TTL_MS };
