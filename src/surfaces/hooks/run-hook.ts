import { DEFAULT_HOOK_SETTINGS, localDataDir, resolveDbPath, resolveLightConfig, type HookSettings } from '../settings.js';
import { createHookLog, parseInput, readInput, type HookContext, type HookOutcome, type HookStreams } from './hook-io.js';

/**
 * Runs one Claude Code hook: reads its JSON input, dispatches to the handler of the event, and turns
 * every failure into exit 0 plus a line in `<data dir>/hooks.log` — a memory hook must never break the
 * session it serves. The one deliberate non-zero exit is the Stop gate's 2. Handlers load lazily, so the
 * Stop gate never loads what the other events need.
 */

export const HOOK_EVENTS = ['pre-compact', 'stop', 'session-start', 'user-prompt-submit'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export function isHookEvent(value: string): value is HookEvent {
  return (HOOK_EVENTS as readonly string[]).includes(value);
}

export async function runHook(event: string, streams: HookStreams): Promise<HookOutcome> {
  const startedAt = performance.now();
  let settings: HookSettings = DEFAULT_HOOK_SETTINGS;
  let dbPath: string;
  let configProblem: string | null = null;
  try {
    const light = resolveLightConfig({ db: streams.flags?.db }, { env: streams.env, cwd: streams.cwd });
    settings = light.hooks;
    dbPath = light.dbPath;
  } catch (err) {
    configProblem = (err as Error).message;
    // Log next to the database the flags or the environment name; the config file is what failed.
    dbPath = resolveDbPath(streams.flags?.db, streams.env, streams.cwd, undefined);
  }
  const dataDir = localDataDir(dbPath, streams.env);
  const { log } = createHookLog(dataDir, streams.env);
  if (!isHookEvent(event)) {
    streams.stderr.write(`cairn hook: unknown event ${JSON.stringify(event)}; expected one of ${HOOK_EVENTS.join(', ')}\n`);
    log.warn('unknown hook event', { event });
    return { code: 0 };
  }
  if (configProblem) {
    // A broken configuration must not hold a session hostage: the hooks step aside until it is fixed.
    log.error(`${event}: configuration problem; hook skipped`, { error: configProblem });
    return { code: 0 };
  }
  const raw = await readInput(streams.stdin);
  if (raw.problem) log.warn(`${event}: ${raw.problem}`);
  const { input, problem } = parseInput(raw.text);
  if (problem) {
    log.warn(`${event}: ${problem}; hook skipped`, { bytes: raw.text.length });
    return { code: 0 };
  }
  const ctx: HookContext = { input, streams, log, dbPath, dataDir, startedAt };
  try {
    switch (event) {
      case 'stop':
        return await (await import('./stop.js')).handleStop(ctx, settings.stopGate);
      case 'pre-compact':
        return await (await import('./pre-compact.js')).handlePreCompact(ctx, settings.preCompact.background);
      case 'session-start':
        return await (await import('./session-start.js')).handleSessionStart(ctx);
      case 'user-prompt-submit':
        return await (await import('./user-prompt-submit.js')).handleUserPromptSubmit(ctx, settings.promptRecall);
    }
  } catch (err) {
    log.error(`${event}: failed`, { error: (err as Error).message, stack: (err as Error).stack?.split('\n').slice(1, 4).join(' | ') });
    return { code: 0 };
  }
}
