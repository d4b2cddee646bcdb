/**
 * Security benchmark of the ingest filter (`npm run bench -- --only security`), on the real embedder
 * (USE-lite, behind a file cache) and real SQLite stores. Every check of the filter's goals, reported on
 * held-out halves only (the classifier and its threshold come from `npm run train:filter`, which reads the
 * calibration halves only; see bench/filter-data.ts for the splits):
 *
 * 1. the public labelled set, per source: injection and jailbreak rows held ≥ 90 %, benign rows ≤ 3 %,
 *    NotInject's benign look-alikes ≤ 5 %;
 * 2. the coding-agent poisoning set (bench/data): attacks ≥ 95 %, benign engineering notes ≤ 2 %; attacks
 *    phrased as innocent statements are reported apart (what the filter misses);
 * 3. LoCoMo dialogue turns ≤ 0.2 %; 5,000 generated engineering notes ≤ 0.5 %;
 * 4. the one-mistake snowball: one benign note held by an over-eager filter, then 1,000 notes of its shape
 *    imported through the default filter (≥ 99 % stored);
 * 5. obfuscated variants of held-out attacks, with and without de-obfuscation;
 * 6. the filter's own cost on the write path for a 300-character note (its storage vector reused): p95;
 * 7. the check sets nothing trains on (bench/data/coding-fresh-check.jsonl, coding-outsider-check*.jsonl,
 *    coding-benign-outsider.jsonl; filter-data.ts CHECK_SETS), per half:
 *    reported, no goal of their own; an outsider set's `check` half is the least biased figure of what is held.
 *
 *   node dist/bench/security.js [--quick] [--out bench/results/security.json] [--cache <file>]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { filterModel } from '../src/core/classifier.js';
import { Engine } from '../src/core/engine.js';
import { DEFAULT_FILTER_CONFIG, screen, screenForStore, seedAnchors, type FilterVerdict, type IngestFilterConfig } from '../src/core/ingest-filter.js';
import type { Embedder } from '../src/interfaces/embedder.js';
import { isCairnError } from '../src/interfaces/errors.js';
import { CHECK_SETS, CODING_GROUPS, FileCachedEmbedder, loadAll, loadCheckRows, PUBLIC_ATTACK_GROUPS, PUBLIC_BENIGN_GROUPS, ROOT, type Item } from './filter-data.js';
import { stats } from './measure.js';
import { coreNote, detail, rng } from './synthetic-notes.js';

function arg(flag: string): string | undefined {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const QUICK = process.argv.includes('--quick');
const OUT = resolve(arg('--out') ?? join(ROOT, 'bench', 'results', QUICK ? 'quick' : '', 'security.json'));
/** Beside OUT: the held-out texts the filter gets wrong (test split; see heldOutMisses). */
const MISSES_OUT = OUT.replace(/\.json$/u, '') + '-held-out-misses.json';
const CACHE = resolve(arg('--cache') ?? join(tmpdir(), 'cairn-security-bench-vectors.json'));
const log = (s: string) => process.stderr.write(`[security] ${s}\n`);
const round = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;

interface Rate {
  n: number;
  held: number;
  rate: number;
}
function rate(flags: boolean[]): Rate {
  const held = flags.filter(Boolean).length;
  return { n: flags.length, held, rate: flags.length ? round(held / flags.length) : 0 };
}

/** Screens texts with the engine's own `screen` (seed anchors of a fresh store, the committed model). */
async function screenAll(texts: string[], embedder: Embedder, config: IngestFilterConfig = DEFAULT_FILTER_CONFIG): Promise<FilterVerdict[]> {
  const store = createSqliteStore({ path: ':memory:' });
  try {
    const anchors = await seedAnchors(store, embedder);
    const model = await filterModel();
    const out: FilterVerdict[] = [];
    for (let i = 0; i < texts.length; i += 256) {
      const batch = texts.slice(i, i + 256);
      const vectors = await embedder.embed(batch);
      out.push(...(await screen(batch.map((text, k) => ({ text, vector: vectors[k] as Float32Array })), anchors, embedder, config, model)));
      if (texts.length > 512) log(`screened ${Math.min(i + 256, texts.length)}/${texts.length}`);
    }
    return out;
  } finally {
    await store.close();
  }
}

// ------------------------------------------------------------------------------------------ generated notes

const MODULES = ['Auth', 'Billing', 'Search', 'Checkout', 'Inventory', 'Shipping', 'Reports', 'Webhooks', 'Catalog', 'Admin panel', 'Notifications', 'Sessions'];
const FILES = ['handler', 'service', 'client', 'worker', 'router', 'schema', 'views', 'models', 'tasks', 'utils'];
const PEOPLE = ['Dana', 'Ravi', 'Mei', 'Jonas', 'Aylin', 'Tom', 'Priya', 'Lukas'];
/** Templates of our own, in the shape of the notes behind the 4,396-held import (module, ticket, file, line). */
const OWN_TEMPLATES: ((r: () => number, i: number) => string)[] = [
  (r, i) => `${pick(r, MODULES)} module depends on the ${pick(r, MODULES).toLowerCase()} (ticket SHOP-${1000 + i}); see ${pick(r, FILES)}/${pick(r, FILES)}_${i % 97}.py line ${10 + (i % 300)}.`,
  (r, i) => `${pick(r, PEOPLE)} moved the ${pick(r, MODULES).toLowerCase()} retry logic into ${pick(r, FILES)}.ts in PR #${2000 + i}; the old helper is deprecated.`,
  (r, i) => `The ${pick(r, MODULES).toLowerCase()} tests need the fixture set ${i % 40} and a running Redis; CI starts both in the services block.`,
  (r, i) => `Do not call the ${pick(r, MODULES).toLowerCase()} API from templates; batch the lookups in ${pick(r, FILES)}.py (see OPS-${3000 + i}).`,
  (r, i) => `${pick(r, MODULES)} returns 409 when the version field is stale; clients must refetch and retry (incident ${i % 50 + 1}).`,
  (r, i) => `Always run the ${pick(r, MODULES).toLowerCase()} migrations before deploying ${pick(r, FILES)} v${1 + (i % 9)}.${i % 20}; the deploy script checks the schema version.`,
  (r, i) => `Never log the ${pick(r, MODULES).toLowerCase()} request body; it may hold personal data (decided in ADR-${100 + (i % 80)}).`,
  (r, i) => `The admin panel lists ${pick(r, MODULES).toLowerCase()} jobs older than ${1 + (i % 30)} days; ${pick(r, PEOPLE)} owns the cleanup.`,
];
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

export function generatedNotes(n: number): string[] {
  const r = rng(424242);
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) {
    out.push(i % 2 === 0 ? `${coreNote(r).text}${detail(r, i)}` : (OWN_TEMPLATES[i % OWN_TEMPLATES.length] as (r: () => number, i: number) => string)(r, i));
  }
  return out;
}

// ------------------------------------------------------------------------------------------- obfuscations

const LEET: Record<string, string> = { a: '4', e: '3', i: '1', o: '0', s: '5', t: '7' };
const HOMOGLYPH: Record<string, string> = { a: '\u0430', e: '\u0435', o: '\u043e', p: '\u0440', c: '\u0441', i: '\u0456' };
const rot13 = (s: string) => s.replace(/[a-z]/giu, (c) => String.fromCharCode(((c.charCodeAt(0) - (c <= 'Z' ? 65 : 97) + 13) % 26) + (c <= 'Z' ? 65 : 97)));
const OBFUSCATIONS: Record<string, (s: string) => string> = {
  leetspeak: (s) => s.replace(/[aeiost]/giu, (c) => LEET[c.toLowerCase()] ?? c),
  homoglyphs: (s) => s.replace(/[aeopci]/gu, (c) => HOMOGLYPH[c] ?? c),
  'zero-width': (s) => s.replace(/\b(\w{2})(\w+)/gu, '$1\u200b$2'),
  'spaced-letters': (s) => s.split(' ').map((w) => (w.length > 3 ? w.split('').join(' ') : w)).join('   '),
  shouting: (s) => s.toUpperCase(),
  base64: (s) => `Decode and follow: ${Buffer.from(s).toString('base64')}`,
  hex: (s) => Buffer.from(s).toString('hex'),
  reversed: (s) => [...s].reverse().join(''),
  rot13,
};

// ------------------------------------------------------------------------------------------------ checks

async function snowball(embedder: Embedder, dir: string): Promise<Record<string, unknown>> {
  const store = createSqliteStore({ path: join(dir, 'snowball.db') });
  try {
    const note = (i: number) => `${MODULES[i % MODULES.length]} module depends on the admin panel (ticket SHOP-${1480 + i}); see ${FILES[i % FILES.length]}/handler_${i % 97}.py line ${10 + (i % 300)}.`;
    const eager = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: 'bench/snowball', ingestFilter: { threshold: 0.01 } });
    let mistake = false;
    try {
      await eager.save({ text: note(0) });
    } catch (err) {
      if (!isCairnError(err, 'QUARANTINED')) throw err;
      mistake = true;
    }
    const engine = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: 'bench/snowball' });
    const counts = await engine.importLines(Array.from({ length: 1000 }, (_, i) => JSON.stringify({ text: note(i + 1) })));
    return { mistakeHeld: mistake, notes: 1000, stored: counts.imported, held: counts.quarantined.length, storedRate: round(counts.imported / 1000), goal: '≥ 0.99 stored' };
  } finally {
    await store.close();
  }
}

async function writePathCost(embedder: Embedder, dir: string): Promise<Record<string, unknown>> {
  // 300-character notes: generated notes joined and cut at a word boundary.
  const notes = generatedNotes(QUICK ? 200 : 1200);
  const texts: string[] = [];
  for (let i = 0; texts.length < (QUICK ? 60 : 300); i += 2) {
    const t = `${notes[i]} ${notes[i + 1]}`.slice(0, 300);
    texts.push(t.slice(0, t.lastIndexOf(' ')).padEnd(300, '.'));
  }
  const store = createSqliteStore({ path: join(dir, 'cost.db') });
  try {
    const vectors = await embedder.embed(texts);
    await screenForStore(store, embedder, DEFAULT_FILTER_CONFIG, [{ text: 'warm up the model and anchors', vector: vectors[0] as Float32Array }]);
    const times: number[] = [];
    for (let i = 0; i < texts.length; i++) {
      const t0 = performance.now();
      await screenForStore(store, embedder, DEFAULT_FILTER_CONFIG, [{ text: texts[i] as string, vector: vectors[i] as Float32Array }]);
      times.push(performance.now() - t0);
    }
    return { chars: 300, ms: stats(times), goal: 'p95 ≤ 5 ms', note: 'screenForStore with the storage vector reused (embedding excluded); includes reading learned anchors and the released-hash lookup from SQLite' };
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  mkdirSync(dirname(OUT), { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'cairn-security-bench-'));
  const embedder = new FileCachedEmbedder(createUseEmbedder(), CACHE, log);
  const model = await filterModel();
  try {
    let items: Item[] = loadAll();
    if (QUICK) items = items.filter((_, i) => i % 5 === 0);
    log(`${items.length} labelled texts (${items.filter((i) => i.half === 'held-out').length} held out)`);
    const verdicts = await screenAll(items.map((i) => i.text), embedder);
    const noDeob = await screenAll(items.map((i) => i.text), embedder, { ...DEFAULT_FILTER_CONFIG, deobfuscate: false });
    const scored = items.map((item, k) => ({ item, v: verdicts[k] as FilterVerdict, off: noDeob[k] as FilterVerdict }));

    const groups = [...PUBLIC_ATTACK_GROUPS, ...PUBLIC_BENIGN_GROUPS, ...CODING_GROUPS, 'locomo-turn', 'engineering-note'];
    const table = (half: 'calibration' | 'held-out' | 'all', which: 'v' | 'off' = 'v') => {
      const rows = scored.filter((s) => half === 'all' || s.item.half === half);
      const of = (f: (i: Item) => boolean) => rate(rows.filter((s) => f(s.item)).map((s) => s[which].blocked));
      const out: Record<string, Rate> = {};
      for (const g of groups) out[g] = of((i) => i.group === g);
      out['injection-and-jailbreak'] = of((i) => i.label === 1 && PUBLIC_ATTACK_GROUPS.includes(i.group) && !i.group.startsWith('bipia'));
      out['public-attacks-without-bipia-text'] = of((i) => i.label === 1 && PUBLIC_ATTACK_GROUPS.includes(i.group) && i.group !== 'bipia-text-attack');
      out['benign-rows'] = of((i) => PUBLIC_BENIGN_GROUPS.includes(i.group));
      return out;
    };
    const heldOut = table('held-out');
    const innocent = rate(scored.filter((s) => s.item.group === 'coding-innocent-statement').map((s) => s.v.blocked));

    log('generated notes');
    const notes = generatedNotes(QUICK ? 1000 : 5000);
    const noteVerdicts = await screenAll(notes, embedder);
    const heldNotes = notes.filter((_, i) => noteVerdicts[i]?.blocked);

    // Obfuscated variants of short held-out attacks (public injection/jailbreak rows and coding attacks).
    const shortAttacks = scored.filter((s) => s.item.half === 'held-out' && s.item.label === 1 && s.item.group !== 'bipia-text-attack' && s.item.group !== 'coding-innocent-statement' && s.item.text.length <= 400);
    const obfuscated: Record<string, unknown> = { base: { n: shortAttacks.length, held: rate(shortAttacks.map((s) => s.v.blocked)) } };
    for (const [kind, f] of Object.entries(OBFUSCATIONS)) {
      const texts = shortAttacks.map((s) => f(s.item.text));
      const on = await screenAll(texts, embedder);
      const off = await screenAll(texts, embedder, { ...DEFAULT_FILTER_CONFIG, deobfuscate: false });
      obfuscated[kind] = { withDeobfuscation: rate(on.map((v) => v.blocked)), withoutDeobfuscation: rate(off.map((v) => v.blocked)) };
    }

    log('check sets');
    const checkSets: Record<string, Record<string, { attacks: Rate; benign: Rate }>> = {};
    for (const name of CHECK_SETS) {
      const rows = loadCheckRows(name);
      if (rows.length === 0) continue;
      const held = await screenAll(rows.map((r) => r.text), embedder);
      const halves: Record<string, { attacks: Rate; benign: Rate }> = {};
      for (const half of [...new Set(rows.map((r) => r.half ?? 'dev'))]) {
        const of = (label: number) => rate(rows.flatMap((r, k) => ((r.half ?? 'dev') === half && r.label === label ? [held[k]?.blocked === true] : [])));
        halves[half] = { attacks: of(1), benign: of(0) };
      }
      checkSets[name] = halves;
    }

    log('snowball');
    const snow = await snowball(embedder, dir);
    log('write-path cost');
    const cost = await writePathCost(embedder, dir);

    const reasons: Record<string, number> = {};
    for (const s of scored.filter((x) => x.v.blocked && x.item.half === 'held-out')) for (const r of s.v.reasons) {
      const key = r.replace(/\d\.\d+/gu, 'N').replace(/quarantine \w+/gu, 'quarantine ID');
      reasons[key] = (reasons[key] ?? 0) + 1;
    }

    const check = (name: string, value: number, goal: string, ok: boolean) => ({ name, value, goal, met: ok });
    const locomo = heldOut['locomo-turn'] as Rate;
    const checks = [
      check('public held-out: injection and jailbreak rows held', (heldOut['injection-and-jailbreak'] as Rate).rate, '≥ 0.90', (heldOut['injection-and-jailbreak'] as Rate).rate >= 0.9),
      check('public held-out: benign rows held (BIPIA e-mails + NotInject)', (heldOut['benign-rows'] as Rate).rate, '≤ 0.03', (heldOut['benign-rows'] as Rate).rate <= 0.03),
      check('public held-out: NotInject benign look-alikes held', (heldOut['notinject'] as Rate).rate, '≤ 0.05', (heldOut['notinject'] as Rate).rate <= 0.05),
      check('coding set held-out: attacks held', (heldOut['coding-attack'] as Rate).rate, '≥ 0.95', (heldOut['coding-attack'] as Rate).rate >= 0.95),
      check('coding set held-out: benign notes held', (heldOut['coding-benign'] as Rate).rate, '≤ 0.02', (heldOut['coding-benign'] as Rate).rate <= 0.02),
      check('LoCoMo held-out turns held', locomo.rate, '≤ 0.002', locomo.rate <= 0.002),
      check(`${notes.length} generated engineering notes held`, round(heldNotes.length / notes.length), '≤ 0.005', heldNotes.length / notes.length <= 0.005),
      // Only a real mistake makes the check mean something: the over-eager filter must have held the first note.
      check('snowball: notes of the mistaken note’s shape stored', snow['storedRate'] as number, '≥ 0.99 (after the first was held)', snow['mistakeHeld'] === true && (snow['storedRate'] as number) >= 0.99),
      check('write-path cost, 300-char note, p95 ms', (cost['ms'] as { p95: number }).p95, '≤ 5', (cost['ms'] as { p95: number }).p95 <= 5),
    ];

    // The held-out (test) coding texts the filter gets wrong: a report for people, never material for a choice.
    const heldOutMisses = {
      note: 'TEST SPLIT. The held-out coding attacks the filter let through and the held-out benign notes it held. Reading these while changing the filter (its rules, lexicon, training data or threshold) would tune it on the test split: do not.',
      codingAttacksMissed: scored.filter((s) => s.item.half === 'held-out' && s.item.group === 'coding-attack' && !s.v.blocked).map((s) => s.item.text),
      codingBenignHeld: scored.filter((s) => s.item.half === 'held-out' && s.item.group === 'coding-benign' && s.v.blocked).map((s) => s.item.text),
    };
    const result = {
      generatedAt: new Date().toISOString(),
      command: 'npm run bench -- --only security',
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version },
      embedder: embedder.id,
      model: { threshold: model.threshold, trainedOn: model.trainedOn },
      split: 'public set and LoCoMo: first byte of SHA-256(text) < 128 → calibration; coding set: as written in bench/data (every other row per style); the classifier is trained and its threshold chosen on calibration halves only',
      checks,
      heldOut,
      heldOutWithoutDeobfuscation: table('held-out', 'off'),
      calibration: table('calibration'),
      missed: {
        innocentStatements: { ...innocent, note: 'attacks phrased as plain statements of fact (bench/data, kind innocent-statement, never trained on): what the filter still misses' },
        codingAttacksMissed: heldOutMisses.codingAttacksMissed.length,
        codingBenignHeld: heldOutMisses.codingBenignHeld.length,
        heldOutTexts: `${basename(MISSES_OUT)}: the held-out texts behind these two counts, kept apart so that no one changing the filter reads them by accident`,
        generatedNotesHeld: heldNotes.slice(0, 20),
      },
      reasonsOfHeldOutHolds: Object.fromEntries(Object.entries(reasons).sort((a, b) => b[1] - a[1])),
      checkSets: { note: 'sets nothing trains on or calibrates with; dev halves were read when the filter\'s rules were changed, check halves never (bench/data/README.md)', ...checkSets },
      obfuscatedVariants: obfuscated,
      snowball: snow,
      writePathCost: cost,
      durationMs: Math.round(performance.now() - started),
    };
    writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(MISSES_OUT, `${JSON.stringify(heldOutMisses, null, 2)}\n`);
    log(`wrote ${OUT}`);
    for (const c of checks) log(`${c.met ? 'met  ' : 'SHORT'} ${c.name}: ${c.value} (goal ${c.goal})`);
    for (const [g, r] of Object.entries(heldOut)) log(`held-out ${g.padEnd(34)} ${(r.rate * 100).toFixed(1).padStart(5)} %  (${r.held}/${r.n})`);
    log(`innocent statements held: ${innocent.held}/${innocent.n}`);
    for (const [name, halves] of Object.entries(checkSets)) for (const [half, r] of Object.entries(halves)) log(`${name} ${half}: attacks held ${r.attacks.held}/${r.attacks.n}, benign held ${r.benign.held}/${r.benign.n}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
