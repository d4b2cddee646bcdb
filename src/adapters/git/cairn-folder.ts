import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CairnError } from '../../interfaces/errors.js';
import type { MemoryFolder } from '../../interfaces/sync.js';
import type { GitRepository } from './git-repository.js';

/** The folder at the repository's top level that `cairn sync` writes (committed with the code). */
export const CAIRN_FOLDER = '.cairn';

/**
 * `.cairn/` of the working tree, and the sync base of this worktree in its own git directory
 * (`<git dir>/cairn/sync-<namespace hash>.json`: never committed, one per clone and worktree, since each
 * has its own checkout of the folder). UNSUPPORTED outside a git repository.
 */
export async function openCairnFolder(repo: GitRepository, namespace: string): Promise<MemoryFolder> {
  const [top, gitDir] = await Promise.all([repo.topLevel(), repo.gitDir()]);
  if (!top || !gitDir) throw new CairnError('UNSUPPORTED', 'cairn sync runs inside a git repository (none found here)');
  const dir = join(top, CAIRN_FOLDER);
  const baseFile = join(gitDir, 'cairn', `sync-${createHash('sha256').update(namespace).digest('hex').slice(0, 16)}.json`);
  const atomicWrite = async (path: string, text: string) => {
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, text);
    await rename(tmp, path);
  };
  let made: Promise<void> | undefined;
  return {
    location: dir,
    async read() {
      const files = new Map<string, string>();
      let names: string[];
      try {
        names = await readdir(dir);
      } catch {
        return files;
      }
      const wanted = names.filter((n) => n.endsWith('.md'));
      // Read in bounded parallel batches: 10,000 files at once would exhaust file descriptors.
      for (let i = 0; i < wanted.length; i += 256) {
        const batch = wanted.slice(i, i + 256);
        const texts = await Promise.all(batch.map((n) => readFile(join(dir, n), 'utf8')));
        batch.forEach((n, k) => files.set(n, texts[k] as string));
      }
      return files;
    },
    async write(name, text) {
      made ??= mkdir(dir, { recursive: true }).then(() => undefined);
      await made;
      await atomicWrite(join(dir, name), text);
    },
    async remove(name) {
      await rm(join(dir, name), { force: true });
    },
    async readBase() {
      try {
        const parsed = JSON.parse(await readFile(baseFile, 'utf8')) as { files?: Record<string, string> };
        return parsed.files ?? {};
      } catch {
        return null;
      }
    },
    async writeBase(base) {
      await mkdir(join(gitDir, 'cairn'), { recursive: true });
      await atomicWrite(baseFile, `${JSON.stringify({ namespace, files: base })}\n`);
    },
  };
}
