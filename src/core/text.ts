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
