import { z } from 'zod';
import * as V from '../../core/validate.js';
import { checked, says, type Validator } from '../zod-checks.js';
import { STALE_STATUSES } from '../../interfaces/code.js';
import { FEEDBACK_VERDICTS, MEMORY_KINDS, MEMORY_SCOPES, ORIGINS } from '../../interfaces/memory.js';

/**
 * Input and output schemas of the MCP tools. They describe the arguments to the model (their JSON Schema: types,
 * enums and ranges, the ranges taken from core/validate.ts's constants) and reject malformed calls before
 * anything runs, each value by the core's own validator (`checked`, with its message), which the engine
 * applies again: a rule is written once, in validate.ts.
 */

/** A whole number in a range, as the core checks it. */
const wholeNumber = (range: { min: number; max: number }, validate: Validator) => {
  const s = says(validate);
  return checked(z.number(s).int(s).min(range.min, s).max(range.max, s), validate);
};

const Namespace = checked(z.string(says(V.validateNamespace)).min(1, says(V.validateNamespace)).max(V.MAX_NAMESPACE_LENGTH, says(V.validateNamespace)), V.validateNamespace);
const Text = checked(z.string(says(V.validateText)), V.validateText);
const Importance = wholeNumber(V.IMPORTANCE_RANGE, V.validateImportance);
const TokenBudget = wholeNumber(V.TOKEN_BUDGET_RANGE, V.validateTokenBudget);
const Tags = checked(z.array(z.string(says(V.validateTag)), says(V.validateTags)), V.validateTags);
const ProvenanceValue = checked(z.string(says(V.validateProvenanceValue)).max(V.MAX_PROVENANCE_CHARS, says(V.validateProvenanceValue)), V.validateProvenanceValue);
const Origin = z.enum(ORIGINS, says(V.validateOrigin));
const Scope = z.enum(MEMORY_SCOPES, says(V.validateScope));
const Verdict = z.enum(FEEDBACK_VERDICTS, says(V.validateVerdict));
const RoutePaths = checked(z.array(z.string(), says(V.validateRoutePaths)).max(V.MAX_ROUTE_PATHS, says(V.validateRoutePaths)), V.validateRoutePaths);
const lines = says(V.validateAnchorLines);
/** The tools take anchors as objects only: a bare path gets the message of anything else that is not one. */
const anchorObject: Validator = (value, field) => V.validateAnchor(typeof value === 'string' ? null : value, field);
const Anchor = z.strictObject(
  {
    path: z.string(says(V.validateAnchorPath)),
    symbol: z.string(says(V.validateAnchorSymbol)).regex(V.ANCHOR_SYMBOL, says(V.validateAnchorSymbol)).optional(),
    lines: z.tuple([z.number(lines).int(lines).min(1, lines), z.number(lines).int(lines).min(1, lines)], lines).optional(),
  },
  says(anchorObject),
);
const Anchors = checked(z.array(Anchor, says(V.validateAnchors)).max(V.MAX_ANCHORS, says(V.validateAnchors)), V.validateAnchors);

const namespace = Namespace.describe("Memory namespace; default: this project's (the git repository the server runs in)").optional();

const limit = (fallback: number) => {
  const validate: Validator = (value, field) => V.validateLimit(value, field, V.MAX_LIMIT);
  return wholeNumber({ min: 1, max: V.MAX_LIMIT }, validate).describe(`How many results (default ${fallback})`).optional();
};

const memoryId = (what: string) => z.string().min(1).describe(what);

/** The kinds a model may store; routes have their own tools. */
export const CATEGORIES = MEMORY_KINDS.filter((k) => k !== 'route') as [Exclude<(typeof MEMORY_KINDS)[number], 'route'>, ...Exclude<(typeof MEMORY_KINDS)[number], 'route'>[]];

/** Provenance a caller may add; `source` is always `mcp` and is not accepted. */
const metadata = z
  .strictObject({
    trigger: ProvenanceValue.optional(),
    sessionId: ProvenanceValue.optional(),
    origin: Origin.optional(),
    agent: ProvenanceValue.optional(),
    externalId: ProvenanceValue.optional(),
    speaker: ProvenanceValue.optional(),
  })
  .describe('Provenance: who or what produced this (source is always "mcp")')
  .optional();

export const SaveMemoryInput = z.strictObject({
  text: Text.describe('What to remember, self-contained (it will be read later without this conversation)'),
  supersedes: memoryId('Id of an older memory this one replaces (it leaves recall)').optional(),
  namespace,
  metadata,
});

export const SearchMemoryInput = z.strictObject({
  query: z.string().min(1).describe('What to look for, in plain words'),
  limit: limit(10),
  namespace,
});

export const MemoryStoreInput = z.strictObject({
  content: Text.describe('The memory, self-contained: what was decided or learned, and why'),
  category: z.enum(CATEGORIES).describe('decision | constraint | convention | gotcha | fact | note'),
  importance: Importance.describe('1 (trivia) to 10 (must never be missed); 5 is ordinary'),
  tags: Tags.describe(`Up to ${V.MAX_TAGS} short topic tags, e.g. ["auth", "billing"]; may be empty`),
  task_id: z.string().min(1).max(128).describe('The task this belongs to, if any').optional(),
  supersedes: memoryId('Id of an older memory this one replaces (it leaves recall)').optional(),
  anchors: Anchors.describe('Files it is about (paths from the repository top level), optionally a symbol or [first, last] lines; paths named in content are anchored anyway')
    .optional(),
  scope: Scope.describe('branch: recalled only on the current git branch until it merges; default: the repository setting').optional(),
  namespace,
});

export const ContextQueryInput = z.strictObject({
  query: z.string().min(1).describe('The task or question at hand'),
  limit: limit(40),
  token_budget: TokenBudget.describe('Upper bound of the returned block in tokens (default 1000)').optional(),
  namespace,
});

export const MemoryForgetInput = z.strictObject({
  id: memoryId('Id of the memory to forget'),
  reason: z.string().min(1).max(1000).describe('Why it no longer holds'),
  namespace,
});

export const MemoryReportAttackInput = z.strictObject({
  id: memoryId('Id of the recalled memory that is an attack'),
  reason: z.string().min(1).max(1000).describe('What it tries to make the agent do'),
  namespace,
});

export const MemoryRestoreInput = z.strictObject({
  id: memoryId('Id of a forgotten memory'),
  namespace,
});

const routePaths = RoutePaths.describe('Files or folders, e.g. ["src/billing/tax.ts"]');

export const RouteCreateInput = z.strictObject({
  title: z.string().min(1).max(200).describe('Short name of the area, e.g. "checkout tax"'),
  description: z.string().max(2000).describe('What lives there and what it is for'),
  paths: routePaths,
  namespace,
});

export const RouteUpdateInput = z.strictObject({
  id: memoryId('Id of the route to replace'),
  title: z.string().min(1).max(200).optional(),
  description: z.string().max(2000).optional(),
  paths: routePaths.optional(),
  namespace,
});

export const FollowMovesInput = z.strictObject({
  id: memoryId('Id of the route or memory whose files moved'),
  namespace,
});

export const MemoryFeedbackInput = z.strictObject({
  id: memoryId('Id of the recalled memory'),
  verdict: Verdict.describe('useful: it helped; wrong: it is not true; stale: it was true once but the code moved on'),
  namespace,
});

export const RouteQueryInput = z.strictObject({
  query: z.string().min(1).describe('The area or feature to locate'),
  limit: limit(5),
  namespace,
});

export const TaskNoteInput = z.strictObject({
  task_id: z.string().min(1).max(128).describe('The task this note belongs to'),
  context: z.string().min(1).describe('What was done, learned and why; at least 40 characters'),
  namespace,
});

export const CommitTurnInput = z.strictObject({
  session: z.string().min(1).max(200).describe('Conversation or agent session id'),
  turn: z.number().int().min(0).describe('Turn number within the session'),
  text: Text.describe("The turn's text"),
  speaker: z.string().max(200).optional(),
  namespace,
});

// ------------------------------------------------------------------------------------------------ outputs

const RouteOut = z.object({ title: z.string(), description: z.string(), paths: z.array(z.string()) });

const FeedbackCountsOut = z.object({ useful: z.number(), wrong: z.number(), stale: z.number(), lastAt: z.string() });

const CodeOut = z.object({
  commit: z.string().nullable(),
  anchors: z.array(z.object({ path: z.string(), symbol: z.string().optional(), lines: z.tuple([z.number(), z.number()]).optional() })),
  branch: z.string().optional(),
  base: z.string().optional(),
});

export const MemoryOut = z.object({
  id: z.string(),
  text: z.string(),
  kind: z.enum(MEMORY_KINDS),
  namespace: z.string(),
  importance: z.number(),
  tags: z.array(z.string()),
  taskId: z.string().nullable(),
  createdAt: z.string(),
  metadata: z.record(z.string(), z.string()),
  route: RouteOut.nullable(),
  supersedes: z.string().nullable(),
  code: CodeOut.optional(),
  feedback: FeedbackCountsOut.optional(),
});

const StaleOut = z.object({
  status: z.enum(STALE_STATUSES),
  path: z.string(),
  newPath: z.string().optional(),
  commit: z.string().optional(),
  reason: z.string(),
});

export const ScoredOut = MemoryOut.extend({
  score: z.number(),
  relevance: z.number().optional().describe('0–100: how well the memory matches the query (score fusion), after any demotion for wrong/stale marks'),
  stale: z.array(StaleOut).optional(),
});

export const FeedbackOut = z.object({ id: z.string(), verdict: z.string(), feedback: FeedbackCountsOut });

export const FollowMovesOut = z.object({ id: z.string(), supersedes: z.string().nullable(), moved: z.array(StaleOut), memory: MemoryOut });

export const SavedOut = z.object({
  id: z.string(),
  duplicate: z.boolean(),
  memory: MemoryOut,
  likelyReplaces: z
    .array(z.object({ id: z.string(), text: z.string(), similarity: z.number() }))
    .optional()
    .describe('Live older memories this one probably updates; pass one as supersedes to replace it'),
});

export const SearchOut = z.object({ namespace: z.string(), results: z.array(ScoredOut) });

export const ContextOut = z.object({
  namespace: z.string(),
  text: z.string(),
  tokens: z.number(),
  tokenBudget: z.number(),
  memories: z.array(ScoredOut),
  routes: z.array(ScoredOut),
  omitted: z.number(),
});

export const ForgetOut = z.object({ id: z.string(), forgotten: z.boolean(), forgottenAt: z.string().nullable(), reason: z.string().nullable() });

export const ReportAttackOut = z.object({ id: z.string(), poisoned: z.boolean(), reason: z.string().nullable(), taught: z.boolean() });

export const RestoreOut = z.object({ id: z.string(), restored: z.boolean(), memory: MemoryOut });

export const RouteUpdateOut = z.object({ id: z.string(), supersedes: z.string(), memory: MemoryOut });

export const RouteQueryOut = z.object({ namespace: z.string(), routes: z.array(ScoredOut) });

export const TaskNoteOut = z.object({
  stored: z.boolean(),
  id: z.string().nullable(),
  duplicate: z.boolean(),
  chars: z.number(),
  reason: z.string().nullable(),
});

export const CommitTurnOut = z.object({
  eventSeq: z.number(),
  itemIds: z.array(z.string()),
  itemsAdded: z.number(),
  deduplicated: z.boolean(),
  snapshot: z.boolean(),
  snapshotVersion: z.number().nullable(),
});

export type AnyInput = z.ZodObject;
export type AnyOutput = z.ZodObject;
export type Infer<T extends z.ZodType> = z.output<T>;
