import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { createHttpEmbedder } from '../adapters/embed-http/http-embedder.js';
import { createCachingEmbedder } from '../adapters/embed-cache/caching-embedder.js';
import { keepFixedVectors } from '../adapters/embed-cache/fixed-vector-file.js';
import { createUseEmbedder } from '../adapters/embed-use/use-embedder.js';
import { createPoolEmbedder, DEFAULT_NICE, type PoolEmbedder } from '../adapters/embed-pool/pool-embedder.js';
import { createOverlapReranker } from '../adapters/rerank-local/overlap-reranker.js';
import { createSqliteStore } from '../adapters/sqlite/sqlite-store.js';
import { isPostgresUrl, parsePostgresUrl, type PostgresStoreConfig } from '../adapters/postgres/postgres-config.js';
import { createGitRepository, type GitRepository } from '../adapters/git/git-repository.js';
import { createGptTokenCounter } from '../adapters/tokenizer/gpt-token-counter.js';
import { AccessControl } from '../core/access.js';
import { Engine } from '../core/engine.js';
import { namespaceFromRepository } from '../core/text.js';
import { validateNamespace } from '../core/validate.js';
import type { CairnConfigFile } from './config-file.js';
import type { Embedder, Logger, Reranker } from '../interfaces/embedder.js';
import { CairnError, isCairnError } from '../interfaces/errors.js';
import type { Store } from '../interfaces/store.js';
import { createLogger, parseLogLevel } from './logger.js';
import type { IngestFilterConfig } from '../core/ingest-filter.js';
import { parseAllowEntry, REDACTION_KINDS, type RedactionConfig, type RedactionMode } from '../core/redact.js';
import { cacheHome, configPath, localDataDir, parseHookSettings, resolveDbPath, type HookSettings } from './settings.js';

/**
 * The composition root: the only module that reads flags, environment variables and config files.
 * Precedence: flags > environment > config file > defaults. Everything is validated here and passed down
 * as typed objects.
 */

export interface CliFlags {
  db?: string | undefined;
  namespace?: string | undefined;
}

export interface ResolvedConfig {
  /** A file path, or a postgres:// URL (see `postgres`). */
  dbPath: string;
  /** The local folder for hook logs and capture jobs (the database's folder, or the data home with PostgreSQL). */
  dataDir: string;
  /** The PostgreSQL store's settings when `dbPath` is a URL, else null. */
  postgres: PostgresStoreConfig | null;
  namespace: string;
  namespaceSource: 'flag' | 'env' | 'config' | 'git-origin' | 'git-toplevel' | 'cwd';
  /**
   * `workers`: threads of the embedding pool in long-lived processes (CAIRN_EMBED_WORKERS; 0 embeds on the main
   * thread); `nice`: what those threads add to their nice value (CAIRN_EMBED_NICE); `fixedVectorsDir`: where the
   * vectors of the product's own fixed sentences are kept between processes (`<cache home>/cairn/vectors`).
   */
  embedder: { provider: 'use' | 'openai' | 'none'; workers: number; nice: number; fixedVectorsDir: string; baseUrl?: string | undefined; model?: string | undefined; dimensions?: number | undefined; apiKey?: string | undefined };
  reranker: 'none' | 'overlap';
  /** Where the token counter keeps its compact rank table between processes (`<cache home>/cairn/tokenizer`). */
  tokenizerDir: string;
  weights: CairnConfigFile['weights'];
  logLevel: ReturnType<typeof parseLogLevel>;
  configFile: string | null;
  security: SecuritySettings;
  hooks: HookSettings;
}

export interface Environment {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * The config file's settings, checked (config-file.ts, loaded only when there is a file: its schema library
 * costs a cold process 65–90 ms, most of a prompt hook's budget).
 */
async function readConfigFile(path: string, explicit: boolean): Promise<CairnConfigFile> {
  if (!existsSync(path)) {
    if (explicit) throw new CairnError('INVALID_INPUT', `config file ${path} does not exist`, { field: 'CAIRN_CONFIG' });
    return {};
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new CairnError('INVALID_INPUT', `config file ${path} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const { parseConfigFile } = await import('./config-file.js');
  return parseConfigFile(path, raw);
}

function git(cwd: string, args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 3000 }).trim() || null;
  } catch {
    return null;
  }
}

/** The namespace of the repository `cwd` is in: origin URL, else top-level path; outside git, cwd. */
export function detectNamespace(cwd: string): { namespace: string; source: 'git-origin' | 'git-toplevel' | 'cwd' } {
  const topLevel = git(cwd, ['rev-parse', '--show-toplevel']);
  if (topLevel) {
    const originUrl = git(cwd, ['config', '--get', 'remote.origin.url']);
    // Worktrees share the main repository's config, so origin is the same; without origin, use the
    // main worktree's path (the common dir's parent) so linked worktrees share memory too.
    if (originUrl) return { namespace: namespaceFromRepository({ originUrl }) as string, source: 'git-origin' };
    const common = git(cwd, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
    const mainTop = common && common.endsWith('/.git') ? common.slice(0, -'/.git'.length) : topLevel;
    return { namespace: namespaceFromRepository({ topLevel: mainTop }) as string, source: 'git-toplevel' };
  }
  return { namespace: resolve(cwd), source: 'cwd' };
}

export async function resolveConfig(flags: CliFlags, environment: Environment = { env: process.env, cwd: process.cwd() }): Promise<ResolvedConfig> {
  const { env, cwd } = environment;
  const cfgPath = configPath(env);
  const file = await readConfigFile(cfgPath, Boolean(env['CAIRN_CONFIG']));
  const dbPath = resolveDbPath(flags.db, env, cwd, file.db);

  let namespace: string;
  let namespaceSource: ResolvedConfig['namespaceSource'];
  if (flags.namespace) [namespace, namespaceSource] = [flags.namespace, 'flag'];
  else if (env['CAIRN_NAMESPACE']) [namespace, namespaceSource] = [env['CAIRN_NAMESPACE'], 'env'];
  else if (file.namespace) [namespace, namespaceSource] = [file.namespace, 'config'];
  else ({ namespace, source: namespaceSource } = detectNamespace(cwd));
  validateNamespace(namespace);

  const provider = (env['CAIRN_EMBEDDER'] as ResolvedConfig['embedder']['provider'] | undefined) || file.embedder?.provider || 'use';
  if (!['use', 'openai', 'none'].includes(provider)) {
    throw new CairnError('INVALID_INPUT', `CAIRN_EMBEDDER must be use, openai or none (got ${provider})`, { field: 'CAIRN_EMBEDDER' });
  }
  const dimsRaw = env['CAIRN_EMBED_DIMENSIONS'];
  const dimensions = dimsRaw ? Number(dimsRaw) : file.embedder?.dimensions;
  const apiKeyEnv = file.embedder?.apiKeyEnv ?? 'CAIRN_EMBED_API_KEY';
  const reranker = (env['CAIRN_RERANKER'] || file.reranker || 'none') as ResolvedConfig['reranker'];
  if (!['none', 'overlap'].includes(reranker)) throw new CairnError('INVALID_INPUT', `CAIRN_RERANKER must be none or overlap (got ${reranker})`);
  return {
    dbPath,
    dataDir: localDataDir(dbPath, env),
    postgres: isPostgresUrl(dbPath) ? resolvePostgres(dbPath, env, file.postgres) : null,
    namespace,
    namespaceSource,
    tokenizerDir: join(cacheHome(env), 'cairn', 'tokenizer'),
    embedder: {
      provider,
      workers: embedWorkers(env),
      nice: embedNice(env),
      fixedVectorsDir: join(cacheHome(env), 'cairn', 'vectors'),
      baseUrl: env['CAIRN_EMBED_BASE_URL'] || file.embedder?.baseUrl,
      model: env['CAIRN_EMBED_MODEL'] || file.embedder?.model,
      dimensions,
      apiKey: env[apiKeyEnv] || env['OPENAI_API_KEY'],
    },
    reranker,
    weights: file.weights,
    logLevel: parseLogLevel(env['CAIRN_LOG'] || file.logLevel),
    configFile: existsSync(cfgPath) ? cfgPath : null,
    security: resolveSecurity(env, file.security),
    hooks: parseHookSettings(file.hooks, env),
  };
}

function envWhole(env: NodeJS.ProcessEnv, name: string, min: number, max: number): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/u.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new CairnError('INVALID_INPUT', `${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(raw)})`, { field: name });
  }
  return Number(raw);
}

/**
 * The PostgreSQL store's settings: the URL (host, database, user, password, `sslmode`, `sslrootcert`), then
 * CAIRN_PG_POOL (connections per process, default 10), CAIRN_PG_STATEMENT_TIMEOUT_MS (default 30000, 0 =
 * none), CAIRN_PG_CREATE_EXTENSION (on/off, default on), CAIRN_PG_COPY_MAX_MEMORIES (the largest namespace a
 * long-lived process keeps a search copy of, 0 = none) and CAIRN_PG_PREPARED (on/off, default on: off behind a
 * pooler in transaction mode) over the config file's `postgres` section.
 */
export function resolvePostgres(url: string, env: NodeJS.ProcessEnv, file: CairnConfigFile['postgres']): PostgresStoreConfig {
  const { rootCertPath, ...parsed } = parsePostgresUrl(url);
  let ca: string | undefined;
  if (rootCertPath) {
    try {
      ca = readFileSync(rootCertPath, 'utf8');
    } catch (err) {
      throw new CairnError('INVALID_INPUT', `sslrootcert ${rootCertPath} cannot be read: ${(err as Error).message}`, { field: 'db', cause: err });
    }
  }
  return {
    ...parsed,
    tls: { ...parsed.tls, ca },
    poolSize: envWhole(env, 'CAIRN_PG_POOL', 1, 1000) ?? file?.poolSize,
    statementTimeoutMs: envWhole(env, 'CAIRN_PG_STATEMENT_TIMEOUT_MS', 0, 3_600_000) ?? file?.statementTimeoutMs,
    createExtension: envBoolean(env, 'CAIRN_PG_CREATE_EXTENSION') ?? file?.createExtension,
    copyMaxMemories: envWhole(env, 'CAIRN_PG_COPY_MAX_MEMORIES', 0, 100_000_000) ?? file?.copyMaxMemories,
    preparedStatements: envBoolean(env, 'CAIRN_PG_PREPARED') ?? file?.preparedStatements,
  };
}

export interface SecuritySettings {
  filter: Partial<IngestFilterConfig>;
  redaction: RedactionConfig;
}

function envBoolean(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return undefined;
  if (['1', 'on', 'true', 'yes'].includes(raw)) return true;
  if (['0', 'off', 'false', 'no'].includes(raw)) return false;
  throw new CairnError('INVALID_INPUT', `${name} must be on or off (got ${JSON.stringify(env[name])})`, { field: name });
}

function envNumber(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= -1 || n > 1) throw new CairnError('INVALID_INPUT', `${name} must be a number in (-1, 1] (got ${JSON.stringify(raw)})`, { field: name });
  return n;
}

/**
 * Security settings: environment over config file over defaults. CAIRN_FILTER=on|off,
 * CAIRN_FILTER_THRESHOLD, CAIRN_FILTER_LEARNED_THRESHOLD, CAIRN_REDACTION=off|redact|reject and
 * CAIRN_REDACTION_ALLOW (a JSON array of exact strings or `/regex/flags`) override `security` in the file.
 */
export function resolveSecurity(env: NodeJS.ProcessEnv, file: CairnConfigFile['security']): SecuritySettings {
  const filter: Partial<IngestFilterConfig> = { ...file?.filter };
  const enabled = envBoolean(env, 'CAIRN_FILTER');
  if (enabled !== undefined) filter.enabled = enabled;
  const threshold = envNumber(env, 'CAIRN_FILTER_THRESHOLD');
  if (threshold !== undefined) filter.threshold = threshold;
  const learned = envNumber(env, 'CAIRN_FILTER_LEARNED_THRESHOLD');
  if (learned !== undefined) filter.learnedThreshold = learned;

  const mode = (env['CAIRN_REDACTION']?.trim() || file?.redaction?.mode || 'redact') as RedactionMode;
  if (!['off', 'redact', 'reject'].includes(mode)) {
    throw new CairnError('INVALID_INPUT', `CAIRN_REDACTION must be off, redact or reject (got ${JSON.stringify(mode)})`, { field: 'CAIRN_REDACTION' });
  }
  let allow: string[] = file?.redaction?.allow ?? [];
  const allowEnv = env['CAIRN_REDACTION_ALLOW'];
  if (allowEnv?.trim()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(allowEnv);
    } catch {
      parsed = null;
    }
    if (!Array.isArray(parsed) || parsed.some((x) => typeof x !== 'string' || x === '')) {
      throw new CairnError('INVALID_INPUT', 'CAIRN_REDACTION_ALLOW must be a JSON array of strings (exact values or /regex/flags)', { field: 'CAIRN_REDACTION_ALLOW' });
    }
    allow = parsed as string[];
  }
  const entries = allow.map(parseAllowEntry);
  for (const kind of [...(file?.redaction?.enable ?? []), ...(file?.redaction?.disable ?? [])]) {
    if (!REDACTION_KINDS.includes(kind)) {
      throw new CairnError('INVALID_INPUT', `security.redaction: unknown kind ${kind}; known: ${REDACTION_KINDS.join(', ')}`, { field: 'security.redaction' });
    }
  }
  return {
    filter,
    redaction: {
      mode,
      allowExact: entries.flatMap((e) => (e.exact === undefined ? [] : [e.exact])),
      allowPatterns: entries.flatMap((e) => (e.pattern === undefined ? [] : [e.pattern])),
      enable: file?.redaction?.enable ?? [],
      disable: file?.redaction?.disable ?? [],
    },
  };
}

/** CAIRN_EMBED_WORKERS: a whole number of threads, `0` for the main thread, default (or `auto`) one per core. */
function embedWorkers(env: NodeJS.ProcessEnv): number {
  const raw = env['CAIRN_EMBED_WORKERS']?.trim();
  if (!raw || raw === 'auto') return availableParallelism();
  if (!/^\d+$/u.test(raw) || Number(raw) > 64) {
    throw new CairnError('INVALID_INPUT', `CAIRN_EMBED_WORKERS must be auto or a whole number from 0 to 64 (got ${JSON.stringify(raw)})`, { field: 'CAIRN_EMBED_WORKERS' });
  }
  return Number(raw);
}

/** CAIRN_EMBED_NICE: 0 to 19 added to the embedding threads' nice value (Linux), default 0. */
function embedNice(env: NodeJS.ProcessEnv): number {
  const raw = env['CAIRN_EMBED_NICE']?.trim();
  if (!raw) return DEFAULT_NICE;
  if (!/^\d+$/u.test(raw) || Number(raw) > 19) {
    throw new CairnError('INVALID_INPUT', `CAIRN_EMBED_NICE must be a whole number from 0 to 19 (got ${JSON.stringify(raw)})`, { field: 'CAIRN_EMBED_NICE' });
  }
  return Number(raw);
}

/**
 * `pool` (long-lived processes: serve, mcp) runs the local model on worker threads, batching concurrent
 * requests, unless CAIRN_EMBED_WORKERS=0; every other command embeds on its own thread. The pool is
 * returned too, so that close() stops its threads.
 */
export function buildEmbedder(config: ResolvedConfig['embedder'], options: { pool?: boolean } = {}): { embedder: Embedder | null; pool: PoolEmbedder | null } {
  if (config.provider === 'use' && options.pool && config.workers > 0) {
    const pool = createPoolEmbedder({ workers: config.workers, nice: config.nice });
    return { embedder: keepFixedVectors(createCachingEmbedder(pool, 2000), config.fixedVectorsDir), pool };
  }
  const single = buildSingleEmbedder(config);
  return { embedder: single && keepFixedVectors(single, config.fixedVectorsDir), pool: null };
}

function buildSingleEmbedder(config: ResolvedConfig['embedder']): Embedder | null {
  switch (config.provider) {
    case 'none':
      return null;
    case 'use':
      // A long-running process (the MCP server) sees the same queries again and again: cache their vectors.
      return createCachingEmbedder(createUseEmbedder(), 2000);
    case 'openai':
      if (!config.baseUrl || !config.model || !config.dimensions) {
        throw new CairnError('INVALID_INPUT', 'the openai embedder needs CAIRN_EMBED_BASE_URL, CAIRN_EMBED_MODEL and CAIRN_EMBED_DIMENSIONS');
      }
      return createHttpEmbedder({ baseUrl: config.baseUrl, model: config.model, dimensions: config.dimensions, apiKey: config.apiKey });
  }
}

export interface OpenEngineOptions {
  /** Skip the embedder (commands that must not load a model, e.g. hooks' gate). */
  withoutEmbedder?: boolean;
  /**
   * A long-lived process (serve, mcp): embed on a pool of worker threads (see buildEmbedder), and let the
   * SQLite store build neighbour graphs for approximate searches (a short process would stop every build it
   * started on close, so it keeps the exact scan) and keep BM25 posting lists in memory (a short process would
   * read them for one search); the PostgreSQL store proposes candidates from copies of the searched namespaces.
   */
  longLived?: boolean;
  logger?: Logger;
}

export interface OpenedEngine {
  engine: Engine;
  /** Access tokens of the HTTP server, kept in the same store. */
  access: AccessControl;
  /**
   * An empty throwaway store for replay (`cairn verify`), and where it is: on PostgreSQL a schema of its own
   * on the same database, so the proof runs on the backend itself, or an in-memory SQLite store when the role
   * may not create a schema (`where` says why); an in-memory SQLite store for a SQLite database.
   */
  scratchStore(): Promise<{ store: Store; where: string }>;
  config: ResolvedConfig;
  logger: Logger;
  /** The git working tree of the current directory (answers nothing outside one or without git). */
  repository: GitRepository;
  close(): Promise<void>;
}

/**
 * The PostgreSQL store's code, loaded only when a postgres:// database is configured: a short command on the
 * embedded store (a hook) does not compile it.
 */
const postgresStore = () => import('../adapters/postgres/postgres-store.js');

/** Builds the engine with concrete adapters from flags, environment and config file. */
export async function openEngine(flags: CliFlags, options: OpenEngineOptions = {}, environment?: Environment): Promise<OpenedEngine> {
  const config = await resolveConfig(flags, environment);
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  // Only a long-lived process builds a missing HNSW index in the background; a short one would wait for it.
  const pgStore = config.postgres ? (await postgresStore()).createPostgresStore({ ...config.postgres, buildVectorIndexInBackground: options.longLived === true, recallCopies: options.longLived === true }, logger) : null;
  const store: Store = pgStore ?? createSqliteStore({ path: config.dbPath, vectorIndex: { neighbourGraphs: options.longLived === true, scanWorker: options.longLived === true, coarseLists: options.longLived === true }, postingCache: options.longLived === true });
  const reranker: Reranker | null = config.reranker === 'overlap' ? createOverlapReranker() : null;
  // Code awareness (anchors, staleness, branch scope) for the repository the process runs in; detected
  // lazily on first use, so commands that never touch memory pay nothing.
  const repository = createGitRepository({ cwd: environment?.cwd ?? process.cwd() });
  const { embedder, pool } = options.withoutEmbedder ? { embedder: null, pool: null } : buildEmbedder(config.embedder, { pool: options.longLived });
  const engine = new Engine({
    store,
    embedder,
    reranker,
    tokenCounter: createGptTokenCounter({ tableDir: config.tokenizerDir }),
    defaultNamespace: config.namespace,
    weights: config.weights,
    logger,
    ingestFilter: config.security.filter,
    redaction: config.security.redaction,
    repository,
  });
  if (options.longLived) await engine.preload();
  return {
    engine,
    repository,
    access: new AccessControl({ store }),
    config,
    logger,
    scratchStore: async () => {
      if (!pgStore) return { store: createSqliteStore({ path: ':memory:' }), where: 'in-memory SQLite' };
      try {
        const scratch = await pgStore.createScratchStore();
        return { store: scratch, where: `PostgreSQL schema ${scratch.schema} on the same database (dropped afterwards)` };
      } catch (err) {
        const why = isCairnError(err) ? err.message : String(err);
        return { store: createSqliteStore({ path: ':memory:' }), where: `in-memory SQLite, because no scratch schema could be made on the server (${why})` };
      }
    },
    close: async () => {
      await pool?.close();
      await store.close();
    },
  };
}

/**
 * A store at `location` outside any engine (`cairn migrate`): a file path (relative to the working directory),
 * or a URL of a backend this build has. With `mustExist`, a missing file is refused instead of created.
 */
export async function openStoreAt(location: string, options: { mustExist: boolean }, environment?: Environment): Promise<Store> {
  if (isPostgresUrl(location)) {
    // The database itself must exist either way (a missing one fails here, naming it); an empty one is migrated.
    const { createPostgresStore } = await postgresStore();
    const store = createPostgresStore(resolvePostgres(location, environment?.env ?? process.env, undefined));
    try {
      await store.open();
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }
  const path = resolveDbPath(location, {}, environment?.cwd ?? process.cwd(), undefined);
  if (options.mustExist && !existsSync(path)) {
    throw new CairnError('NOT_FOUND', `no database at ${path}`, { field: 'from', hint: 'give --from an existing cairn database file' });
  }
  return createSqliteStore({ path });
}

/** Where agents keep their user-level configuration (`cairn init` writes Kimi Code's hooks there). */
export function agentHomes(env: NodeJS.ProcessEnv = process.env): { home: string; kimiHome: string; claudeConfig: string; cursorHome: string; geminiHome: string; codexHome: string; opencodeConfig: string } {
  const home = env['HOME'] || homedir();
  const dir = (name: string, fallback: string) => (env[name] ? resolve(env[name] as string) : fallback);
  return {
    home,
    kimiHome: dir('KIMI_CODE_HOME', join(home, '.kimi-code')),
    // Claude Code keeps its user settings and local-scope MCP servers in one file, moved by CLAUDE_CONFIG_DIR.
    claudeConfig: join(dir('CLAUDE_CONFIG_DIR', home), '.claude.json'),
    cursorHome: join(home, '.cursor'),
    geminiHome: join(home, '.gemini'),
    codexHome: dir('CODEX_HOME', join(home, '.codex')),
    opencodeConfig: join(dir('XDG_CONFIG_HOME', join(home, '.config')), 'opencode'),
  };
}

/** The top level of the git work tree `cwd` is in, or null outside git. */
export function gitTopLevel(cwd: string): string | null {
  return git(cwd, ['rev-parse', '--show-toplevel']);
}
