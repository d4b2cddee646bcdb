/**
 * Writes bench/REPORT.md from the JSON files in a results folder. Every benchmark file is optional: a missing
 * one is reported as "not run". The latency results get purpose-made tables; any other file is rendered
 * generically (scalars as key/value tables, records as tables).
 *
 *   node dist/bench/report.js [--quick]      (regenerate without running anything)
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { LatencyResults, LevelResult } from './latency.js';
import type { Stats } from './measure.js';

const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, HERE.includes(join('dist', 'bench')) ? '../..' : '..');

/** What the runner did in this invocation, shown at the top of the report. */
export interface RunRecord {
  name: string;
  command: string;
  status: 'ok' | 'failed' | 'skipped';
  note?: string;
  durationMs: number;
}

export interface ReportOptions {
  resultsDir: string;
  out: string;
  /** The command line that produced the report, e.g. `npm run bench -- --only latency`. */
  invocation: string;
  runs?: RunRecord[];
  totalMs?: number;
}

/** Result files every full report expects, in report order. */
const KNOWN: { file: string; title: string; command: string }[] = [
  { file: 'coding-memory.json', title: 'Coding-memory recall', command: 'node dist/bench/coding-memory.js' },
  { file: 'locomo.json', title: 'LoCoMo evidence recall', command: 'node dist/bench/locomo.js --split all' },
  { file: 'latency.json', title: 'Latency and size', command: 'node dist/bench/latency.js' },
  { file: 'http.json', title: 'Team server under load (HTTP)', command: 'node dist/bench/http.js' },
  { file: 'backends.json', title: 'SQLite and PostgreSQL side by side', command: 'node dist/bench/backends.js' },
];

// ------------------------------------------------------------------------------------------------ formatting

const esc = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function num(x: number | null | undefined): string {
  if (x === null || x === undefined || Number.isNaN(x)) return '–';
  const a = Math.abs(x);
  if (a !== 0 && a < 1 && !Number.isInteger(x)) return String(Number(x.toPrecision(3)));
  if (a < 10 && !Number.isInteger(x)) return x.toFixed(2);
  if (a < 100 && !Number.isInteger(x)) return x.toFixed(1);
  return Math.round(x).toLocaleString('en-US');
}

function bytes(b: number): string {
  if (b >= 2 ** 30) return `${(b / 2 ** 30).toFixed(2)} GiB`;
  if (b >= 2 ** 20) return `${(b / 2 ** 20).toFixed(1)} MiB`;
  if (b >= 2 ** 10) return `${(b / 2 ** 10).toFixed(1)} KiB`;
  return `${b} B`;
}

function secs(ms: number): string {
  return ms >= 60_000 ? `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** `p50 / p95` of a latency sample. */
function pp(s: Stats | undefined): string {
  return s && s.n > 0 ? `${num(s.p50)} / ${num(s.p95)}` : '–';
}

function table(head: string[], rows: (string | number)[][], align?: ('l' | 'r')[]): string {
  const sep = head.map((_, i) => ((align?.[i] ?? (i === 0 ? 'l' : 'r')) === 'r' ? '---:' : '---'));
  return [head, sep, ...rows.map((r) => r.map((c) => esc(String(c))))].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

function date(iso: string | undefined | null): string {
  if (!iso) return 'unknown date';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

// --------------------------------------------------------------------------------------------------- latency

function renderLatency(r: LatencyResults, file: string): string {
  const out: string[] = [];
  const m = r.machine;
  out.push(
    `Command: \`${r.command}\`${r.invokedBy ? ` (run by \`${r.invokedBy}\`)` : ''} · ${date(r.startedAt)} · took ${secs(r.durationMs)}` +
      ` · commit ${r.source?.commit ?? 'unknown'}${r.source?.uncommittedSourceFiles.length ? ` with ${r.source.uncommittedSourceFiles.length} uncommitted file(s) under src/` : ''}`,
  );
  out.push(
    `Machine: ${m['cpus']} cores (${m['cpuModel']}), ${m['memoryGiB']} GiB memory, Node ${m['node']}, ${m['platform']}, SQLite ${m['sqlite']}, sqlite-vec ${m['sqliteVec']}.` +
      ` Data: \`${file}\`.` +
      (m['loadAverage1mMedian'] !== undefined
        ? ` Load average (1 min) during the run: median ${m['loadAverage1mMedian']}, max ${m['loadAverage1mMax']} (the benchmark itself keeps about one core busy; more means other work shared the machine).`
        : ''),
  );
  if (r.quick) out.push('\n> **Smoke run (`--quick`)**: small sizes and few samples; not representative.');
  if (r.note) out.push(`\n> ${r.note}`);

  const sizeLabel = (l: LevelResult) => `${num(l.targetMemories)} (${num(l.totalMemories)} in file)`;

  out.push('\n### Goals\n');
  if (r.goals.length === 0) out.push('No 10k, 100k or 1M level in this run.');
  else
    out.push(
      table(
        ['Goal', 'Target', 'Measured', 'Met', 'Published Atlas figure'],
        r.goals.map((g) => [g.goal, g.target, g.measured, g.met ? 'met' : '**not met**', g.goal.startsWith('search p50 at 10k, end') ? '187 ms' : g.goal.startsWith('save p50 at 10k') ? '21.7 ms' : '']),
        ['l', 'r', 'r', 'l', 'r'],
      ),
    );

  out.push('\n### Search, ms (p50 / p95), limit 10, one namespace of several\n');
  out.push(
    table(
      ['Memories in namespace', 'End to end', '…of which query embedding', 'Hybrid, query vector precomputed', 'Lexical + recency only', 'Vector KNN alone (k = 50)', 'Vector KNN, exhaustive (k = 50)', 'BM25 candidates alone (k = 50)'],
      r.levels.map((l) => [
        sizeLabel(l),
        pp(l.search.endToEnd),
        pp(l.search.endToEndEmbedPart),
        pp(l.search.precomputedQueryVector),
        pp(l.search.lexicalRecencyOnly),
        pp(l.search.vectorKnnOnly),
        l.search.vectorKnnExhaustive ? pp(l.search.vectorKnnExhaustive) : '',
        pp(l.search.lexicalCandidatesOnly),
      ]),
    ),
  );
  out.push(`\nSamples (n) per row: ${r.levels.map((l) => `${num(l.targetMemories)}: ${Object.values(l.search).map((x) => x.n).join(' / ')}`).join('; ')}.`);

  if (r.levels.some((l) => l.vectorIndex)) {
    out.push('\n### Quantised vector index (int8 codes scanned with usearch, rescored exactly) against exhaustive search\n');
    out.push(
      table(
        ['Memories in namespace', 'State', 'Ready after (ms)', 'Builds', 'Vectors', 'Index file', 'File B/memory', 'Recall@10', 'Worst query @10', 'Recall@50', 'Queries', 'Resident (MiB)'],
        r.levels
          .filter((l) => l.vectorIndex)
          .map((l) => [
            sizeLabel(l),
            `${l.vectorIndex.state}${l.vectorIndex.state === 'ready' ? '' : ` (${l.vectorIndex.reason ?? ''})`}`,
            num(l.vectorIndex.readyMs),
            l.vectorIndex.builds,
            num(l.vectorIndex.vectors),
            bytes(l.vectorIndex.fileBytes),
            num(l.vectorIndex.fileBytesPerMemory),
            l.vectorIndex.recall.at10,
            l.vectorIndex.recall.worstAt10,
            l.vectorIndex.recall.at50,
            l.vectorIndex.recall.queries,
            num(l.vectorIndex.residentMiB),
          ]),
      ),
    );
    out.push('\nNamespaces under 2,000 vectors are searched exhaustively (state `not built`); recall there is exact by construction.');
  }

  out.push('\n### Save, ms (p50 / p95), one memory per call\n');
  out.push(
    table(
      ['Memories in namespace', 'End to end (with embedding)', '…of which embedding', 'End to end − embedding', 'Excluding embedding (precomputed vector)'],
      r.levels.map((l) => [sizeLabel(l), pp(l.save.endToEnd), pp(l.save.endToEndEmbedPart), pp(l.save.endToEndMinusEmbed), pp(l.save.excludingEmbedding)]),
    ),
  );
  out.push(`\nSamples (n) per row: ${r.levels.map((l) => `${num(l.targetMemories)}: ${l.save.endToEnd.n} end to end, ${l.save.excludingEmbedding.n} excluding embedding`).join('; ')}.`);

  const e = r.embedder;
  out.push(`\n### Embedder (${e.id}, ${e.dimensions} dimensions)\n`);
  out.push(
    table(
      ['Measure', 'p50', 'p95', 'n'],
      [
        ['Load, first call in the benchmark process (ms)', num(e.loadMsInProcess), '', 1],
        ['Load, fresh Node process (ms)', num(e.loadMsFreshProcess.p50), num(e.loadMsFreshProcess.p95), e.loadMsFreshProcess.n],
        ['One text per call (ms per text)', num(e.singleTextMs.p50), num(e.singleTextMs.p95), e.singleTextMs.n],
        ['Batches of 32 (ms per text)', num(e.batch32PerTextMs.p50), num(e.batch32PerTextMs.p95), `${e.batch32PerTextMs.n} batches`],
        [`Fill pool: ${num(e.pool.texts)} texts in batches of 32 (ms per text)`, num(e.pool.perTextMs), '', 1],
      ],
    ),
  );

  out.push('\n### Size on disk\n');
  const parts = [...new Set(r.levels.flatMap((l) => Object.keys(l.storage.breakdownPerMemory)))];
  out.push(
    table(
      ['Memories in file', 'File + WAL after checkpoint', 'Bytes per memory', ...parts.map((p) => `${p}, B/memory`)],
      r.levels.map((l) => [
        num(l.storage.memories),
        bytes(l.storage.fileBytes + l.storage.walBytesAfterCheckpoint),
        num(l.storage.bytesPerMemory),
        ...parts.map((p) => num(l.storage.breakdownPerMemory[p] ?? 0)),
      ]),
    ),
  );
  out.push('\nPer-memory figures divide by every memory in the file (all namespaces). vec0 allocates vectors in chunks per namespace, so small stores pay for empty slots.');

  out.push('\n### Time per phase\n');
  out.push(
    table(
      ['Phase', 'Time'],
      [
        ...r.phases.map((p) => [p.name, secs(p.ms)]),
        ...r.levels.map((l) => [
          `fill to ${num(l.size)}: rows written through Engine.saveMany (batches of ${r.config.fillBatch})${l.fill.complete === false ? `, stopped by the fill budget at ${num(l.targetMemories)}` : ''}`,
          `${num(l.fill.rows)} rows, ${num(l.fill.perRowMs)} ms/row`,
        ]),
        ['whole benchmark', secs(r.durationMs)],
      ],
    ),
  );

  out.push('\n### Method\n');
  out.push(r.method.map((line) => `- ${line}`).join('\n'));
  return out.join('\n');
}

// --------------------------------------------------------------------------------------------------- generic

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const isScalar = (v: Json): v is null | boolean | number | string => v === null || typeof v !== 'object';
const isRecord = (v: Json): v is { [k: string]: Json } => v !== null && typeof v === 'object' && !Array.isArray(v);

function scalar(v: Json): string {
  if (v === null) return '–';
  if (typeof v === 'number') return num(v);
  if (typeof v === 'string') return v.length > 200 ? `${v.slice(0, 197)}…` : v;
  if (isScalar(v)) return String(v);
  const s = JSON.stringify(v);
  return s.length > 120 ? `${s.slice(0, 117)}…` : s;
}

const META_KEYS = new Set(['command', 'date', 'startedAt', 'finishedAt', 'commit', 'environment', 'machine', 'invokedBy']);
/**
 * Keys whose values list held-out texts (the security bench's `missed`): the report names them without
 * printing the rows, so no one reading it sees a test split by accident.
 */
const TEXT_LIST_KEYS = new Set(['missed', 'codingAttacksMissed', 'codingBenignHeld']);

/** Result files that hold a held-out split's texts: the report names them and prints nothing of them. */
const HELD_OUT_FILE = /-held-out-misses\.json$/u;

function renderGeneric(value: Json, depth: number, title: string | null): string {
  const h = '#'.repeat(Math.min(6, depth + 3));
  const out: string[] = [];
  if (title) out.push(`\n${h} ${title}\n`);
  if (isScalar(value)) {
    out.push(scalar(value));
  } else if (Array.isArray(value)) {
    if (value.every(isScalar)) out.push(value.length > 20 ? `${value.slice(0, 20).map(scalar).join(', ')} … (${value.length} in all)` : value.map(scalar).join(', ') || '(none)');
    else if (value.every((v) => isRecord(v) && Object.values(v).every(isScalar))) {
      const rows = value as { [k: string]: Json }[];
      const keys = [...new Set(rows.flatMap((o) => Object.keys(o)))];
      out.push(table(keys, rows.slice(0, 30).map((o) => keys.map((k) => scalar(o[k] ?? null)))));
      if (rows.length > 30) out.push(`\n… ${rows.length - 30} more rows in the JSON file.`);
    } else out.push(`${value.length} items; see the JSON file.`);
  } else {
    const entries = Object.entries(value).filter(([k]) => depth > 0 || !META_KEYS.has(k));
    const scalars = entries.filter(([k, v]) => !TEXT_LIST_KEYS.has(k) && (isScalar(v) || (Array.isArray(v) && v.every(isScalar) && v.length <= 12)));
    const nested = entries.filter((e) => !scalars.includes(e));
    if (scalars.length) out.push(table(['Key', 'Value'], scalars.map(([k, v]) => [k, Array.isArray(v) ? v.map(scalar).join(', ') : scalar(v)]), ['l', 'l']));
    for (const [k, v] of nested) {
      if (TEXT_LIST_KEYS.has(k)) {
        out.push(`\n- **${k}**: about held-out texts, not shown here (the texts themselves are in a \`*-held-out-misses.json\` file, not to be read while changing what they measure).`);
        continue;
      }
      // An object of flat objects (e.g. mode → k → recall) reads best as one matrix.
      if (isRecord(v) && Object.values(v).length && Object.values(v).every((x) => isRecord(x) && Object.values(x).every(isScalar))) {
        const inner = v as { [k: string]: { [k: string]: Json } };
        const cols = [...new Set(Object.values(inner).flatMap((o) => Object.keys(o)))];
        out.push(`\n${'#'.repeat(Math.min(6, depth + 4))} ${k}\n`);
        out.push(table([k, ...cols], Object.entries(inner).map(([rk, o]) => [rk, ...cols.map((c) => scalar(o[c] ?? null))])));
      } else if (depth >= 3) {
        out.push(`\n- **${k}**: \`${scalar(v)}\``);
      } else {
        out.push(renderGeneric(v, depth + 1, k));
      }
    }
  }
  return out.join('\n');
}

function renderOther(data: Json, file: string, fallbackCommand: string | null): string {
  const rec = isRecord(data) ? data : {};
  const env = (isRecord(rec['environment'] ?? null) ? rec['environment'] : isRecord(rec['machine'] ?? null) ? rec['machine'] : null) as { [k: string]: Json } | null;
  const when = (rec['date'] ?? rec['startedAt'] ?? rec['finishedAt'] ?? null) as string | null;
  const lines = [
    `Command: \`${(rec['command'] as string | undefined) ?? fallbackCommand ?? 'unknown'}\` · ${date(when ?? statSync(file).mtime.toISOString())}` +
      (rec['commit'] ? ` · commit ${scalar(rec['commit'])}` : ''),
  ];
  if (env) lines.push(`Machine: ${Object.entries(env).map(([k, v]) => `${k} ${scalar(v)}`).join(', ')}. Data: \`${relative(ROOT, file)}\`.`);
  else lines.push(`Data: \`${relative(ROOT, file)}\`.`);
  if (rec['quick'] === true) lines.push('\n> **Smoke run (`--quick`)**: not representative.');
  lines.push('', renderGeneric(data, 0, null));
  return lines.join('\n');
}

/**
 * The LoCoMo figures a reader wants first: recall@k in percent per split, mode and category, against the
 * published DRAGON figures, and the size of `context()` against the whole history. The full record follows.
 */
function renderLocomoSummary(data: { [k: string]: Json }): string {
  const results = isRecord(data['results'] ?? null) ? (data['results'] as { [k: string]: Json }) : null;
  if (!results) return '';
  const ks = ['5', '10', '25', '50'];
  const pct = (x: Json | undefined) => (typeof x === 'number' ? (x * 100).toFixed(1) : '–');
  const baselines = isRecord(data['baselines'] ?? null) ? (data['baselines'] as { [k: string]: Json }) : {};
  const dragon = isRecord(baselines['dragonDialogTurnOverall'] ?? null) ? (baselines['dragonDialogTurnOverall'] as { [k: string]: Json }) : null;
  const semvec = isRecord(baselines['semvecContext'] ?? null) ? (baselines['semvecContext'] as { [k: string]: Json }) : null;
  const out: string[] = ['### Summary: recall@5 / @10 / @25 / @50 in percent', ''];
  out.push(
    'Categories as numbered in the data (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial, per the paper). ' +
      'Defaults were chosen on the dev split only; the test split was not used for any choice.',
    '',
  );
  for (const split of ['test', 'dev', 'all']) {
    const r = results[split] as { [k: string]: Json } | undefined;
    if (!r || !isRecord(r) || !isRecord(r['recall'] ?? null)) continue;
    const recall = r['recall'] as { [mode: string]: Json };
    const cats = Object.keys((recall['hybrid'] as { [c: string]: Json }) ?? {}).filter((c) => c !== 'all');
    const rows: (string | number)[][] = [];
    for (const mode of ['lexical', 'vector', 'hybrid']) {
      const m = recall[mode] as { [k: string]: Json } | undefined;
      if (!m || !isRecord(m)) continue;
      for (const cat of [...cats, 'all']) {
        const v = m[cat] as { [k: string]: Json } | undefined;
        if (!v || !isRecord(v)) continue;
        rows.push([mode === 'hybrid' ? '**hybrid (defaults)**' : `${mode} only`, cat === 'all' ? '**overall**' : cat, ...ks.map((k) => pct(v[k]))]);
      }
    }
    if (dragon) rows.push(['DRAGON (published)', '**overall**', ...ks.map((k) => (typeof dragon[k] === 'number' ? (dragon[k] as number).toFixed(1) : '–'))]);
    const conv = Array.isArray(r['conversations']) ? (r['conversations'] as Json[]).join(', ') : '';
    out.push(`#### ${split} split (${conv}; ${scalar(r['questions'] ?? null)} questions)`, '');
    out.push(table(['Mode', 'Category', '@5', '@10', '@25', '@50'], rows, ['l', 'l', 'r', 'r', 'r', 'r']));
    const ctx = isRecord(r['context'] ?? null) ? (r['context'] as { [k: string]: Json }) : null;
    if (ctx) {
      out.push(
        '',
        `Context: \`context()\` gave a mean of ${num(ctx['meanContextTokens'] as number)} tokens (max ${num(ctx['maxContextTokens'] as number)}, budget 1,000) against ` +
          `${num(ctx['meanHistoryTokens'] as number)} tokens of the whole conversation (${pct(ctx['ratio'])} %)` +
          (semvec ? `; published Semvec figure: ${num(semvec['contextTokens'] as number)} against ${num(semvec['historyTokens'] as number)}.` : '.'),
      );
    }
    out.push('');
  }
  out.push('### Full record', '');
  return out.join('\n');
}

/** The coding-memory figures per split and query type (test first: it is the reported half). */
function renderCodingSummary(data: { [k: string]: Json }): string {
  const results = isRecord(data['results'] ?? null) ? (data['results'] as { [k: string]: Json }) : null;
  if (!results) return '';
  const pct = (x: Json | undefined) => (typeof x === 'number' ? (x * 100).toFixed(1) : '–');
  const out: string[] = ['### Summary in percent', '', 'Choices were made on the dev half only; the test half is reported.', ''];
  for (const split of ['test', 'dev']) {
    const r = results[split];
    if (!r || !isRecord(r)) continue;
    const rows = Object.entries(r).map(([type, f]) => {
      const v = (isRecord(f) ? f : {}) as { [k: string]: Json };
      return [type === 'all' ? '**all**' : type, scalar(v['queries'] ?? null), pct(v['r1']), pct(v['r5']), pct(v['mrr']), pct(v['updateCorrect']), pct(v['offTopicRejected']), scalar(v['leaks'] ?? null)];
    });
    out.push(`#### ${split} half`, '', table(['Query type', 'n', 'R@1', 'R@5', 'MRR', 'update-correct', 'off-topic rejected', 'leaks'], rows), '');
  }
  out.push('### Full record', '');
  return out.join('\n');
}

/** The team server under load: one row per operation and client count. */
function renderHttpSummary(data: { [k: string]: Json }): string {
  const runs = Array.isArray(data['runs']) ? (data['runs'] as { [k: string]: Json }[]) : [];
  if (runs.length === 0) return '';
  const lat = (r: { [k: string]: Json }) => (isRecord(r['latencyMs'] ?? null) ? (r['latencyMs'] as { [k: string]: number }) : {});
  const rss = (r: { [k: string]: Json }) => (isRecord(r['serverRssMiB'] ?? null) ? (r['serverRssMiB'] as { [k: string]: number }) : {});
  const rows = runs.map((r) => [
    String(r['embedding'] ?? 'thread'),
    String(r['operation']),
    num(r['connections'] as number),
    num(r['throughputPerS'] as number),
    num(lat(r)['p50']),
    num(lat(r)['p95']),
    num(lat(r)['p99']),
    `${num(r['non2xx'] as number)} / ${num(r['errors'] as number)}`,
    num(rss(r)['max']),
    num(r['serverCpuMsPerRequest'] as number),
    isRecord(r['serverCpuMsPerRequestByThread'] ?? null) ? `${num((r['serverCpuMsPerRequestByThread'] as { [k: string]: number })['main'])} / ${num((r['serverCpuMsPerRequestByThread'] as { [k: string]: number })['others'])}` : '–',
    num(r['loadAverage1m'] as number),
  ]);
  const ratioList = (key: string) => (Array.isArray(data[key]) ? (data[key] as { [k: string]: Json }[]) : []);
  const ratioTable = (title: string, list: { [k: string]: Json }[]) =>
    list.length ? [title, '', table(['Operation', 'Clients', 'Throughput ×', 'p95 ×'], list.map((r) => [String(r['operation']), num(r['connections'] as number), num(r['throughput'] as number), num(r['p95'] as number)])), ''] : [];
  const server = isRecord(data['server'] ?? null) ? (data['server'] as { [k: string]: Json }) : {};
  const byEmbedding = isRecord(server['rssMiB'] ?? null) ? (server['rssMiB'] as { [k: string]: Json }) : {};
  // Older results hold one server's memory directly; newer ones one entry per embedding path.
  const memories = 'afterStart' in byEmbedding ? { thread: byEmbedding } : byEmbedding;
  const memoryLines = Object.entries(memories).map(([name, m]) => {
    const mem = (isRecord(m) ? m : {}) as { [k: string]: number };
    return `Server memory (RSS), ${name}: ${num(mem['afterStart'])} MiB after start, ${num(mem['afterWarmUp'])} MiB with the model loaded, at most ${num(mem['maxUnderLoad'])} MiB under load, ${num(mem['atEnd'])} MiB at the end.`;
  });
  return [
    '### Summary',
    '',
    'Embedding `pool`: worker threads, one per core (the default of `cairn serve`); `pool-nice`: `CAIRN_EMBED_NICE=10`, the same threads at nice +10, below the main thread; `thread`: `CAIRN_EMBED_WORKERS=0`, the model on the main thread.',
    '',
    table(['Embedding', 'Operation', 'Clients', 'Throughput (req/s)', 'p50 ms', 'p95 ms', 'p99 ms', 'non-2xx / errors', 'server RSS max (MiB)', 'server CPU ms/request', 'of it main / other threads', 'load avg (1 min)'], rows),
    '',
    ...ratioTable('Pool over thread, same run:', ratioList('ratiosPoolOverThread')),
    ...ratioTable('Pool-nice over pool (the embedding threads at nice +10 against at the main thread\'s priority), same run:', ratioList('ratiosPoolNiceOverPool')),
    ...memoryLines.flatMap((l) => [l, '']),
    '### Full record',
    '',
  ].join('\n');
}

/** The two backends in one table per part: turn commits, concurrent writers, search by size. */
function renderBackendsSummary(data: { [k: string]: Json }): string {
  const results = isRecord(data['results'] ?? null) ? (data['results'] as { [k: string]: { [k: string]: Json } }) : {};
  const names = Object.keys(results);
  const part = (b: string, k: string) => (isRecord(results[b]?.[k] ?? null) ? (results[b]?.[k] as { [k: string]: Json }) : null);
  const st = (x: Json | undefined) => (isRecord(x ?? null) ? (x as unknown as Stats) : undefined);
  const commitRows = names.map((b) => {
    const c = part(b, 'commit');
    return c ? [b, num(c['turns'] as number), num(st(c['all'])?.p50), num(st(c['all'])?.p95), num(st(c['snapshotTurns'])?.p50)] : [b, String(results[b]?.['skipped'] ?? '–'), '–', '–', '–'];
  });
  const writerRows = names.flatMap((b) => {
    const w = part(b, 'writers');
    return w ? [[b, num(w['writers'] as number), num(w['acknowledged'] as number), num(w['writesPerSecond'] as number), num(w['lost'] as number), num(w['sequenceGaps'] as number), num(w['errors'] as number)]] : [];
  });
  const searchRows = names.flatMap((b) => {
    const levels = Array.isArray(part(b, 'search')?.['levels']) ? (part(b, 'search')?.['levels'] as { [k: string]: Json }[]) : [];
    return levels.map((l) => [b, num(l['memories'] as number), num(st(l['search'])?.p50), num(st(l['search'])?.p95), num(l['fillSeconds'] as number), l['indexBuildSeconds'] === undefined ? '–' : num(l['indexBuildSeconds'] as number)]);
  });
  const machine = isRecord(data['machine'] ?? null) ? (data['machine'] as { [k: string]: Json }) : {};
  const load = Array.isArray(machine['loadAverageAtStart']) ? (machine['loadAverageAtStart'] as number[]).join(' / ') : 'not recorded';
  return [
    '### Summary',
    '',
    `One run; load average at start (1 / 5 / 15 min): ${load}.`,
    '',
    'Turn commit (event + item + vector, a snapshot every 10th turn once the log grew 5 % since the last; texts embedded beforehand):',
    '',
    table(['Backend', 'Turns', 'p50 ms', 'p95 ms', 'snapshot turn p50 ms'], commitRows),
    '',
    'Concurrent writer processes (each its own connection), saves one by one:',
    '',
    table(['Backend', 'Processes', 'Acknowledged', 'Writes/s', 'Lost', 'Sequence gaps', 'Errors'], writerRows),
    '',
    'Search, query vector computed beforehand (candidates, fusion, packing):',
    '',
    table(['Backend', 'Memories', 'p50 ms', 'p95 ms', 'fill s', 'HNSW build s (of the fill)'], searchRows),
    '',
    '### Full record',
    '',
  ].join('\n');
}

/** PostgreSQL at scale: one row per size (search end to end and cached, recall of the walk, fill), then the store calls. */
function renderPgScaleSummary(data: { [k: string]: Json }): string {
  const levels = Array.isArray(data['levels']) ? (data['levels'] as { [k: string]: Json }[]) : [];
  const st = (x: Json | undefined) => (isRecord(x ?? null) ? (x as unknown as Stats) : undefined);
  const rec = (x: Json | undefined) => (isRecord(x ?? null) ? (x as { [k: string]: Json }) : {});
  const measured = (l: { [k: string]: Json }) => num((l['measuredNamespaceMemories'] ?? l['memories']) as number);
  const rows = levels.map((l) => {
    const search = rec(l['search']);
    const recall = rec(l['hnswRecallAt10']);
    const fill = rec(l['fill']);
    return [
      `${measured(l)} (of ${num(l['totalMemories'] as number)})`,
      pp(st(search['endToEnd'])),
      pp(st(search['cachedQueryVector'])),
      `${num(recall['mean'] as number)} / ${num(recall['inPoolOf300'] as number)}`,
      l['fill'] === null ? 'kept database' : `${num(fill['seconds'] as number)} s${fill['complete'] === false ? ' (budget ran out)' : ''}, HNSW ${num(fill['indexBuildSeconds'] as number)} s`,
      num(l['loadAverageAtSearch'] as number),
    ];
  });
  const calls = levels.map((l) => {
    const store = rec(l['store']);
    return `- ${measured(l)}: ` + Object.entries(store).map(([k, v]) => `${k} ${num(rec(v)['msPerSearch'] as number)}`).join(', ') + ' (ms per cached search)';
  });
  const sweeps = levels.flatMap((l) =>
    Array.isArray(l['efSweep']) && (l['efSweep'] as Json[]).length > 0
      ? [
          `hnsw.ef_search at ${measured(l)} (the store's vector statement for the pool of 300; recall@10 of its best ten against exact):`,
          '',
          table(['ef_search', 'recall@10', 'statement p50 / p95 ms'], (l['efSweep'] as { [k: string]: Json }[]).map((e) => [num(e['efSearch'] as number), num(e['recallAt10'] as number), pp(st(e['statement']))])),
          '',
        ]
      : [],
  );
  return [
    '### Summary',
    '',
    `One run; ${String(data['data'] ?? '')}${data['relatedTerms'] === false ? '; related terms off (one fused statement per search)' : ''}.`,
    '',
    table(['Measured namespace (all rows)', 'end to end p50 / p95 ms', 'cached query vector p50 / p95 ms', 'HNSW recall@10 alone / in the pool of 300', 'fill', 'load at search'], rows),
    '',
    'Where a cached search spends its time (store calls, mean ms per search; the rest is core):',
    '',
    ...calls,
    '',
    ...sweeps,
    '### Full record',
    '',
  ].join('\n');
}

// ------------------------------------------------------------------------------------------------------ main

function readJson(path: string): { data: Json } | { error: string } {
  try {
    return { data: JSON.parse(readFileSync(path, 'utf8')) as Json };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** Builds the report text from whatever result files exist. */
export function buildReport(options: ReportOptions): string {
  const dir = options.resultsDir;
  // A held-out split's texts (the security bench's `*-held-out-misses.json`) are named, never printed.
  const all = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')).sort() : [];
  const present = all.filter((f) => !HELD_OUT_FILE.test(f));
  const sections: { title: string; body: string }[] = [];
  const seen = new Set<string>();
  const one = (file: string, title: string, command: string | null) => {
    seen.add(file);
    const path = join(dir, file);
    if (!present.includes(file)) {
      sections.push({ title, body: `Not run: \`${relative(ROOT, path)}\` does not exist${command ? ` (run \`${command}\` or \`npm run bench\`)` : ''}.` });
      return;
    }
    const parsed = readJson(path);
    if ('error' in parsed) {
      sections.push({ title, body: `Could not read \`${relative(ROOT, path)}\`: ${parsed.error}` });
      return;
    }
    const data = parsed.data;
    const body =
      isRecord(data) && data['benchmark'] === 'latency'
        ? renderLatency(data as unknown as LatencyResults, relative(ROOT, path))
        : file === 'coding-memory.json' && isRecord(data)
          ? `${renderCodingSummary(data)}\n${renderOther(data, path, command)}`
        : file === 'locomo.json' && isRecord(data)
          ? `${renderLocomoSummary(data)}\n${renderOther(data, path, command)}`
          : file === 'http.json' && isRecord(data)
            ? `${renderHttpSummary(data)}\n${renderOther(data, path, command)}`
          : file === 'backends.json' && isRecord(data)
            ? `${renderBackendsSummary(data)}\n${renderOther(data, path, command)}`
          : file.startsWith('pg-scale') && isRecord(data)
            ? `${renderPgScaleSummary(data)}\n${renderOther(data, path, command)}`
            : renderOther(data, path, command);
    sections.push({ title, body });
  };
  for (const k of KNOWN) one(k.file, k.title, k.command);
  for (const f of present) if (!seen.has(f)) one(f, `Other results: ${basename(f, '.json')}`, null);
  for (const f of all.filter((x) => HELD_OUT_FILE.test(x))) {
    sections.push({ title: `Held-out texts: ${basename(f, '.json')}`, body: `Test-split texts, not shown here: \`${relative(ROOT, join(dir, f))}\` (not to be read while changing what they measure).` });
  }

  const head: string[] = [];
  head.push('# cairn benchmarks\n');
  head.push(
    `Generated ${date(new Date().toISOString())} by \`${options.invocation}\` on ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), ` +
      `${(totalmem() / 2 ** 30).toFixed(1)} GiB memory, Node ${process.version}, ${process.platform} ${process.arch}. ` +
      'The machine is shared and noisy: figures are medians and percentiles from one run, not best-of-N.',
  );
  if (options.runs?.length) {
    head.push('\nThis invocation:\n');
    head.push(
      table(
        ['Benchmark', 'Command', 'Status', 'Wall time'],
        options.runs.map((r) => [r.name, `\`${r.command}\``, r.note ? `${r.status}: ${r.note}` : r.status, r.status === 'skipped' ? '–' : secs(r.durationMs)]),
        ['l', 'l', 'l', 'r'],
      ),
    );
    if (options.totalMs !== undefined) head.push(`\nTotal: ${secs(options.totalMs)} (build not included).`);
  }
  head.push('\nSections: ' + sections.map((s) => s.title).join(' · '));
  return `${head.join('\n')}\n${sections.map((s) => `\n## ${s.title}\n\n${s.body}\n`).join('')}`;
}

export function writeReport(options: ReportOptions): string {
  const text = buildReport(options);
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, text);
  return text;
}

export function resultsDirFor(quick: boolean): string {
  return join(ROOT, 'bench', 'results', ...(quick ? ['quick'] : []));
}

export function reportPathFor(quick: boolean): string {
  return quick ? join(resultsDirFor(true), 'REPORT.md') : join(ROOT, 'bench', 'REPORT.md');
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const quick = process.argv.includes('--quick');
  const out = reportPathFor(quick);
  writeReport({ resultsDir: resultsDirFor(quick), out, invocation: `node dist/bench/report.js${quick ? ' --quick' : ''}` });
  process.stderr.write(`wrote ${relative(process.cwd(), out) || out}\n`);
}
