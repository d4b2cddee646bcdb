import { createHash, randomBytes } from 'node:crypto';
import type { SessionRecord, SessionStore } from '../interfaces/sessions.js';

/**
 * Browser sessions and rate limits over a `SessionStore` (interfaces/sessions.ts): the rules live here, the
 * state where the store keeps it. A session id is 32 random bytes given to the browser once; only its
 * SHA-256 is kept.
 */

export const SESSION_TTL_MS = 12 * 3_600_000;
const MAX_SESSIONS = 10_000;

/** One token bucket step: the bucket after `now` and the wait in seconds (0: the request may go). */
export function bucketStep(bucket: { tokens: number; at: number } | undefined, perMinute: number, now: number): { bucket: { tokens: number; at: number }; wait: number } {
  const perMs = perMinute / 60_000;
  const b = bucket ?? { tokens: perMinute, at: now };
  const tokens = Math.min(perMinute, b.tokens + Math.max(0, now - b.at) * perMs);
  if (tokens >= 1) return { bucket: { tokens: tokens - 1, at: now }, wait: 0 };
  return { bucket: { tokens, at: now }, wait: Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)) };
}

/** The state of one process: right when one process owns the store. */
export function createMemorySessionStore(): SessionStore {
  const sessions = new Map<string, SessionRecord>();
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    async putSession(s) {
      sessions.set(s.idHash, { ...s });
    },
    async getSession(idHash) {
      const s = sessions.get(idHash);
      return s ? { ...s } : null;
    },
    async deleteSession(idHash) {
      sessions.delete(idHash);
    },
    async pruneSessions(nowMs, keep) {
      for (const [k, s] of sessions) if (s.expiresAt < nowMs) sessions.delete(k);
      for (const k of sessions.keys()) {
        if (sessions.size <= keep) break;
        sessions.delete(k); // insertion order: the oldest first
      }
      return sessions.size;
    },
    async takeRequest(key, perMinute, nowMs) {
      const { bucket, wait } = bucketStep(buckets.get(key), perMinute, nowMs);
      buckets.set(key, bucket);
      if (buckets.size > 50_000) for (const [k, b] of buckets) if (nowMs - b.at > 60_000) buckets.delete(k);
      return wait;
    },
  };
}

export const hashSessionId = (id: string): string => createHash('sha256').update(id, 'utf8').digest('hex');

export class SessionBook {
  private readonly store: SessionStore;
  private readonly now: () => number;
  private readonly perMinute: number;
  private opened = 0;

  constructor(options: { store: SessionStore; rateLimitPerMinute: number; now?: () => number }) {
    this.store = options.store;
    this.perMinute = options.rateLimitPerMinute;
    this.now = options.now ?? Date.now;
  }

  /** Opens a session for a token; returns the cookie value (given once) and the CSRF value. */
  async open(token: { id: string; hash: string }): Promise<{ sessionId: string; csrf: string }> {
    // Expired sessions are cleared now and then, not on every login.
    if (this.opened++ % 100 === 0) await this.store.pruneSessions(this.now(), MAX_SESSIONS - 1);
    const sessionId = randomBytes(32).toString('base64url');
    const csrf = randomBytes(24).toString('base64url');
    await this.store.putSession({ idHash: hashSessionId(sessionId), tokenHash: token.hash, tokenId: token.id, csrf, expiresAt: this.now() + SESSION_TTL_MS });
    return { sessionId, csrf };
  }

  /** The live session of a cookie value; null when unknown or expired (an expired one is removed). */
  async find(sessionId: string): Promise<SessionRecord | null> {
    if (sessionId.length > 100) return null;
    const idHash = hashSessionId(sessionId);
    const s = await this.store.getSession(idHash);
    if (!s) return null;
    if (s.expiresAt < this.now()) {
      await this.store.deleteSession(idHash);
      return null;
    }
    return s;
  }

  async close(sessionId: string): Promise<void> {
    await this.store.deleteSession(hashSessionId(sessionId));
  }

  /** Seconds to wait before `key` may make another request; 0 when it may go now (0 a minute: no limit). */
  async take(key: string): Promise<number> {
    if (this.perMinute <= 0) return 0;
    return this.store.takeRequest(key, this.perMinute, this.now());
  }
}
