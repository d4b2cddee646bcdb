/**
 * LoCoMo (Maharana et al., ACL 2024) loading for the evidence-recall benchmark: the conversations as
 * memories, the questions with normalised gold evidence, the fractional recall of the official scorer.
 * Format and evidence defects: /work/shared/reference/benchmarks.md §1 and §2.1.
 */
import type { RelatedTerms } from '../src/core/related-terms.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Engine } from '../src/core/engine.js';
import type { Embedder } from '../src/interfaces/embedder.js';
import { CairnError } from '../src/interfaces/errors.js';
import type { MemoryInput } from '../src/interfaces/memory.js';
import type { RecordedUpdateRule, StatedUpdateRule } from '../src/core/topics.js';

export const KS = [5, 10, 25, 50] as const;
export const CATEGORIES = [1, 2, 3, 4, 5] as const;
export const CATEGORY_NAMES: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
};

/** The LoCoMo paper's DRAGON dialog-turn retriever (Table 3), overall fractional recall in %. */
export const DRAGON_OVERALL: Record<number, number> = { 5: 56.7, 10: 66.2, 25: 76.7, 50: 82.7 };

export type Split = 'dev' | 'test' | 'all';
/** Dev = conversations 0–4 (tuning), test = 5–9 (reporting only). */
export const SPLITS: Record<Split, number[]> = { dev: [0, 1, 2, 3, 4], test: [5, 6, 7, 8, 9], all: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] };

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface RawQa {
  question: string;
  evidence: string[];
  category: number;
}

interface RawSample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: RawQa[];
}

export interface Turn {
  diaId: string;
  speaker: string;
  /** `<speaker> said, "<text>"` plus ` and shared <blip_caption>` for photos (LoCoMo's RAG format). */
  text: string;
  createdAt: string;
}

export interface Question {
  question: string;
  category: number;
  /** Normalised gold evidence dia_ids present in the conversation. Empty when the file gives none. */
  gold: string[];
  /** Evidence strings that could not be resolved to a turn (dropped from `gold`). */
  unresolved: string[];
  /** True when the raw evidence list is empty: recall is 1 by the official rule. */
  noEvidence: boolean;
}

export interface Conversation {
  index: number;
  sampleId: string;
  namespace: string;
  turns: Turn[];
  questions: Question[];
}

export function defaultDataPath(): string {
  // dist/bench/locomo-data.js → repository root is two folders up; the data sits beside the repository.
  const here = dirname(fileURLToPath(import.meta.url));
  const repo = resolve(here, '..', '..');
  return process.env['CAIRN_LOCOMO'] || resolve(repo, '..', 'shared', 'data', 'locomo', 'locomo10.json');
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** `1:56 pm on 8 May, 2023` → epoch ms (read as UTC). */
export function parseSessionDate(value: string): number {
  const m = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/iu.exec(value);
  if (!m) throw new Error(`unrecognised LoCoMo session date ${JSON.stringify(value)}`);
  const [, hh, mm, ampm, day, monthName, year] = m as unknown as [string, string, string, string, string, string, string];
  const month = MONTHS.indexOf(monthName.toLowerCase());
  if (month < 0) throw new Error(`unrecognised month in ${JSON.stringify(value)}`);
  let hour = Number(hh) % 12;
  if (ampm.toLowerCase() === 'pm') hour += 12;
  return Date.UTC(Number(year), month, Number(day), hour, Number(mm));
}

/**
 * Evidence normaliser recommended in benchmarks.md §1.3: split on `;` `,` and whitespace, accept
 * `D:?<s>:0*<t>`, keep only ids of real turns (deduplicated, in order).
 */
export function normaliseEvidence(raw: readonly unknown[], known: ReadonlySet<string>): { gold: string[]; unresolved: string[] } {
  const gold: string[] = [];
  const unresolved: string[] = [];
  for (const item of raw) {
    for (const piece of String(item).split(/[;,\s]+/u).filter(Boolean)) {
      const m = /^D:?(\d+):0*(\d+)$/u.exec(piece);
      const id = m ? `D${Number(m[1])}:${Number(m[2])}` : null;
      if (id && known.has(id)) {
        if (!gold.includes(id)) gold.push(id);
      } else {
        unresolved.push(piece);
      }
    }
  }
  return { gold, unresolved };
}

export function loadLocomo(path = defaultDataPath()): Conversation[] {
  const samples = JSON.parse(readFileSync(path, 'utf8')) as RawSample[];
  return samples.map((sample, index) => {
    const conv = sample.conversation;
    const sessions = Object.keys(conv)
      .map((key) => /^session_(\d+)$/u.exec(key))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    const turns: Turn[] = [];
    for (const n of sessions) {
      const date = conv[`session_${n}_date_time`];
      if (typeof date !== 'string') throw new Error(`${sample.sample_id}: session_${n} has no date`);
      const base = parseSessionDate(date);
      (conv[`session_${n}`] as RawTurn[]).forEach((t, j) => {
        const caption = t.blip_caption ? ` and shared ${t.blip_caption}` : '';
        turns.push({
          diaId: t.dia_id,
          speaker: t.speaker,
          text: `${t.speaker} said, "${t.text}"${caption}`,
          createdAt: new Date(base + j * 1000).toISOString(),
        });
      });
    }
    const known = new Set(turns.map((t) => t.diaId));
    const questions = sample.qa.map((qa) => {
      const { gold, unresolved } = normaliseEvidence(qa.evidence ?? [], known);
      return { question: qa.question, category: qa.category, gold, unresolved, noEvidence: (qa.evidence ?? []).length === 0 };
    });
    return { index, sampleId: sample.sample_id, namespace: `locomo/${sample.sample_id}`, turns, questions };
  });
}

export function memoryInputs(conv: Conversation): MemoryInput[] {
  return conv.turns.map((t) => ({
    namespace: conv.namespace,
    text: t.text,
    kind: 'note',
    createdAt: t.createdAt,
    // The conversation's session (dia_id D<session>:<turn>), as cairn's own capture records the session it ran in.
    metadata: { source: 'import', externalId: t.diaId, speaker: t.speaker, sessionId: `${conv.sampleId}/${t.diaId.split(':')[0] as string}` },
  }));
}

/**
 * Saves a conversation through the engine's normal write path, 128 turns per `saveMany`. When the ingest
 * filter (a product default) holds a turn, the batch is retried one turn at a time and held turns are listed.
 */
export async function ingestConversation(engine: Engine, conv: Conversation): Promise<{ saved: number; duplicates: string[]; quarantined: string[] }> {
  const out = { saved: 0, duplicates: [] as string[], quarantined: [] as string[] };
  const inputs = memoryInputs(conv);
  const record = (input: MemoryInput, duplicate: boolean) => (duplicate ? out.duplicates.push(input.metadata?.externalId ?? '?') : out.saved++);
  for (let i = 0; i < inputs.length; i += 128) {
    const batch = inputs.slice(i, i + 128);
    try {
      const results = await engine.saveMany(batch);
      results.forEach((r, j) => record(batch[j] as MemoryInput, r.duplicate));
    } catch (err) {
      if (!(err instanceof CairnError) || err.code !== 'QUARANTINED') throw err;
      for (const input of batch) {
        try {
          record(input, (await engine.save(input)).duplicate);
        } catch (e) {
          if (!(e instanceof CairnError) || e.code !== 'QUARANTINED') throw e;
          out.quarantined.push(input.metadata?.externalId ?? '?');
        }
      }
    }
  }
  return out;
}

/**
 * Fractional recall of the official scorer: share of gold ids among the retrieved ids. No evidence in the
 * file → 1. Evidence given but none of it resolvable → 0 (the official scorer counts malformed ids as misses).
 */
export function recallOf(q: Question, retrieved: readonly (string | undefined)[]): number {
  if (q.noEvidence) return 1;
  const total = q.gold.length + (q.gold.length === 0 ? q.unresolved.length : 0);
  if (total === 0) return 1;
  const got = new Set(retrieved);
  return q.gold.filter((id) => got.has(id)).length / total;
}

/** An Embedder decorator that embeds each distinct text once (keeps query vectors across modes). */
export class CachingEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly cache = new Map<string, Float32Array>();
  misses = 0;
  constructor(private readonly inner: Embedder) {
    this.id = inner.id;
    this.dimensions = inner.dimensions;
  }
  async embed(texts: string[]): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((t) => !this.cache.has(t)))];
    if (missing.length) {
      this.misses += missing.length;
      const vectors = await this.inner.embed(missing);
      missing.forEach((t, i) => this.cache.set(t, vectors[i] as Float32Array));
    }
    // Copies: callers (sqlite-vec binding) must not share one buffer by accident.
    return texts.map((t) => Float32Array.from(this.cache.get(t) as Float32Array));
  }
  loadTimeMs(): number | null {
    return this.inner.loadTimeMs();
  }
}

export interface RecallTable {
  /** mode → category ('all' or '1'..'5') → k → mean recall in [0,1]. */
  [mode: string]: Record<string, Record<string, number>>;
}

/** Mean recall per category and overall from per-question recalls (recalls[k][i]). */
export function summarise(questions: readonly Question[], recalls: Record<number, number[]>): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  const groups: [string, (q: Question) => boolean][] = [['all', () => true], ...CATEGORIES.map((c): [string, (q: Question) => boolean] => [String(c), (q) => q.category === c])];
  for (const [name, pick] of groups) {
    const row: Record<string, number> = {};
    for (const k of KS) {
      const vals = (recalls[k] as number[]).filter((_, i) => pick(questions[i] as Question));
      row[String(k)] = vals.length ? vals.reduce((a, b) => a + b, 0) / vals.length : NaN;
    }
    out[name] = row;
  }
  return out;
}

export function pct(x: number | undefined): string {
  return x === undefined || Number.isNaN(x) ? '  –  ' : (100 * x).toFixed(1).padStart(5);
}

/**
 * Fills the cache for `texts` using `workers` worker threads (each with its own model instance), so a
 * two-core machine embeds twice as fast as the single-threaded engine path. Returns the slowest model load.
 */
export async function prefetchEmbeddings(cache: CachingEmbedder, texts: readonly string[], workers = 2, chunk = 64): Promise<number> {
  const missing = [...new Set(texts.filter((t) => !cache.cache.has(t)))];
  if (missing.length === 0) return 0;
  const { Worker } = await import('node:worker_threads');
  const chunks: string[][] = [];
  for (let i = 0; i < missing.length; i += chunk) chunks.push(missing.slice(i, i + chunk));
  let next = 0;
  let loadMs = 0;
  const url = new URL('./locomo-embed-worker.js', import.meta.url);
  await Promise.all(
    Array.from({ length: Math.min(workers, chunks.length) }, async () => {
      const worker = new Worker(url);
      try {
        for (;;) {
          const texts = chunks[next++];
          if (!texts) return;
          const reply = await new Promise<{ vectors?: Float32Array[]; loadMs?: number; error?: string }>((resolveReply, reject) => {
            const onError = (err: Error) => reject(err);
            worker.once('error', onError);
            worker.once('message', (msg: { vectors?: Float32Array[]; loadMs?: number; error?: string }) => {
              worker.off('error', onError);
              resolveReply(msg);
            });
            worker.postMessage({ texts });
          });
          if (reply.error || !reply.vectors) throw new Error(`embedding worker failed: ${reply.error}`);
          reply.vectors.forEach((v, i) => cache.cache.set(texts[i] as string, v));
          cache.misses += texts.length;
          loadMs = Math.max(loadMs, reply.loadMs ?? 0);
        }
      } finally {
        await worker.terminate();
      }
    }),
  );
  return loadMs;
}

/** Loads vectors saved by `saveVectorCache` (a development aid for sweeps; the bench does not use it by default). */
export function loadVectorCache(cache: CachingEmbedder, path: string): number {
  if (!existsSync(path)) return 0;
  const buf = readFileSync(path);
  const headerLen = buf.readUInt32LE(0);
  const header = JSON.parse(buf.subarray(4, 4 + headerLen).toString('utf8')) as { id: string; dimensions: number; texts: string[] };
  if (header.id !== cache.id || header.dimensions !== cache.dimensions) return 0;
  const body = buf.subarray(4 + headerLen);
  const floats = new Float32Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
  header.texts.forEach((t, i) => cache.cache.set(t, floats.slice(i * header.dimensions, (i + 1) * header.dimensions)));
  return header.texts.length;
}

export function saveVectorCache(cache: CachingEmbedder, path: string): void {
  const texts = [...cache.cache.keys()];
  const header = Buffer.from(JSON.stringify({ id: cache.id, dimensions: cache.dimensions, texts }), 'utf8');
  const floats = new Float32Array(texts.length * cache.dimensions);
  texts.forEach((t, i) => floats.set(cache.cache.get(t) as Float32Array, i * cache.dimensions));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length, 0);
  writeFileSync(path, Buffer.concat([len, header, Buffer.from(floats.buffer)]));
}

/** `--related-weight <w>|off`: the weight of related terms in the lexical signal (core/related-terms.ts), or off. */
export function relatedRule(value: string | undefined): RelatedTerms | null {
  if (value === 'off') return null;
  const w = Number(value);
  if (!(w >= 0 && w <= 1)) throw new Error(`--related-weight takes off or a number from 0 to 1 (got ${value})`);
  return { weight: w };
}

/** `--stated-update <cosine,overlap,ratio>|off`: recall's stated-update rule (topics.ts StatedUpdateRule), or off. */
export function statedRule(value: string | undefined): StatedUpdateRule | null {
  if (value === 'off') return null;
  const parts = (value ?? '').split(',');
  const [minCosine, minOverlap, minScoreRatio] = parts.map(Number);
  const share = (x: number | undefined): x is number => x !== undefined && x >= 0 && x <= 1;
  if (parts.length !== 3 || parts.some((p) => p.trim() === '') || !share(minCosine) || !share(minOverlap) || !share(minScoreRatio)) {
    throw new Error(`--stated-update takes off or three numbers from 0 to 1: cosine,overlap,ratio (got ${value})`);
  }
  return { minCosine, minOverlap, minScoreRatio };
}

/** `--likely-replaces-ratio`: `off` (recall ignores Memory.likelyReplaces) or the rule's minScoreRatio. */
export function ratioRule(value: string | undefined): RecordedUpdateRule | null {
  if (value === 'off') return null;
  const r = Number(value);
  if (!(r >= 0 && r <= 1)) throw new Error(`--likely-replaces-ratio takes off or a number from 0 to 1 (got ${value})`);
  return { minScoreRatio: r };
}
