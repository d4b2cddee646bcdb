// The engine's shared state: the validated configuration, store, providers, clock and namespace rule.
import { DEFAULT_SNAPSHOT_GROWTH } from './snapshot.js';
import type { Embedder, Logger, Reranker, TokenCounter } from '../interfaces/embedder.js';
import { CairnError } from '../interfaces/errors.js';
import type { FusionMethod, SaveResult, SignalWeights } from '../interfaces/memory.js';
import type { QuarantineReceipt } from '../interfaces/quarantine.js';
import type { Store, StoreTx } from '../interfaces/store.js';
import type { CodeAnchor, CodeRef, CodeRepository } from '../interfaces/code.js';
import {
  DEFAULT_CALIBRATION,
  DEFAULT_FLOOR,
  defaultWeightsFor,
  resolveWeights,
  type RelevanceFloor,
  type ScoreCalibration,
} from './fusion.js';
import { DEFAULT_RECORDED_UPDATE, DEFAULT_STATED_UPDATE, type RecordedUpdateRule, type StatedUpdateRule } from './topics.js';
import { DEFAULT_SESSION_CONTEXT, type SessionContextWeights } from './session-context.js';
import { DEFAULT_TERM_COVERAGE, type TermCoverage } from './term-coverage.js';
import { DEFAULT_ROUTE_ANSWERS, type RouteAnswers } from './route-answers.js';
import { DEFAULT_RELATED_TERMS, type RelatedTerms } from './related-terms.js';
import { CodeAwareness } from './code-awareness.js';
import { DEFAULT_FILTER_CONFIG, type IngestFilterConfig } from './ingest-filter-config.js';
import { DEFAULT_REDACTION_CONFIG, type RedactionConfig, type RedactionCounts } from './redact.js';
import { validateFusion, validateNamespace, validateShare } from './validate.js';

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
   * …and only once the namespace's log has grown by this share since its last snapshot (`snapshotDue` in snapshot.ts);
   * 0 snapshots every `snapshotEvery` turns whatever the size. Default 0.05.
   */
  snapshotGrowth?: number;
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
  /** Score fusion only: points from matching memories of the same session (session-context.ts); null: none. */
  sessionContext?: SessionContextWeights | null;
  /** Score fusion only: how much query-term coverage counts in the lexical signal (term-coverage.ts); null: none. */
  termCoverage?: TermCoverage | null;
  /** Score fusion only: what a route counts for a question that does not ask where (route-answers.ts); null: as any note. */
  routeAnswers?: RouteAnswers | null;
  /**
   * Score fusion only: when recall ranks a note above the older notes it probably updates (its
   * `likelyReplaces`, found at write time) and brings it in when one of them is found (likely-replaces.ts).
   * Missing: DEFAULT_RECORDED_UPDATE; null: neither.
   */
  likelyReplaces?: RecordedUpdateRule | null;
  /**
   * How much terms related to the query's words (related-terms.ts, an engineering vocabulary) count in the
   * lexical signal; a namespace's `related-terms` setting overrides it. Missing: DEFAULT_RELATED_TERMS;
   * null: off unless a namespace turns it on.
   */
  relatedTerms?: RelatedTerms | null;
}

/** One input of a batch after screening: saved (or found as a duplicate), or held for review. */
export type SaveOutcome = SaveResult | { quarantined: QuarantineReceipt };

/** Internal options of the write paths, used by a quarantine release. */
export interface WriteOptions {
  /** Batches: hold blocked items and store the rest (true), or hold them and store nothing (false). */
  partial?: boolean;
  /** False when an operator released the text: it is committed without scoring. */
  screen?: boolean;
  /** Runs inside the write's transaction after its events (a release records itself atomically). */
  inTx?: (tx: StoreTx, now: string, memoryIds: string[]) => Promise<void>;
  /** Per input: the id to give the new memory and its code reference as recorded elsewhere (sync imports). */
  given?: ({ id: string; code: CodeRef | null } | undefined)[];
  /**
   * False: the new memories record no `likelyReplaces`, whatever the batch size (imports, which carry the
   * notes as written elsewhere). Otherwise only batches of at most LIKELY_LOOKUP_MAX_BATCH record it.
   */
  recordLikelyReplaces?: boolean;
}

export type ProgressFn = (done: number, total: number | null) => void;

/**
 * Candidates fetched per signal before fusion: max(limit × DEFAULT_CANDIDATE_FACTOR, DEFAULT_MIN_CANDIDATES).
 * A deep pool lets fusion see both signals' opinion of most candidates (a memory missing from one list gets
 * nothing from it): 300 instead of 50 is worth about a point of recall@5 on the LoCoMo dev split
 * (bench/results/locomo-sweep.json) for ~10 ms more per search on 2,800 memories.
 */
export const DEFAULT_CANDIDATE_FACTOR = 5;
export const DEFAULT_MIN_CANDIDATES = 300;

/**
 * What every part of the engine shares (the write path, turns, lifecycle, recall, packing, quarantine
 * review, transfer): the store and providers, the validated configuration, the clock and the namespace
 * rule. Built once by createEngineContext; the parts are functions of it, composed by the Engine facade.
 */
export interface EngineContext {
  readonly store: Store;
  readonly embedder: Embedder | null;
  readonly defaultNamespace: string;
  readonly reranker: Reranker | null;
  readonly tokens: TokenCounter;
  readonly configWeights: Partial<SignalWeights> | undefined;
  readonly fusion: FusionMethod;
  readonly calibration: ScoreCalibration;
  readonly relevanceFloor: RelevanceFloor | null;
  readonly statedUpdate: StatedUpdateRule | null;
  readonly sessionContext: SessionContextWeights | null;
  readonly termCoverage: TermCoverage | null;
  readonly routeAnswers: RouteAnswers | null;
  readonly likelyReplaces: RecordedUpdateRule | null;
  readonly relatedTerms: RelatedTerms | null;
  readonly candidateFactor: number;
  readonly minCandidates: number;
  readonly log: Logger | undefined;
  readonly snapshotEvery: number;
  readonly snapshotGrowth: number;
  readonly countRecalls: boolean;
  readonly filterConfig: IngestFilterConfig;
  readonly redaction: RedactionConfig;
  /** Redaction counts of prepared records (kept beside them so they never leak into the Memory). */
  readonly redactionsOf: WeakMap<object, RedactionCounts>;
  /** Anchors and scope asked for by prepared records (resolved against the repository before commit). */
  readonly codeInputOf: WeakMap<object, { anchors: CodeAnchor[]; scope: 'repository' | 'branch' | null }>;
  /** The repository of the default namespace (anchors, staleness, branch scope). */
  readonly code: CodeAwareness;
  /** The clock's time as ISO-8601 UTC. */
  now(): string;
  /** The namespace a call names (validated), or the default one when it names none. */
  ns(namespace: string | undefined): string;
}

/** Validates the configuration and builds the context; INVALID_INPUT names the bad setting. */
export function createEngineContext(config: EngineConfig): EngineContext {
  const defaultNamespace = validateNamespace(config.defaultNamespace, 'default namespace');
  const fusion = validateFusion(config.fusion ?? 'score', 'fusion');
  resolveWeights(defaultWeightsFor(fusion), config.weights); // validates
  const relevanceFloor = config.relevanceFloor === null ? null : { ...DEFAULT_FLOOR, ...config.relevanceFloor };
  if (
    relevanceFloor &&
    !(
      relevanceFloor.relevance >= 0 &&
      relevanceFloor.relevance <= 100 &&
      Math.abs(relevanceFloor.margin) <= 2 &&
      Math.abs(relevanceFloor.unknownMargin) <= 2 &&
      relevanceFloor.unknownShare >= 0 &&
      relevanceFloor.unknownShare <= 1
    )
  ) {
    throw new CairnError('INVALID_INPUT', 'relevanceFloor: relevance must be 0–100, margin and unknownMargin −2 to 2, unknownShare 0–1', { field: 'relevanceFloor' });
  }
  if (config.termCoverage) validateShare(config.termCoverage.share, 'termCoverage.share');
  if (config.routeAnswers) validateShare(config.routeAnswers.factor, 'routeAnswers.factor');
  if (config.relatedTerms) validateShare(config.relatedTerms.weight, 'relatedTerms.weight');
  const clock = config.now ?? (() => new Date());
  const snapshotEvery = config.snapshotEvery ?? 10;
  const snapshotGrowth = config.snapshotGrowth ?? DEFAULT_SNAPSHOT_GROWTH;
  const filterConfig: IngestFilterConfig = { ...DEFAULT_FILTER_CONFIG, ...config.ingestFilter };
  const redaction: RedactionConfig = { ...DEFAULT_REDACTION_CONFIG, ...config.redaction };
  for (const [name, t] of [['threshold', filterConfig.threshold], ['learnedThreshold', filterConfig.learnedThreshold]] as const) {
    if (name === 'threshold' && t === undefined) continue; // the model's calibrated threshold
    if (typeof t !== 'number' || !(t > -1 && t <= 1)) {
      throw new CairnError('INVALID_INPUT', `ingestFilter.${name}: must be a number in (-1, 1] (got ${JSON.stringify(t)})`, { field: `ingestFilter.${name}` });
    }
  }
  if (!['off', 'redact', 'reject'].includes(redaction.mode)) {
    throw new CairnError('INVALID_INPUT', `redaction.mode: must be off, redact or reject (got ${JSON.stringify(redaction.mode)})`, { field: 'redaction.mode' });
  }
  if (!Number.isInteger(snapshotEvery) || snapshotEvery < 0) {
    throw new CairnError('INVALID_INPUT', 'snapshotEvery: must be a whole number, 0 or more', { field: 'snapshotEvery' });
  }
  if (typeof snapshotGrowth !== 'number' || !(snapshotGrowth >= 0 && snapshotGrowth <= 10)) {
    throw new CairnError('INVALID_INPUT', 'snapshotGrowth: must be a number from 0 to 10', { field: 'snapshotGrowth' });
  }
  return {
    store: config.store,
    embedder: config.embedder,
    defaultNamespace,
    reranker: config.reranker ?? null,
    tokens: config.tokenCounter,
    configWeights: config.weights,
    fusion,
    calibration: { ...DEFAULT_CALIBRATION, ...config.calibration },
    relevanceFloor,
    statedUpdate: config.statedUpdate === undefined ? DEFAULT_STATED_UPDATE : config.statedUpdate,
    sessionContext: config.sessionContext === undefined ? DEFAULT_SESSION_CONTEXT : config.sessionContext,
    termCoverage: config.termCoverage === undefined ? DEFAULT_TERM_COVERAGE : config.termCoverage,
    routeAnswers: config.routeAnswers === undefined ? DEFAULT_ROUTE_ANSWERS : config.routeAnswers,
    likelyReplaces: config.likelyReplaces === undefined ? DEFAULT_RECORDED_UPDATE : config.likelyReplaces,
    relatedTerms: config.relatedTerms === undefined ? DEFAULT_RELATED_TERMS : config.relatedTerms,
    candidateFactor: config.candidateFactor ?? DEFAULT_CANDIDATE_FACTOR,
    minCandidates: config.minCandidates ?? DEFAULT_MIN_CANDIDATES,
    log: config.logger,
    snapshotEvery,
    snapshotGrowth,
    countRecalls: config.countRecalls ?? true,
    filterConfig,
    redaction,
    redactionsOf: new WeakMap(),
    codeInputOf: new WeakMap(),
    code: new CodeAwareness(config.repository ?? null, defaultNamespace, config.store),
    now: () => clock().toISOString(),
    ns: (namespace) => (namespace === undefined ? defaultNamespace : validateNamespace(namespace)),
  };
}
