/**
 * Text edits `cairn init` makes to files the user also edits. Each takes the current text (null: no file)
 * and returns the new text; when nothing needs to change it returns the input unchanged, byte for byte, so a
 * second run is a no-op. Nothing outside cairn's own key or marked block is touched.
 */
import { applyEdits, modify, parse, printParseErrorCode, type Edit, type JSONPath, type ParseError } from 'jsonc-parser';
import { CairnError } from '../../interfaces/errors.js';

/** A block of lines owned by cairn inside a file the user owns, delimited by a begin and an end line. */
export interface Markers {
  /** The begin line; recognised by its first `beginPrefix.length` characters, so its wording may change. */
  begin: string;
  beginPrefix: string;
  end: string;
}

export const MARKDOWN_MARKERS: Markers = {
  begin: '<!-- cairn:begin (managed by `cairn init`: it replaces what is between these two lines) -->',
  beginPrefix: '<!-- cairn:begin',
  end: '<!-- cairn:end -->',
};

export const TOML_MARKERS: Markers = {
  begin: '# cairn:begin (managed by `cairn init`: it replaces what is between these two lines)',
  beginPrefix: '# cairn:begin',
  end: '# cairn:end',
};

function newline(text: string | null): string {
  return text?.includes('\r\n') ? '\r\n' : '\n';
}

/** Where cairn's block is: line indexes of its begin and end lines, or null when there is none. */
export function findBlock(text: string, markers: Markers, file: string): { begin: number; end: number } | null {
  const lines = text.split(/\r?\n/u);
  const begins = lines.flatMap((l, i) => (l.trimStart().startsWith(markers.beginPrefix) ? [i] : []));
  const ends = lines.flatMap((l, i) => (l.trim() === markers.end ? [i] : []));
  if (begins.length === 0 && ends.length === 0) return null;
  const [begin] = begins;
  const [end] = ends;
  if (begins.length !== 1 || ends.length !== 1 || begin === undefined || end === undefined || end < begin) {
    throw new CairnError('INVALID_INPUT', `${file}: cairn's markers (${markers.beginPrefix} … ${markers.end}) are unbalanced; fix or remove them, then run again`, { field: 'file' });
  }
  return { begin, end };
}

/** The text outside cairn's block (to look for what the user wrote). */
export function outsideBlock(text: string, markers: Markers, file: string): string {
  const at = findBlock(text, markers, file);
  if (!at) return text;
  const lines = text.split(/\r?\n/u);
  return [...lines.slice(0, at.begin), ...lines.slice(at.end + 1)].join('\n');
}

/** Takes cairn's block (and the blank line before it) out of a text; the text as it was when it has none. */
export function removeBlock(text: string, markers: Markers, file: string): string {
  const at = findBlock(text, markers, file);
  if (!at) return text;
  const nl = newline(text);
  const lines = text.split(/\r?\n/u);
  const from = at.begin > 0 && lines[at.begin - 1]?.trim() === '' ? at.begin - 1 : at.begin;
  return [...lines.slice(0, from), ...lines.slice(at.end + 1)].join(nl);
}

/** Puts `body` between cairn's markers: replaces the existing block, or appends one after a blank line. */
export function upsertBlock(text: string | null, body: string, markers: Markers, file: string): string {
  const nl = newline(text);
  const blockLines = [markers.begin, ...body.split('\n'), markers.end];
  if (text === null || text.trim() === '') return `${blockLines.join(nl)}${nl}`;
  const at = findBlock(text, markers, file);
  const lines = text.split(/\r?\n/u);
  if (at) {
    const current = lines.slice(at.begin, at.end + 1);
    if (current.length === blockLines.length && current.every((l, i) => l === blockLines[i])) return text;
    return [...lines.slice(0, at.begin), ...blockLines, ...lines.slice(at.end + 1)].join(nl);
  }
  const base = text.endsWith('\n') ? text : `${text}${nl}`;
  return `${base}${nl}${blockLines.join(nl)}${nl}`;
}

function stableEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function parseJson(text: string, file: string): unknown {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  const [first] = errors;
  if (first) {
    throw new CairnError('INVALID_INPUT', `${file} is not valid JSON (${printParseErrorCode(first.error)} at offset ${first.offset}); fix it, or add cairn's entry by hand`, { field: 'file' });
  }
  return value;
}

function valueAt(root: unknown, path: JSONPath): unknown {
  let at = root;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string | number, unknown>)[key];
  }
  return at;
}

/** The indentation of the line that holds `offset`. */
function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/u.exec(text.slice(start))?.[0] ?? '';
}

/**
 * Lays out the compact text of one edit from jsonc-parser like the lines around it (its own formatter would
 * also reformat the user's neighbouring entries). An edit is a replaced value, an appended `,member`, or a
 * first member of an empty object or array.
 */
function layout(text: string, edit: Edit, unit: string, eol: string): Edit {
  const pretty = (value: unknown, indent: string) => JSON.stringify(value, null, unit).split('\n').join(eol + indent);
  const member = (body: string, indent: string): string => {
    try {
      const [[key, value]] = Object.entries(JSON.parse(`{${body}}`) as Record<string, unknown>) as [[string, unknown]];
      return `${JSON.stringify(key)}: ${pretty(value, indent)}`;
    } catch {
      return pretty(JSON.parse(body), indent);
    }
  };
  if (edit.content === '') return edit; // a removal
  if (edit.length > 0) return { ...edit, content: pretty(JSON.parse(edit.content), lineIndent(text, edit.offset)) };
  if (edit.content.startsWith(',')) {
    const indent = lineIndent(text, edit.offset);
    return { ...edit, content: `,${eol}${indent}${member(edit.content.slice(1), indent)}` };
  }
  const parent = lineIndent(text, edit.offset - 1);
  return { ...edit, content: `${eol}${parent}${unit}${member(edit.content, parent + unit)}${eol}${parent}` };
}

/** One change to a JSON file: the value at `path` (an index of -1 appends to an array; undefined removes it). */
export type JsonEdit = [path: JSONPath, value: unknown];

/**
 * Edits a JSON (or JSONC) object file in place: only the text of the values at the planned paths changes,
 * so the user's formatting, comments, key order and other entries stay as they were. `plan` sees the
 * parsed file and returns the edits; a value already equal to what is there is left alone, and with no
 * change at all the text comes back byte for byte.
 */
export function editJson(text: string | null, file: string, plan: (root: Record<string, unknown>) => JsonEdit[]): string {
  const empty = text === null || text.trim() === '';
  let current = empty ? '{}' : text;
  const root = parseJson(current, file);
  if (root === null || typeof root !== 'object' || Array.isArray(root)) {
    throw new CairnError('INVALID_INPUT', `${file} must hold a JSON object`, { field: 'file' });
  }
  const unit = /^([ \t]+)\S/mu.exec(current)?.[1] ?? '  ';
  const eol = current.includes('\r\n') ? '\r\n' : '\n';
  for (const [path, value] of plan(root as Record<string, unknown>)) {
    if (path[path.length - 1] !== -1 && stableEqual(valueAt(parseJson(current, file), path), value)) continue;
    current = applyEdits(current, modify(current, path, value, {}).map((e) => layout(current, e, unit, eol)));
  }
  if (empty) return current === '{}' ? (text ?? '{}\n') : `${current}\n`;
  return current;
}

/** The object at `key` of `parent`, or an empty one; refuses a value of another type. */
export function objectAt(parent: Record<string, unknown>, key: string, file: string): Record<string, unknown> {
  const value = parent[key];
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CairnError('INVALID_INPUT', `${file}: "${key}" must be an object to add cairn to it`, { field: 'file' });
  }
  return value as Record<string, unknown>;
}

/** Quotes one word for a POSIX shell (hook commands are run through one). */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/u.test(word) ? word : `'${word.replace(/'/gu, `'\\''`)}'`;
}

/** A TOML basic string (JSON's escapes are all valid TOML escapes). */
export function tomlString(value: string): string {
  return JSON.stringify(value);
}

/** A unified diff of two texts (whole-file hunks with 3 lines of context), for `--dry-run`. */
export function unifiedDiff(file: string, before: string | null, after: string): string {
  const a = before === null || before === '' ? [] : before.replace(/\n$/u, '').split('\n');
  const b = after.replace(/\n$/u, '').split('\n');
  // Longest common subsequence table; instruction and config files are small.
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: { kind: ' ' | '-' | '+'; line: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) ops.push({ kind: ' ', line: a[i++]! }), j++;
    else if (j < b.length && (i >= a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) ops.push({ kind: '+', line: b[j++]! });
    else ops.push({ kind: '-', line: a[i++]! });
  }
  // Hunks: each change with 3 lines of context either side, overlapping ranges merged.
  const CONTEXT = 3;
  const ranges: [number, number][] = [];
  ops.forEach((o, k) => {
    if (o.kind === ' ') return;
    const [from, to] = [Math.max(0, k - CONTEXT), Math.min(ops.length, k + CONTEXT + 1)];
    const last = ranges[ranges.length - 1];
    if (last && from <= last[1]) last[1] = to;
    else ranges.push([from, to]);
  });
  const out = [`--- ${before === null ? '/dev/null' : `a/${file}`}`, `+++ b/${file}`];
  for (const [from, to] of ranges) {
    const hunk = ops.slice(from, to);
    const countA = hunk.filter((o) => o.kind !== '+').length;
    const countB = hunk.filter((o) => o.kind !== '-').length;
    const startA = ops.slice(0, from).filter((o) => o.kind !== '+').length + (countA ? 1 : 0);
    const startB = ops.slice(0, from).filter((o) => o.kind !== '-').length + (countB ? 1 : 0);
    out.push(`@@ -${startA},${countA} +${startB},${countB} @@`);
    for (const o of hunk) out.push(`${o.kind}${o.line}`);
  }
  return `${out.join('\n')}\n`;
}
