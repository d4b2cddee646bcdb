/**
 * The one sentence splitter of the ingest filter: its cue windows (ingest-filter.ts) and the stance reader
 * (stance.ts) read the same sentences of a text.
 */

/** A sentence: a run up to `.`, `!`, `?`, `;` or a line break (a dot inside a word, as in `AGENTS.md`, does not end it). */
const SENTENCE = /[^.!?;\n]+(?:[.!?](?!\s|$)[^.!?;\n]*)*[.!?;]?/gu;

/** Splits into sentences, found in one pass (each keeps its closing mark). */
export function sentences(text: string): string[] {
  return (text.match(SENTENCE) ?? []).map((s) => s.trim()).filter((s) => s.length > 0);
}
