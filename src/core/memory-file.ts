import { createHash } from 'node:crypto';
import { CairnError } from '../interfaces/errors.js';
import type { CodeAnchor } from '../interfaces/code.js';
import type { Memory, MemoryKind, RouteInfo } from '../interfaces/memory.js';

/**
 * One memory as a Markdown file for review in a pull request (`cairn sync` writes them under `.cairn/`).
 * Front matter between `---` lines, one `key: value` a line, every value written as JSON (so it is YAML too
 * and needs no YAML parser); the body is the memory's text as stored (already redacted), then one newline.
 *
 *   ---
 *   id: 01JD3X…
 *   kind: decision
 *   importance: 7
 *   tags: ["billing","tax"]
 *   created: "2026-12-01T08:00:00.000Z"
 *   anchors: [{"path":"shop/billing/tax.py"}]
 *   commit: "4f2c…"
 *   supersedes: null
 *   ---
 *   VAT is rounded per invoice line, never on the total.
 */

/** What a memory file holds, parsed. */
export interface MemoryFile {
  id: string;
  kind: MemoryKind;
  importance: number;
  tags: string[];
  created: string | null;
  supersedes: string | null;
  anchors: CodeAnchor[];
  commit: string | null;
  route: RouteInfo | null;
  task: string | null;
  expires: string | null;
  text: string;
}

/** `<id>.md`: the file name of a memory. */
export function memoryFileName(id: string): string {
  return `${id}.md`;
}

/** The id a file name stands for, or null for a file sync does not own. */
export function idOfFileName(name: string): string | null {
  return /^([0-9A-Z]{26})\.md$/u.exec(name)?.[1] ?? null;
}

export function renderMemoryFile(m: Memory): string {
  const fields: [string, unknown][] = [
    ['id', m.id],
    ['kind', m.kind],
    ['importance', m.importance],
    ['tags', m.tags],
    ['created', m.createdAt],
  ];
  if (m.route) fields.push(['route', m.route]);
  if (m.taskId) fields.push(['task', m.taskId]);
  if (m.expiresAt) fields.push(['expires', m.expiresAt]);
  fields.push(['anchors', m.code?.anchors ?? []], ['commit', m.code?.commit ?? null], ['supersedes', m.supersedes]);
  const head = fields.map(([k, v]) => `${k}: ${k === 'id' || k === 'kind' ? String(v) : JSON.stringify(v)}`).join('\n');
  return `---\n${head}\n---\n${m.text}\n`;
}

function bad(name: string, why: string): CairnError {
  return new CairnError('INVALID_INPUT', `${name}: ${why}`, { field: name });
}

/** Parses a memory file; INVALID_INPUT naming the file and what is wrong. Values are validated on import. */
export function parseMemoryFile(name: string, text: string): MemoryFile {
  const normalised = text.replace(/\r\n/gu, '\n');
  const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/u.exec(normalised);
  if (!m) throw bad(name, 'must start with front matter between two --- lines');
  const fields = new Map<string, unknown>();
  for (const line of (m[1] as string).split('\n')) {
    if (line.trim() === '') continue;
    const at = line.indexOf(':');
    if (at <= 0) throw bad(name, `front matter line ${JSON.stringify(line)} is not key: value`);
    const key = line.slice(0, at).trim();
    const raw = line.slice(at + 1).trim();
    let value: unknown = raw;
    // id and kind are written bare (an id may start with a digit); every other value is JSON.
    if (key !== 'id' && key !== 'kind' && /^["[{\d-]|^(true|false|null)$/u.test(raw)) {
      try {
        value = JSON.parse(raw);
      } catch {
        throw bad(name, `${key}: ${JSON.stringify(raw)} is not a JSON value`);
      }
    }
    fields.set(key, value);
  }
  const body = (m[2] as string).endsWith('\n') ? (m[2] as string).slice(0, -1) : (m[2] as string);
  const str = (k: string) => (typeof fields.get(k) === 'string' ? (fields.get(k) as string) : null);
  const id = str('id');
  if (!id || idOfFileName(memoryFileName(id.toUpperCase())) === null) throw bad(name, 'id: must be a memory id');
  if (memoryFileName(id.toUpperCase()) !== name) throw bad(name, `id ${id} does not match the file name`);
  return {
    id: id.toUpperCase(),
    kind: (str('kind') ?? 'note') as MemoryKind,
    importance: typeof fields.get('importance') === 'number' ? (fields.get('importance') as number) : 5,
    tags: Array.isArray(fields.get('tags')) ? (fields.get('tags') as string[]) : [],
    created: str('created'),
    supersedes: str('supersedes'),
    anchors: Array.isArray(fields.get('anchors')) ? (fields.get('anchors') as CodeAnchor[]) : [],
    commit: str('commit'),
    route: (fields.get('route') as RouteInfo | undefined) ?? null,
    task: str('task'),
    expires: str('expires'),
    text: body,
  };
}

/** SHA-256 of a file's text (hex): what the sync base remembers of each file. */
export function fileHash(text: string): string {
  return createHash('sha256').update(text.replace(/\r\n/gu, '\n')).digest('hex');
}
