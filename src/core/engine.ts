import type { Embedder, Logger, Reranker, TokenCounter } from '../interfaces/embedder.js';
import { CairnError, isCairnError } from '../interfaces/errors.js';
import type {
  ContextOptions,
  ContextPack,
  FusionMethod,
  LikelyReplaced,
  ListOptions,
  Memory,
  MemoryInput,
  FeedbackVerdict,
  MemoryKind,
  MemoryScope,
  Provenance,
  ProvenanceFilter,
  RouteInfo,
  SaveResult,
  SearchOptions,
  SearchResult,
  SignalWeights,
  StoreStats,
} from '../interfaces/memory.js';
import { isActive } from '../interfaces/memory.js';
import type { CandidateFilter, EmbedderInfo, RecallStats, Store, StoreTx } from '../interfaces/store.js';
import {
  clearsFloor,
  DEFAULT_CALIBRATION,
  DEFAULT_FLOOR,
  defaultWeightsFor,
  fts5Idf,
  fuse,
  fuseScores,
  resolveWeights,
  RRF_K,
  type RelevanceFloor,
  type ScoreCalibration,
} from './fusion.js';
import { ulid } from './ids.js';
import { vectorHash } from './checksum.js';
import { BACKGROUND_TEXTS } from './background.js';
import { emit, indexText, STORE_SCOPE } from './events.js';
import { analyse, queryTerms } from './lexical.js';
import { buildSnapshot } from './snapshot.js';
import { erase } from './erasure.js';
import type { ErasureCertificate } from './certificate.js';
import {
  DEFAULT_STATED_UPDATE,
  dot,
  inverseDocumentFrequency,
  isLikelyUpdate,
  LIKELY_UPDATE,
  LIKELY_UPDATE_MAX,
  preferNewerOnSameTopic,
  termsNeedingWeights,
  type StatedUpdateRule,
} from './topics.js';
import { recover, verify, type RecoverReport, type VerifyReport } from './replay.js';
import type { Conversation } from './conversation.js';
import { packSections, renderHeader, renderMemoryLine, renderNothingRecalled } from './render.js';
import { dedupeKey, jsonTooDeep, MAX_JSON_DEPTH, notJsonProblem } from './text.js';
import { CodeAwareness, SCOPE_SETTING } from './code-awareness.js';
import { reconcileBranches, type BranchReport } from './branches.js';
import { syncFolder, type ImportOutcome, type SyncOps, type SyncReport, type SyncSide } from './sync.js';
import { addToTotals, demoteDoubted, netDoubt, rated, type FeedbackTotals } from './feedback.js';
import type { MemoryFolder } from '../interfaces/sync.js';
import type { CodeAnchor, CodeRef, CodeRepository, StaleMark } from '../interfaces/code.js';
import { followMoves } from './staleness.js';
import { storedSince } from './feed.js';
import { DEFAULT_FILTER_CONFIG, lessonVector, screenForStore, type FilterVerdict, type IngestFilterConfig } from './ingest-filter.js';
import { countReasons, holdInTx, matchesFilter, quarantinedError, toView, validateReason, type HeldWrite } from './quarantine.js';
import { applyRedaction, DEFAULT_REDACTION_CONFIG, redact, type RedactionConfig, type RedactionCounts } from './redact.js';
import type {
  QuarantineBulkResult,
  QuarantineDetail,
  QuarantineEntry,
  QuarantineFilter,
  QuarantineListOptions,
  QuarantineReceipt,
  QuarantineReleaseResult,
  QuarantineReview,
  QuarantineView,
} from '../interfaces/quarantine.js';
import {
  validateId,
  validateImportance,
  validateKind,
  validateLimit,
  validateNamespace,
  validateAnchors,
  validateProvenance,
  validateProvenanceFilter,
  validateRoute,
  validateScope,
  validateVerdict,
  validateFusion,
  validateTags,
  validateTokenBudget,
  MAX_LIMIT,
  validateText,
  validateTime,
} from './validate.js';

export interface EngineConfig {
  store: Store;
  /** Null disables the vector signal (e.g. in the Stop gate, which must not load a model). */
  embedder: Embedder | null;
  reranker?: Reranker | null;
  tokenCounter: TokenCounter;
  /** Namespace used when a call names none (the composition root derives it from the git repository). */
  defaultNamespace: string;
  /** Default fusion weights; a namespace's stored `weights` setting and per-call weights override them. */
  weights?: Partial<SignalWeights>;
  /** Candidates fetched per signal: max(limit × candidateFactor, minCandidates). */
  candidateFactor?: number;
  minCandidates?: number;
  now?: () => Date;
  logger?: Logger;
  /** A turn commit also writes a snapshot of its namespace every this many turns; 0 disables. Default 10. */
  snapshotEvery?: number;
  /**
   * The ingest filter (on by default; needs an embedder). Texts that read like instructions to the model are
   * held in the quarantine instead of being stored.
   */
  ingestFilter?: Partial<IngestFilterConfig>;
  /** Secret and PII redaction of everything stored (default: mode `redact`). */
  redaction?: Partial<RedactionConfig>;
  /** Count how often each memory is returned by search (brain page statistics). Default true. */
  countRecalls?: boolean;
  /**
   * The git repository the default namespace belongs to: writes are anchored to its files, recall marks
   * stale memories and keeps branch-scoped notes to their branch. Null or absent: no code awareness.
   */
  repository?: CodeRepository | null;
  /** How signals are fused: `score` (default, calibrated 0–100 relevance) or `rrf` (reciprocal rank). */
  fusion?: FusionMethod;
  /** Bounds of score fusion (fusion.ts); missing entries keep the defaults. */
  calibration?: Partial<ScoreCalibration>;
  /**
   * Score fusion only: when nothing clears this floor (fusion.ts clearsFloor), search returns nothing and
   * context() says nothing relevant was recalled. Missing entries keep DEFAULT_FLOOR; null turns it off.
   */
  relevanceFloor?: Partial<RelevanceFloor> | null;
  /** Score fusion only: when a newer note stating a change counts as the same subject (topics.ts); null: never. */
  statedUpdate?: StatedUpdateRule | null;
}

/** How the engine's security layer is set, for `cairn doctor`. */
export interface SecurityStatus {
  filter: IngestFilterConfig & { active: boolean; reason: string | null };
  redaction: { mode: RedactionConfig['mode']; allowList: number; enabled: string[]; disabled: string[] };
}

/** One input of a batch after screening: saved (or found as a duplicate), or held for review. */
export type SaveOutcome = SaveResult | { quarantined: QuarantineReceipt };

/** Internal options of the write paths, used by a quarantine release. */
interface WriteOptions {
  /** Batches: hold blocked items and store the rest (true), or hold them and store nothing (false). */
  partial?: boolean;
  /** False when an operator released the text: it is committed without scoring. */
  screen?: boolean;
  /** Runs inside the write's transaction after its events (a release records itself atomically). */
  inTx?: (tx: StoreTx, now: string, memoryIds: string[]) => Promise<void>;
  /** Per input: the id to give the new memory and its code reference as recorded elsewhere (sync imports). */
  given?: ({ id: string; code: CodeRef | null } | undefined)[];
}

export interface ForgetOptions {
  namespace?: string;
  reason?: string;
}

export interface UpdatePatch {
  text?: string;
  kind?: MemoryKind;
  importance?: number;
  tags?: string[];
  expiresAt?: string | null;
}

export interface ImportRecord extends MemoryInput {
  externalId?: string;
}

export interface ImportCounts {
  imported: number;
  duplicate: number;
  rejected: number;
  errors: { line: number; message: string }[];
  /** Lines the ingest filter held for review (not stored; see `cairn quarantine list`). */
  quarantined: { line: number; id: string; score: number }[];
}

export type ProgressFn = (done: number, total: number | null) => void;

export interface TurnInput {
  namespace?: string;
  /** Conversation or agent session the turn belongs to. */
  session: string;
  /** Turn number within the session (0 or more). */
  turn: number;
  /** The turn's text, kept verbatim in the turn event. */
  text: string;
  speaker?: string;
  /** When the turn happened (ISO-8601); default now. Items get it as their creation time. */
  at?: string;
  /** Memory items extracted from the turn; default: one note holding the turn's text. */
  items?: MemoryInput[];
}

export interface TurnResult {
  /** Sequence number of the turn event in its namespace. */
  eventSeq: number;
  itemIds: string[];
  /** Items that became new memories. */
  itemsAdded: number;
  /** True when dedupe turned at least one item into an update of an existing memory. */
  deduplicated: boolean;
  /** Whether this commit also wrote a snapshot (every `snapshotEvery` turns of the namespace). */
  snapshot: boolean;
  snapshotVersion: number | null;
}

/** Failures of the store itself, as opposed to a bad input: no later write can succeed either. */
const STORAGE_FAILURES: ReadonlySet<string> = new Set(['STORE_UNAVAILABLE', 'INTEGRITY', 'INTERNAL', 'EMBEDDER_UNAVAILABLE']);

export const DEFAULT_LIMIT = 10;
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
 * Candidates fetched per signal before fusion: max(limit × DEFAULT_CANDIDATE_FACTOR, DEFAULT_MIN_CANDIDATES).
 * A deep pool lets fusion see both signals' opinion of most candidates (a memory missing from one list gets
 * nothing from it): 300 instead of 50 is worth about a point of recall@5 on the LoCoMo dev split
 * (bench/results/locomo-sweep.json) for ~10 ms more per search on 2,800 memories.
 */
export const DEFAULT_CANDIDATE_FACTOR = 5;
export const DEFAULT_MIN_CANDIDATES = 300;

/** Active: not forgotten, not superseded, not expired at `now` (one definition, in interfaces/memory.ts). */
export { isActive };

/**
 * The cairn engine: the write path (validate, dedupe, embed, commit with its event), recall (three signals
 * fused by weighted reciprocal rank, optional rerank, token-budgeted packing) and lifecycle (forget,
 * restore, supersede, expire, reindex). It knows no driver, no environment and no files.
 */
export class Engine {
  readonly store: Store;
  readonly embedder: Embedder | null;
  readonly defaultNamespace: string;
  private readonly reranker: Reranker | null;
  private readonly tokens: TokenCounter;
  private readonly configWeights: Partial<SignalWeights> | undefined;
  private readonly fusion: FusionMethod;
  private readonly calibration: ScoreCalibration;
  private readonly relevanceFloor: RelevanceFloor | null;
  /** The background sentences' vectors, embedded on the first search that needs them (background.ts). */
  private background: Promise<(Float32Array | null)[]> | null = null;
  private readonly statedUpdate: StatedUpdateRule | null;
  private readonly candidateFactor: number;
  private readonly minCandidates: number;
  private readonly clock: () => Date;
  private readonly log: Logger | undefined;
  private readonly snapshotEvery: number;
  private readonly countRecalls: boolean;
  private readonly filterConfig: IngestFilterConfig;
  private readonly redaction: RedactionConfig;
  /** Redaction counts of prepared records (kept beside them so they never leak into the Memory). */
  private readonly redactionsOf = new WeakMap<object, RedactionCounts>();
  /** Anchors and scope asked for by prepared records (resolved against the repository before commit). */
  private readonly codeInputOf = new WeakMap<object, { anchors: CodeAnchor[]; scope: 'repository' | 'branch' | null }>();
  /** The repository of the default namespace (anchors, staleness, branch scope). */
  readonly code: CodeAwareness;

  constructor(config: EngineConfig) {
    this.store = config.store;
    this.embedder = config.embedder;
    this.reranker = config.reranker ?? null;
    this.tokens = config.tokenCounter;
    this.defaultNamespace = validateNamespace(config.defaultNamespace, 'default namespace');
    this.fusion = validateFusion(config.fusion ?? 'score', 'fusion');
    resolveWeights(defaultWeightsFor(this.fusion), config.weights); // validates
    this.configWeights = config.weights;
    this.calibration = { ...DEFAULT_CALIBRATION, ...config.calibration };
    this.relevanceFloor = config.relevanceFloor === null ? null : { ...DEFAULT_FLOOR, ...config.relevanceFloor };
    this.statedUpdate = config.statedUpdate === undefined ? DEFAULT_STATED_UPDATE : config.statedUpdate;
    if (this.relevanceFloor && !(this.relevanceFloor.relevance >= 0 && this.relevanceFloor.relevance <= 100 && Math.abs(this.relevanceFloor.margin) <= 2)) {
      throw new CairnError('INVALID_INPUT', 'relevanceFloor: relevance must be 0–100 and margin −2 to 2', { field: 'relevanceFloor' });
    }
    this.candidateFactor = config.candidateFactor ?? DEFAULT_CANDIDATE_FACTOR;
    this.minCandidates = config.minCandidates ?? DEFAULT_MIN_CANDIDATES;
    this.clock = config.now ?? (() => new Date());
    this.log = config.logger;
    this.snapshotEvery = config.snapshotEvery ?? 10;
    this.countRecalls = config.countRecalls ?? true;
    this.filterConfig = { ...DEFAULT_FILTER_CONFIG, ...config.ingestFilter };
    this.redaction = { ...DEFAULT_REDACTION_CONFIG, ...config.redaction };
    this.code = new CodeAwareness(config.repository ?? null, this.defaultNamespace, this.store);
    for (const [name, t] of [['threshold', this.filterConfig.threshold], ['learnedThreshold', this.filterConfig.learnedThreshold]] as const) {
      if (name === 'threshold' && t === undefined) continue; // the model's calibrated threshold
      if (typeof t !== 'number' || !(t > -1 && t <= 1)) {
        throw new CairnError('INVALID_INPUT', `ingestFilter.${name}: must be a number in (-1, 1] (got ${JSON.stringify(t)})`, { field: `ingestFilter.${name}` });
      }
    }
    if (!['off', 'redact', 'reject'].includes(this.redaction.mode)) {
      throw new CairnError('INVALID_INPUT', `redaction.mode: must be off, redact or reject (got ${JSON.stringify(this.redaction.mode)})`, { field: 'redaction.mode' });
    }
    if (!Number.isInteger(this.snapshotEvery) || this.snapshotEvery < 0) {
      throw new CairnError('INVALID_INPUT', 'snapshotEvery: must be a whole number, 0 or more', { field: 'snapshotEvery' });
    }
  }

  get hasReranker(): boolean {
    return this.reranker !== null;
  }

  private now(): string {
    return this.clock().toISOString();
  }

  private ns(namespace: string | undefined): string {
    return namespace === undefined ? this.defaultNamespace : validateNamespace(namespace);
  }

  // ---------------------------------------------------------------------------------------------- write

  /** Validates a save request into a complete record (without id and timestamps decided yet). */
  private prepare(input: MemoryInput): Omit<Memory, 'id' | 'createdAt' | 'updatedAt'> & { createdAt: string | null } {
    if (typeof input !== 'object' || input === null) throw new CairnError('INVALID_INPUT', 'memory must be an object');
    const namespace = this.ns(input.namespace);
    // Redaction runs first, so no later step (dedupe key, embedding, filter, event, quarantine) sees a secret.
    const redactions: RedactionCounts = {};
    const text = this.scrub(validateText(input.text), 'text', redactions);
    const kind = input.kind === undefined ? 'note' : validateKind(input.kind);
    const rawRoute = input.route === undefined || input.route === null ? null : validateRoute(input.route);
    const route = rawRoute && {
      title: this.scrub(rawRoute.title, 'route.title', redactions),
      description: this.scrub(rawRoute.description, 'route.description', redactions),
      paths: rawRoute.paths.map((path, i) => this.scrub(path, `route.paths[${i}]`, redactions)),
    };
    if (kind === 'route' && !route) {
      throw new CairnError('INVALID_INPUT', 'route: a memory of kind route needs a route (title, description, paths)', {
        field: 'route',
      });
    }
    if (kind !== 'route' && route) {
      throw new CairnError('INVALID_INPUT', 'route: only memories of kind route carry a route', { field: 'route' });
    }
    const importance = input.importance === undefined ? 5 : validateImportance(input.importance);
    const tags = input.tags === undefined ? [] : this.scrubTags(validateTags(input.tags), redactions);
    const taskId = input.taskId === undefined || input.taskId === null ? null : validateTaskId(input.taskId);
    const metadata = this.scrubMetadata(validateProvenance(input.metadata), redactions);
    const createdAt = input.createdAt === undefined ? null : validateTime(input.createdAt, 'createdAt');
    const expiresAt = input.expiresAt === undefined || input.expiresAt === null ? null : validateTime(input.expiresAt, 'expiresAt');
    const supersedes = input.supersedes === undefined || input.supersedes === null ? null : validateId(input.supersedes, 'supersedes');
    const prepared = {
      namespace,
      text,
      kind,
      importance,
      tags,
      taskId,
      metadata,
      route,
      createdAt,
      expiresAt,
      supersedes,
      supersededBy: null,
      forgottenAt: null,
      forgetReason: null,
      dedupeKey: dedupeKey(namespace, text),
    };
    if (Object.keys(redactions).length) this.redactionsOf.set(prepared, redactions);
    const anchors = input.anchors === undefined ? [] : validateAnchors(input.anchors);
    const scope = input.scope === undefined ? null : validateScope(input.scope);
    if (anchors.length || scope) this.codeInputOf.set(prepared, { anchors, scope });
    return prepared;
  }

  /** Resolves the code references of prepared records (given ones win) and sets them as their `code`. */
  private async attachCode(prepared: ReturnType<Engine['prepare']>[], given: WriteOptions['given']): Promise<void> {
    const refs = await this.code.anchor(
      prepared.map((p, i) => {
        const asked = this.codeInputOf.get(p);
        // A record whose code is given is not looked up (a foreign namespace answers null without work).
        return { namespace: given?.[i] ? '' : p.namespace, text: p.text, route: p.route, anchors: asked?.anchors ?? [], scope: asked?.scope ?? null };
      }),
    );
    prepared.forEach((p, i) => {
      const ref = given?.[i] ? (given[i] as { code: CodeRef | null }).code : refs[i];
      if (ref) (p as { code?: CodeRef }).code = ref;
    });
  }

  /** Redacts one field in the configured mode (reject mode throws INVALID_INPUT naming the kind). */
  private scrub(text: string, field: string, counts: RedactionCounts): string {
    return applyRedaction(text, this.redaction, field, counts);
  }

  private scrubTags(tags: string[], counts: RedactionCounts): string[] {
    return [...new Set(tags.map((tag, i) => (this.scrub(tag, `tags[${i}]`, counts) === tag ? tag : 'redacted')))];
  }

  private scrubMetadata(metadata: Memory['metadata'], counts: RedactionCounts): Memory['metadata'] {
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(metadata)) out[key] = this.scrub(value as string, `metadata.${key}`, counts);
    return out as Memory['metadata'];
  }

  /** The `redactions` member of a write event: present only when something was redacted. */
  private redactionField(p: object): { redactions?: RedactionCounts } {
    const counts = this.redactionsOf.get(p);
    return counts ? { redactions: counts } : {};
  }

  /** Runs the ingest filter over texts about to be stored; null entries passed unscored. */
  private async screenTexts(items: { text: string; vector: Float32Array | null }[]): Promise<(FilterVerdict | null)[]> {
    return screenForStore(this.store, this.embedder, this.filterConfig, items);
  }

  /** Holds blocked writes in one transaction of their own (store-wide events only). */
  private async hold(held: HeldWrite[]): Promise<QuarantineReceipt[]> {
    return this.store.transaction(async (tx) => {
      const now = this.now();
      const receipts: QuarantineReceipt[] = [];
      for (const h of held) receipts.push(await holdInTx(tx, h, now));
      return receipts;
    });
  }

  /** The request a release replays for a held save: the prepared (redacted) fields. */
  private saveRequest(p: ReturnType<Engine['prepare']>): Record<string, unknown> {
    return {
      op: 'save',
      input: {
        text: p.text,
        namespace: p.namespace,
        kind: p.kind,
        importance: p.importance,
        tags: p.tags,
        taskId: p.taskId,
        metadata: p.metadata,
        route: p.route,
        ...(p.createdAt ? { createdAt: p.createdAt } : {}),
        expiresAt: p.expiresAt,
        supersedes: p.supersedes,
      },
    };
  }

  private async embedMany(texts: string[]): Promise<(Float32Array | null)[]> {
    if (!this.embedder || !this.store.capabilities.vectorSearch || texts.length === 0) return texts.map(() => null);
    const vectors = await this.embedder.embed(texts);
    for (const v of vectors) {
      if (v.length !== this.embedder.dimensions) {
        throw new CairnError('INTERNAL', `embedder ${this.embedder.id} returned ${v.length} dimensions, expected ${this.embedder.dimensions}`);
      }
    }
    return vectors;
  }

  /** Fails with EMBEDDER_MISMATCH when the store holds vectors from another embedder. */
  private async checkEmbedder(): Promise<EmbedderInfo | null> {
    if (!this.embedder || !this.store.capabilities.vectorSearch) return null;
    const stored = await this.store.embedder();
    if (stored && (stored.id !== this.embedder.id || stored.dimensions !== this.embedder.dimensions)) {
      throw new CairnError(
        'EMBEDDER_MISMATCH',
        `the store holds ${stored.dimensions}-dimension vectors from ${stored.id}, but the configured embedder is ${this.embedder.id} (${this.embedder.dimensions} dimensions)`,
        { hint: 'run `cairn reindex` to re-embed every memory with the configured embedder, or configure the original one' },
      );
    }
    return stored;
  }

  /** Records the configured embedder in the log on the first vector write; refuses a different one. */
  private async recordEmbedder(tx: StoreTx, now: string): Promise<void> {
    if (!this.embedder || !this.store.capabilities.vectorSearch) return;
    const current = await tx.embedder();
    const wanted = { id: this.embedder.id, dimensions: this.embedder.dimensions };
    if (!current) {
      await emit(tx, STORE_SCOPE, { type: 'store.embedder', embedder: wanted }, now);
    } else if (current.id !== wanted.id || current.dimensions !== wanted.dimensions) {
      throw new CairnError('EMBEDDER_MISMATCH', `the store holds ${current.dimensions}-dimension vectors from ${current.id}, but the configured embedder is ${wanted.id} (${wanted.dimensions} dimensions)`, {
        hint: 'run `cairn reindex` to re-embed every memory with the configured embedder',
      });
    }
  }

  /** Stores a vector in the log's blob table and returns its content hash. */
  private async putVector(tx: StoreTx, vector: Float32Array | null): Promise<string | null> {
    if (!vector) return null;
    const hash = vectorHash(vector);
    await tx.putVectorBlob(hash, vector);
    return hash;
  }

  /**
   * Saves one memory. A repeat of a live memory returns its id with `duplicate: true` and writes nothing.
   * A new memory comes back with the live older ones it probably updates (`likelyReplaces`), left as they are.
   */
  async save(input: MemoryInput): Promise<SaveResult> {
    const [result] = await this.saveMany([input]);
    if (!result) throw new CairnError('INTERNAL', 'save produced no result');
    if (result.duplicate) return result;
    return { ...result, likelyReplaces: await this.likelyReplaced(result.memory) };
  }

  /**
   * Live memories of `memory`'s namespace, created before it, that it probably updates (topics.ts
   * isLikelyUpdate): its nearest vectors, closest first. Routes are left out (they are replaced explicitly).
   */
  async likelyReplaced(memory: Memory): Promise<LikelyReplaced[]> {
    if (memory.kind === 'route' || !this.store.capabilities.vectorSearch) return [];
    const vector = (await this.store.getVectors([memory.id])).get(memory.id);
    if (!vector) return [];
    const floor = Math.min(LIKELY_UPDATE.minCosine, LIKELY_UPDATE.statedMinCosine);
    const hits = (await this.store.vectorCandidates(vector, 10, { namespace: memory.namespace, now: this.now() })).filter(
      (h) => h.id !== memory.id && h.id !== memory.supersedes && h.similarity >= floor,
    );
    if (hits.length === 0) return [];
    const older = new Map((await this.store.getMemories(hits.map((h) => h.id))).map((m) => [m.id, m]));
    const terms = new Set(analyse(indexText(memory)));
    const out: LikelyReplaced[] = [];
    for (const h of hits) {
      const m = older.get(h.id);
      if (!m || m.kind === 'route' || m.createdAt > memory.createdAt) continue;
      if (isLikelyUpdate(memory.text, terms, new Set(analyse(indexText(m))), h.similarity)) out.push({ id: m.id, text: m.text, similarity: Math.round(h.similarity * 1000) / 1000 });
      if (out.length >= LIKELY_UPDATE_MAX) break;
    }
    return out;
  }

  /**
   * Saves several memories: one embedding batch, then one transaction. All land or none does. Repeats
   * (against the store or earlier in the batch) come back as duplicates.
   */
  async saveMany(inputs: MemoryInput[]): Promise<SaveResult[]> {
    const outcomes = await this.saveScreened(inputs, { partial: false });
    return outcomes.map((o) => {
      if ('quarantined' in o) throw new CairnError('INTERNAL', 'a held item reached the results of an all-or-nothing batch');
      return o;
    });
  }

  /**
   * The write path of save, saveMany and import: redact, dedupe, embed, screen, commit. Texts the ingest
   * filter blocks are held in the quarantine; with `partial` the rest are stored and the held ones come
   * back as `{ quarantined }`, otherwise nothing is stored and QUARANTINED is thrown.
   */
  private async saveScreened(inputs: MemoryInput[], options: WriteOptions): Promise<SaveOutcome[]> {
    const prepared = inputs.map((input) => this.prepare(input));
    await this.attachCode(prepared, options.given);
    const stored = await this.checkEmbedder();

    // Cheap pre-check outside the transaction so repeats cost no embedding.
    const known = new Map<string, Memory>();
    await this.store.transaction(async (tx) => {
      for (const p of prepared) {
        const hit = await tx.findLiveByDedupeKey(p.namespace, p.dedupeKey);
        if (hit) known.set(p.dedupeKey, hit);
      }
    });
    const toEmbed = prepared.filter((p, i) => !known.has(p.dedupeKey) && prepared.findIndex((q) => q.dedupeKey === p.dedupeKey) === i);
    const vectors = await this.embedMany(toEmbed.map((p) => indexText(p)));
    const vectorByKey = new Map(toEmbed.map((p, i) => [p.dedupeKey, vectors[i] ?? null]));

    // The filter scores only texts that would become new memories, reusing their storage vectors.
    const blocked = new Map<string, HeldWrite>();
    if (options.screen !== false) {
      const verdicts = await this.screenTexts(toEmbed.map((p) => ({ text: indexText(p), vector: vectorByKey.get(p.dedupeKey) ?? null })));
      toEmbed.forEach((p, i) => {
        const verdict = verdicts[i];
        if (!verdict?.blocked) return;
        blocked.set(p.dedupeKey, {
          text: indexText(p),
          verdict,
          op: 'save',
          namespace: p.namespace,
          source: p.metadata.source ?? null,
          agent: p.metadata.agent ?? null,
          request: this.saveRequest(p),
        });
      });
    }
    if (blocked.size > 0 && !options.partial) {
      const receipts = await this.hold([...blocked.values()]);
      const byKey = new Map([...blocked.keys()].map((k, i) => [k, receipts[i] as QuarantineReceipt]));
      const held = prepared.flatMap((p, i) => {
        const receipt = byKey.get(p.dedupeKey);
        if (!receipt) return [];
        byKey.delete(p.dedupeKey);
        return [{ receipt, position: `item ${i + 1}` }];
      });
      throw quarantinedError(held, prepared.length);
    }

    void stored;
    return this.store.transaction(async (tx) => {
      const now0 = this.now();
      // A batch that is held as a whole records nothing else: not even the embedder of a fresh store.
      if (prepared.some((p) => !blocked.has(p.dedupeKey))) await this.recordEmbedder(tx, now0);
      const results: SaveOutcome[] = [];
      const savedInBatch = new Map<string, Memory>();
      const heldInBatch = new Map<string, QuarantineReceipt>();
      for (const [index, p] of prepared.entries()) {
        const hold = blocked.get(p.dedupeKey);
        if (hold) {
          const receipt = heldInBatch.get(p.dedupeKey) ?? (await holdInTx(tx, hold, now0));
          heldInBatch.set(p.dedupeKey, receipt);
          results.push({ quarantined: receipt });
          continue;
        }
        const existing = savedInBatch.get(p.dedupeKey) ?? (await tx.findLiveByDedupeKey(p.namespace, p.dedupeKey));
        if (existing) {
          results.push({ id: existing.id, duplicate: true, memory: existing });
          continue;
        }
        let vector = vectorByKey.get(p.dedupeKey) ?? null;
        if (vector === null && this.embedder && this.store.capabilities.vectorSearch) {
          // Another process forgot or superseded the duplicate between the pre-check and now.
          [vector] = (await this.embedMany([indexText(p)])) as [Float32Array];
        }
        const now = this.now();
        const createdAt = p.createdAt ?? now;
        const givenId = options.given?.[index]?.id;
        if (givenId && (await tx.getMemory(givenId))) throw new CairnError('CONFLICT', `a memory with id ${givenId} already exists`, { field: 'id' });
        const memory: Memory = { ...p, id: givenId ?? ulid(Date.parse(createdAt)), createdAt, updatedAt: now };
        // A memory imported from another store (sync) may name a predecessor this store never had: the
        // reference is kept as written, with nothing to link.
        const old = memory.supersedes ? await tx.getMemory(memory.supersedes) : null;
        const dangling = givenId !== undefined && memory.supersedes !== null && !old;
        if (memory.supersedes && !dangling) {
          if (!old || old.namespace !== memory.namespace) {
            throw new CairnError('NOT_FOUND', `supersedes: no memory ${memory.supersedes} in namespace ${memory.namespace}`, { field: 'supersedes' });
          }
          if (old.supersededBy) {
            throw new CairnError('CONFLICT', `memory ${old.id} is already superseded by ${old.supersededBy}`, { field: 'supersedes' });
          }
          await emit(tx, memory.namespace, { type: 'memory.saved', memory, vector: await this.putVector(tx, vector), ...this.redactionField(p) }, now);
          await emit(tx, memory.namespace, { type: 'memory.superseded', memory: { ...old, supersededBy: memory.id, updatedAt: now } }, now);
        } else {
          await emit(tx, memory.namespace, { type: 'memory.saved', memory, vector: await this.putVector(tx, vector), ...this.redactionField(p) }, now);
        }
        savedInBatch.set(p.dedupeKey, memory);
        results.push({ id: memory.id, duplicate: false, memory });
      }
      if (options.inTx) await options.inTx(tx, this.now(), results.flatMap((r) => ('id' in r ? [r.id] : [])));
      return results;
    });
  }

  /**
   * Commits one conversation turn atomically: the turn event, its memory items with their embeddings, and
   * every `snapshotEvery` turns a snapshot of the namespace — all in one transaction, or nothing.
   * An item identical to a live memory updates that memory instead of adding one.
   */
  async commitTurn(input: TurnInput): Promise<TurnResult> {
    return this.commitTurnWith(input, null);
  }

  /** commitTurn, reusing vectors embedded ahead in a batch (keyed by the text that was embedded). */
  private async commitTurnWith(input: TurnInput, embedded: Map<string, Float32Array | null> | null, options: WriteOptions = {}): Promise<TurnResult> {
    if (typeof input !== 'object' || input === null) throw new CairnError('INVALID_INPUT', 'turn must be an object');
    const namespace = this.ns(input.namespace);
    if (typeof input.session !== 'string' || !/^[\p{L}\p{N}_.:#/@-]{1,200}$/u.test(input.session)) {
      throw new CairnError('INVALID_INPUT', `session: must be 1–200 letters, digits or _ . : # / @ - (got ${JSON.stringify(input.session)})`, { field: 'session' });
    }
    if (typeof input.turn !== 'number' || !Number.isInteger(input.turn) || input.turn < 0) {
      throw new CairnError('INVALID_INPUT', `turn: must be a whole number, 0 or more (got ${JSON.stringify(input.turn)})`, { field: 'turn' });
    }
    const turnRedactions: RedactionCounts = {};
    const text = this.scrub(validateText(input.text), 'text', turnRedactions);
    if (input.speaker !== undefined && (typeof input.speaker !== 'string' || input.speaker.length > 200)) {
      throw new CairnError('INVALID_INPUT', 'speaker: must be a string of at most 200 characters', { field: 'speaker' });
    }
    const at = input.at === undefined ? null : validateTime(input.at, 'at');
    // Default item: the turn's own text, redacted by prepare so its event records its own redactions.
    const items = input.items ?? [{ text: input.text }];
    if (!Array.isArray(items) || items.length > 100) throw new CairnError('INVALID_INPUT', 'items: must be a list of at most 100 memories', { field: 'items' });
    const prepared = items.map((item) =>
      this.prepare({
        ...item,
        namespace,
        createdAt: item.createdAt ?? at ?? undefined,
        metadata: { source: 'turn', sessionId: input.session, ...(input.speaker ? { speaker: input.speaker } : {}), ...item.metadata },
      }),
    );
    await this.checkEmbedder();
    const unique = prepared.filter((p, i) => prepared.findIndex((q) => q.dedupeKey === p.dedupeKey) === i);
    const missing = unique.filter((p) => !embedded?.has(indexText(p)));
    const fresh = await this.embedMany(missing.map((p) => indexText(p)));
    const vectorByKey = new Map(missing.map((p, i) => [p.dedupeKey, fresh[i] ?? null]));
    for (const p of unique) if (embedded?.has(indexText(p))) vectorByKey.set(p.dedupeKey, embedded.get(indexText(p)) ?? null);

    // The turn is atomic, so one blocked text holds the whole turn: the turn's own text (kept verbatim in
    // its event) and each item that would become a new memory are screened.
    if (options.screen !== false) {
      const fresh: typeof unique = [];
      await this.store.transaction(async (tx) => {
        for (const p of unique) if (!(await tx.findLiveByDedupeKey(p.namespace, p.dedupeKey))) fresh.push(p);
      });
      const candidates = [
        ...(fresh.some((p) => indexText(p) === text) ? [] : [{ text, vector: embedded?.get(text) ?? null }]),
        ...fresh.map((p) => ({ text: indexText(p), vector: vectorByKey.get(p.dedupeKey) ?? null })),
      ];
      const verdicts = await this.screenTexts(candidates);
      let worst: { i: number; verdict: FilterVerdict } | null = null;
      verdicts.forEach((verdict, i) => {
        if (verdict?.blocked && (!worst || verdict.score > worst.verdict.score)) worst = { i, verdict };
      });
      if (worst) {
        const { i, verdict } = worst as { i: number; verdict: FilterVerdict };
        const request = {
          op: 'turn',
          input: {
            namespace,
            session: input.session,
            turn: input.turn,
            text,
            ...(input.speaker !== undefined ? { speaker: input.speaker } : {}),
            ...(at ? { at } : {}),
            items: prepared.map((p) => (this.saveRequest(p) as { input: MemoryInput }).input),
          },
        };
        const [receipt] = await this.hold([
          { text: (candidates[i] as { text: string }).text, verdict, op: 'turn', namespace, source: 'turn', agent: prepared[0]?.metadata.agent ?? null, request },
        ]);
        throw quarantinedError([{ receipt: receipt as QuarantineReceipt }], 1);
      }
    }

    return this.store.transaction(async (tx) => {
      const now = this.now();
      await this.recordEmbedder(tx, now);
      const itemEvents: Parameters<typeof emit>[2][] = [];
      const itemIds: string[] = [];
      let itemsAdded = 0;
      let deduplicated = false;
      const inTurn = new Map<string, string>();
      for (const p of prepared) {
        const seen = inTurn.get(p.dedupeKey);
        if (seen) {
          itemIds.push(seen);
          deduplicated = true;
          continue;
        }
        const existing = await tx.findLiveByDedupeKey(p.namespace, p.dedupeKey);
        if (existing) {
          const updated: Memory = { ...existing, importance: Math.max(existing.importance, p.importance), updatedAt: now };
          itemEvents.push({ type: 'memory.updated', memory: updated });
          itemIds.push(existing.id);
          inTurn.set(p.dedupeKey, existing.id);
          deduplicated = true;
          continue;
        }
        const createdAt = p.createdAt ?? now;
        const memory: Memory = { ...p, supersedes: null, id: ulid(Date.parse(createdAt)), createdAt, updatedAt: now };
        itemEvents.push({ type: 'memory.saved', memory, vector: await this.putVector(tx, vectorByKey.get(p.dedupeKey) ?? null), ...this.redactionField(p) });
        itemIds.push(memory.id);
        inTurn.set(p.dedupeKey, memory.id);
        itemsAdded++;
      }
      const eventSeq = await emit(
        tx,
        namespace,
        {
          type: 'turn.committed',
          session: input.session,
          turn: input.turn,
          text,
          speaker: input.speaker ?? null,
          items: itemIds,
          ...(Object.keys(turnRedactions).length ? { redactions: turnRedactions } : {}),
        },
        now,
      );
      let lastSeq = eventSeq;
      for (const body of itemEvents) lastSeq = await emit(tx, namespace, body, now);
      if (options.inTx) await options.inTx(tx, now, itemIds);
      let snapshotVersion: number | null = null;
      if (this.snapshotEvery > 0 && (await tx.countEvents(namespace, 'turn.committed')) % this.snapshotEvery === 0) {
        const current = await tx.getSnapshot(namespace);
        snapshotVersion = await tx.putSnapshot(await buildSnapshot(tx, namespace, lastSeq, now), current?.version ?? null);
      }
      return { eventSeq, itemIds, itemsAdded, deduplicated, snapshot: snapshotVersion !== null, snapshotVersion };
    });
  }

  /**
   * Writes a snapshot of the namespace at its latest event. Compare-and-swap: when `expectedVersion` is
   * given (the version the caller last saw; null for none) and another writer checkpointed since, this
   * fails with CONFLICT and writes nothing. Without it, the version read just before is expected.
   */
  async checkpoint(options: { namespace?: string; expectedVersion?: number | null } = {}): Promise<{ version: number; seq: number }> {
    const namespace = this.ns(options.namespace);
    const expected = options.expectedVersion !== undefined ? options.expectedVersion : ((await this.store.getSnapshot(namespace))?.version ?? null);
    return this.store.transaction(async (tx) => {
      const seq = await tx.lastSeq(namespace);
      if (seq === 0) throw new CairnError('NOT_FOUND', `namespace ${namespace} has no events to snapshot`);
      const version = await tx.putSnapshot(await buildSnapshot(tx, namespace, seq, this.now()), expected);
      return { version, seq };
    });
  }

  /**
   * Commits every turn of each conversation, in order, one transaction per turn. With several
   * conversations, each goes to its own namespace `<namespace>/<conversation id>`.
   */
  async ingest(
    conversations: Conversation[],
    options: { namespace?: string; onProgress?: ProgressFn } = {},
  ): Promise<{ namespace: string; conversation: string; turns: number; itemsAdded: number; snapshots: number; quarantined: number }[]> {
    const base = this.ns(options.namespace);
    const total = conversations.reduce((s, c) => s + c.turns.length, 0);
    let done = 0;
    const out = [];
    for (const c of conversations) {
      const namespace = conversations.length > 1 ? validateNamespace(`${base}/${c.id}`) : base;
      let itemsAdded = 0;
      let snapshots = 0;
      let quarantined = 0;
      // Embed the whole conversation in batches first (much faster than one text at a time); each turn
      // still commits in its own transaction.
      const texts = [...new Set(c.turns.map((t) => t.text))];
      const vectors = await this.embedMany(texts);
      const embedded = new Map(texts.map((t, i) => [t, vectors[i] ?? null]));
      for (const t of c.turns) {
        let r: TurnResult;
        try {
          r = await this.commitTurnWith({
            namespace,
            session: t.session,
            turn: t.turn,
            text: t.text,
            ...(t.speaker ? { speaker: t.speaker } : {}),
            ...(t.at ? { at: t.at } : {}),
            items: [{ text: t.text, metadata: { source: 'import', ...(t.externalId ? { externalId: t.externalId } : {}) } }],
          }, embedded);
        } catch (err) {
          // A held turn is in the quarantine for review; the rest of the conversation goes on.
          if (!isCairnError(err, 'QUARANTINED')) throw err;
          quarantined++;
          options.onProgress?.(++done, total);
          continue;
        }
        itemsAdded += r.itemsAdded;
        if (r.snapshot) snapshots++;
        options.onProgress?.(++done, total);
      }
      out.push({ namespace, conversation: c.id, turns: c.turns.length, itemsAdded, snapshots, quarantined });
    }
    return out;
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
    return erase(this.store, { scope, privateKeyPem, now: this.now() });
  }

  /** Replays the whole log into `scratch` (an empty store) and proves the live state equal to it. */
  async verify(scratch: Store): Promise<VerifyReport> {
    return verify(this.store, scratch);
  }

  /** Rebuilds the live projection from snapshots and the log (see replay.ts). */
  async recover(options: { namespace?: string; all?: boolean } = {}): Promise<RecoverReport> {
    return recover(this.store, options.all || options.namespace === undefined ? {} : { namespace: this.ns(options.namespace) });
  }

  /** Stores `input` as the replacement of `oldId`: both get linked, the old one drops from recall. */
  async supersede(oldId: string, input: MemoryInput): Promise<SaveResult> {
    const id = validateId(oldId, 'id');
    const old = await this.get(id, { namespace: input.namespace });
    if (!old) throw new CairnError('NOT_FOUND', `no memory ${id} in namespace ${this.ns(input.namespace)}`, { field: 'id' });
    const result = await this.save({
      kind: old.kind,
      importance: old.importance,
      tags: old.tags,
      taskId: old.taskId,
      route: old.route,
      ...input,
      namespace: old.namespace,
      supersedes: id,
    });
    if (result.duplicate) {
      throw new CairnError('CONFLICT', `an identical live memory already exists: ${result.id}`, { field: 'text' });
    }
    return result;
  }

  /** Changes fields of a memory in place; a new text is re-embedded and re-indexed in the same commit. */
  async update(id: string, patch: UpdatePatch, options: { namespace?: string } = {}): Promise<Memory> {
    return this.updateWith(id, patch, options, {});
  }

  private async updateWith(id: string, patch: UpdatePatch, options: { namespace?: string }, write: WriteOptions): Promise<Memory> {
    const mid = validateId(id);
    const namespace = this.ns(options.namespace);
    const redactions: RedactionCounts = {};
    const text = patch.text === undefined ? undefined : this.scrub(validateText(patch.text), 'text', redactions);
    const kind = patch.kind === undefined ? undefined : validateKind(patch.kind);
    const importance = patch.importance === undefined ? undefined : validateImportance(patch.importance);
    const tags = patch.tags === undefined ? undefined : this.scrubTags(validateTags(patch.tags), redactions);
    const expiresAt = patch.expiresAt === undefined ? undefined : patch.expiresAt === null ? null : validateTime(patch.expiresAt, 'expiresAt');
    await this.checkEmbedder();
    const current = await this.get(mid, { namespace });
    if (!current) throw new CairnError('NOT_FOUND', `no memory ${mid} in namespace ${namespace}`, { field: 'id' });
    const textChanged = text !== undefined && text !== current.text;
    const [vector] = textChanged ? await this.embedMany([indexText({ text, route: current.route })]) : [null];
    if (textChanged && write.screen !== false) {
      const screened = indexText({ text, route: current.route });
      const [verdict] = await this.screenTexts([{ text: screened, vector: vector ?? null }]);
      if (verdict?.blocked) {
        const request = { op: 'update', id: mid, namespace, patch: { ...patch, text, ...(tags ? { tags } : {}) } };
        const [receipt] = await this.hold([
          { text: screened, verdict, op: 'update', namespace, source: current.metadata.source ?? null, agent: current.metadata.agent ?? null, request },
        ]);
        throw quarantinedError([{ receipt: receipt as QuarantineReceipt }], 1);
      }
    }
    return this.store.transaction(async (tx) => {
      const fresh = await tx.getMemory(mid);
      if (!fresh || fresh.namespace !== namespace) throw new CairnError('NOT_FOUND', `no memory ${mid} in namespace ${namespace}`, { field: 'id' });
      const now = this.now();
      const next: Memory = {
        ...fresh,
        text: text ?? fresh.text,
        kind: kind ?? fresh.kind,
        importance: importance ?? fresh.importance,
        tags: tags ?? fresh.tags,
        expiresAt: expiresAt === undefined ? fresh.expiresAt : expiresAt,
        dedupeKey: text === undefined ? fresh.dedupeKey : dedupeKey(namespace, text),
        updatedAt: now,
      };
      if (next.dedupeKey !== fresh.dedupeKey) {
        const clash = await tx.findLiveByDedupeKey(namespace, next.dedupeKey);
        if (clash && clash.id !== mid) throw new CairnError('CONFLICT', `an identical live memory already exists: ${clash.id}`, { field: 'text' });
      }
      const redactionField = Object.keys(redactions).length ? { redactions } : {};
      if (textChanged) {
        await emit(tx, namespace, { type: 'memory.updated', memory: next, vector: await this.putVector(tx, vector ?? null), ...redactionField }, now);
      } else {
        await emit(tx, namespace, { type: 'memory.updated', memory: next, ...redactionField }, now);
      }
      if (write.inTx) await write.inTx(tx, now, [next.id]);
      return next;
    });
  }

  /** Soft delete: the memory leaves recall and can be restored. */
  async forget(id: string, options: ForgetOptions = {}): Promise<Memory> {
    const reason = options.reason === undefined ? null : this.scrub(String(options.reason).slice(0, 1000), 'reason', {});
    return this.lifecycle(id, options.namespace, 'memory.forgotten', (m, now) => {
      if (m.forgottenAt) throw new CairnError('CONFLICT', `memory ${m.id} is already forgotten (${m.forgottenAt})`);
      return { ...m, forgottenAt: now, forgetReason: reason, updatedAt: now };
    });
  }

  /** Undoes forget. Fails with CONFLICT when an identical memory was saved since. */
  async restore(id: string, options: { namespace?: string } = {}): Promise<Memory> {
    return this.lifecycle(id, options.namespace, 'memory.restored', async (m, now, tx) => {
      if (!m.forgottenAt) throw new CairnError('CONFLICT', `memory ${m.id} is not forgotten`);
      const clash = m.supersededBy ? null : await tx.findLiveByDedupeKey(m.namespace, m.dedupeKey);
      if (clash) throw new CairnError('CONFLICT', `an identical live memory was saved since: ${clash.id}`);
      return { ...m, forgottenAt: null, forgetReason: null, updatedAt: now };
    });
  }

  /**
   * Marks a stored memory as poisoned: it leaves recall at once (as a forget does, with the reason
   * `poisoned: …`), a `memory.poisoned` event records it, and (unless `teach` is false) the filter learns
   * it like a confirmed drop, so reworded copies are held for every agent of the store.
   */
  async markPoisoned(id: string, options: { namespace?: string; reason?: string; teach?: boolean } = {}): Promise<Memory> {
    const given = validateReason(options.reason, false);
    const reason = given === null ? null : this.scrub(given, 'reason', {});
    const current = await this.get(validateId(id), { namespace: this.ns(options.namespace) });
    const lesson = current && options.teach !== false && this.embedder ? await lessonVector(this.store, this.embedder, this.filterConfig, current.text) : null;
    return this.lifecycle(id, options.namespace, 'memory.poisoned', async (m, now, tx) => {
      if (m.forgottenAt && m.forgetReason?.startsWith('poisoned')) throw new CairnError('CONFLICT', `memory ${m.id} is already marked poisoned`);
      if (lesson) await tx.putLearnedAnchor(`poison-${m.id}`, lesson, now);
      return { ...m, forgottenAt: now, forgetReason: reason ? `poisoned: ${reason}` : 'poisoned', updatedAt: now };
    }, { taught: lesson !== null });
  }

  private async lifecycle(
    id: string,
    namespace: string | undefined,
    type: 'memory.forgotten' | 'memory.restored' | 'memory.poisoned',
    change: (m: Memory, now: string, tx: StoreTx) => Memory | Promise<Memory>,
    extra: { taught: boolean } = { taught: false },
  ): Promise<Memory> {
    const mid = validateId(id);
    const ns = this.ns(namespace);
    return this.store.transaction(async (tx) => {
      const m = await tx.getMemory(mid);
      if (!m || m.namespace !== ns) throw new CairnError('NOT_FOUND', `no memory ${mid} in namespace ${ns}`, { field: 'id' });
      const now = this.now();
      const next = await change(m, now, tx);
      await emit(tx, ns, type === 'memory.poisoned' ? { type, memory: next, taught: extra.taught } : { type, memory: next }, now);
      return next;
    });
  }

  /** Removes expired memories for good; returns how many. */
  async purgeExpired(options: { namespace?: string; all?: boolean } = {}): Promise<number> {
    const now = this.now();
    const namespace = options.all ? undefined : this.ns(options.namespace);
    const expired = await this.store.listExpired(now, namespace);
    if (expired.length === 0) return 0;
    return this.store.transaction(async (tx) => {
      let n = 0;
      for (const m of expired) {
        const fresh = await tx.getMemory(m.id);
        if (!fresh || fresh.expiresAt === null || fresh.expiresAt > now) continue;
        await emit(tx, m.namespace, { type: 'memory.purged', id: m.id }, now);
        n++;
      }
      return n;
    });
  }

  /** Re-embeds every memory of every namespace with the configured embedder. */
  async reindex(onProgress?: ProgressFn, batchSize = 64): Promise<{ reindexed: number; embedder: EmbedderInfo }> {
    if (!this.embedder) throw new CairnError('UNSUPPORTED', 'no embedder is configured; nothing to reindex with');
    if (!this.store.capabilities.vectorSearch) throw new CairnError('UNSUPPORTED', 'this store has no vector index');
    const info = { id: this.embedder.id, dimensions: this.embedder.dimensions };
    const total = (await this.store.stats(this.now())).total;
    // Embed first (slow, outside any lock), then swap all vectors in one transaction: a failure midway
    // leaves the old index intact.
    const pending: { id: string; namespace: string; vector: Float32Array }[] = [];
    onProgress?.(0, total);
    for await (const page of this.store.iterateMemories(undefined, batchSize)) {
      const vectors = await this.embedMany(page.map((m) => indexText(m)));
      page.forEach((m, i) => pending.push({ id: m.id, namespace: m.namespace, vector: vectors[i] as Float32Array }));
      onProgress?.(pending.length, total);
    }
    await this.store.transaction(async (tx) => {
      const now = this.now();
      await emit(tx, STORE_SCOPE, { type: 'store.vectors-reset' }, now);
      await emit(tx, STORE_SCOPE, { type: 'store.embedder', embedder: info }, now);
      for (const p of pending) {
        const hash = (await this.putVector(tx, p.vector)) as string;
        await emit(tx, p.namespace, { type: 'memory.reembedded', id: p.id, vector: hash }, now);
      }
    });
    return { reindexed: pending.length, embedder: info };
  }

  // ---------------------------------------------------------------------------------- routes, task notes

  /**
   * Saves a route; its text is always routeText(route), so the same route from the CLI, MCP or HTTP is one
   * memory (the dedupe key comes from that text). `supersedes` replaces an older memory.
   */
  async saveRoute(
    route: RouteInput,
    options: { namespace?: string | undefined; metadata?: Provenance | undefined; supersedes?: string | undefined } = {},
  ): Promise<SaveResult> {
    const r = validateRoute(route);
    return this.save({ text: routeText(r), kind: 'route', route: r, namespace: options.namespace, metadata: options.metadata, supersedes: options.supersedes });
  }

  /**
   * Replaces a route with a new version that supersedes it (the old one stays in history, out of recall).
   * Fields missing from `patch` keep their value. NOT_FOUND when there is no such memory, INVALID_INPUT
   * when it is not a route, CONFLICT when nothing would change or it was already replaced.
   */
  async updateRoute(id: string, patch: Partial<RouteInput>, options: { namespace?: string | undefined; metadata?: Provenance | undefined } = {}): Promise<SaveResult> {
    const mid = validateId(id, 'id');
    const old = await this.get(mid, { namespace: options.namespace });
    if (!old) throw new CairnError('NOT_FOUND', `no memory ${mid} in namespace ${this.ns(options.namespace)}`, { field: 'id' });
    if (old.kind !== 'route' || !old.route) throw new CairnError('INVALID_INPUT', `id: memory ${mid} is a ${old.kind}, not a route`, { field: 'id' });
    const next = validateRoute({
      title: patch.title ?? old.route.title,
      description: patch.description ?? old.route.description,
      paths: patch.paths ?? old.route.paths,
    });
    if (routeText(next) === routeText(old.route)) {
      throw new CairnError('CONFLICT', `route ${mid} already has this title, description and paths`, { field: 'id' });
    }
    return this.supersede(mid, { text: routeText(next), route: next, namespace: old.namespace, metadata: options.metadata });
  }

  /**
   * Points a memory at the new paths of its anchored files after git saw them renamed: one call. A route
   * is replaced by a version with the new paths (superseding it, like updateRoute); another memory keeps
   * its id and gets its anchors moved (re-anchored at HEAD). CONFLICT when none of its files moved.
   */
  async followMoves(id: string, options: { namespace?: string | undefined; metadata?: Provenance | undefined } = {}): Promise<{ memory: Memory; moved: StaleMark[]; supersedes: string | null }> {
    const mid = validateId(id, 'id');
    const old = await this.get(mid, { namespace: options.namespace });
    if (!old) throw new CairnError('NOT_FOUND', `no memory ${mid} in namespace ${this.ns(options.namespace)}`, { field: 'id' });
    const moved = await this.code.moves(old);
    if (moved.length === 0) throw new CairnError('CONFLICT', `none of the files memory ${mid} is anchored to has moved`, { field: 'id' });
    if (old.kind === 'route' && old.route) {
      const paths = followMoves(old.route.paths, moved) ?? old.route.paths;
      const r = await this.updateRoute(mid, { paths }, options);
      return { memory: r.memory, moved, supersedes: mid };
    }
    const code = await this.code.repointed(old, moved);
    const memory = await this.store.transaction(async (tx) => {
      const fresh = await tx.getMemory(mid);
      if (!fresh) throw new CairnError('NOT_FOUND', `no memory ${mid}`, { field: 'id' });
      const now = this.now();
      const next: Memory = { ...fresh, code, updatedAt: now };
      await emit(tx, next.namespace, { type: 'memory.updated', memory: next }, now);
      return next;
    });
    return { memory, moved, supersedes: null };
  }

  /**
   * Keeps what was learned on a task as one note linked to it, importance TASK_NOTE_IMPORTANCE. Context
   * shorter than TASK_NOTE_MIN_CHARS characters is not stored (too little to be worth recalling): the
   * result says why and nothing is written.
   */
  async taskNote(input: TaskNoteInput): Promise<TaskNoteResult> {
    if (typeof input !== 'object' || input === null) throw new CairnError('INVALID_INPUT', 'task note must be an object');
    const namespace = this.ns(input.namespace);
    const taskId = validateTaskId(input.taskId);
    const context = validateText(input.context, 'context');
    const chars = [...context.trim()].length;
    if (chars < TASK_NOTE_MIN_CHARS) {
      return {
        stored: false,
        chars,
        reason: `not stored: the context has ${chars} characters, a task note needs at least ${TASK_NOTE_MIN_CHARS}; say what was done, what was learned and why`,
      };
    }
    const result = await this.save({ text: context, kind: 'note', importance: TASK_NOTE_IMPORTANCE, taskId, namespace, metadata: input.metadata });
    return { stored: true, chars, ...result };
  }

  // ----------------------------------------------------------------------------------------------- read

  /** The memory with this id in the namespace, or null (also when it lives in another namespace). */
  async get(id: string, options: { namespace?: string | undefined; anyNamespace?: boolean } = {}): Promise<Memory | null> {
    const mid = validateId(id);
    const m = await this.store.getMemory(mid);
    if (!m) return null;
    if (!options.anyNamespace && m.namespace !== this.ns(options.namespace)) return null;
    return m;
  }

  async list(options: ListOptions = {}): Promise<Memory[]> {
    return this.store.listMemories({
      namespace: this.ns(options.namespace),
      kinds: options.kinds?.map((k) => validateKind(k, 'kinds')),
      tags: options.tags === undefined ? undefined : validateTags(options.tags),
      before: options.before === undefined ? undefined : validateId(options.before, 'before'),
      createdFrom: options.from === undefined ? undefined : validateTime(options.from, 'from'),
      createdTo: options.to === undefined ? undefined : validateTime(options.to, 'to'),
      provenance: options.provenance === undefined ? undefined : validateProvenanceFilter(options.provenance),
      limit: options.limit === undefined ? 50 : validateLimit(options.limit, 'limit', 10_000),
      now: this.now(),
      includeInactive: options.includeInactive ?? false,
    });
  }

  /**
   * Memories stored after event `afterSeq` of the namespace's log, by any process (see feed.ts); with
   * `afterSeq` null, only the current position, to start a live feed from.
   */
  async storedSince(afterSeq: number | null, options: { namespace?: string; provenance?: ProvenanceFilter } = {}): Promise<{ seq: number; memories: Memory[] }> {
    if (afterSeq !== null && (!Number.isInteger(afterSeq) || afterSeq < 0)) throw new CairnError('INVALID_INPUT', `after: must be a whole number from 0 (got ${afterSeq})`, { field: 'after' });
    return storedSince(this.store, this.ns(options.namespace), afterSeq, validateProvenanceFilter(options.provenance));
  }

  /**
   * A memory's supersede chain, oldest first: the notes it replaced and the notes that replaced it
   * (forgotten or not), all in its namespace.
   */
  async history(id: string, options: { namespace?: string } = {}): Promise<Memory[]> {
    const start = await this.get(id, options);
    if (!start) throw new CairnError('NOT_FOUND', `no memory with id ${JSON.stringify(id)} in ${JSON.stringify(this.ns(options.namespace))}`, { field: 'id' });
    const chain: Memory[] = [start];
    const seen = new Set([start.id]);
    for (let m: Memory | null = start; m?.supersedes && !seen.has(m.supersedes) && chain.length < 1000; ) {
      m = await this.store.getMemory(m.supersedes);
      if (!m || m.namespace !== start.namespace) break;
      seen.add(m.id);
      chain.unshift(m);
    }
    for (let m: Memory | null = start; m?.supersededBy && !seen.has(m.supersededBy) && chain.length < 1000; ) {
      m = await this.store.getMemory(m.supersededBy);
      if (!m || m.namespace !== start.namespace) break;
      seen.add(m.id);
      chain.push(m);
    }
    return chain;
  }

  private async weightsFor(namespace: string, override?: Partial<SignalWeights>, method: FusionMethod = this.fusion): Promise<SignalWeights> {
    const stored = (await this.store.getSetting(namespace, 'weights')) as Partial<SignalWeights> | null;
    const base = resolveWeights(defaultWeightsFor(method), this.configWeights);
    return resolveWeights(resolveWeights(base, stored ?? undefined), override);
  }

  /** Sets the namespace's fusion weights (shared by every agent using this store). */
  async setWeights(weights: Partial<SignalWeights>, options: { namespace?: string } = {}): Promise<SignalWeights> {
    const namespace = this.ns(options.namespace);
    const merged = await this.weightsFor(namespace, weights);
    await this.store.transaction(async (tx) => {
      await emit(tx, namespace, { type: 'settings.changed', key: 'weights', value: merged }, this.now());
    });
    return merged;
  }

  /** Sets the scope of notes saved without one in this namespace: `branch` or `repository` (the default). */
  async setDefaultScope(scope: MemoryScope, options: { namespace?: string } = {}): Promise<MemoryScope> {
    const namespace = this.ns(options.namespace);
    const value = validateScope(scope);
    await this.store.transaction(async (tx) => {
      await emit(tx, namespace, { type: 'settings.changed', key: SCOPE_SETTING, value }, this.now());
    });
    return value;
  }

  async getDefaultScope(options: { namespace?: string } = {}): Promise<MemoryScope> {
    return this.code.defaultScope(this.ns(options.namespace));
  }

  /**
   * Settles the namespace's branch-scoped notes against the repository (see branches.ts): merged branches'
   * notes join the repository tier, notes of branches deleted unmerged are forgotten after the grace period.
   * UNSUPPORTED outside the namespace's git repository.
   */
  async reconcileBranches(options: { namespace?: string } = {}): Promise<BranchReport> {
    const namespace = this.ns(options.namespace);
    const resolver = this.code.applies(namespace) ? await this.code.branches() : null;
    if (!resolver) throw new CairnError('UNSUPPORTED', `branch scope needs the git repository of namespace ${namespace}; run this inside it`);
    return reconcileBranches(this.store, resolver, namespace, this.now());
  }

  /**
   * Syncs the namespace with a memory folder (`.cairn/` of the repository; see sync.ts). Imports and edits
   * are ordinary writes (redacted, screened by the ingest filter, logged); branch notes are settled first
   * when the namespace is this repository's, and only repository-tier memories are written.
   */
  async sync(folder: MemoryFolder, options: { namespace?: string; resolve?: ReadonlyMap<string, SyncSide> } = {}): Promise<SyncReport> {
    const namespace = this.ns(options.namespace);
    if (this.code.applies(namespace) && (await this.code.branches())) await this.reconcileBranches({ namespace });
    const metadata: Provenance = { source: 'sync', origin: 'user' };
    const ops: SyncOps = {
      live: () => this.liveMemories(namespace, (m) => !m.code?.branch),
      get: (id) => this.get(id, { namespace }),
      importFiles: async (files) => {
        const prepared = await Promise.all(
          files.map(async (f) => {
            const target = f.supersedes ? await this.get(f.supersedes, { namespace }) : null;
            const input: MemoryInput = {
              text: f.text,
              namespace,
              kind: f.kind,
              importance: f.importance,
              tags: f.tags,
              taskId: f.task,
              route: f.route,
              expiresAt: f.expires,
              // A target already replaced here is not linked again; an unknown one is kept as a reference.
              supersedes: target?.supersededBy ? null : f.supersedes,
              metadata,
              ...(f.created ? { createdAt: f.created } : {}),
            };
            return { input, given: { id: validateId(f.id), code: f.anchors.length ? { commit: f.commit, anchors: validateAnchors(f.anchors, 'anchors') } : null } };
          }),
        );
        const outcome = (r: SaveOutcome | undefined): ImportOutcome =>
          !r ? { error: 'no result' } : 'quarantined' in r ? { held: r.quarantined.id } : r.duplicate ? { duplicateOf: r.id } : { imported: r.memory };
        try {
          const results = await this.saveScreened(prepared.map((p) => p.input), { partial: true, given: prepared.map((p) => p.given) });
          return results.map(outcome);
        } catch {
          // One bad file fails its batch: import one at a time so the others land and it is named.
          const one: ImportOutcome[] = [];
          for (const p of prepared) {
            try {
              one.push(outcome((await this.saveScreened([p.input], { partial: true, given: [p.given] }))[0]));
            } catch (err) {
              if (!isCairnError(err)) throw err;
              one.push({ error: err.message });
            }
          }
          return one;
        }
      },
      applyEdit: async (m, f) => {
        try {
          const sameRoute = JSON.stringify(f.route ?? null) === JSON.stringify(m.route ?? null);
          if (f.text !== m.text || !sameRoute) {
            const r = await this.supersede(m.id, { text: f.text, namespace, kind: f.kind, importance: f.importance, tags: f.tags, route: f.route, metadata });
            return { memory: r.memory, superseded: true };
          }
          return { memory: await this.update(m.id, { kind: f.kind, importance: f.importance, tags: f.tags }, { namespace }), superseded: false };
        } catch (err) {
          // The message names the entry: `quarantine <id>`.
          if (isCairnError(err, 'QUARANTINED')) return { held: /quarantine ([0-9A-Z]{26})/u.exec(err.message)?.[1] ?? 'unknown' };
          throw err;
        }
      },
      forget: async (id, reason) => {
        await this.forget(id, { namespace, reason });
      },
    };
    return syncFolder(folder, ops, options.resolve);
  }

  async getWeights(options: { namespace?: string } = {}): Promise<SignalWeights> {
    return this.weightsFor(this.ns(options.namespace));
  }

  /**
   * Hybrid recall: vector KNN and BM25 candidates, fused with recency (score fusion by default, reciprocal
   * rank as an option); a newer note on the same topic moves above an older one; a configured reranker then
   * reorders the fused candidates. With score fusion, nothing comes back when no candidate reaches the
   * relevance floor. Results are best first with per-signal score details.
   */
  async search(query: string, options: SearchOptions = {}): Promise<SearchResult[]> {
    if (typeof query !== 'string' || query.trim() === '') throw new CairnError('INVALID_INPUT', 'query: must not be empty', { field: 'query' });
    if (Buffer.byteLength(query) > 32 * 1024) throw new CairnError('INVALID_INPUT', 'query: must be at most 32 KB', { field: 'query' });
    const namespace = this.ns(options.namespace);
    const limit = options.limit === undefined ? DEFAULT_LIMIT : validateLimit(options.limit, 'limit', MAX_LIMIT);
    const method = options.fusion === undefined ? this.fusion : validateFusion(options.fusion, 'fusion');
    const weights = await this.weightsFor(namespace, options.weights, method);
    const now = this.now();
    const filter: CandidateFilter = {
      namespace,
      kinds: options.kinds?.map((k) => validateKind(k, 'kinds')),
      tags: options.tags === undefined ? undefined : validateTags(options.tags),
      now,
      includeInactive: options.includeInactive ?? false,
    };
    const pool = Math.max(limit * this.candidateFactor, this.minCandidates);
    const terms = queryTerms(query);
    const useLexical = weights.lexical > 0 && terms.length > 0 && this.store.capabilities.fullText;
    let queryVector: Float32Array | null = null;

    const vectorHits = async () => {
      if (weights.vector <= 0 || !this.embedder || !this.store.capabilities.vectorSearch) return [];
      const stored = await this.checkEmbedder();
      if (!stored) return []; // nothing embedded yet
      const [qv] = await this.embedMany([query]);
      queryVector = qv ?? null;
      return qv ? this.store.vectorCandidates(qv, pool, filter) : [];
    };
    const lexicalHits = async () => (useLexical ? this.store.lexicalCandidates(terms, pool, filter) : []);
    // Score fusion scales BM25 by the query terms' rarity: Σ idf is what a full match scores.
    const lexicalScale = async () => {
      if (method !== 'score' || !useLexical) return 0;
      const { documents, frequencies } = await this.store.termDocumentFrequencies(terms);
      return terms.reduce((sum, t) => sum + fts5Idf(documents, frequencies.get(t) ?? 0), 0);
    };
    const [vec, lex, scale] = await Promise.all([vectorHits(), lexicalHits(), lexicalScale()]);
    const ids = [...new Set([...vec.map((h) => h.id), ...lex.map((h) => h.id)])];
    const memories = new Map((await this.store.getMemories(ids)).map((m) => [m.id, m]));
    const nowMs = Date.parse(now);
    const ageDays = (m: Memory) => (nowMs - Date.parse(m.createdAt)) / 86_400_000;
    const vectorRanked = vec.map((h) => ({ id: h.id, raw: h.similarity }));
    const lexicalRanked = lex.map((h) => ({ id: h.id, raw: h.score }));
    let results =
      method === 'score'
        ? fuseScores({ memories, vector: vectorRanked, lexical: lexicalRanked, lexicalScale: scale, ageDays, weights, calibration: this.calibration })
        : fuse({ memories, vector: vectorRanked, lexical: lexicalRanked, ageDays, weights, k: RRF_K });
    results = await this.code.visible(results, (r) => r.memory);
    if (method === 'score' && this.relevanceFloor && !clearsFloor(results, this.relevanceFloor, vec[0]?.similarity ?? null, await this.backgroundCosine(queryVector))) results = [];
    // After the floor: a doubted memory sinks among the relevant ones, it does not make a query irrelevant.
    results = demoteDoubted(results);
    if (weights.recency > 0 && results.length > 1) {
      const window = Math.min(results.length, Math.max(limit * 2, 20));
      const vectors = await this.store.getVectors(results.slice(0, window).map((r) => r.memory.id));
      const termCache = new Map<string, Set<string>>();
      const needed = termsNeedingWeights(results, vectors, window, termCache);
      let weight: ((term: string) => number) | undefined;
      if (needed.length > 0 && this.store.capabilities.fullText) {
        const { documents, frequencies } = await this.store.termDocumentFrequencies(needed);
        if (documents > 0) weight = inverseDocumentFrequency(documents, frequencies);
      }
      results = preferNewerOnSameTopic(results, vectors, window, weight, termCache, method === 'score' ? this.statedUpdate : null);
    }

    if (this.reranker && results.length > 1) {
      const head = results.slice(0, Math.max(limit * 3, 30));
      const scores = await this.reranker.score(query, head.map((r) => r.memory.text));
      head.forEach((r, i) => {
        r.scoreDetails.rerank = scores[i] ?? 0;
      });
      const reranked = head
        .map((r, i) => ({ r, i }))
        .sort((a, b) => (b.r.scoreDetails.rerank ?? 0) - (a.r.scoreDetails.rerank ?? 0) || a.i - b.i)
        .map((x) => x.r);
      results = [...reranked, ...results.slice(head.length)];
    }
    const final = results.slice(0, limit);
    await this.code.mark(final);
    if (options.countRecall !== false) await this.countAsRecalled(namespace, final.map((r) => r.memory), now);
    return final;
  }

  /** The query's cosine to the nearest background sentence (background.ts); null without a query vector. */
  private async backgroundCosine(queryVector: Float32Array | null): Promise<number | null> {
    if (!queryVector) return null;
    this.background ??= this.embedMany([...BACKGROUND_TEXTS]).catch((err: unknown) => {
      this.background = null;
      throw err;
    });
    let best = -1;
    for (const v of await this.background) {
      const cosine = v ? dot(v, queryVector) : -1;
      if (cosine > best) best = cosine;
    }
    return best;
  }

  /** Usage statistics only: a failure (a busy file, a read-only store) never fails the recall that counts. */
  private async countAsRecalled(namespace: string, memories: Memory[], now: string): Promise<void> {
    const ids = memories.filter((m) => m.namespace === namespace).map((m) => m.id);
    if (!this.countRecalls || ids.length === 0) return;
    await this.store.recordRecalls(namespace, ids, now).catch((err: unknown) => {
      this.log?.debug(`recall counts not recorded: ${(err as Error).message}`);
    });
  }

  /** Recall statistics and memories per day of a namespace (for the brain page). */
  async usage(options: { namespace?: string; top?: number } = {}): Promise<{ recalls: RecallStats; createdPerDay: { day: string; count: number }[]; feedback: FeedbackTotals }> {
    const namespace = this.ns(options.namespace);
    const top = options.top === undefined ? 10 : validateLimit(options.top, 'top', MAX_LIMIT);
    const [recalls, createdPerDay, feedback] = await Promise.all([this.store.recallStats(namespace, this.now(), top), this.store.createdPerDay(namespace), this.feedbackTotals(namespace)]);
    return { recalls, createdPerDay, feedback };
  }

  private async feedbackTotals(namespace: string): Promise<FeedbackTotals> {
    const totals: FeedbackTotals = { useful: 0, wrong: 0, stale: 0, rated: 0, toReview: 0 };
    for (const m of await this.liveMemories(namespace, (x) => Boolean(x.feedback))) addToTotals(totals, m);
    return totals;
  }

  /** The namespace's active memories that pass `keep`, read page by page. */
  private async liveMemories(namespace: string, keep: (m: Memory) => boolean): Promise<Memory[]> {
    const now = this.now();
    const out: Memory[] = [];
    for await (const page of this.store.iterateMemories(namespace, 1000)) for (const m of page) if (isActive(m, now) && keep(m)) out.push(m);
    return out;
  }

  /**
   * Marks a memory useful, wrong or stale (after a recall). Wrong and stale marks beyond the useful ones
   * demote it in recall and put it on the review list. One `memory.rated` event; the memory's text and
   * update time are unchanged.
   */
  async rate(id: string, verdict: FeedbackVerdict, options: { namespace?: string } = {}): Promise<Memory> {
    const mid = validateId(id);
    const ns = this.ns(options.namespace);
    const v = validateVerdict(verdict);
    return this.store.transaction(async (tx) => {
      const m = await tx.getMemory(mid);
      if (!m || m.namespace !== ns) throw new CairnError('NOT_FOUND', `no memory ${mid} in namespace ${ns}`, { field: 'id' });
      const now = this.now();
      const next = rated(m, v, now);
      await emit(tx, ns, { type: 'memory.rated', memory: next, verdict: v }, now);
      return next;
    });
  }

  /** Live memories marked wrong or stale more often than useful, most doubted first (the review list). */
  async reviewList(options: { namespace?: string; limit?: number } = {}): Promise<Memory[]> {
    const namespace = this.ns(options.namespace);
    const limit = options.limit === undefined ? 50 : validateLimit(options.limit, 'limit', 10_000);
    const doubted = await this.liveMemories(namespace, (m) => netDoubt(m.feedback) > 0);
    const lastAt = (m: Memory) => m.feedback?.lastAt ?? '';
    return doubted.sort((a, b) => netDoubt(b.feedback) - netDoubt(a.feedback) || (lastAt(a) < lastAt(b) ? 1 : lastAt(a) > lastAt(b) ? -1 : 0)).slice(0, limit);
  }

  /**
   * Packs the best memories and routes for `query` into one block of at most `tokenBudget` tokens
   * (default 1000), counted with a real tokenizer. The size of the store never changes the bound.
   */
  async context(query: string, options: ContextOptions = {}): Promise<ContextPack> {
    const namespace = this.ns(options.namespace);
    const budget = options.tokenBudget === undefined ? DEFAULT_TOKEN_BUDGET : validateTokenBudget(options.tokenBudget);
    const limit = options.limit === undefined ? 40 : validateLimit(options.limit, 'limit', MAX_LIMIT);
    // Only what is packed into the block reaches the agent, so only that counts as recalled.
    const found = await this.search(query, { namespace, limit, countRecall: false, ...(options.weights ? { weights: options.weights } : {}) });
    if (found.length === 0) {
      const text = renderNothingRecalled(namespace);
      return { text, tokens: await this.tokens.count(text), memories: [], routes: [], omitted: 0 };
    }
    const { text, tokens, packed } = await packSections(
      renderHeader(namespace, 'Recalled memory'),
      [
        { title: ROUTES_TITLE, items: found.filter((r) => r.memory.kind === 'route') },
        { title: MEMORIES_TITLE, items: found.filter((r) => r.memory.kind !== 'route') },
      ],
      (r) => renderMemoryLine(r.memory, r.stale),
      budget,
      (t) => this.tokens.count(t),
    );
    const [routes = [], memories = []] = packed;
    await this.countAsRecalled(namespace, [...routes, ...memories].map((r) => r.memory), this.now());
    return { text, tokens, memories, routes, omitted: found.length - routes.length - memories.length };
  }

  /**
   * A brief of the namespace for the start of a session: its most important and its most recent live
   * memories, alternating (the most important first, then the most recent, never twice), packed like
   * `context` into at most `tokenBudget` tokens (default 800) counted with the real tokenizer, each memory
   * quoted with its source and date. Needs no embedder. Reads the namespace's memories once, in pages,
   * keeping only the best `limit` by importance: memory stays bounded whatever the store's size.
   */
  async brief(options: BriefOptions = {}): Promise<BriefPack> {
    const namespace = this.ns(options.namespace);
    const budget = options.tokenBudget === undefined ? DEFAULT_BRIEF_TOKENS : validateTokenBudget(options.tokenBudget);
    const limit = options.limit === undefined ? 30 : validateLimit(options.limit, 'limit', MAX_LIMIT);
    const now = this.now();
    const byImportance = (a: Memory, b: Memory) => b.importance - a.importance || (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0);
    let important: Memory[] = [];
    let live = 0;
    for await (const page of this.store.iterateMemories(namespace, 500)) {
      const active = page.filter((m) => isActive(m, now));
      live += active.length;
      important = [...important, ...active].sort(byImportance).slice(0, limit);
    }
    const recent = await this.store.listMemories({ namespace, limit, now });
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
    const shown = await this.code.visible(chosen, (m) => m);
    const { text, tokens, packed } = await packSections(
      renderHeader(namespace, 'Memory brief (most important and most recent)'),
      [
        { title: ROUTES_TITLE, items: shown.filter((m) => m.kind === 'route') },
        { title: MEMORIES_TITLE, items: shown.filter((m) => m.kind !== 'route') },
      ],
      (m) => renderMemoryLine(m),
      budget,
      (t) => this.tokens.count(t),
    );
    const kept = packed.flat();
    return { text: kept.length ? text : '', tokens: kept.length ? tokens : 0, memories: kept, omitted: live - kept.length };
  }

  async stats(): Promise<StoreStats> {
    return this.store.stats(this.now());
  }

  // ------------------------------------------------------------------------------------------ security

  /** How the ingest filter and redaction are set, and whether the filter can run (it needs an embedder). */
  securityStatus(): SecurityStatus {
    const active = this.filterConfig.enabled && this.embedder !== null;
    return {
      filter: {
        ...this.filterConfig,
        active,
        reason: active ? null : this.filterConfig.enabled ? 'no embedder is configured: writes are not screened' : 'switched off in the configuration',
      },
      redaction: {
        mode: this.redaction.mode,
        allowList: this.redaction.allowExact.length + this.redaction.allowPatterns.length,
        enabled: [...this.redaction.enable],
        disabled: [...this.redaction.disable],
      },
    };
  }

  /**
   * The review queue of the ingest filter, newest first (held entries unless `status` says otherwise). Each
   * entry shows the hash, a 16-character preview and the score, never the full text, so an operator can
   * triage without reading it. Store-wide: every namespace and agent.
   */
  async listQuarantine(options: QuarantineListOptions = {}): Promise<QuarantineView[]> {
    const status = options.status ?? 'held';
    if (!['held', 'released', 'dropped', 'all'].includes(status)) {
      throw new CairnError('INVALID_INPUT', `status: must be held, released, dropped or all (got ${JSON.stringify(status)})`, { field: 'status' });
    }
    const limit = options.limit === undefined ? 50 : validateLimit(options.limit, 'limit', 10_000);
    const entries = await this.store.listQuarantine({ status, limit });
    return Promise.all(entries.map((e) => this.quarantineView(e)));
  }

  /** An entry as listed, with the preview of its held text (none once the vault is emptied). */
  private async quarantineView(entry: QuarantineEntry): Promise<QuarantineView> {
    return toView(entry, (await this.store.getQuarantineVault(entry.id))?.text ?? null);
  }

  /**
   * One quarantine entry, or null. The full held text only with `reveal` (null once it is gone); a reveal
   * that returns text is recorded as a `quarantine.revealed` audit event (who, which entry; never the text).
   */
  async getQuarantined(id: string, options: { reveal?: boolean; by?: string } = {}): Promise<QuarantineDetail | null> {
    const qid = validateId(id, 'id');
    const entry = await this.store.getQuarantine(qid);
    if (!entry) return null;
    const vault = await this.store.getQuarantineVault(qid);
    if (options.reveal && vault) {
      const by = options.by === undefined ? null : this.scrub(String(options.by).slice(0, 200), 'by', {});
      await this.store.transaction((tx) => emit(tx, STORE_SCOPE, { type: 'quarantine.revealed', quarantineId: qid, by }, this.now()));
    }
    return { ...toView(entry, vault?.text ?? null), text: options.reveal ? (vault?.text ?? null) : null };
  }

  /**
   * The review queue at scale: totals, matches per reason, and the newest `limit` (default 50) entries
   * matching the filter (namespace, source, reason words, score range, time range, ids). Store-wide.
   */
  async reviewQuarantine(filter: QuarantineFilter = {}, options: { limit?: number } = {}): Promise<QuarantineReview> {
    const limit = options.limit === undefined ? 50 : validateLimit(options.limit, 'limit', 10_000);
    // The total stays within the namespace reviewed: a namespace-limited admin learns nothing of the others.
    const all = (await this.store.listQuarantine({ status: filter.status ?? 'held', limit: Number.MAX_SAFE_INTEGER })).filter(
      (e) => filter.namespace === undefined || e.namespace === filter.namespace,
    );
    const matched = all.filter((e) => matchesFilter(e, filter));
    const page = await Promise.all(matched.slice(0, limit).map((e) => this.quarantineView(e)));
    return { total: all.length, matched: matched.length, byReason: countReasons(matched), entries: page };
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
    if (action !== 'release' && action !== 'drop') throw new CairnError('INVALID_INPUT', `action: must be release or drop (got ${JSON.stringify(action)})`, { field: 'action' });
    if (action === 'release' || !options.dryRun) validateReason(options.reason, action === 'release');
    const held = (await this.store.listQuarantine({ status: 'held', limit: Number.MAX_SAFE_INTEGER })).filter((e) => matchesFilter(e, { ...filter, status: 'held' }));
    const ids = held.map((e) => e.id);
    const result: QuarantineBulkResult = { action, dryRun: Boolean(options.dryRun), matched: ids.length, ids, done: [], failed: [] };
    if (options.dryRun) return result;
    for (const id of ids) {
      try {
        if (action === 'release') await this.releaseQuarantined(id, { reason: options.reason as string });
        else await this.dropQuarantined(id, { ...(options.reason === undefined ? {} : { reason: options.reason }), ...(options.teach === undefined ? {} : { teach: options.teach }) });
        result.done.push(id);
      } catch (err) {
        result.failed.push({ id, error: err instanceof Error ? err.message : String(err) });
      }
    }
    return result;
  }

  /**
   * Releases a held write: commits it as the original call would have (save, turn or update, with dedupe),
   * records the operator's reason, and un-learns the lesson that held it (when a learned anchor did), all
   * in one transaction. The
   * same text sent again later passes the filter. CONFLICT unless the entry is held.
   */
  async releaseQuarantined(id: string, options: { reason: string }): Promise<QuarantineReleaseResult> {
    const qid = validateId(id, 'id');
    const reason = this.scrub(validateReason(options?.reason, true) as string, 'reason', {});
    const entry = await this.store.getQuarantine(qid);
    if (!entry) throw new CairnError('NOT_FOUND', `no quarantine entry ${qid}`, { field: 'id' });
    if (entry.status !== 'held') throw new CairnError('CONFLICT', `quarantine entry ${qid} is already ${entry.status}`, { field: 'id' });
    const vault = await this.store.getQuarantineVault(qid);
    if (!vault) throw new CairnError('CONFLICT', `the held text of quarantine entry ${qid} was erased; there is nothing to release`, { field: 'id' });
    let released: QuarantineEntry | null = null;
    const inTx = async (tx: StoreTx, now: string, memoryIds: string[]) => {
      const current = await tx.getQuarantine(qid);
      if (!current || current.status !== 'held') throw new CairnError('CONFLICT', `quarantine entry ${qid} was decided by another writer`, { field: 'id' });
      released = { ...current, status: 'released', decidedAt: now, reason, memoryIds: [...new Set(memoryIds)] };
      await emit(tx, STORE_SCOPE, { type: 'quarantine.released', entry: released }, now);
      await tx.deleteLearnedAnchor(qid);
      // Held by a lesson (an anchor learned from a confirmed attack) and released as good: the lesson was
      // too broad, so it is un-learned; the drop or poison mark it came from stays in the log.
      if (current.anchor?.startsWith('learned:')) await tx.deleteLearnedAnchor(current.anchor.slice('learned:'.length));
      await tx.deleteQuarantineVault(qid);
    };
    const request = vault.request as { op: string; input?: unknown; id?: string; namespace?: string; patch?: UpdatePatch };
    let duplicate = false;
    if (request.op === 'save') {
      const [r] = await this.saveScreened([request.input as MemoryInput], { screen: false, inTx });
      duplicate = r !== undefined && 'duplicate' in r && r.duplicate;
    } else if (request.op === 'turn') {
      const r = await this.commitTurnWith(request.input as TurnInput, null, { screen: false, inTx });
      duplicate = r.itemsAdded === 0;
    } else if (request.op === 'update') {
      await this.updateWith(request.id as string, request.patch ?? {}, { namespace: request.namespace as string }, { screen: false, inTx });
    } else {
      throw new CairnError('INTEGRITY', `quarantine entry ${qid} holds an unknown request ${JSON.stringify(request.op)}`);
    }
    const done = released as QuarantineEntry | null;
    if (!done) throw new CairnError('INTERNAL', `release of ${qid} committed no release event`);
    return { entry: done, memoryIds: done.memoryIds, duplicate };
  }

  /**
   * Drops a held write for good: its text leaves the vault. A drop confirms the text as an attack, so
   * (unless `teach` is false) the filter learns it: an anchor shared by every agent of the store then holds
   * reworded variants. CONFLICT unless the entry is held.
   */
  async dropQuarantined(id: string, options: { reason?: string; teach?: boolean } = {}): Promise<QuarantineEntry> {
    const qid = validateId(id, 'id');
    const given = validateReason(options.reason, false);
    const reason = given === null ? null : this.scrub(given, 'reason', {});
    const vault = options.teach === false || !this.embedder ? null : await this.store.getQuarantineVault(qid);
    const lesson = vault && this.embedder ? await lessonVector(this.store, this.embedder, this.filterConfig, vault.text) : null;
    return this.store.transaction(async (tx) => {
      const current = await tx.getQuarantine(qid);
      if (!current) throw new CairnError('NOT_FOUND', `no quarantine entry ${qid}`, { field: 'id' });
      if (current.status !== 'held') throw new CairnError('CONFLICT', `quarantine entry ${qid} is already ${current.status}`, { field: 'id' });
      const now = this.now();
      const dropped: QuarantineEntry = { ...current, status: 'dropped', decidedAt: now, reason, taught: lesson !== null };
      await emit(tx, STORE_SCOPE, { type: 'quarantine.dropped', entry: dropped }, now);
      if (lesson) await tx.putLearnedAnchor(qid, lesson, now);
      await tx.deleteQuarantineVault(qid);
      return dropped;
    });
  }

  // ------------------------------------------------------------------------------------- import/export

  /**
   * Imports JSON lines (one object a line: text plus optional namespace, kind, tags, importance, createdAt,
   * externalId, metadata). Bad lines are reported with their line number and skipped; good ones are kept.
   */
  async importLines(lines: AsyncIterable<string> | Iterable<string>, onProgress?: ProgressFn, batchSize = 64): Promise<ImportCounts> {
    const counts: ImportCounts = { imported: 0, duplicate: 0, rejected: 0, errors: [], quarantined: [] };
    let batch: { line: number; input: MemoryInput }[] = [];
    let seen = 0;
    const tally = (o: SaveOutcome, line: number) => {
      if ('quarantined' in o) counts.quarantined.push({ line, id: o.quarantined.id, score: o.quarantined.score });
      else if (o.duplicate) counts.duplicate++;
      else counts.imported++;
    };
    /**
     * A line is rejected for what it says; a failure of the store (read-only, disk full, damaged) would fail
     * every line alike, so it stops the import with one error naming where it stopped.
     */
    const stopOnStorageFailure = (err: unknown, line: number) => {
      if (!isCairnError(err) || !STORAGE_FAILURES.has(err.code)) return;
      throw new CairnError(err.code, `import stopped at line ${line} (${counts.imported} imported before it): ${err.message}`, { cause: err, ...(err.hint ? { hint: err.hint } : {}) });
    };
    const flush = async () => {
      if (batch.length === 0) return;
      try {
        // Held lines are reported with their line number; the rest of the batch lands.
        const results = await this.saveScreened(batch.map((b) => b.input), { partial: true });
        results.forEach((r, i) => tally(r, (batch[i] as { line: number }).line));
      } catch (err) {
        stopOnStorageFailure(err, batch[0]?.line ?? lineNo);
        // A batch failed as a whole (e.g. a supersede target missing): fall back to one line at a time.
        for (const b of batch) {
          try {
            const [r] = await this.saveScreened([b.input], { partial: true });
            if (r) tally(r, b.line);
          } catch (e) {
            stopOnStorageFailure(e, b.line);
            counts.rejected++;
            counts.errors.push({ line: b.line, message: (e as Error).message });
          }
        }
      }
      batch = [];
      onProgress?.(seen, null);
    };
    let lineNo = 0;
    for await (const raw of lines) {
      lineNo++;
      const line = raw.trim();
      if (line === '') continue;
      seen++;
      try {
        const input = parseImportLine(line);
        this.prepare(input); // validate now so the line number is reported
        batch.push({ line: lineNo, input });
      } catch (err) {
        counts.rejected++;
        counts.errors.push({ line: lineNo, message: err instanceof CairnError ? err.message : notJsonProblem(line) });
      }
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    return counts;
  }

  /** Memories as JSON lines that `importLines` reads back (live ones by default). */
  async *exportLines(options: { namespace?: string; includeInactive?: boolean } = {}): AsyncGenerator<string> {
    const namespace = this.ns(options.namespace);
    const now = this.now();
    for await (const page of this.store.iterateMemories(namespace, 500)) {
      for (const m of page) {
        if (!options.includeInactive && !isActive(m, now)) continue;
        yield JSON.stringify(toExportRecord(m));
      }
    }
  }
}

function validateTaskId(value: unknown): string {
  if (typeof value !== 'string' || !/^[\p{L}\p{N}_.:#/-]{1,128}$/u.test(value)) {
    throw new CairnError('INVALID_INPUT', `taskId: must be 1–128 letters, digits or _ . : # / - (got ${JSON.stringify(value)})`, { field: 'taskId' });
  }
  return value;
}

/** A route given to saveRoute / updateRoute; description and paths default to empty. */
export interface RouteInput {
  title: string;
  description?: string;
  paths?: string[];
}

/** The text of a route memory: title, description and paths, so a change to any of them is a new text. */
export function routeText(route: RouteInfo): string {
  const head = [route.title, route.description].filter(Boolean).join(': ');
  return route.paths.length ? `${head} (paths: ${route.paths.join(', ')})` : head;
}

/** A task note shorter than this many characters (after trimming) is not stored. */
export const TASK_NOTE_MIN_CHARS = 40;
export const TASK_NOTE_IMPORTANCE = 4;

export interface TaskNoteInput {
  taskId: string;
  /** What was done, learned and why. */
  context: string;
  namespace?: string | undefined;
  metadata?: Provenance | undefined;
}

export type TaskNoteResult = ({ stored: true; chars: number } & SaveResult) | { stored: false; chars: number; reason: string };

/** One export line: what `import` needs to recreate the memory. */
export function toExportRecord(m: Memory): Record<string, unknown> {
  const rec: Record<string, unknown> = { text: m.text, namespace: m.namespace, kind: m.kind, importance: m.importance, tags: m.tags, createdAt: m.createdAt };
  if (m.taskId) rec['taskId'] = m.taskId;
  if (m.route) rec['route'] = m.route;
  if (m.expiresAt) rec['expiresAt'] = m.expiresAt;
  const { externalId, ...rest } = m.metadata;
  rec['externalId'] = externalId ?? m.id;
  if (Object.keys(rest).length) rec['metadata'] = rest;
  return rec;
}

const IMPORT_KEYS = new Set(['text', 'namespace', 'kind', 'tags', 'importance', 'createdAt', 'externalId', 'metadata', 'taskId', 'route', 'expiresAt']);

export function parseImportLine(line: string): MemoryInput {
  if (jsonTooDeep(line)) throw new CairnError('INVALID_INPUT', `nested more than ${MAX_JSON_DEPTH} levels deep; a memory record needs three`);
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new CairnError('INVALID_INPUT', notJsonProblem(line));
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CairnError('INVALID_INPUT', 'each line must be a JSON object');
  }
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (!IMPORT_KEYS.has(key)) throw new CairnError('INVALID_INPUT', `${key}: unknown field; allowed: ${[...IMPORT_KEYS].join(', ')}`, { field: key });
  }
  const metadata = { ...((obj['metadata'] as Record<string, unknown> | undefined) ?? {}) };
  if (obj['externalId'] !== undefined) metadata['externalId'] = obj['externalId'];
  metadata['source'] ??= 'import';
  const input: MemoryInput = { text: obj['text'] as string, metadata: metadata as MemoryInput['metadata'] };
  for (const key of ['namespace', 'kind', 'tags', 'importance', 'createdAt', 'taskId', 'route', 'expiresAt'] as const) {
    if (obj[key] !== undefined) (input as unknown as Record<string, unknown>)[key] = obj[key];
  }
  return input;
}
