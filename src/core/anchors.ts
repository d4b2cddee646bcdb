import type { CodeAnchor, CodeRef, CodeRepository, RepoState } from '../interfaces/code.js';
import type { MemoryScope, RouteInfo } from '../interfaces/memory.js';
import { MAX_ANCHORS } from './validate.js';

/**
 * Code anchors at write time. A memory written inside a git repository is tied to the files it names: the
 * anchors given with it, a route's paths, and the paths and code identifiers in its text that exist in the
 * repository now. The commit it was written at is recorded with them, so recall can tell later whether
 * those files moved, went or changed (staleness.ts). Outside a repository nothing is anchored.
 */

/** An identifier found in more files than this is too common to anchor a memory to. */
export const MAX_FILES_PER_SYMBOL = 3;
/** Identifiers of a text looked up in the repository (one `git grep` for all of them). */
const MAX_SYMBOL_CANDIDATES = 8;

/** Path-like tokens: `dir/file.ext`, `dir/sub/`, `file.ext`, optionally `:12` or `:12-30` / `#L12-L30`. */
const PATH_TOKEN = /(?<![\w/.:@-])((?:[\w.-]+\/)+[\w.-]*|[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7})(?:(?::|#L)(\d{1,7})(?:-L?(\d{1,7}))?)?/gu;

/** Path candidates in a text, with a line range when one is written after the path. */
export function pathCandidates(text: string): CodeAnchor[] {
  const out: CodeAnchor[] = [];
  for (const m of text.matchAll(PATH_TOKEN)) {
    const path = (m[1] as string).replace(/[.,;:]+$/u, '').replace(/\/+$/u, '').replace(/^\.\//u, '');
    if (!path || path.split('/').includes('..') || /^\d+(\.\d+)*$/u.test(path)) continue;
    const anchor: CodeAnchor = { path };
    const first = m[2] === undefined ? null : Number(m[2]);
    if (first !== null && first >= 1) anchor.lines = [first, Math.max(first, m[3] === undefined ? first : Number(m[3]))];
    out.push(anchor);
  }
  return out;
}

/**
 * Identifier candidates: backquoted names, `name(` calls, and camelCase or snake_case words (plain words
 * would anchor a note to every file that says "the").
 */
export function symbolCandidates(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/`([A-Za-z_$][\w$]{2,100})(?:\(\))?`/gu)) found.add(m[1] as string);
  for (const m of text.matchAll(/\b([A-Za-z_$][\w$]{2,100})\(/gu)) found.add(m[1] as string);
  for (const m of text.matchAll(/\b([a-z]+[A-Z][\w$]*|[A-Za-z]+_[\w$]+|[A-Z][a-z]+[A-Z][\w$]*)\b/gu)) found.add(m[1] as string);
  return [...found].slice(0, MAX_SYMBOL_CANDIDATES);
}

function anchorKey(a: CodeAnchor): string {
  return `${a.path}\u0000${a.symbol ?? ''}`;
}

export interface AnchorInput {
  text: string;
  route: RouteInfo | null;
  /** Anchors named by the caller (validated); kept even when the file does not exist. */
  anchors: CodeAnchor[];
  scope: MemoryScope;
}

/**
 * The code references of memories about to be written in this repository, one per input: null when it
 * names no code and is not branch-scoped. Branch scope on the default branch (or a detached HEAD) is the
 * repository tier. One `git grep` serves the identifiers of the whole batch.
 */
export async function anchorMany(repo: CodeRepository, state: RepoState, inputs: readonly AnchorInput[]): Promise<(CodeRef | null)[]> {
  const wanted = inputs.map((input) => ({
    input,
    candidates: [...(input.route?.paths ?? []).map((path) => ({ path: path.replace(/^\.\//u, '').replace(/\/+$/u, '') })), ...pathCandidates(input.text)],
    symbols: symbolCandidates(input.text),
  }));
  const exist = await repo.existing([...new Set(wanted.flatMap((w) => w.candidates.map((c) => c.path)))]);
  const allSymbols = [...new Set(wanted.flatMap((w) => w.symbols))];
  const files = allSymbols.length ? await repo.filesContaining(allSymbols, MAX_FILES_PER_SYMBOL) : new Map<string, string[]>();
  const branch = state.branch && state.branch !== state.defaultBranch ? state.branch : null;
  let base: string | null | undefined;
  const out: (CodeRef | null)[] = [];
  for (const { input, candidates, symbols } of wanted) {
    const anchors = new Map<string, CodeAnchor>();
    for (const a of input.anchors) anchors.set(anchorKey(a), a);
    for (const c of candidates) if (exist.has(c.path) && !anchors.has(anchorKey(c))) anchors.set(anchorKey(c), c);
    for (const symbol of symbols) {
      for (const path of files.get(symbol) ?? []) {
        const a = { path, symbol };
        if (!anchors.has(anchorKey(a))) anchors.set(anchorKey(a), a);
      }
    }
    const list = [...anchors.values()].slice(0, MAX_ANCHORS);
    const scoped = input.scope === 'branch' ? branch : null;
    if (list.length === 0 && !scoped) {
      out.push(null);
      continue;
    }
    const ref: CodeRef = { commit: state.head, anchors: list };
    if (scoped) {
      if (base === undefined) {
        const defTip = state.defaultBranch ? await repo.branchTip(state.defaultBranch) : null;
        base = state.head && defTip ? await repo.mergeBase(state.head, defTip) : null;
      }
      ref.branch = scoped;
      if (base) ref.base = base;
    }
    out.push(ref);
  }
  return out;
}

/**
 * An anchor written on a command line: `path`, `path:12`, `path:12-30`, `path#symbol` or
 * `path:12-30#symbol` (validated by validateAnchors when saved).
 */
export function parseAnchorSpec(spec: string): { path: string; symbol?: string; lines?: [number, number] } {
  const m = /^(.+?)(?::(\d+)(?:-(\d+))?)?(?:#(.+))?$/u.exec(spec.trim());
  const out: { path: string; symbol?: string; lines?: [number, number] } = { path: m?.[1] ?? spec };
  if (m?.[2]) out.lines = [Number(m[2]), Number(m[3] ?? m[2])];
  if (m?.[4]) out.symbol = m[4];
  return out;
}
