import { intentFeatures } from './intent.js';

/**
 * The ingest filter's classifier: logistic regression over hashed word unigrams and bigrams, hashed character
 * n-grams (CHAR_GRAM letters, across word boundaries, so a split or respelled word still shares most of its
 * grams), the intent
 * signals of `intent.ts` (with the stance of each act a sentence names, `stance.ts`), the text's similarity to the embedding anchors, and the embedding itself (its
 * storage vector, already computed: a weighted sum over its dimensions reads what the text means, so a
 * reworded attack that shares no n-gram with the training texts still scores). Weights are learned offline
 * (`npm run train:filter`, bench/train-filter.ts) on the calibration/train splits only and committed as
 * `filter-model.json`; nothing is downloaded or trained at run time.
 *
 * Pure arithmetic: a 300-character text costs a few dozen hash lookups; a 32 KB text is cut to its first
 * MAX_FEATURE_CHARS characters for the n-grams (its windows are scored on their own by the filter).
 */

/** Number of hash buckets for n-grams (2^18). */
export const HASH_BUCKETS = 1 << 18;
/** N-grams are read from at most this many characters of a text. */
export const MAX_FEATURE_CHARS = 8_000;

/** What the embedding anchors say about one scored text (see ingest-filter.ts). */
export interface AnchorFeatures {
  /** Best cosine similarity to a seed anchor (-1 when the text does not address the model). */
  seed: number;
  /** Best cosine similarity to a counter-anchor (ordinary text). */
  benign: number;
}

export interface FilterModel {
  version: number;
  /** Probability at or above which a text is held, chosen on the calibration split. */
  threshold: number;
  bias: number;
  /** Sparse n-gram weights (word and character n-grams share the buckets): bucket → weight. */
  ngrams: Record<string, number>;
  /** Weight per intent feature id (`<signal>:<pattern>`). */
  signals: Record<string, number>;
  /** Weights of the anchor features. */
  dense: Record<DenseFeature, number>;
  /** One weight per dimension of the embedding (times EMBEDDING_SCALE), for the embedder named in `trainedOn`. */
  embedding?: number[];
  /** How the model was trained (data, split, sizes), for the record. */
  trainedOn: Record<string, unknown>;
}

export const DENSE_FEATURES = ['anchorSeed', 'anchorMargin', 'anchorBenign'] as const;
/**
 * Unit-length embeddings have small components (about 1/sqrt(512) each for USE-lite); they are scaled up so
 * their weights learn at the pace of the others.
 */
export const EMBEDDING_SCALE = 4;
export type DenseFeature = (typeof DENSE_FEATURES)[number];

/** FNV-1a, 32-bit. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Length of the character n-grams (read from the text with runs of white space made one space). */
export const CHAR_GRAM = 4;

const TOKEN = /[\p{L}\p{N}]+(?:[._'@/-][\p{L}\p{N}]+)*|\|/gu;

/** The features of one text (already de-obfuscated by the caller; lower-cased here). */
export interface Features {
  /** Distinct n-gram buckets, each of value `ngramValue`. */
  ngrams: number[];
  ngramValue: number;
  /** Distinct character n-gram buckets, each of value `charValue` (normalised apart from the word n-grams). */
  chars: number[];
  charValue: number;
  /** Feature ids of the intent patterns the text matches (`<signal>:<pattern>`). */
  signals: string[];
  dense: Record<DenseFeature, number>;
  /** The text's embedding (empty when there is none). */
  embedding: Float32Array;
}

export function featuresOf(text: string, anchors: AnchorFeatures, embedding: Float32Array = new Float32Array(0)): Features {
  const lower = text.slice(0, MAX_FEATURE_CHARS).toLowerCase();
  const tokens = lower.match(TOKEN) ?? [];
  const buckets = new Set<number>();
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as string;
    buckets.add(hash(`u:${t}`) % HASH_BUCKETS);
    if (i + 1 < tokens.length) buckets.add(hash(`b:${t} ${tokens[i + 1] as string}`) % HASH_BUCKETS);
  }
  const ngrams = [...buckets];
  const flat = ` ${lower.replace(/\s+/gu, ' ').trim()} `;
  const charBuckets = new Set<number>();
  for (let i = 0; i + CHAR_GRAM <= flat.length; i++) charBuckets.add(hash(`c:${flat.slice(i, i + CHAR_GRAM)}`) % HASH_BUCKETS);
  const chars = [...charBuckets];
  return {
    ngrams,
    ngramValue: ngrams.length ? 1 / Math.sqrt(ngrams.length) : 0,
    chars,
    charValue: chars.length ? 1 / Math.sqrt(chars.length) : 0,
    signals: intentFeatures(lower),
    dense: {
      anchorSeed: Math.max(0, anchors.seed),
      anchorMargin: anchors.seed < 0 ? 0 : anchors.seed - anchors.benign,
      anchorBenign: Math.max(0, anchors.benign),
    },
    embedding,
  };
}

/** The model's log-odds for `f`, with each signal's contribution (for the reasons a hold names). */
export function logit(model: FilterModel, f: Features): { z: number; signals: { id: string; weight: number }[]; anchors: number; meaning: number } {
  let z = model.bias;
  for (const b of f.ngrams) z += (model.ngrams[b] ?? 0) * f.ngramValue;
  for (const b of f.chars) z += (model.ngrams[b] ?? 0) * f.charValue;
  const signals = f.signals.map((id) => ({ id, weight: model.signals[id] ?? 0 }));
  for (const s of signals) z += s.weight;
  let anchors = 0;
  for (const k of DENSE_FEATURES) {
    const c = (model.dense[k] ?? 0) * f.dense[k];
    anchors += c;
    z += c;
  }
  let meaning = 0;
  const w = model.embedding;
  if (w && w.length === f.embedding.length) for (let i = 0; i < w.length; i++) meaning += (w[i] as number) * (f.embedding[i] as number) * EMBEDDING_SCALE;
  z += meaning;
  return { z, signals, anchors, meaning };
}

export function sigmoid(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

let loaded: Promise<FilterModel> | null = null;

/** The committed model, loaded on first use (about 1 MB of JSON; commands that never screen never pay). */
export function filterModel(): Promise<FilterModel> {
  loaded ??= import('./filter-model.json', { with: { type: 'json' } }).then((m) => m.default as unknown as FilterModel);
  return loaded;
}
