import { CairnError } from '../interfaces/errors.js';
import type {
  ContextOptions,
  ContextPack,
  FeedbackVerdict,
  ListOptions,
  Memory,
  MemoryInput,
  MemoryScope,
  Provenance,
  ProvenanceFilter,
  SaveResult,
  SearchOptions,
  SearchResult,
  SignalWeights,
  StoreStats,
} from '../interfaces/memory.js';
import { isActive } from '../interfaces/memory.js';
import type { EmbedderInfo, RecallStats, Store } from '../interfaces/store.js';
import type { Embedder } from '../interfaces/embedder.js';
import type { MemoryFolder } from '../interfaces/sync.js';
import type { StaleMark } from '../interfaces/code.js';
import type {
  QuarantineBulkResult,
  QuarantineDetail,
  QuarantineEntry,
  QuarantineFilter,
  QuarantineListOptions,
  QuarantineReleaseResult,
  QuarantineReview,
  QuarantineView,
} from '../interfaces/quarantine.js';
import type { ErasureCertificate } from './certificate.js';
import type { RecoverReport, VerifyReport } from './replay.js';
import type { Conversation } from './conversation.js';
import type { CodeAwareness } from './code-awareness.js';
import type { BranchReport } from './branches.js';
import type { SyncReport, SyncSide } from './sync.js';
import type { FeedbackTotals } from './feedback.js';
import { validateNamespace } from './validate.js';
import { createEngineContext, type EngineConfig, type EngineContext, type ProgressFn } from './engine-context.js';
import type { UpdatePatch } from './write-path.js';
import type { RelatedTerms } from './related-terms.js';
import type { TurnInput, TurnResult } from './turns.js';
import type { ForgetOptions } from './lifecycle.js';
import type { RouteInput, TaskNoteInput, TaskNoteResult } from './routes.js';
import type { BriefOptions, BriefPack } from './packing.js';
import { securityStatus, type SecurityStatus } from './security-status.js';
import type { ImportCounts } from './transfer.js';
import * as recall from './recall.js';
import * as packing from './packing.js';
import * as reads from './reads.js';

/** Every part made by `lazy`, for `Engine.preload`. */
const lazyParts: (() => Promise<unknown>)[] = [];

/** `load`, called once: the module it imports, kept; a failed import (too many open files) is tried again next time. */
function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | null = null;
  const part = () =>
    (loaded ??= load().catch((err: unknown) => {
      loaded = null;
      throw err;
    }));
  lazyParts.push(part);
  return part;
}

/**
 * The parts a search never runs (the write path and its filter, turns, lifecycle, routes, the quarantine, import
 * and export, namespace settings, erasure, replay), loaded on first use: a process that only recalls, such as the
 * prompt hook, loads none of them: 104 modules (771 KB) instead of 118 (920 KB); its time is in the README (Hooks).
 */
const writePath = lazy(() => import('./write-path.js'));
const turns = lazy(() => import('./turns.js'));
const lifecycle = lazy(() => import('./lifecycle.js'));
const routes = lazy(() => import('./routes.js'));
const quarantineReview = lazy(() => import('./quarantine-review.js'));
const transfer = lazy(() => import('./transfer.js'));
const settings = lazy(() => import('./namespace-settings.js'));
const erasure = lazy(() => import('./erasure.js'));
const replay = lazy(() => import('./replay.js'));

export { DEFAULT_CANDIDATE_FACTOR, DEFAULT_MIN_CANDIDATES, type EngineConfig, type ProgressFn, type SaveOutcome } from './engine-context.js';
export type { UpdatePatch } from './write-path.js';
export type { TurnInput, TurnResult } from './turns.js';
export type { ForgetOptions } from './lifecycle.js';
export type { RouteInput, TaskNoteInput, TaskNoteResult } from './routes.js';
export { DEFAULT_LIMIT } from './recall.js';
export { DEFAULT_BRIEF_TOKENS, DEFAULT_TOKEN_BUDGET, type BriefOptions, type BriefPack } from './packing.js';
export type { SecurityStatus } from './security-status.js';
export type { ImportCounts, ImportRecord } from './transfer.js';

/** Active: not forgotten, not superseded, not expired at `now` (one definition, in interfaces/memory.ts). */
export { isActive };

/**
 * The cairn engine: the write path (validate, dedupe, embed, commit with its event), recall (three signals
 * fused by weighted reciprocal rank, optional rerank, token-budgeted packing) and lifecycle (forget,
 * restore, supersede, expire, reindex). It knows no driver, no environment and no files.
 *
 * A facade: each part lives in its own file as functions of one shared EngineContext (engine-context.ts):
 * write-path.ts (save, update, dedupe, embed, screen, commit), turns.ts (turn commits, checkpoints,
 * conversation ingest), lifecycle.ts (supersede, forget, restore, poison, purge, reindex, ratings),
 * routes.ts (routes, file moves, task notes), reads.ts (get, list, history, feed, usage), recall.ts
 * (search), packing.ts (context and brief blocks), quarantine-review.ts, namespace-settings.ts (weights,
 * scope, branches, folder sync) and transfer.ts (JSONL import and export). Only recall, packing and reads load
 * with it: the other parts load on first use (`lazy`), so a process that only recalls never loads the write side.
 */
export class Engine {
  private readonly ctx: EngineContext;
  readonly store: Store;
  readonly embedder: Embedder | null;
  readonly defaultNamespace: string;
  /** The repository of the default namespace (anchors, staleness, branch scope). */
  readonly code: CodeAwareness;

  constructor(config: EngineConfig) {
    this.ctx = createEngineContext(config);
    this.store = this.ctx.store;
    this.embedder = this.ctx.embedder;
    this.defaultNamespace = this.ctx.defaultNamespace;
    this.code = this.ctx.code;
  }

  /**
   * Loads the parts a search never runs now rather than on first use: for a long-lived process (`cairn mcp`,
   * `serve`), whose first write then pays no module loading, and in which a write sent before a search starts
   * before it (loading the write side on first use, a save and a search sent together on one MCP connection
   * answered the search first, without the save).
   */
  async preload(): Promise<void> {
    await Promise.all(lazyParts.map((part) => part()));
  }

  get hasReranker(): boolean {
    return this.ctx.reranker !== null;
  }

  /**
   * Commits one conversation turn atomically: the turn event, its memory items with their embeddings, and
   * every `snapshotEvery` turns a snapshot of the namespace — all in one transaction, or nothing.
   * An item identical to a live memory updates that memory instead of adding one.
   */
  async commitTurn(input: TurnInput): Promise<TurnResult> {
    return (await turns()).commitTurnWith(this.ctx, input, null);
  }

  /**
   * Erases every copy of a namespace's or a subject's data, checks nothing is left and returns a certificate
   * signed with the operator's RS256 private key (see erasure.ts).
   */
  async erase(scope: { namespace: string } | { subject: string }, privateKeyPem: string): Promise<ErasureCertificate> {
    if ('namespace' in scope) validateNamespace(scope.namespace);
    else if (typeof scope.subject !== 'string' || scope.subject.trim() === '' || scope.subject.length > 512) {
      throw new CairnError('INVALID_INPUT', 'subject: must be a user id of 1–512 characters', { field: 'subject' });
    }
    return (await erasure()).erase(this.ctx.store, { scope, privateKeyPem, now: this.ctx.now() });
  }

  /** Replays the whole log into `scratch` (an empty store) and proves the live state equal to it. */
  async verify(scratch: Store): Promise<VerifyReport> {
    return (await replay()).verify(this.ctx.store, scratch);
  }

  /** Rebuilds the live projection from snapshots and the log (see replay.ts). */
  async recover(options: { namespace?: string; all?: boolean } = {}): Promise<RecoverReport> {
    return (await replay()).recover(this.ctx.store, options.all || options.namespace === undefined ? {} : { namespace: this.ctx.ns(options.namespace) });
  }

  async stats(): Promise<StoreStats> {
    return this.ctx.store.stats(this.ctx.now());
  }

  /**
   * Saves one memory. A repeat of a live memory returns its id with `duplicate: true` and writes nothing.
   * A new memory comes back with the live older ones it probably updates (`likelyReplaces`), left as they are.
   */
  async save(input: MemoryInput): Promise<SaveResult> {
    return (await writePath()).save(this.ctx, input);
  }

  /**
   * Saves several memories: one embedding batch, then one transaction. All land or none does. Repeats
   * (against the store or earlier in the batch) come back as duplicates.
   */
  async saveMany(inputs: MemoryInput[]): Promise<SaveResult[]> {
    return (await writePath()).saveMany(this.ctx, inputs);
  }

  /**
   * Writes a snapshot of the namespace at its latest event. Compare-and-swap: when `expectedVersion` is
   * given (the version the caller last saw; null for none) and another writer checkpointed since, this
   * fails with CONFLICT and writes nothing. Without it, the version read just before is expected.
   */
  async checkpoint(options: { namespace?: string; expectedVersion?: number | null } = {}): Promise<{ version: number; seq: number }> {
    return (await turns()).checkpoint(this.ctx, options);
  }

  /**
   * Commits every turn of each conversation, in order, one transaction per turn. With several
   * conversations, each goes to its own namespace `<namespace>/<conversation id>`.
   */
  async ingest(
    conversations: Conversation[],
    options: { namespace?: string; onProgress?: ProgressFn } = {},
  ): Promise<{ namespace: string; conversation: string; turns: number; itemsAdded: number; snapshots: number; quarantined: number }[]> {
    return (await turns()).ingest(this.ctx, conversations, options);
  }

  /** Stores `input` as the replacement of `oldId`: both get linked, the old one drops from recall. */
  async supersede(oldId: string, input: MemoryInput): Promise<SaveResult> {
    return (await lifecycle()).supersede(this.ctx, oldId, input);
  }

  /** Changes fields of a memory in place; a new text is re-embedded and re-indexed in the same commit. */
  async update(id: string, patch: UpdatePatch, options: { namespace?: string } = {}): Promise<Memory> {
    return (await writePath()).update(this.ctx, id, patch, options);
  }

  /** Soft delete: the memory leaves recall and can be restored. */
  async forget(id: string, options: ForgetOptions = {}): Promise<Memory> {
    return (await lifecycle()).forget(this.ctx, id, options);
  }

  /** Undoes forget. Fails with CONFLICT when an identical memory was saved since. */
  async restore(id: string, options: { namespace?: string } = {}): Promise<Memory> {
    return (await lifecycle()).restore(this.ctx, id, options);
  }

  /**
   * Marks a stored memory as poisoned: it leaves recall at once (as a forget does, with the reason
   * `poisoned: …`), a `memory.poisoned` event records it, and (unless `teach` is false) the filter learns
   * it like a confirmed drop, so reworded copies are held for every agent of the store.
   */
  async markPoisoned(id: string, options: { namespace?: string; reason?: string; teach?: boolean } = {}): Promise<Memory> {
    return (await lifecycle()).markPoisoned(this.ctx, id, options);
  }

  /** Removes expired memories for good; returns how many. */
  async purgeExpired(options: { namespace?: string; all?: boolean } = {}): Promise<number> {
    return (await lifecycle()).purgeExpired(this.ctx, options);
  }

  /** Re-embeds every memory of every namespace with the configured embedder. */
  async reindex(onProgress?: ProgressFn, batchSize = 64): Promise<{ reindexed: number; embedder: EmbedderInfo }> {
    return (await lifecycle()).reindex(this.ctx, onProgress, batchSize);
  }

  /**
   * Saves a route; its text is always routeText(route), so the same route from the CLI, MCP or HTTP is one
   * memory (the dedupe key comes from that text). `supersedes` replaces an older memory.
   */
  async saveRoute(
    route: RouteInput,
    options: { namespace?: string | undefined; metadata?: Provenance | undefined; supersedes?: string | undefined } = {},
  ): Promise<SaveResult> {
    return (await routes()).saveRoute(this.ctx, route, options);
  }

  /**
   * Replaces a route with a new version that supersedes it (the old one stays in history, out of recall).
   * Fields missing from `patch` keep their value. NOT_FOUND when there is no such memory, INVALID_INPUT
   * when it is not a route, CONFLICT when nothing would change or it was already replaced.
   */
  async updateRoute(id: string, patch: Partial<RouteInput>, options: { namespace?: string | undefined; metadata?: Provenance | undefined } = {}): Promise<SaveResult> {
    return (await routes()).updateRoute(this.ctx, id, patch, options);
  }

  /**
   * Points a memory at the new paths of its anchored files after git saw them renamed: one call. A route
   * is replaced by a version with the new paths (superseding it, like updateRoute); another memory keeps
   * its id and gets its anchors moved (re-anchored at HEAD). CONFLICT when none of its files moved.
   */
  async followMoves(id: string, options: { namespace?: string | undefined; metadata?: Provenance | undefined } = {}): Promise<{ memory: Memory; moved: StaleMark[]; supersedes: string | null }> {
    return (await routes()).followFileMoves(this.ctx, id, options);
  }

  /**
   * Keeps what was learned on a task as one note linked to it, importance TASK_NOTE_IMPORTANCE. Context
   * shorter than TASK_NOTE_MIN_CHARS characters is not stored (too little to be worth recalling): the
   * result says why and nothing is written.
   */
  async taskNote(input: TaskNoteInput): Promise<TaskNoteResult> {
    return (await routes()).taskNote(this.ctx, input);
  }

  /** The memory with this id in the namespace, or null (also when it lives in another namespace). */
  async get(id: string, options: { namespace?: string | undefined; anyNamespace?: boolean } = {}): Promise<Memory | null> {
    return reads.memoryIn(this.ctx, id, options);
  }

  async list(options: ListOptions = {}): Promise<Memory[]> {
    return reads.list(this.ctx, options);
  }

  /**
   * Memories stored after event `afterSeq` of the namespace's log, by any process (see feed.ts); with
   * `afterSeq` null, only the current position, to start a live feed from.
   */
  async storedSince(afterSeq: number | null, options: { namespace?: string; provenance?: ProvenanceFilter } = {}): Promise<{ seq: number; memories: Memory[] }> {
    return reads.memoriesStoredSince(this.ctx, afterSeq, options);
  }

  /**
   * A memory's supersede chain, oldest first: the notes it replaced and the notes that replaced it
   * (forgotten or not), all in its namespace.
   */
  async history(id: string, options: { namespace?: string } = {}): Promise<Memory[]> {
    return reads.history(this.ctx, id, options);
  }

  /** Sets the namespace's fusion weights (shared by every agent using this store). */
  async setWeights(weights: Partial<SignalWeights>, options: { namespace?: string } = {}): Promise<SignalWeights> {
    return (await settings()).setWeights(this.ctx, weights, options);
  }

  /**
   * Sets how much terms related to a query's words (an engineering vocabulary: i18n ↔ translation, k8s ↔
   * kubernetes, …) count in this namespace's lexical signal, 0 to 1 (0: off; default 0.7).
   */
  async setRelatedTerms(weight: number, options: { namespace?: string } = {}): Promise<RelatedTerms> {
    return (await settings()).setRelatedTerms(this.ctx, weight, options);
  }

  async getRelatedTerms(options: { namespace?: string } = {}): Promise<RelatedTerms> {
    return (await settings()).getRelatedTerms(this.ctx, options);
  }

  /** Sets the scope of notes saved without one in this namespace: `branch` or `repository` (the default). */
  async setDefaultScope(scope: MemoryScope, options: { namespace?: string } = {}): Promise<MemoryScope> {
    return (await settings()).setDefaultScope(this.ctx, scope, options);
  }

  async getDefaultScope(options: { namespace?: string } = {}): Promise<MemoryScope> {
    return (await settings()).getDefaultScope(this.ctx, options);
  }

  /**
   * Settles the namespace's branch-scoped notes against the repository (see branches.ts): merged branches'
   * notes join the repository tier, notes of branches deleted unmerged are forgotten after the grace period.
   * UNSUPPORTED outside the namespace's git repository.
   */
  async reconcileBranches(options: { namespace?: string } = {}): Promise<BranchReport> {
    return (await settings()).reconcileNamespaceBranches(this.ctx, options);
  }

  /**
   * Syncs the namespace with a memory folder (`.cairn/` of the repository; see sync.ts). Imports and edits
   * are ordinary writes (redacted, screened by the ingest filter, logged); branch notes are settled first
   * when the namespace is this repository's, and only repository-tier memories are written.
   */
  async sync(folder: MemoryFolder, options: { namespace?: string; resolve?: ReadonlyMap<string, SyncSide> } = {}): Promise<SyncReport> {
    return (await settings()).syncWithFolder(this.ctx, folder, options);
  }

  async getWeights(options: { namespace?: string } = {}): Promise<SignalWeights> {
    return (await settings()).getWeights(this.ctx, options);
  }

  /**
   * Hybrid recall: vector KNN and BM25 candidates, fused with recency (score fusion by default, reciprocal
   * rank as an option); a newer note on the same topic moves above an older one; a configured reranker then
   * reorders the fused candidates. With score fusion, nothing comes back when no candidate reaches the
   * relevance floor. Results are best first with per-signal score details.
   */
  async search(query: string, options: SearchOptions = {}): Promise<SearchResult[]> {
    return recall.search(this.ctx, query, options);
  }

  /** Recall statistics and memories per day of a namespace (for the brain page). */
  async usage(options: { namespace?: string; top?: number } = {}): Promise<{ recalls: RecallStats; createdPerDay: { day: string; count: number }[]; feedback: FeedbackTotals }> {
    return reads.usage(this.ctx, options);
  }

  /**
   * Marks a memory useful, wrong or stale (after a recall). Wrong and stale marks beyond the useful ones
   * demote it in recall and put it on the review list. One `memory.rated` event; the memory's text and
   * update time are unchanged.
   */
  async rate(id: string, verdict: FeedbackVerdict, options: { namespace?: string } = {}): Promise<Memory> {
    return (await lifecycle()).rate(this.ctx, id, verdict, options);
  }

  /** Live memories marked wrong or stale more often than useful, most doubted first (the review list). */
  async reviewList(options: { namespace?: string; limit?: number } = {}): Promise<Memory[]> {
    return (await lifecycle()).reviewList(this.ctx, options);
  }

  /**
   * Packs the best memories and routes for `query` into one block of at most `tokenBudget` tokens
   * (default 1000), counted with a real tokenizer. The size of the store never changes the bound.
   */
  async context(query: string, options: ContextOptions = {}): Promise<ContextPack> {
    return packing.packContext(this.ctx, query, options);
  }

  /**
   * A brief of the namespace for the start of a session: its most important and its most recent live
   * memories, alternating (the most important first, then the most recent, never twice), packed like
   * `context` into at most `tokenBudget` tokens (default 800) counted with the real tokenizer, each memory
   * quoted with its source and date. Needs no embedder. Reads the namespace's memories once, in pages,
   * keeping only the best `limit` by importance: memory stays bounded whatever the store's size.
   */
  async brief(options: BriefOptions = {}): Promise<BriefPack> {
    return packing.packBrief(this.ctx, options);
  }

  /** How the ingest filter and redaction are set, and whether the filter can run (it needs an embedder). */
  securityStatus(): SecurityStatus {
    return securityStatus(this.ctx);
  }

  /**
   * The review queue of the ingest filter, newest first (held entries unless `status` says otherwise). Each
   * entry shows the hash, a 16-character preview and the score, never the full text, so an operator can
   * triage without reading it. Store-wide: every namespace and agent.
   */
  async listQuarantine(options: QuarantineListOptions = {}): Promise<QuarantineView[]> {
    return (await quarantineReview()).listQuarantine(this.ctx, options);
  }

  /**
   * One quarantine entry, or null. The full held text only with `reveal` (null once it is gone); a reveal
   * that returns text is recorded as a `quarantine.revealed` audit event (who, which entry; never the text).
   */
  async getQuarantined(id: string, options: { reveal?: boolean; by?: string } = {}): Promise<QuarantineDetail | null> {
    return (await quarantineReview()).getQuarantined(this.ctx, id, options);
  }

  /**
   * The review queue at scale: totals, matches per reason, and the newest `limit` (default 50) entries
   * matching the filter (namespace, source, reason words, score range, time range, ids). Store-wide.
   */
  async reviewQuarantine(filter: QuarantineFilter = {}, options: { limit?: number } = {}): Promise<QuarantineReview> {
    return (await quarantineReview()).reviewQuarantine(this.ctx, filter, options);
  }

  /**
   * Releases or drops every held entry matching `filter` (ids, or any review filter), one transaction per
   * entry as the single operations do. `dryRun` only counts. A release needs a reason; a drop teaches the
   * filter unless `teach` is false. Entries another writer decided meanwhile are reported as failed.
   */
  async decideQuarantined(
    action: 'release' | 'drop',
    filter: QuarantineFilter,
    options: { reason?: string; dryRun?: boolean; teach?: boolean } = {},
  ): Promise<QuarantineBulkResult> {
    return (await quarantineReview()).decideQuarantined(this.ctx, action, filter, options);
  }

  /**
   * Releases a held write: commits it as the original call would have (save, turn or update, with dedupe),
   * records the operator's reason, and un-learns the lesson that held it (when a learned anchor did), all
   * in one transaction. The
   * same text sent again later passes the filter. CONFLICT unless the entry is held.
   */
  async releaseQuarantined(id: string, options: { reason: string }): Promise<QuarantineReleaseResult> {
    return (await quarantineReview()).releaseQuarantined(this.ctx, id, options);
  }

  /**
   * Drops a held write for good: its text leaves the vault. A drop confirms the text as an attack, so
   * (unless `teach` is false) the filter learns it: an anchor shared by every agent of the store then holds
   * reworded variants. CONFLICT unless the entry is held.
   */
  async dropQuarantined(id: string, options: { reason?: string; teach?: boolean } = {}): Promise<QuarantineEntry> {
    return (await quarantineReview()).dropQuarantined(this.ctx, id, options);
  }

  /**
   * Imports JSON lines (one object a line: text plus optional namespace, kind, tags, importance, createdAt,
   * externalId, metadata). Bad lines are reported with their line number and skipped; good ones are kept.
   */
  async importLines(lines: AsyncIterable<string> | Iterable<string>, onProgress?: ProgressFn, batchSize = 64): Promise<ImportCounts> {
    return (await transfer()).importLines(this.ctx, lines, onProgress, batchSize);
  }

  /** Memories as JSON lines that `importLines` reads back (live ones by default). */
  async *exportLines(options: { namespace?: string; includeInactive?: boolean } = {}): AsyncGenerator<string> {
    yield* (await transfer()).exportLines(this.ctx, options);
  }
}
