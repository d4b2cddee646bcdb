/*
 * Access tokens of the HTTP server. Not memory: outside the event log and the checksum, stored as hashes.
 * Each call is its own small write (or read), committed on return; none needs a write transaction.
 */

export type AccessScope = 'read' | 'write' | 'admin';

export interface AccessTokenRecord {
  /** Public id (shown in lists and logs; not a secret). */
  id: string;
  /** SHA-256 (hex) of the secret token; the secret itself is never stored. */
  hash: string;
  name: string | null;
  /** Namespaces the token reaches; `['*']` for every namespace. */
  namespaces: string[];
  scope: AccessScope;
  /** ISO-8601 UTC times (fixed width). */
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export interface AccessTokens {
  /** Stores a new token; CONFLICT when its id or hash exists. */
  putToken(token: AccessTokenRecord): Promise<void>;
  /** The token with this hash (revoked or expired ones too: the caller decides), or null. */
  getTokenByHash(hash: string): Promise<AccessTokenRecord | null>;
  /** Every token, oldest first (createdAt, then id). */
  listTokens(): Promise<AccessTokenRecord[]>;
  /** Marks the token revoked at `at` (a second revoke keeps the first time); false when no token has this id. */
  revokeToken(id: string, at: string): Promise<boolean>;
  /** Records the token's last use; an unknown id is ignored. */
  touchToken(id: string, at: string): Promise<void>;
}
