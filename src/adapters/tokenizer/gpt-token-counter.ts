import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { TokenCounter } from '../../interfaces/embedder.js';
import { createBpeCount } from './bpe-count.js';
import { decodeBpeTable, encodeBpeTable, type BpeTable, type RankList } from './bpe-table.js';

type CountFn = (text: string) => number;

export interface GptTokenCounterOptions {
  /**
   * A folder to keep the encoding's compact rank table in (bpe-table.ts), written on first use: a later process
   * reads it in about a millisecond instead of compiling the tokenizer package's ranks (about 100 ms cold). Without
   * it, every process builds the table from the package's ranks.
   */
  tableDir?: string | undefined;
}

/** The tokenizer package's version: a table is kept per version (the file name holds it). */
function packageVersion(): string {
  const pkg = createRequire(import.meta.url)('gpt-tokenizer/package.json') as { version?: string };
  return pkg.version ?? 'unknown';
}

async function packageRanks(): Promise<RankList> {
  return (await import('gpt-tokenizer/bpeRanks/cl100k_base')).default as RankList;
}

/** The table kept in `dir`, or built from the package's ranks and kept there (replaced whole: a rename). */
async function loadTable(dir: string | undefined): Promise<BpeTable> {
  const file = dir ? join(dir, `cl100k_base-${packageVersion()}.bpe`) : null;
  if (file) {
    try {
      const table = decodeBpeTable(readFileSync(file));
      if (table) return table;
    } catch {
      // Missing or unreadable: built below.
    }
  }
  const encoded = encodeBpeTable(await packageRanks());
  if (dir && file) {
    try {
      mkdirSync(dir, { recursive: true });
      const partial = `${file}.${process.pid}.partial`;
      writeFileSync(partial, encoded);
      renameSync(partial, file);
    } catch {
      // A read-only cache folder only costs the next process the build.
    }
  }
  return decodeBpeTable(encoded) as BpeTable;
}

/** Tables loaded in this process, by folder ('' for none): every counter of the process shares one. */
const tables = new Map<string, Promise<CountFn>>();

function counterFor(dir: string | undefined): Promise<CountFn> {
  const key = dir ?? '';
  let counter = tables.get(key);
  if (!counter) {
    counter = Promise.all([loadTable(dir), import('gpt-tokenizer/encodingParams/constants')]).then(([table, constants]) => createBpeCount(table, constants.CL100K_TOKEN_SPLIT_REGEX));
    // A failure is not kept: the next count tries again.
    counter.catch(() => tables.delete(key));
    tables.set(key, counter);
  }
  return counter;
}

/**
 * Counts tokens with the cl100k_base BPE, loaded on first use, once a process: the package's ranks as a compact table
 * (bpe-table.ts, kept in `tableDir`) and its split expression, counted as its countTokens does, except that a special
 * token's text counts as ordinary text (the package refuses it).
 */
export function createGptTokenCounter(options: GptTokenCounterOptions = {}): TokenCounter {
  return {
    id: 'cl100k_base',
    async count(text: string): Promise<number> {
      return (await counterFor(options.tableDir))(text);
    },
  };
}
