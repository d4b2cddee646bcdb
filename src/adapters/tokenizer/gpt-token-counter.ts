import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { TokenCounter } from '../../interfaces/embedder.js';
import { createBpeCount } from './bpe-count.js';
import { BPE_TABLE_FORMAT, decodeBpeTable, encodeBpeTable, type BpeTable, type RankList } from './bpe-table.js';

type CountFn = (text: string) => number;

export interface GptTokenCounterOptions {
  /**
   * A folder to keep the encoding's compact rank table in (bpe-table.ts), written by the first process that counts:
   * a later process reads it in a few milliseconds instead of loading the tokenizer package's ranks (about 100 ms
   * cold). Without it (or when it cannot be written), the package counts, as before the table.
   */
  tableDir?: string | undefined;
}

/** The tokenizer package's version: a table is kept per version and table format (the file name holds both). */
function packageVersion(): string {
  const pkg = createRequire(import.meta.url)('gpt-tokenizer/package.json') as { version?: string };
  return pkg.version ?? 'unknown';
}

/** The package's own count, special tokens as ordinary text: where no table can be read or kept. */
async function packageCount(): Promise<CountFn> {
  const { countTokens } = await import('gpt-tokenizer/encoding/cl100k_base');
  return (text) => countTokens(text, { disallowedSpecial: new Set() });
}

async function compactCount(table: BpeTable): Promise<CountFn> {
  const { CL100K_TOKEN_SPLIT_REGEX } = await import('gpt-tokenizer/encodingParams/constants');
  return createBpeCount(table, CL100K_TOKEN_SPLIT_REGEX);
}

/**
 * The table kept in `dir`; or, when there is none (or a damaged one), built from the package's ranks and kept
 * there (written aside, then renamed over it: a reader never sees half a file). Where nothing can be kept (no
 * folder, or one that cannot be written) the package counts: building the table costs more than loading the
 * package, and is worth it only once.
 */
async function loadCount(dir: string | undefined): Promise<CountFn> {
  if (!dir) return packageCount();
  const file = join(dir, `cl100k_base-${packageVersion()}-t${BPE_TABLE_FORMAT}.bpe`);
  try {
    const table = decodeBpeTable(readFileSync(file));
    if (table) return compactCount(table);
  } catch {
    // Missing or unreadable: built below.
  }
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch {
    return packageCount();
  }
  const encoded = encodeBpeTable((await import('gpt-tokenizer/bpeRanks/cl100k_base')).default as RankList);
  const partial = `${file}.${randomBytes(6).toString('hex')}.partial`;
  try {
    writeFileSync(partial, encoded);
    renameSync(partial, file);
  } catch {
    // A full disk, say: nothing half-written is left, and the next process tries again.
    rmSync(partial, { force: true });
  }
  return compactCount(decodeBpeTable(encoded) as BpeTable);
}

/** Counters loaded in this process, by folder ('' for none): every counter of the process shares one. */
const counters = new Map<string, Promise<CountFn>>();

function counterFor(dir: string | undefined): Promise<CountFn> {
  const key = dir ?? '';
  let counter = counters.get(key);
  if (!counter) {
    counter = loadCount(dir);
    // A failure is not kept: the next count tries again.
    counter.catch(() => counters.delete(key));
    counters.set(key, counter);
  }
  return counter;
}

/**
 * Counts tokens with the cl100k_base BPE, loaded on first use, once a process: from the compact table kept in
 * `tableDir` (bpe-table.ts, counted as the package counts: bpe-count.ts), else by the tokenizer package itself. A
 * special token's text (`<|endoftext|>`) counts as ordinary text either way (the package's default refuses it).
 */
export function createGptTokenCounter(options: GptTokenCounterOptions = {}): TokenCounter {
  return {
    id: 'cl100k_base',
    async count(text: string): Promise<number> {
      return (await counterFor(options.tableDir))(text);
    },
  };
}
