import { isAcknowledgement, isHarnessMarkup, isSlashCommand } from '../../core/capture.js';
import type { HookSettings } from '../settings.js';
import { writeContext } from './session-start.js';
import { stringField, type HookContext, type HookOutcome } from './hook-io.js';

/**
 * The UserPromptSubmit hook: memories relevant to the prompt, quoted with source and date, added next to
 * it — or nothing, when recall is not ready `deadlineMs` after the hook started (300 ms by default; the
 * prompt must never wait on memory). A cold process cannot load the local embedding model in that time
 * (about 1.5 s), so with the default embedder recall is lexical plus recency (`vector: 0`), which needs no
 * model; an HTTP embedder is tried as configured. Slash commands, acknowledgements and empty prompts
 * recall nothing. Opt out with CAIRN_PROMPT_RECALL=off or `hooks.promptRecall.enabled: false`.
 *
 * Kimi Code runs the same command: its input carries `client_type`, its prompt may be a list of content
 * parts, and it injects a hook's `message` rather than Claude Code's `additionalContext`.
 */

/** Characters of the prompt used as the query: a long paste adds noise, not precision. */
const MAX_QUERY_CHARS = 2000;
const RESULTS = 5;

export async function handleUserPromptSubmit(ctx: HookContext, settings: HookSettings['promptRecall']): Promise<HookOutcome> {
  if (!settings.enabled) return { code: 0 };
  const prompt = promptText(ctx.input['prompt']);
  if (!prompt || isSlashCommand(prompt) || isHarnessMarkup(prompt) || isAcknowledgement(prompt)) return { code: 0 };
  const deadline = ctx.startedAt + settings.deadlineMs;
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const late = new Promise<null>((resolvePromise) => {
    timer = setTimeout(
      () => {
        timedOut = true;
        resolvePromise(null);
      },
      Math.max(0, deadline - performance.now()),
    );
  });
  const work = recall(ctx, prompt.slice(0, MAX_QUERY_CHARS), settings.tokenBudget).catch((err: unknown) => {
    ctx.log.warn('user-prompt-submit: recall failed; nothing injected', { error: (err as Error).message });
    return null;
  });
  const answer = await Promise.race([work, late]);
  clearTimeout(timer);
  // Synchronous work (a query, a module load) can run past the timer; an answer after the deadline is dropped.
  // The timer may also fire a fraction of a millisecond before the clock reads the deadline: it still missed.
  const elapsed = performance.now() - ctx.startedAt;
  const missed = elapsed > settings.deadlineMs || (timedOut && answer === null);
  if (missed) {
    ctx.log.info('user-prompt-submit: recall missed its deadline; nothing injected', { deadlineMs: settings.deadlineMs, ms: Math.round(elapsed) });
    return { code: 0, abandoned: answer === null };
  }
  if (answer === null) return { code: 0 };
  if (answer.text) {
    if (typeof ctx.input['client_type'] === 'string') ctx.streams.stdout.write(`${JSON.stringify({ message: answer.text })}\n`);
    else writeContext(ctx.streams.stdout, 'UserPromptSubmit', answer.text);
  }
  ctx.log.debug('user-prompt-submit: recalled', { memories: answer.count, ms: Math.round(elapsed) });
  return { code: 0 };
}

/** The prompt as text: a string, or the text parts of a content-part list. */
function promptText(value: unknown): string | null {
  if (typeof value === 'string') return value.trim() ? value : null;
  if (!Array.isArray(value)) return null;
  const parts = value
    .map((p) => (typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'text' ? (p as { text?: unknown }).text : null))
    .filter((t): t is string => typeof t === 'string' && t.trim() !== '');
  return parts.length ? parts.join('\n') : null;
}

async function recall(ctx: HookContext, query: string, tokenBudget: number): Promise<{ text: string; count: number } | null> {
  const { openEngine } = await import('../open-engine.js');
  const cwd = stringField(ctx.input, 'cwd') ?? ctx.streams.cwd;
  const opened = await openEngine({ db: ctx.dbPath, namespace: ctx.streams.flags?.namespace }, { logger: ctx.log }, { env: ctx.streams.env, cwd });
  try {
    // Only a remote embedder can answer in time; the local model's load alone exceeds the deadline, so
    // without one the vector signal is off and no model is loaded.
    const remote = opened.config.embedder.provider === 'openai';
    const weights = remote ? {} : { weights: { vector: 0 } };
    // Most prompts match nothing: then the tokenizer, which packing needs, is not loaded (emptyWhenNothing). One
    // search either way (on a PostgreSQL store of 100k, a search of a 42-term prompt takes about 0.3 s).
    const pack = await opened.engine.context(query, { tokenBudget, limit: RESULTS, emptyWhenNothing: true, ...weights });
    const count = pack.memories.length + pack.routes.length;
    return { text: count > 0 ? pack.text : '', count };
  } finally {
    await opened.close();
  }
}
