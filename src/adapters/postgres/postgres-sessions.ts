import type { SessionRecord, SessionStore } from '../../interfaces/sessions.js';
import type { Row } from '../sql/sql-rows.js';

type Query = <R extends Row = Row>(what: string, sql: string, values: unknown[]) => Promise<R[]>;

/**
 * Browser sessions and request budgets in the database, so every `cairn serve` of a team on one PostgreSQL
 * answers a cookie and counts a token's requests the same way. A request takes from its bucket in one
 * statement (INSERT … ON CONFLICT DO UPDATE locks the row), so concurrent requests on many processes never
 * get more than the bucket holds.
 */
export function createPostgresSessions(query: Query): SessionStore {
  const toRecord = (r: Row): SessionRecord => ({
    idHash: r['id_hash'] as string,
    tokenHash: r['token_hash'] as string,
    tokenId: r['token_id'] as string,
    csrf: r['csrf'] as string,
    expiresAt: Number(r['expires_at']),
  });
  // The bucket after refilling for the time since its last request, as SQL over the existing row `b`.
  const refilled = 'LEAST($2::float8, b.tokens + GREATEST(0, $3::bigint - b.at) * ($2::float8 / 60000))';
  return {
    async putSession(s) {
      await query(
        'storing the session',
        `INSERT INTO http_sessions (id_hash, token_hash, token_id, csrf, expires_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (id_hash) DO UPDATE SET token_hash = EXCLUDED.token_hash, token_id = EXCLUDED.token_id, csrf = EXCLUDED.csrf, expires_at = EXCLUDED.expires_at`,
        [s.idHash, s.tokenHash, s.tokenId, s.csrf, s.expiresAt],
      );
    },
    async getSession(idHash) {
      const rows = await query('reading the session', 'SELECT id_hash, token_hash, token_id, csrf, expires_at FROM http_sessions WHERE id_hash = $1', [idHash]);
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async deleteSession(idHash) {
      await query('ending the session', 'DELETE FROM http_sessions WHERE id_hash = $1', [idHash]);
    },
    async pruneSessions(nowMs, keep) {
      await query('pruning sessions', 'DELETE FROM http_sessions WHERE expires_at < $1', [nowMs]);
      await query('pruning sessions', 'DELETE FROM http_sessions WHERE id_hash IN (SELECT id_hash FROM http_sessions ORDER BY expires_at DESC, id_hash OFFSET $1)', [keep]);
      // Buckets untouched for two minutes are full again: forgetting them changes nothing.
      await query('pruning request budgets', 'DELETE FROM rate_buckets WHERE at < $1', [nowMs - 120_000]);
      const rows = await query<{ n: number }>('counting sessions', 'SELECT count(*)::int AS n FROM http_sessions', []);
      return rows[0]?.n ?? 0;
    },
    async takeRequest(key, perMinute, nowMs) {
      const rows = await query<{ granted: boolean; tokens: number }>(
        'taking from the request budget',
        `INSERT INTO rate_buckets AS b (key, tokens, at, granted) VALUES ($1, $2::float8 - 1, $3::bigint, true)
         ON CONFLICT (key) DO UPDATE SET
           tokens = CASE WHEN ${refilled} >= 1 THEN ${refilled} - 1 ELSE ${refilled} END,
           at = GREATEST(b.at, $3::bigint),
           granted = ${refilled} >= 1
         RETURNING granted, tokens`,
        [key, perMinute, nowMs],
      );
      const r = rows[0];
      if (!r || r.granted) return 0;
      return Math.max(1, Math.ceil((1 - Number(r.tokens)) / (perMinute / 60_000) / 1000));
    },
  };
}
