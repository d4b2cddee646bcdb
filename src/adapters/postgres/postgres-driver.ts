import { createHash } from 'node:crypto';
import type pg from 'pg';
import { CairnError } from '../../interfaces/errors.js';
import type { PostgresStoreConfig } from './postgres-config.js';

/**
 * The `pg` driver, loaded on first use (importing it costs about 40 ms, which commands that never touch a
 * PostgreSQL store must not pay), the connection pool, and the one place driver errors become CairnErrors.
 */

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** What a statement answers: its rows (objects, or arrays with `rowMode: 'array'`) and its columns. */
export interface StatementResult<R> {
  rows: R[];
  fields: { name: string }[];
}

let driver: Promise<typeof pg> | null = null;

function loadDriver(): Promise<typeof pg> {
  driver ??= import('pg').then((m) => (m as unknown as { default: typeof pg }).default ?? (m as unknown as typeof pg));
  return driver;
}

const DEFAULT_POOL_SIZE = 10;
const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

export async function createPool(config: PostgresStoreConfig, onIdleError: (err: Error) => void): Promise<Pool> {
  const { Pool: PgPool, types } = await loadDriver();
  // int8 (COUNT, bigint ids) as JS numbers: every count and sequence here stays far below 2^53.
  types.setTypeParser(20, (v: string) => Number(v));
  const ssl =
    config.tls.mode === 'disable'
      ? false
      : config.tls.mode === 'require'
        ? { rejectUnauthorized: false }
        : {
            rejectUnauthorized: true,
            ...(config.tls.ca ? { ca: config.tls.ca } : {}),
            // verify-ca checks the chain only, like libpq: any host name is accepted.
            ...(config.tls.mode === 'verify-ca' ? { checkServerIdentity: () => undefined } : {}),
          };
  const pool = new PgPool({
    host: config.host,
    port: config.port,
    database: config.database,
    user: config.user,
    ...(config.password !== undefined ? { password: config.password } : {}),
    ssl,
    max: config.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    statement_timeout: config.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    application_name: 'cairn',
    // Filtered HNSW scans keep walking the graph until enough rows pass the namespace filter, in exact
    // distance order (pgvector 0.8 iterative scans); a placeholder setting where pgvector is absent.
    // ef_search 800 over the build of postgres-schema.ts hnswIndexSql (m 16, ef_construction 200): at 100k
    // memories of near copies (bench/results/pg-scale-100k-hnsw.json, one run, load 10.6), recall@10 of the
    // store's vector statement against exact search was 0.673 / 0.843 / 0.93 / 0.97 at ef_search 100 / 200 /
    // 400 / 800, its p50 56 / 52 / 60 / 77 ms; over the older build (ef_construction 64) 0.57 / 0.705 / 0.798
    // at 200 / 400 / 800 (pg-scale-100k.json). pgvector's maximum is 1000.
    // No parallel query: the fused statement's exact fallback (vec_exact) is planned as a parallel scan, and
    // its worker was launched on every search even when the fallback does not run (about 35 ms of the
    // statement at 100k under load, EXPLAIN ANALYZE); cairn's statements are small and many run at once.
    // Prepared statements (postgres-store.ts keptRows) are parsed once and still planned for each execution's
    // values: the generic plan PostgreSQL keeps after five runs made the fused statement over a copy's proposals
    // 15 ms slower at 1M memories (pg-scale 1M cached 79.6 ms against 62.2 unprepared, 2026-12-06).
    options: `-c hnsw.iterative_scan=strict_order -c hnsw.ef_search=800 -c max_parallel_workers_per_gather=0 -c plan_cache_mode=force_custom_plan${config.searchPath ? ` -c search_path=${config.searchPath}` : ''}`,
  });
  // A pooled connection the server closes while idle (restart, failover) must not crash the process.
  pool.on('error', onIdleError);
  return pool;
}

/**
 * The name a statement is prepared under on a connection: derived from its text, so one name never stands for
 * two texts (node-postgres refuses that) and every process gives a text the same name.
 */
export function statementName(sql: string): string {
  return `cairn_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
}

/**
 * Whether the server lost or refused a prepared statement: it does not exist on this connection (a pooler in
 * transaction mode hands statements to other server connections; DISCARD ALL), it exists already under that
 * name (the same, from the pooler's other clients), or a schema change altered its result's columns.
 */
export function isPreparedStatementFault(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return code === '26000' || code === '42P05' || (code === '0A000' && /cached plan must not change result type/iu.test((err as Error).message ?? ''));
}

/** SQLSTATE classes and Node socket errors after which the same statement may succeed on a new connection. */
export function isTransient(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  const message = (err as Error).message ?? '';
  if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'].includes(code)) return true;
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') return true;
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/iu.test(message);
}

/** Translates a driver error into a CairnError, naming the cause (the one place this adapter does so). */
export function translatePgError(err: unknown, what: string, where: string): CairnError {
  if (err instanceof CairnError) return err;
  const e = err as { code?: string; message?: string };
  const code = e.code ?? '';
  const message = e.message ?? String(err);
  const unavailable = (text: string, hint?: string) => new CairnError('STORE_UNAVAILABLE', `${what}: ${text}`, { cause: err, ...(hint ? { hint } : {}) });
  switch (code) {
    case '28P01':
      return unavailable(`wrong password for the database user (${where})`, 'check the password in --db / CAIRN_DB');
    case '28000':
      return unavailable(`the server refused the login: ${message} (${where})`, 'check the user name in the URL and the server\'s pg_hba.conf');
    case '3D000':
      return unavailable(`the database does not exist (${where})`, 'create it (createdb <name>) or fix the database name in the URL');
    case '42501':
      return unavailable(`permission denied: ${message}`, 'grant the role the privileges cairn needs (README: PostgreSQL)');
    case '57014':
      return unavailable(`the statement ran past the statement timeout (${message})`, 'raise CAIRN_PG_STATEMENT_TIMEOUT_MS or check the server load');
    case '53300':
      return unavailable(`the server has no free connection slot (${message})`, 'lower CAIRN_PG_POOL or raise max_connections');
    case '40001':
    case '40P01':
      return new CairnError('CONFLICT', `${what}: another writer got in the way (${message}); nothing was written, retry`, { cause: err });
    case 'ECONNREFUSED':
      return unavailable(`no PostgreSQL server answers at ${where}`, 'start the server or fix host and port in --db / CAIRN_DB');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return unavailable(`the host of ${where} is unknown`, 'fix the host name in --db / CAIRN_DB');
    default:
      break;
  }
  if (code.startsWith('23')) return new CairnError('CONFLICT', `${what}: ${message}`, { cause: err });
  if (code.startsWith('08') || code.startsWith('57P') || isTransient(err)) return unavailable(`lost the connection to ${where} (${message})`);
  if (/does not support SSL/iu.test(message)) return unavailable(`the server at ${where} does not accept TLS`, 'use sslmode=disable for this server');
  if (/certificate|self.signed|SSL|TLS/iu.test(message) || code.startsWith('ERR_TLS') || code.includes('CERT')) {
    return unavailable(`TLS failed with ${where}: ${message}`, 'check sslmode and sslrootcert in the URL');
  }
  if (/SASL|password/iu.test(message)) return unavailable(`login failed at ${where}: ${message}`, 'check the password in --db / CAIRN_DB');
  return new CairnError('INTERNAL', `${what}: ${message}`, { cause: err });
}

/**
 * How long cairn's maintenance statements (a migration step, the compaction after an erasure) wait for a
 * table lock before they give up and let the queries queued behind them through.
 */
export const LOCK_TIMEOUT_MS = 5_000;

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
