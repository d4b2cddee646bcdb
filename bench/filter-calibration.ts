/**
 * Hold rates of the ingest filter on the calibration halves only, per group, with the committed model
 * (`node dist/bench/filter-calibration.js [--cache <file>]`). For checking a change to the filter's rules
 * without reading held-out rows: it loads every labelled text, keeps `half === 'calibration'`, and prints
 * counts and rates per group, never a text.
 *
 * `--rows <file.jsonl>` screens the rows of that file instead (each `{ "text", "label" }`, label 1 for an attack),
 * such as a fresh-wording set written apart from every training row, and prints attacks and benign rows held;
 * `--verbose` adds each row's verdict, score and reasons (only for such a file, never for the labelled halves).
 * `--model <file.json>` screens with that model instead of the committed one (a candidate from `train-filter --out`).
 * `--half <dev|check>` keeps only that half of such a file (bench/data/README.md: a check half is never read, so
 * `--verbose` refuses it).
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { filterModel, type FilterModel } from '../src/core/classifier.js';
import { DEFAULT_FILTER_CONFIG, screen, seedAnchors } from '../src/core/ingest-filter.js';
import { FileCachedEmbedder, loadAll, readJsonLines, type CheckRow } from './filter-data.js';

const arg = (flag: string) => {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const CACHE = resolve(arg('--cache') ?? join(tmpdir(), 'cairn-security-bench-vectors.json'));
const ROWS = arg('--rows');
const VERBOSE = ROWS !== undefined && process.argv.includes('--verbose');
const HALF = arg('--half');
if (HALF !== undefined && HALF !== 'dev' && HALF !== 'check') throw new Error(`--half must be dev or check (got ${HALF})`);

const items = ROWS
  ? readJsonLines<CheckRow>(resolve(ROWS))
      .filter((row) => HALF === undefined || row.half === HALF)
      .map((row) => ({ text: row.text, label: row.label, half: row.half, group: row.label ? 'rows-attack' : 'rows-benign' }))
  : loadAll().filter((it) => it.half === 'calibration');
if (VERBOSE && items.some((it) => 'half' in it && it.half === 'check')) throw new Error('--verbose prints texts, and a check half is never read: add --half dev');
const embedder = new FileCachedEmbedder(createUseEmbedder(), CACHE, (s) => process.stderr.write(`[filter-calibration] ${s}\n`));
const store = createSqliteStore({ path: ':memory:' });
const anchors = await seedAnchors(store, embedder);
const MODEL = arg('--model');
const model = MODEL ? (JSON.parse(readFileSync(resolve(MODEL), 'utf8')) as FilterModel) : await filterModel();
const byGroup = new Map<string, { label: number; n: number; held: number }>();
for (let k = 0; k < items.length; k += 256) {
  const batch = items.slice(k, k + 256);
  const vectors = await embedder.embed(batch.map((it) => it.text));
  const verdicts = await screen(batch.map((it, j) => ({ text: it.text, vector: vectors[j] as Float32Array })), anchors, embedder, DEFAULT_FILTER_CONFIG, model);
  batch.forEach((it, j) => {
    const g = byGroup.get(it.group) ?? { label: it.label, n: 0, held: 0 };
    g.n += 1;
    const v = verdicts[j];
    if (v?.blocked) g.held += 1;
    byGroup.set(it.group, g);
    if (VERBOSE && v) process.stdout.write(`${v.blocked ? 'HELD' : 'ok  '}\t${(v.score ?? 0).toFixed(2)}\t[${it.label}]\t${it.text}\n\t${v.reasons.join('; ')}\n`);
  });
}
await store.close();
for (const [group, g] of [...byGroup].sort()) {
  process.stdout.write(`${group}\t${g.label ? 'attack' : 'benign'}\tn=${g.n}\theld=${g.held}\trate=${(g.held / g.n).toFixed(4)}\n`);
}
