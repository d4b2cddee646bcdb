import { createHash } from 'node:crypto';

/**
 * The normal form used for deduplication: Unicode NFKC, lower case, whitespace collapsed, trimmed, and
 * trailing sentence punctuation dropped. Two texts with the same normal form are the same memory.
 */
export function normaliseText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/gu, ' ')
    .trim()
    .replace(/[.!;,\s]+$/u, '');
}

/** The dedupe key: SHA-256 of namespace + NUL + normalised text, hex. The only definition of it. */
export function dedupeKey(namespace: string, text: string): string {
  return createHash('sha256').update(namespace).update('\0').update(normaliseText(text)).digest('hex');
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Namespace of a git repository: its origin URL without scheme, credentials and `.git`
 * (`git@github.com:acme/shop.git` → `github.com/acme/shop`), else its top-level path.
 * Every worktree and subfolder of one repository maps to the same namespace.
 */
export function namespaceFromRepository(repo: { originUrl?: string | null; topLevel?: string | null }): string | null {
  const url = repo.originUrl?.trim();
  if (url) {
    let s = url;
    const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/)(.+)$/u.exec(s); // scp-like git@host:path
    if (scp && !/^[a-z][a-z0-9+.-]*:\/\//iu.test(s)) {
      s = `${scp[1]}/${scp[2]}`;
    } else {
      s = s.replace(/^[a-z][a-z0-9+.-]*:\/\//iu, '').replace(/^[^@/]*@/u, '');
    }
    s = s.replace(/\.git\/?$/u, '').replace(/\/+$/u, '');
    return s.toLowerCase();
  }
  const top = repo.topLevel?.trim();
  return top ? top : null;
}

/**
 * Why a text is not JSON, without quoting it: the parser's own message repeats the text's first
 * characters, which may be a secret's prefix, and this goes to logs and error lines.
 */
export function notJsonProblem(text: string): string {
  return `not valid JSON (${Buffer.byteLength(text, 'utf8')} bytes; starts with ${JSON.stringify(text.trimStart().slice(0, 1))})`;
}

/** Deepest nesting an import line may have; a memory record needs three levels. */
export const MAX_JSON_DEPTH = 32;

/**
 * True when the JSON text nests arrays or objects deeper than `max` (a scan, no parse): such a value would
 * overflow the stack of any recursive walk over it (copying, serialising), so it is refused up front.
 */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
