import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { isPostgresUrl, redactUrl } from '../adapters/postgres/postgres-config.js';
import { DEFAULT_STOP_GATE, type StopGateThresholds } from '../core/stop-gate.js';
import { CairnError } from '../interfaces/errors.js';

/**
 * The light part of the composition root: where cairn keeps its files and how its hooks behave, resolved
 * from flags, environment and config file without loading zod, the database driver or the engine.
 * `open-engine.ts` builds on these functions (one copy of each rule); the Stop gate uses them alone,
 * because it must answer in about 100 ms and those imports cost most of that before any work.
 * Nothing here reads `process.env` itself: the environment is passed in.
 */

export interface HookSettings {
  stopGate: StopGateThresholds & { enabled: boolean };
  promptRecall: {
    enabled: boolean;
    /** The hook injects nothing when recall is not ready this many milliseconds after the hook started. */
    deadlineMs: number;
    /** Token budget of what one prompt gets. */
    tokenBudget: number;
  };
  preCompact: {
    /** Save in a detached worker, so compaction does not wait for the embedding model (default true). */
    background: boolean;
  };
}

export const DEFAULT_HOOK_SETTINGS: HookSettings = {
  stopGate: { enabled: true, ...DEFAULT_STOP_GATE },
  promptRecall: { enabled: true, deadlineMs: 300, tokenBudget: 400 },
  preCompact: { background: true },
};

export function dataHome(env: NodeJS.ProcessEnv): string {
  return env['XDG_DATA_HOME'] || join(env['HOME'] || homedir(), '.local', 'share');
}

export function cacheHome(env: NodeJS.ProcessEnv): string {
  return env['XDG_CACHE_HOME'] || join(env['HOME'] || homedir(), '.cache');
}

export function configPath(env: NodeJS.ProcessEnv): string {
  if (env['CAIRN_CONFIG']) return resolve(env['CAIRN_CONFIG']);
  return join(env['XDG_CONFIG_HOME'] || join(env['HOME'] || homedir(), '.config'), 'cairn', 'config.json');
}

/**
 * The database: flag > CAIRN_DB > the config file's `db` > `<data home>/cairn/cairn.db`. A PostgreSQL URL
 * (`postgres://…`, `postgresql://…`) is returned as it is; any other URL scheme (`mysql://…`) names a backend
 * this build does not have and is refused rather than taken as a relative path (which would create a folder
 * `mysql:`); anything else is a file path.
 */
export function resolveDbPath(flagDb: string | undefined, env: NodeJS.ProcessEnv, cwd: string, fileDb: string | undefined): string {
  const given = flagDb || env['CAIRN_DB'] || fileDb;
  if (given && isPostgresUrl(given)) return given;
  const scheme = given ? /^([A-Za-z][A-Za-z0-9+.-]+):\/\//u.exec(given)?.[1] : undefined;
  if (scheme) {
    throw new CairnError('UNSUPPORTED', `database ${JSON.stringify(given ? redactUrl(given) : given)}: the ${scheme}: scheme is not supported; cairn stores memory in an SQLite file or in PostgreSQL (postgres://…)`, {
      field: 'db',
      hint: 'give --db / CAIRN_DB a file path or a postgres:// URL',
    });
  }
  return resolve(cwd, given || join(dataHome(env), 'cairn', 'cairn.db'));
}

/**
 * The local folder for files kept beside the memory (hook logs, capture jobs): the database file's folder,
 * or `<data home>/cairn` when the memory lives on a PostgreSQL server.
 */
export function localDataDir(dbPath: string, env: NodeJS.ProcessEnv): string {
  return isPostgresUrl(dbPath) ? join(dataHome(env), 'cairn') : dirname(dbPath);
}

/** The database as it may be printed: a URL's password is hidden. */
export function displayDb(dbPath: string): string {
  return isPostgresUrl(dbPath) ? redactUrl(dbPath) : dbPath;
}

function invalid(field: string, message: string): CairnError {
  return new CairnError('INVALID_INPUT', `${field}: ${message}`, { field });
}

function onOff(value: string, field: string): boolean {
  const v = value.trim().toLowerCase();
  if (['on', 'true', '1', 'yes'].includes(v)) return true;
  if (['off', 'false', '0', 'no'].includes(v)) return false;
  throw invalid(field, `must be on or off (got ${JSON.stringify(value)})`);
}

function wholeNumber(value: unknown, field: string, min: number, max: number): number {
  const n = typeof value === 'string' && /^\s*\d+\s*$/u.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw invalid(field, `must be a whole number from ${min} to ${max} (got ${JSON.stringify(value)})`);
  }
  return n;
}

function section(raw: unknown, field: string, keys: string[]): Record<string, unknown> {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(field, 'must be an object');
  for (const key of Object.keys(raw)) if (!keys.includes(key)) throw invalid(`${field}.${key}`, `unknown field; allowed: ${keys.join(', ')}`);
  return raw as Record<string, unknown>;
}

/**
 * The hook settings: environment > the config file's `hooks` object > defaults. Config file shape:
 * `{ "hooks": { "stopGate": { "enabled", "minToolCalls", "interval", "readOnlyEntries" },
 *               "promptRecall": { "enabled", "deadlineMs", "tokenBudget" },
 *               "preCompact": { "background" } } }`.
 * Environment: CAIRN_STOP_GATE (on/off), CAIRN_STOP_MIN_TOOL_CALLS, CAIRN_STOP_INTERVAL,
 * CAIRN_STOP_READ_ONLY_ENTRIES, CAIRN_PROMPT_RECALL (on/off), CAIRN_PROMPT_RECALL_DEADLINE_MS,
 * CAIRN_PROMPT_RECALL_TOKENS, CAIRN_PRE_COMPACT_BACKGROUND (on/off). Throws INVALID_INPUT naming the bad field.
 */
export function parseHookSettings(fileHooks: unknown, env: NodeJS.ProcessEnv): HookSettings {
  const hooks = section(fileHooks, 'hooks', ['stopGate', 'promptRecall', 'preCompact']);
  const gate = section(hooks['stopGate'], 'hooks.stopGate', ['enabled', 'minToolCalls', 'interval', 'readOnlyEntries']);
  const prompt = section(hooks['promptRecall'], 'hooks.promptRecall', ['enabled', 'deadlineMs', 'tokenBudget']);
  const compact = section(hooks['preCompact'], 'hooks.preCompact', ['background']);
  const d = DEFAULT_HOOK_SETTINGS;
  const flag = (envKey: string, fileValue: unknown, field: string, fallback: boolean): boolean => {
    const e = env[envKey];
    if (e !== undefined && e !== '') return onOff(e, envKey);
    if (fileValue === undefined) return fallback;
    if (typeof fileValue !== 'boolean') throw invalid(field, 'must be true or false');
    return fileValue;
  };
  const num = (envKey: string, fileValue: unknown, field: string, fallback: number, min: number, max: number): number => {
    const e = env[envKey];
    if (e !== undefined && e !== '') return wholeNumber(e, envKey, min, max);
    return fileValue === undefined ? fallback : wholeNumber(fileValue, field, min, max);
  };
  return {
    stopGate: {
      enabled: flag('CAIRN_STOP_GATE', gate['enabled'], 'hooks.stopGate.enabled', d.stopGate.enabled),
      minToolCalls: num('CAIRN_STOP_MIN_TOOL_CALLS', gate['minToolCalls'], 'hooks.stopGate.minToolCalls', d.stopGate.minToolCalls, 0, 10_000),
      interval: num('CAIRN_STOP_INTERVAL', gate['interval'], 'hooks.stopGate.interval', d.stopGate.interval, 1, 10_000),
      readOnlyEntries: num('CAIRN_STOP_READ_ONLY_ENTRIES', gate['readOnlyEntries'], 'hooks.stopGate.readOnlyEntries', d.stopGate.readOnlyEntries, 1, 10_000),
    },
    promptRecall: {
      enabled: flag('CAIRN_PROMPT_RECALL', prompt['enabled'], 'hooks.promptRecall.enabled', d.promptRecall.enabled),
      deadlineMs: num('CAIRN_PROMPT_RECALL_DEADLINE_MS', prompt['deadlineMs'], 'hooks.promptRecall.deadlineMs', d.promptRecall.deadlineMs, 10, 60_000),
      tokenBudget: num('CAIRN_PROMPT_RECALL_TOKENS', prompt['tokenBudget'], 'hooks.promptRecall.tokenBudget', d.promptRecall.tokenBudget, 50, 4000),
    },
    preCompact: {
      background: flag('CAIRN_PRE_COMPACT_BACKGROUND', compact['background'], 'hooks.preCompact.background', d.preCompact.background),
    },
  };
}

export interface LightConfig {
  dbPath: string;
  hooks: HookSettings;
}

/**
 * Where the database lives and the hook settings, for callers that must not pay for the full
 * configuration (the Stop gate). Reads the config file as JSON and looks only at `db` and `hooks`; the
 * rest of the file is validated by `resolveConfig` in open-engine.ts when an engine is opened.
 */
export function resolveLightConfig(flags: { db?: string | undefined }, environment: { env: NodeJS.ProcessEnv; cwd: string }): LightConfig {
  const { env, cwd } = environment;
  const path = configPath(env);
  let file: Record<string, unknown> = {};
  if (existsSync(path)) {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new CairnError('INVALID_INPUT', `config file ${path} is not valid JSON: ${(err as Error).message}`, { cause: err });
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new CairnError('INVALID_INPUT', `config file ${path}: must hold a JSON object`);
    file = raw as Record<string, unknown>;
  } else if (env['CAIRN_CONFIG']) {
    throw new CairnError('INVALID_INPUT', `config file ${path} does not exist`, { field: 'CAIRN_CONFIG' });
  }
  const fileDb = file['db'];
  if (fileDb !== undefined && (typeof fileDb !== 'string' || fileDb === '')) throw invalid('db', 'must be a non-empty string');
  return { dbPath: resolveDbPath(flags.db, env, cwd, fileDb as string | undefined), hooks: parseHookSettings(file['hooks'], env) };
}
