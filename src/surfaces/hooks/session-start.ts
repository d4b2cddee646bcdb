import { pruneStates, stringField, type HookContext, type HookOutcome } from './hook-io.js';

/**
 * The SessionStart hook: a brief of this repository's most important and most recent memories, at most
 * 800 tokens, quoted with source and date (Engine.brief), handed to Claude Code as additional context.
 * The namespace comes from the session's working directory. No model is loaded; nothing is printed when
 * the namespace holds no memory.
 */
export async function handleSessionStart(ctx: HookContext): Promise<HookOutcome> {
  // Once per session is often enough to drop the state of sessions long gone.
  const pruned = pruneStates(ctx.dataDir);
  if (pruned) ctx.log.debug('session-start: removed old hook state files', { pruned });
  const { openEngine } = await import('../open-engine.js');
  const cwd = stringField(ctx.input, 'cwd') ?? ctx.streams.cwd;
  const opened = await openEngine(
    { db: ctx.dbPath, namespace: ctx.streams.flags?.namespace },
    { logger: ctx.log, withoutEmbedder: true },
    { env: ctx.streams.env, cwd },
  );
  try {
    const brief = await opened.engine.brief();
    if (brief.memories.length === 0) return { code: 0 };
    writeContext(ctx.streams.stdout, 'SessionStart', brief.text);
    ctx.log.debug('session-start: brief injected', { namespace: opened.config.namespace, memories: brief.memories.length, tokens: brief.tokens, omitted: brief.omitted });
    return { code: 0 };
  } finally {
    await opened.close();
  }
}

/** The JSON answer that adds context for the model; the only thing a hook ever writes to stdout. */
export function writeContext(stdout: NodeJS.WritableStream, hookEventName: string, additionalContext: string): void {
  stdout.write(`${JSON.stringify({ hookSpecificOutput: { hookEventName, additionalContext } })}\n`);
}
