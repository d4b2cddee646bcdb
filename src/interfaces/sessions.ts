/**
 * Browser sessions and request budgets of the HTTP server. Kept behind this contract so every server
 * process of a team sees the same ones: a store that many processes share (PostgreSQL) keeps them in its
 * tables; otherwise they live in the process (core/sessions.ts `createMemorySessionStore`), which is right
 * for the embedded store, where one `cairn serve` owns the file.
 */

export interface SessionRecord {
  /** SHA-256 (hex) of the cookie value; the value itself is never stored. */
  idHash: string;
  /** SHA-256 of the token the session was opened with: re-checked on every request (revocation ends it). */
  tokenHash: string;
  tokenId: string;
  /** The value the X-CSRF-Token header must carry on changes. */
  csrf: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

export interface SessionStore {
  /** Inserts or replaces the session with this `idHash`. */
  putSession(session: SessionRecord): Promise<void>;
  /** The session, or null when there is none (an expired one is returned: the caller decides). */
  getSession(idHash: string): Promise<SessionRecord | null>;
  /** Idempotent. */
  deleteSession(idHash: string): Promise<void>;
  /** Removes sessions expired before `nowMs`, and the oldest beyond `keep`; returns how many remain. */
  pruneSessions(nowMs: number, keep: number): Promise<number>;
  /**
   * Takes one request from the token bucket `key` (`perMinute` a minute, bursts up to `perMinute`), atomically
   * across every process sharing the store; returns the seconds to wait before retrying, 0 when it may go.
   */
  takeRequest(key: string, perMinute: number, nowMs: number): Promise<number>;
}
