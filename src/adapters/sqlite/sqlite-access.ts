import type { AccessTokenRecord } from '../../interfaces/store.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { rowToToken, type Row } from '../sql/sql-rows.js';

/** Access tokens (stored as hashes), written outside the event log. */
export class SqliteAccess {
  constructor(private readonly c: SqliteConnection) {}

  async putToken(t: AccessTokenRecord): Promise<void> {
    await this.c.smallWrite('storing the token', () => {
      this.c.stmt(
        'INSERT INTO access_tokens (id, hash, name, namespaces, scope, created_at, expires_at, revoked_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ).run(t.id, t.hash, t.name, JSON.stringify(t.namespaces), t.scope, t.createdAt, t.expiresAt, t.revokedAt, t.lastUsedAt);
    });
  }

  async getTokenByHash(hash: string): Promise<AccessTokenRecord | null> {
    return this.c.read('reading tokens', () => {
      const r = this.c.stmt('SELECT * FROM access_tokens WHERE hash = ?').get(hash) as Row | undefined;
      return r ? rowToToken(r) : null;
    });
  }

  async listTokens(): Promise<AccessTokenRecord[]> {
    return this.c.read('reading tokens', () => (this.c.stmt('SELECT * FROM access_tokens ORDER BY created_at, id').all() as Row[]).map(rowToToken));
  }

  async revokeToken(id: string, at: string): Promise<boolean> {
    let changed = false;
    await this.c.smallWrite('revoking the token', () => {
      const found = this.c.stmt('SELECT 1 FROM access_tokens WHERE id = ?').get(id);
      if (found) this.c.stmt('UPDATE access_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?').run(at, id);
      changed = found !== undefined;
    });
    return changed;
  }

  async touchToken(id: string, at: string): Promise<void> {
    await this.c.smallWrite('recording token use', () => {
      this.c.stmt('UPDATE access_tokens SET last_used_at = ? WHERE id = ?').run(at, id);
    });
  }
}
