// Token-budgeted blocks for an agent: the context of a query and the brief of a session's start.
import type { ContextOptions, ContextPack, Memory } from '../interfaces/memory.js';
import { isActive } from '../interfaces/memory.js';
import { packSections, renderHeader, renderMemoryLine, renderNothingRecalled } from './render.js';
import { validateLimit, validateTokenBudget, MAX_LIMIT } from './validate.js';
import type { EngineContext } from './engine-context.js';
import { countAsRecalled, search } from './recall.js';

export const DEFAULT_TOKEN_BUDGET = 1000;
/** Token budget of a session brief (see Engine.brief). */
export const DEFAULT_BRIEF_TOKENS = 800;
const ROUTES_TITLE = 'Routes (where things live):';
const MEMORIES_TITLE = 'Memories:';

export interface BriefOptions {
  namespace?: string | undefined;
  /** Maximum tokens of the brief; default 800. */
  tokenBudget?: number | undefined;
  /** Memories considered from each of the two lists (most important, most recent); default 30. */
  limit?: number | undefined;
}

export interface BriefPack {
  /** The rendered brief, at most tokenBudget tokens; '' when the namespace holds no live memory. */
  text: string;
  tokens: number;
  /** The memories in the brief: routes first, then the others, in brief order. */
  memories: Memory[];
  /** Live memories of the namespace left out. */
  omitted: number;
}


/**
 * Packs the best memories and routes for `query` into one block of at most `tokenBudget` tokens
 * (default 1000), counted with a real tokenizer. The size of the store never changes the bound.
 */
export async function packContext(ctx: EngineContext, query: string, options: ContextOptions = {}): Promise<ContextPack> {
  const namespace = ctx.ns(options.namespace);
  const budget = options.tokenBudget === undefined ? DEFAULT_TOKEN_BUDGET : validateTokenBudget(options.tokenBudget);
  const limit = options.limit === undefined ? 40 : validateLimit(options.limit, 'limit', MAX_LIMIT);
  // Only what is packed into the block reaches the agent, so only that counts as recalled.
  const found = await search(ctx, query, { namespace, limit, countRecall: false, ...(options.weights ? { weights: options.weights } : {}) });
  if (found.length === 0) {
    if (options.emptyWhenNothing) return { text: '', tokens: 0, memories: [], routes: [], omitted: 0 };
    const text = renderNothingRecalled(namespace);
    return { text, tokens: await ctx.tokens.count(text), memories: [], routes: [], omitted: 0 };
  }
  const { text, tokens, packed } = await packSections(
    renderHeader(namespace, 'Recalled memory'),
    [
      { title: ROUTES_TITLE, items: found.filter((r) => r.memory.kind === 'route') },
      { title: MEMORIES_TITLE, items: found.filter((r) => r.memory.kind !== 'route') },
    ],
    (r) => renderMemoryLine(r.memory, r.stale),
    budget,
    (t) => ctx.tokens.count(t),
  );
  const [routes = [], memories = []] = packed;
  await countAsRecalled(ctx, namespace, [...routes, ...memories].map((r) => r.memory), ctx.now());
  return { text, tokens, memories, routes, omitted: found.length - routes.length - memories.length };
}

/**
 * A brief of the namespace for the start of a session: its most important and its most recent live
 * memories, alternating (the most important first, then the most recent, never twice), packed like
 * `context` into at most `tokenBudget` tokens (default 800) counted with the real tokenizer, each memory
 * quoted with its source and date. Needs no embedder. Reads the namespace's memories once, in pages,
 * keeping only the best `limit` by importance: memory stays bounded whatever the store's size.
 */
export async function packBrief(ctx: EngineContext, options: BriefOptions = {}): Promise<BriefPack> {
  const namespace = ctx.ns(options.namespace);
  const budget = options.tokenBudget === undefined ? DEFAULT_BRIEF_TOKENS : validateTokenBudget(options.tokenBudget);
  const limit = options.limit === undefined ? 30 : validateLimit(options.limit, 'limit', MAX_LIMIT);
  const now = ctx.now();
  const byImportance = (a: Memory, b: Memory) => b.importance - a.importance || (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0);
  let important: Memory[] = [];
  let live = 0;
  for await (const page of ctx.store.iterateMemories(namespace, 500)) {
    const active = page.filter((m) => isActive(m, now));
    live += active.length;
    important = [...important, ...active].sort(byImportance).slice(0, limit);
  }
  const recent = await ctx.store.listMemories({ namespace, limit, now });
  const chosen: Memory[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < Math.max(important.length, recent.length); i++) {
    for (const m of [important[i], recent[i]]) {
      if (m && !seen.has(m.id)) {
        seen.add(m.id);
        chosen.push(m);
      }
    }
  }
  const shown = await ctx.code.visible(chosen, (m) => m);
  const { text, tokens, packed } = await packSections(
    renderHeader(namespace, 'Memory brief (most important and most recent)'),
    [
      { title: ROUTES_TITLE, items: shown.filter((m) => m.kind === 'route') },
      { title: MEMORIES_TITLE, items: shown.filter((m) => m.kind !== 'route') },
    ],
    (m) => renderMemoryLine(m),
    budget,
    (t) => ctx.tokens.count(t),
  );
  const kept = packed.flat();
  return { text: kept.length ? text : '', tokens: kept.length ? tokens : 0, memories: kept, omitted: live - kept.length };
}
