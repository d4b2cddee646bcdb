/** The public library surface of cairn. Everything else is internal. */
export { CairnError, isCairnError, ERROR_CODES, type ErrorCode } from './interfaces/errors.js';
export type {
  Memory,
  MemoryInput,
  MemoryKind,
  Provenance,
  RouteInfo,
  SaveResult,
  SearchOptions,
  SearchResult,
  ScoreDetails,
  SignalWeights,
  ContextOptions,
  ContextPack,
  ListOptions,
  StoreStats,
} from './interfaces/memory.js';
export type { Store, StoreTx, StoreCapabilities, EmbedderInfo } from './interfaces/store.js';
export type {
  QuarantineDetail,
  QuarantineEntry,
  QuarantineListOptions,
  QuarantineReceipt,
  QuarantineReleaseResult,
  QuarantineStatus,
  QuarantineView,
} from './interfaces/quarantine.js';
export type { IngestFilterConfig } from './core/ingest-filter.js';
export type { RedactionConfig, RedactionMode } from './core/redact.js';
export type { Embedder, Reranker, TokenCounter, Logger } from './interfaces/embedder.js';
export { Engine, type EngineConfig } from './core/engine.js';
export { DEFAULT_WEIGHTS } from './core/fusion.js';
export { createSqliteStore, type SqliteStoreConfig } from './adapters/sqlite/sqlite-store.js';
export { createUseEmbedder } from './adapters/embed-use/use-embedder.js';
export { createHttpEmbedder, type HttpEmbedderConfig } from './adapters/embed-http/http-embedder.js';
export { createOverlapReranker } from './adapters/rerank-local/overlap-reranker.js';
export { createGptTokenCounter } from './adapters/tokenizer/gpt-token-counter.js';
export { openEngine } from './surfaces/open-engine.js';
