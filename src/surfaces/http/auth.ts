import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { ALL_NAMESPACES, tokenDefaultNamespace, type AccessControl } from '../../core/access.js';
import { CairnError } from '../../interfaces/errors.js';
import { errorResponse } from './http-errors.js';
import type { AccessScope, AccessTokenRecord } from '../../interfaces/store.js';
import type { SessionStore } from '../../interfaces/sessions.js';
import { createMemorySessionStore, SESSION_TTL_MS, SessionBook } from '../../core/sessions.js';

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

export interface AuthConfig {
  /** Null: authentication off (loopback binds only); every caller is the local operator. */
  access: AccessControl | null;
  defaultNamespace: string;
  /** Requests a minute per token (and per client address before authentication). 0 disables. */
  rateLimitPerMinute: number;
  /** Where sessions and request budgets live: the store's when every server process shares it, else this process. */
  sessions?: SessionStore | undefined;
}

export interface Auth {
  /** Sets `principal` or answers 401 / 429 / 403 (CSRF). */
  middleware: MiddlewareHandler<AuthEnv>;
  /** Opens a browser session for a token secret; returns the cookie value and the CSRF value. */
  login(secret: string): Promise<{ sessionId: string; principal: Principal }>;
  logout(sessionId: string | undefined): Promise<void>;
  /** Rate limit by client address (login attempts, unauthenticated calls): seconds to wait, 0 to go. */
  limitAddress(address: string): Promise<number>;
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
  const book = new SessionBook({ store: config.sessions ?? createMemorySessionStore(), rateLimitPerMinute: config.rateLimitPerMinute });
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
        const session = sid ? await book.find(sid) : null;
        if (!session) {
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
      const wait = await book.take(`addr:${clientAddress(c)}`);
      if (wait > 0) return tooMany(c, wait);
      return errorResponse(c, err);
    }
    const wait = await book.take(`token:${principal.token.id}`);
    if (wait > 0) return tooMany(c, wait);
    c.set('principal', principal);
    return next();
  };

  return {
    enabled: access !== null,
    middleware,
    limitAddress: (address) => book.take(`addr:${address}`),
    async login(secret) {
      if (!access) throw new CairnError('UNSUPPORTED', 'authentication is off on this server; no login needed');
      const token = await access.authenticate(secret);
      const { sessionId, csrf } = await book.open(token);
      return { sessionId, principal: { token, via: 'session', defaultNamespace: tokenDefaultNamespace(token, config.defaultNamespace), csrf } };
    },
    async logout(sessionId) {
      if (sessionId) await book.close(sessionId);
    },
  };
}

export { SESSION_TTL_MS };
