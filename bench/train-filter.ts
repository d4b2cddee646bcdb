/**
 * Trains the ingest filter's classifier and writes src/core/filter-model.json (`npm run train:filter`).
 *
 *   node dist/bench/train-filter.js [--cache <file>] [--out <file>] [--oof <file>] [--l2 <x>] [--ngram-l2 <x>] [--no-embedding] [--oof-only] [--verbose]
 *
 * `--oof` writes every training text's out-of-fold probability (JSON lines), to compare set-ups on the
 * calibration data alone; `--oof-only` stops there (no final model is trained or written). `--ngram-l2` sets the
 * L2 of the word and character n-gram weights apart from the others' `--l2`.
 *
 * Data: the calibration/train halves only (see bench/filter-data.ts) — the public injection set (BIPIA text
 * attacks left out), LoCoMo turns, this repository's engineering notes and the calibration half of
 * bench/data/coding-agent-poisoning.jsonl (its innocent statements left out). Held-out halves are never read
 * here. Features: classifier.ts (hashed word n-grams, intent signals, similarity to the embedding anchors and
 * the embedding's dimensions, from the real USE-lite embedder). Logistic regression, full-batch Adam, L2, fixed epochs: deterministic.
 *
 * The threshold is chosen on out-of-fold probabilities (5 folds of the training data, by text hash): the
 * lowest threshold whose false-positive rates stay within the budgets below, which are stricter than the
 * goals so that the held-out figures have room.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { DENSE_FEATURES, EMBEDDING_SCALE, featuresOf, HASH_BUCKETS, sigmoid, type FilterModel, type Features } from '../src/core/classifier.js';
import { BENIGN_ANCHORS, evidenceOf, SEED_ANCHORS, type AnchorVector } from '../src/core/ingest-filter.js';
import { INTENT_FEATURE_IDS } from '../src/core/intent.js';
import { FileCachedEmbedder, loadAll, NOT_TRAINED, ROOT, type Item } from './filter-data.js';

function arg(flag: string): string | undefined {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const OUT = resolve(arg('--out') ?? join(ROOT, 'src', 'core', 'filter-model.json'));
const CACHE = resolve(arg('--cache') ?? join(tmpdir(), 'cairn-security-bench-vectors.json'));
const log = (s: string) => process.stderr.write(`[train-filter] ${s}\n`);

const EPOCHS = 300;
const LEARNING_RATE = 0.05;
/**
 * Chosen on out-of-fold rates (December 2026, same data and rules; all attacks held at each run's threshold):
 * 2e-4 72.5 %, 1e-4 77.1 %, 5e-5 81.3 %, 2e-5 78.7 %.
 */
const L2 = Number(arg('--l2') ?? 5e-5);
/**
 * L2 of the n-gram weights (word and character n-grams share their buckets). Chosen on out-of-fold rates and the
 * fresh-wording check (December 2026, coding attacks held out of fold / fresh attacks held): 2e-3 74.3 %, 5e-4
 * 77.3 %, 5e-5 (as the others) 83.5 % / 31 of 45, 1.5e-5 84.5 % / 33 of 45.
 */
const NGRAM_L2 = Number(arg('--ngram-l2') ?? 1.5e-5);
const OOF_ONLY = process.argv.includes('--oof-only');
const FOLDS = 5;
/** Whether the embedding's dimensions are features (`--no-embedding` trains without them, to compare). */
const USE_EMBEDDING = !process.argv.includes('--no-embedding');
/** Out-of-fold false-positive budgets per benign group (goals: NotInject 5 %, benign rows 3 %, LoCoMo 0.2 %, notes 0.5 %, coding 2 %). */
const BUDGETS: Record<string, number> = {
  notinject: 0.03,
  'benign-labelled': 0.02,
  'locomo-turn': 0.001,
  'engineering-note': 0.013,
  'coding-benign': 0.012,
};
const inGroup = (item: Item, g: string) => (g === 'benign-labelled' ? item.group === 'notinject' || item.group === 'bipia-email' : item.group === g);
/**
 * Benign groups weigh more than their size: they are few, and each one held is a refused note. Coding benign
 * notes at 8 (out of fold 78.9 % of attacks held, against 77.7 % at 4; coding attacks at 6 as well: 76.5 %).
 */
const GROUP_WEIGHT: Record<string, number> = { notinject: 3, 'coding-benign': 8, 'engineering-note': 3, 'coding-attack': 3 };

interface Example {
  item: Item;
  f: Features;
  weight: number;
}

const SIGNAL_IDS = [...INTENT_FEATURE_IDS];
/**
 * Prior weight of each intent pattern: the context-only signals (a secret named, an outside address) weigh
 * less, and a forbidden act (`…:negated`), a narrow scope (`scoped:…`) and the stance features (`stance:…`, read
 * from a sentence's wording, as likely either way until trained) start at nothing.
 */
const PRIOR = 1.5;
const WEAK_PRIOR = 0.5;
const COMBO_PRIOR = 2.5;
const PRIOR_OF = SIGNAL_IDS.map((id) =>
  id.endsWith(':negated') || id.startsWith('scoped:') || id.startsWith('stance:') || id.startsWith('frame:') ? 0 : id.startsWith('combo:') ? COMBO_PRIOR : id.startsWith('mentions-secrets') || id.startsWith('external-destination') || id.startsWith('imperative-start') ? WEAK_PRIOR : PRIOR,
);

interface Weights {
  bias: number;
  ngrams: Float64Array;
  signals: Float64Array;
  dense: Float64Array;
  embedding: Float64Array;
}

function zOf(w: Weights, f: Features): number {
  let z = w.bias;
  for (const b of f.ngrams) z += (w.ngrams[b] as number) * f.ngramValue;
  for (const b of f.chars) z += (w.ngrams[b] as number) * f.charValue;
  for (const s of f.signals) z += w.signals[SIGNAL_IDS.indexOf(s)] as number;
  DENSE_FEATURES.forEach((k, i) => (z += (w.dense[i] as number) * f.dense[k]));
  for (let i = 0; i < w.embedding.length; i++) z += (w.embedding[i] as number) * (f.embedding[i] as number) * EMBEDDING_SCALE;
  return z;
}

function train(examples: Example[]): Weights {
  const dims = examples[0]?.f.embedding.length ?? 0;
  const w: Weights = { bias: 0, ngrams: new Float64Array(HASH_BUCKETS), signals: Float64Array.from(PRIOR_OF), dense: new Float64Array(DENSE_FEATURES.length), embedding: new Float64Array(dims) };
  const size = 1 + HASH_BUCKETS + SIGNAL_IDS.length + DENSE_FEATURES.length + dims;
  const embedAt = 1 + HASH_BUCKETS + SIGNAL_IDS.length + DENSE_FEATURES.length;
  const m = new Float64Array(size);
  const v = new Float64Array(size);
  const g = new Float64Array(size);
  const total = examples.reduce((s, e) => s + e.weight, 0);
  const [b1, b2, eps] = [0.9, 0.999, 1e-8];
  const touched = new Uint8Array(HASH_BUCKETS);
  for (const e of examples) for (const b of [...e.f.ngrams, ...e.f.chars]) touched[b] = 1;
  for (let epoch = 1; epoch <= EPOCHS; epoch++) {
    g.fill(0);
    for (const e of examples) {
      const err = ((sigmoid(zOf(w, e.f)) - e.item.label) * e.weight) / total;
      g[0] = (g[0] as number) + err;
      for (const b of e.f.ngrams) g[1 + b] = (g[1 + b] as number) + err * e.f.ngramValue;
      for (const b of e.f.chars) g[1 + b] = (g[1 + b] as number) + err * e.f.charValue;
      for (const s of e.f.signals) {
        const k = 1 + HASH_BUCKETS + SIGNAL_IDS.indexOf(s);
        g[k] = (g[k] as number) + err;
      }
      DENSE_FEATURES.forEach((key, i) => {
        const k = 1 + HASH_BUCKETS + SIGNAL_IDS.length + i;
        g[k] = (g[k] as number) + err * e.f.dense[key];
      });
      for (let i = 0; i < dims; i++) g[embedAt + i] = (g[embedAt + i] as number) + err * (e.f.embedding[i] as number) * EMBEDDING_SCALE;
    }
    const step = (k: number, value: number, l2 = L2): number => {
      const grad = (g[k] as number) + (k === 0 ? 0 : l2 * value);
      m[k] = b1 * (m[k] as number) + (1 - b1) * grad;
      v[k] = b2 * (v[k] as number) + (1 - b2) * grad * grad;
      const mh = (m[k] as number) / (1 - b1 ** epoch);
      const vh = (v[k] as number) / (1 - b2 ** epoch);
      return value - (LEARNING_RATE * mh) / (Math.sqrt(vh) + eps);
    };
    w.bias = step(0, w.bias);
    for (let b = 0; b < HASH_BUCKETS; b++) if (touched[b]) w.ngrams[b] = step(1 + b, w.ngrams[b] as number, NGRAM_L2);
    // Intent patterns are written by people who read attacks: they start at a prior weight and are pulled
    // back towards it (not towards 0), so a pattern seen in few training texts still counts.
    for (let i = 0; i < SIGNAL_IDS.length; i++) w.signals[i] = PRIOR_OF[i] as number + step(1 + HASH_BUCKETS + i, (w.signals[i] as number) - (PRIOR_OF[i] as number));
    for (let i = 0; i < DENSE_FEATURES.length; i++) w.dense[i] = step(1 + HASH_BUCKETS + SIGNAL_IDS.length + i, w.dense[i] as number);
    for (let i = 0; i < dims; i++) w.embedding[i] = step(embedAt + i, w.embedding[i] as number);
  }
  return w;
}

/** Rounds weights to 4 decimals and drops the n-grams whose weight rounds below 0.002 (the JSON stays small). */
function prune(w: Weights): Weights {
  const r = (x: number) => Math.round(x * 10_000) / 10_000;
  const ngrams = new Float64Array(HASH_BUCKETS);
  for (let b = 0; b < HASH_BUCKETS; b++) ngrams[b] = Math.abs(w.ngrams[b] as number) < 0.002 ? 0 : r(w.ngrams[b] as number);
  return { bias: r(w.bias), ngrams, signals: w.signals.map(r), dense: w.dense.map(r), embedding: w.embedding.map(r) };
}

function foldOf(text: string): number {
  return (createHash('sha256').update(`fold:${text}`).digest()[0] as number) % FOLDS;
}

/** The lowest threshold (0.05–0.99) whose out-of-fold FP rates fit the budgets. */
function chooseThreshold(scored: { item: Item; p: number }[]): { threshold: number; rates: Record<string, number> } {
  const rates = (t: number) => {
    const out: Record<string, number> = {};
    for (const g of Object.keys(BUDGETS)) {
      const rows = scored.filter((s) => inGroup(s.item, g));
      out[g] = rows.length ? rows.filter((s) => s.p >= t).length / rows.length : 0;
    }
    const attacks = scored.filter((s) => s.item.label === 1);
    out['attacks'] = attacks.filter((s) => s.p >= t).length / attacks.length;
    for (const g of new Set(attacks.map((a) => a.item.group))) {
      const rows = attacks.filter((a) => a.item.group === g);
      out[g] = rows.filter((s) => s.p >= t).length / rows.length;
    }
    return out;
  };
  for (let t = 0.05; t <= 0.99; t = Math.round((t + 0.01) * 100) / 100) {
    const r = rates(t);
    if (Object.entries(BUDGETS).every(([g, b]) => (r[g] as number) <= b)) return { threshold: t, rates: r };
  }
  return { threshold: 0.99, rates: rates(0.99) };
}

async function main(): Promise<void> {
  const started = performance.now();
  const all = loadAll();
  const items = all.filter((i) => i.half === 'calibration' && !NOT_TRAINED.has(i.group));
  log(`${items.length} training texts (of ${all.length}; held-out halves and ${[...NOT_TRAINED].join(', ')} left out)`);
  const embedder = new FileCachedEmbedder(createUseEmbedder(), CACHE, log);
  const seedVectors = await embedder.embed([...SEED_ANCHORS.map((a) => a.text), ...BENIGN_ANCHORS]);
  const anchors: AnchorVector[] = [
    ...SEED_ANCHORS.map((a, i) => ({ id: `seed:${a.id}`, vector: seedVectors[i] as Float32Array, kind: 'seed' as const })),
    ...BENIGN_ANCHORS.map((_, i) => ({ id: `benign:${i}`, vector: seedVectors[SEED_ANCHORS.length + i] as Float32Array, kind: 'benign' as const })),
  ];
  const vectors = await embedder.embed(items.map((i) => i.text));
  const positives = items.filter((i) => i.label === 1).reduce((s, i) => s + (GROUP_WEIGHT[i.group] ?? 1), 0);
  const negatives = items.filter((i) => i.label === 0).reduce((s, i) => s + (GROUP_WEIGHT[i.group] ?? 1), 0);
  const examples: Example[] = items.map((item, k) => ({
    item,
    f: USE_EMBEDDING
      ? featuresOf(item.text, evidenceOf('direct', item.text, vectors[k] as Float32Array, anchors), vectors[k] as Float32Array)
      : featuresOf(item.text, evidenceOf('direct', item.text, vectors[k] as Float32Array, anchors)),
    // Classes balanced: positives and negatives weigh the same in total.
    weight: (GROUP_WEIGHT[item.group] ?? 1) * (item.label === 1 ? 1 / positives : 1 / negatives),
  }));

  const oof: { item: Item; p: number }[] = [];
  for (let fold = 0; fold < FOLDS; fold++) {
    const w = prune(train(examples.filter((e) => foldOf(e.item.text) !== fold)));
    for (const e of examples.filter((x) => foldOf(x.item.text) === fold)) oof.push({ item: e.item, p: sigmoid(zOf(w, e.f)) });
    log(`fold ${fold + 1}/${FOLDS} done`);
  }
  const chosen = chooseThreshold(oof);
  const oofFile = arg('--oof');
  if (oofFile) writeFileSync(oofFile, oof.map((r) => JSON.stringify({ group: r.item.group, label: r.item.label, p: r.p, text: r.item.text })).join('\n') + '\n');
  if (process.argv.includes('--verbose')) {
    const show = (rows: { item: Item; p: number }[]) => rows.forEach((r) => log(`  ${r.p.toFixed(3)} ${r.item.group}: ${r.item.text.slice(0, 110).replace(/\s+/gu, ' ')}`));
    log('highest benign (out of fold):');
    show(oof.filter((r) => r.item.label === 0).sort((a, b) => b.p - a.p).slice(0, 25));
    log('lowest coding attacks (out of fold):');
    show(oof.filter((r) => r.item.group === 'coding-attack').sort((a, b) => a.p - b.p).slice(0, 15));
  }
  log(`threshold ${chosen.threshold} (out-of-fold: ${JSON.stringify(chosen.rates)})`);
  if (OOF_ONLY) return;

  const w = prune(train(examples));
  const ngrams: Record<string, number> = {};
  for (let b = 0; b < HASH_BUCKETS; b++) if (w.ngrams[b]) ngrams[b] = w.ngrams[b] as number;
  const groups: Record<string, number> = {};
  for (const i of items) groups[i.group] = (groups[i.group] ?? 0) + 1;
  const model: FilterModel = {
    version: 1,
    threshold: chosen.threshold,
    bias: w.bias,
    ngrams,
    signals: Object.fromEntries(SIGNAL_IDS.map((id, i) => [id, w.signals[i] as number])),
    dense: Object.fromEntries(DENSE_FEATURES.map((k, i) => [k, w.dense[i] as number])) as FilterModel['dense'],
    ...(USE_EMBEDDING ? { embedding: [...w.embedding] } : {}),
    trainedOn: {
      command: 'npm run train:filter',
      embedder: embedder.id,
      split: 'calibration halves only (bench/filter-data.ts); BIPIA text attacks and innocent statements excluded',
      texts: groups,
      epochs: EPOCHS,
      learningRate: LEARNING_RATE,
      l2: L2,
      ngramL2: NGRAM_L2,
      thresholdRule: `lowest threshold whose ${FOLDS}-fold out-of-fold false-positive rates are within ${JSON.stringify(BUDGETS)}`,
      outOfFold: Object.fromEntries(Object.entries(chosen.rates).map(([k, v]) => [k, Math.round(v * 10_000) / 10_000])),
      ngramWeights: Object.keys(ngrams).length,
    },
  };
  writeFileSync(OUT, `${JSON.stringify(model)}\n`);
  log(`wrote ${OUT} (${Object.keys(ngrams).length} n-gram weights) in ${Math.round((performance.now() - started) / 1000)} s`);
  log(`signal weights: ${SIGNAL_IDS.map((id, i) => `${id} ${(w.signals[i] as number).toFixed(2)}`).join(', ')}`);
  log(`dense weights: ${DENSE_FEATURES.map((k, i) => `${k} ${(w.dense[i] as number).toFixed(2)}`).join(', ')}`);
}

await main();
