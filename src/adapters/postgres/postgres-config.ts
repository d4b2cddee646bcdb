import { CairnError } from '../../interfaces/errors.js';

/**
 * How the PostgreSQL store connects. Built by the composition root (surfaces/open-engine.ts) from the
 * `--db` / `CAIRN_DB` URL and the CAIRN_PG_* settings; nothing here reads the environment or a file.
 */
export interface PostgresStoreConfig {
  host: string;
  port: number;
  database: string;
  user: string;
  password?: string | undefined;
  /** TLS, from the URL's `sslmode` (see parsePostgresUrl). */
  tls: PostgresTls;
  /** Connections kept open by this process (default 10). */
  poolSize?: number | undefined;
  /** Server-side limit of one statement, in ms (default 30 s; 0 = none). */
  statementTimeoutMs?: number | undefined;
  /** How long to wait for a connection from the server, in ms (default 5 s). */
  connectTimeoutMs?: number | undefined;
  /**
   * Whether the store may create the `vector` extension when it is missing (default true). Without the
   * extension (and without the right to create it) vectors are kept as `real[]` without an index and
   * recall fuses the signals in cairn.
   */
  createExtension?: boolean | undefined;
  /** The URL with its password hidden, for messages and `cairn doctor`. */
  location: string;
  /**
   * Whether opening starts building a missing HNSW index in the background (default false): a long-lived
   * process (serve, mcp) sets it; a short command only reports the index missing.
   */
  buildVectorIndexInBackground?: boolean | undefined;
  /**
   * Whether searches are proposed from copies of the searched namespaces kept in this process
   * (postgres-recall-copies.ts; default false): a long-lived process (serve, mcp) sets it; a short command would
   * load a copy for one search.
   */
  recallCopies?: boolean | undefined;
  /**
   * The most memories a namespace may hold for this process to keep a copy of it (default MAX_COPY_MEMORIES of
   * postgres-recall-copies.ts, 1,500,000: about 2.4 KB a memory with the scan worker's codes); 0 = no copies.
   */
  copyMaxMemories?: number | undefined;
  /**
   * Whether the statements whose plan does not depend on how the data is spread (lookups by key, the fused
   * search over a copy's proposals) are prepared once per connection, parsed once (default true). Off
   * behind a connection pooler in transaction mode that does not carry prepared statements; a server that
   * loses them turns them off by itself (postgres-store.ts `keptRows`).
   */
  preparedStatements?: boolean | undefined;
  /**
   * A schema of its own on the same database (the scratch store `cairn verify` replays into): its tables live
   * there, first on `searchPath`, and its advisory locks are its own, so it never waits on the live store's
   * writers nor makes them wait. Absent: the role's default schema.
   */
  schema?: string | undefined;
  /** The search path with `schema` first (the live connection's path after it, for the extension's types). */
  searchPath?: string | undefined;
}

/** `sslmode` as libpq names it; `prefer` and `allow` (plain-text fallbacks) are refused. */
export type SslMode = 'disable' | 'require' | 'verify-ca' | 'verify-full';

export interface PostgresTls {
  mode: SslMode;
  /** PEM of the CA certificates to verify the server with (read from the URL's `sslrootcert` file). */
  ca?: string | undefined;
}

const SSL_MODES: readonly SslMode[] = ['disable', 'require', 'verify-ca', 'verify-full'];
const KNOWN_PARAMS = new Set(['sslmode', 'sslrootcert', 'application_name', 'connect_timeout']);

/** True when `value` names a PostgreSQL database (`postgres://…` or `postgresql://…`). */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(?:ql)?:\/\//iu.test(value);
}

/** The URL with any password replaced by `…`, safe to print. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:@/]*):[^@/]*@/iu, '$1:…@');
}

/**
 * Parses a PostgreSQL URL (`postgres://user:password@host:port/database?sslmode=require`). Without `sslmode`
 * the connection is plain text (cairn does not guess; a managed server usually needs `sslmode=require` or
 * `verify-full`). `require` encrypts without checking the certificate (libpq's meaning); `verify-ca` checks
 * the chain; `verify-full` also checks the host name.
 */
export function parsePostgresUrl(raw: string): Omit<PostgresStoreConfig, 'poolSize' | 'statementTimeoutMs' | 'createExtension'> & { rootCertPath: string | null } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CairnError('INVALID_INPUT', `database URL ${JSON.stringify(redactUrl(raw))} is not a valid URL`, { field: 'db' });
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//u, ''));
  if (!database || database.includes('/')) {
    throw new CairnError('INVALID_INPUT', `database URL ${redactUrl(raw)} names no database (postgres://user@host:5432/<database>)`, { field: 'db' });
  }
  for (const key of url.searchParams.keys()) {
    if (!KNOWN_PARAMS.has(key)) {
      throw new CairnError('INVALID_INPUT', `database URL: unknown parameter ${key}; known: ${[...KNOWN_PARAMS].join(', ')}`, { field: 'db' });
    }
  }
  const sslmode = url.searchParams.get('sslmode') ?? 'disable';
  if (!(SSL_MODES as readonly string[]).includes(sslmode)) {
    throw new CairnError('INVALID_INPUT', `database URL: sslmode=${sslmode} is not supported; use ${SSL_MODES.join(', ')}`, {
      field: 'db',
      hint: 'prefer/allow fall back to plain text silently; say require (or verify-full) to encrypt',
    });
  }
  const connectTimeout = url.searchParams.get('connect_timeout');
  if (connectTimeout !== null && !/^\d{1,4}$/u.test(connectTimeout)) {
    throw new CairnError('INVALID_INPUT', `database URL: connect_timeout must be whole seconds (got ${connectTimeout})`, { field: 'db' });
  }
  const port = url.port ? Number(url.port) : 5432;
  return {
    host: url.hostname.replace(/^\[|\]$/gu, '') || 'localhost',
    port,
    database,
    user: decodeURIComponent(url.username) || 'postgres',
    password: url.password ? decodeURIComponent(url.password) : undefined,
    tls: { mode: sslmode as SslMode },
    rootCertPath: url.searchParams.get('sslrootcert'),
    connectTimeoutMs: connectTimeout === null ? undefined : Number(connectTimeout) * 1000,
    location: redactUrl(raw),
  };
}
