import type { TokenCounter } from '../../interfaces/embedder.js';

type CountFn = (text: string) => number;

/** Counts tokens with the cl100k_base BPE (gpt-tokenizer), loaded on first use, once. */
export function createGptTokenCounter(): TokenCounter {
  let counter: Promise<CountFn> | null = null;
  return {
    id: 'cl100k_base',
    async count(text: string): Promise<number> {
      counter ??= import('gpt-tokenizer/encoding/cl100k_base').then((m) => m.countTokens as CountFn);
      return (await counter)(text);
    },
  };
}
