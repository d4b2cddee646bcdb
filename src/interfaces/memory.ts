/** Domain types of cairn. Pure data: no behaviour, no imports from other layers. */

import type { CodeAnchor, CodeRef, StaleMark } from './code.js';

export const MEMORY_KINDS = ['decision', 'constraint', 'convention', 'gotcha', 'fact', 'note', 'route'] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

export const ORIGINS = ['user', 'agent', 'tool'] as const;
export type Origin = (typeof ORIGINS)[number];

/** Where a memory came from. Every field is optional; unknown keys are rejected at validation. */
export interface Provenance {
  /** The path that wrote it: `cli`, `mcp`, `pre-compact-hook`, `import`, `turn`, `http`… */
  source?: string;
  /** What triggered the write, e.g. `manual` or `auto` for a compaction. */
  trigger?: string;
  sessionId?: string;
  origin?: Origin;
  agent?: string;
  /** An id in another system (an import's own key); returned with search results. */
  externalId?: string;
  /** Speaker of a conversation turn, for conversation imports. */
  speaker?: string;
  /** The user the memory is about or came from (a user id): what `cairn erase --subject` matches. */
  subject?: string;
}

/** A route says where things live: a title, what it covers, and the paths it points at. */
export interface RouteInfo {
  title: string;
  description: string;
  paths: string[];
}

export interface Memory {
  /** Sortable unique id (ULID). */
  id: string;
  namespace: string;
  text: string;
  kind: MemoryKind;
  /** 1–10, default 5. */
  importance: number;
  tags: string[];
  taskId: string | null;
  metadata: Provenance;
  route: RouteInfo | null;
  /** ISO-8601 UTC timestamps. */
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
  supersedes: string | null;
  supersededBy: string | null;
  forgottenAt: string | null;
  forgetReason: string | null;
  /** Hash of namespace + normalised text; unique among live memories of a namespace. */
  dedupeKey: string;
  /** The files it is about and the commit it was written at (absent when it names no code). */
  code?: CodeRef;
  /** How often it was marked useful, wrong or stale after a recall (absent until it is marked once). */
  feedback?: FeedbackCounts;
  /**
   * Ids of older notes of its namespace that it probably updates, found when it was written (the save's
   * `likelyReplaces`, closest first; absent when none). Recall ranks it above them; nothing else is done
   * to them. Part of the record, so the log, replay and snapshots carry it like every other field.
   */
  likelyReplaces?: string[];
  /**
   * Whether its text read like an instruction to the agent when it was written (core/intent.ts
   * `readsAsInstruction`, which recall's spotlighting asks of text from a less trusted writer), under the rules
   * `rules` (their id, `instructionRulesId`), for the text hashed in `text` (its indexText: a route's title,
   * description and paths with its text): a render under the same rules of the same text takes this answer instead of running them again (a cold process, such as the prompt hook, otherwise compiles them: about 120 ms). Absent for
   * memories written before it was kept (and for routes written before routes were checked).
   */
  instructionCheck?: InstructionVerdict;
}

/** A recorded answer of the instruction check, the rules it was made under and the text it is about (a hash). */
export interface InstructionVerdict {
  rules: string;
  text: string;
  readsAsInstruction: boolean;
}

/**
 * The one definition of a memory's lifecycle, for the store, the core and the page. A memory is *current*
 * while it is neither forgotten nor superseded (a fact about the memory alone: the store's vector index
 * keeps it as a flag); it is *active* at `now` when it is current and not expired (what recall, lists and
 * the live counts mean). `lifecycleStates` names what makes it inactive; none means active.
 */
export type LifecycleState = 'forgotten' | 'superseded' | 'expired';

export function isCurrent(m: Pick<Memory, 'forgottenAt' | 'supersededBy'>): boolean {
  return m.forgottenAt === null && m.supersededBy === null;
}

export function lifecycleStates(m: Pick<Memory, 'forgottenAt' | 'supersededBy' | 'expiresAt'>, now: string): LifecycleState[] {
  const out: LifecycleState[] = [];
  if (m.forgottenAt !== null) out.push('forgotten');
  if (m.supersededBy !== null) out.push('superseded');
  if (m.expiresAt !== null && m.expiresAt <= now) out.push('expired');
  return out;
}

export function isActive(m: Pick<Memory, 'forgottenAt' | 'supersededBy' | 'expiresAt'>, now: string): boolean {
  return isCurrent(m) && (m.expiresAt === null || m.expiresAt > now);
}

export const FEEDBACK_VERDICTS = ['useful', 'wrong', 'stale'] as const;
export type FeedbackVerdict = (typeof FEEDBACK_VERDICTS)[number];

export interface FeedbackCounts {
  useful: number;
  wrong: number;
  stale: number;
  /** When it was last marked (ISO-8601). */
  lastAt: string;
}

/** What a caller gives to save a memory. */
export interface MemoryInput {
  text: string;
  namespace?: string;
  kind?: MemoryKind;
  importance?: number;
  tags?: string[];
  taskId?: string | null;
  metadata?: Provenance;
  route?: RouteInfo | null;
  /** Override of the creation time (imports keep the original date). ISO-8601. */
  createdAt?: string;
  expiresAt?: string | null;
  /** Id of a memory this one replaces: both get linked and the old one drops from recall. */
  supersedes?: string | null;
  /** Files (optionally a symbol or a line range) it is about; paths named in the text are added. */
  anchors?: CodeAnchor[];
  /** `branch`: recalled only on the current branch until it merges; default: the namespace's setting. */
  scope?: MemoryScope;
}

export const MEMORY_SCOPES = ['repository', 'branch'] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

export interface SaveResult {
  id: string;
  /** True when an identical live memory already existed: its id is returned and nothing was written. */
  duplicate: boolean;
  memory: Memory;
  /**
   * Live older memories of the namespace the new one probably updates (closest first, at most 3): the
   * memory's `likelyReplaces` with their texts (`save` always sets it; a batch of at most 16 new memories
   * where there are some, a larger one never).
   * Nothing is done to them: pass `supersedes` to replace one.
   */
  likelyReplaces?: LikelyReplaced[];
}

export interface LikelyReplaced {
  id: string;
  text: string;
  /** Cosine similarity of the two notes' vectors (approximate on a large embedded store: Store.vectorCandidates `approximate`). */
  similarity: number;
}

/** Names of the recall signals fused by weighted reciprocal rank. */
export const SIGNALS = ['vector', 'lexical', 'recency'] as const;
export type SignalName = (typeof SIGNALS)[number];

export type SignalWeights = Record<SignalName, number>;

/**
 * How recall combines the signals. `score` (the default): a weighted mean of each signal's score mapped onto
 * [0, 1] against fixed bounds, read as a 0–100 relevance that a floor can cut. `rrf`: weighted reciprocal
 * rank, Σ weight / (60 + rank), kept as an option; it cannot tell a strong match from a weak one.
 */
export const FUSION_METHODS = ['score', 'rrf'] as const;
export type FusionMethod = (typeof FUSION_METHODS)[number];

export interface SignalDetail {
  /** 1-based rank of the memory in that signal's candidate list, or null when it was not a candidate. */
  rank: number | null;
  /**
   * What the signal added to the score: with score fusion, points of the 0–100 relevance (the three add up to
   * it); with rank fusion, weight / (60 + rank), 0 when not a candidate.
   */
  contribution: number;
  /** The signal's raw value: cosine similarity, BM25 score (higher is better), or age in days. */
  raw: number | null;
  /**
   * Lexical signal of score fusion only: the idf-weighted share (0–1) of the query's terms the memory holds,
   * which the contribution blends with BM25 (core/term-coverage.ts). Absent when not computed.
   */
  coverage?: number;
}

export interface FeedbackDemotion {
  /** Wrong and stale marks beyond the useful ones, at most 3: the score was halved this many times. */
  steps: number;
  /** Negative: points of relevance (score fusion) or fused score (rank fusion) the demotion took off. */
  contribution: number;
}

export interface SessionContextLift {
  contribution: number;
  neighbour: string | null;
  session: string | null;
}

export interface ScoreDetails {
  signals: Record<SignalName, SignalDetail>;
  /** The fused score (= the result's score): relevance / 100 with score fusion, Σ weight / (60 + rank) with rank fusion. */
  fused: number;
  /** How the signals were combined. */
  method: FusionMethod;
  /**
   * 0–100: how well the memory matches the query, after session context and any feedback demotion (score
   * fusion only; the signals' contributions plus `context.contribution` and `feedback.contribution` add up to it).
   */
  relevance?: number;
  /** Set when wrong/stale marks demoted the memory: what the demotion took off, in the signals' units. */
  feedback?: FeedbackDemotion;
  /**
   * Set when memories of its session (same `metadata.sessionId`) matched too (score fusion, session-context.ts):
   * the points that added, and which neighbour and which best other memory of the session gave them.
   */
  context?: SessionContextLift;
  /** The reranker's score when a reranker reordered the results. */
  rerank: number | null;
  /** Set when this memory was moved above an older memory on the same topic (that memory's id). */
  newerThan?: string;
}

export interface SearchOptions {
  namespace?: string;
  limit?: number;
  kinds?: MemoryKind[];
  tags?: string[];
  /** Per-call weights; missing entries fall back to the namespace's configured weights. */
  weights?: Partial<SignalWeights>;
  /** Per-call fusion method; default the engine's (`score`). */
  fusion?: FusionMethod;
  /** Include forgotten / superseded / expired memories (for review surfaces). Default false. */
  includeInactive?: boolean;
  /** Count the results as recalled (usage statistics shown on the brain page). Default true. */
  countRecall?: boolean;
}

export interface SearchResult {
  memory: Memory;
  score: number;
  scoreDetails: ScoreDetails;
  /** Set when recall ran in the memory's repository and an anchored file moved, went or changed. */
  stale?: StaleMark[];
}

/** Memories written by one source, agent or session (each given key must match the memory's provenance). */
export interface ProvenanceFilter {
  source?: string | undefined;
  agent?: string | undefined;
  sessionId?: string | undefined;
}

export interface ListOptions {
  namespace?: string;
  /** Only memories whose provenance matches. */
  provenance?: ProvenanceFilter;
  kinds?: MemoryKind[];
  tags?: string[];
  limit?: number;
  /** Return memories created before this id (for paging newest-first). */
  before?: string;
  /** Only memories created at or after `from` and before `to` (ISO 8601 date or instant). */
  from?: string;
  to?: string;
  includeInactive?: boolean;
}

export interface ContextOptions {
  namespace?: string;
  /** Maximum tokens of the packed block; default 1000. */
  tokenBudget?: number;
  limit?: number;
  /** Per-call fusion weights, as for search (e.g. `{ vector: 0 }`: recall without the embedding model). */
  weights?: Partial<SignalWeights>;
  /**
   * When nothing is recalled, an empty text of 0 tokens instead of the "nothing relevant recalled" block, so the
   * tokenizer is not loaded for it: for a caller that adds nothing then (the prompt hook).
   */
  emptyWhenNothing?: boolean;
}

export interface ContextPack {
  /** The rendered block, at most tokenBudget tokens. */
  text: string;
  tokens: number;
  memories: SearchResult[];
  routes: SearchResult[];
  /** How many candidates did not fit in the budget. */
  omitted: number;
}

export interface StoreStats {
  namespaces: { namespace: string; live: number; forgotten: number; superseded: number; expired: number }[];
  total: number;
  events: number;
}
