import type { Command } from 'commander';
import { openCairnFolder } from '../../adapters/git/cairn-folder.js';
import type { SyncSide } from '../../core/sync.js';
import { validateId } from '../../core/validate.js';
import { CairnError } from '../../interfaces/errors.js';
import type { OpenedEngine } from '../open-engine.js';

type OpenFn = (flags: { db?: string; namespace?: string }, opts?: { withoutEmbedder?: boolean }) => Promise<OpenedEngine>;

interface Io {
  stdout: NodeJS.WritableStream;
}

function ids(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((id) => validateId(id));
}

/**
 * `cairn sync`: the namespace's memories as Markdown files under `.cairn/` of the git repository, and
 * what others committed there read back (core/sync.ts). Conflicts are listed and exit with status 1;
 * `--take-file` / `--take-memory` settle them.
 */
export function registerSyncCommand(program: Command, io: Io, open: OpenFn): void {
  const out = (s: string): void => {
    io.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
  };
  program
    .command('sync')
    .description('write memories to .cairn/ in the git repository (one Markdown file each) and read back what others committed there')
    .option('--take-file <ids>', 'for these conflicting memories, keep the file’s version (comma-separated ids)', ids)
    .option('--take-memory <ids>', 'for these conflicting memories, keep the stored version and rewrite the file', ids)
    .option('--db <path>', 'database file')
    .option('--namespace <ns>', 'namespace')
    .option('--json', 'print JSON')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      const g = cmd.optsWithGlobals() as { db?: string; namespace?: string; json?: boolean };
      const opened = await open({ ...(g.db ? { db: g.db } : {}), ...(g.namespace ? { namespace: g.namespace } : {}) });
      try {
        const resolve = new Map<string, SyncSide>([
          ...((o['takeFile'] as string[] | undefined) ?? []).map((id) => [id, 'file'] as const),
          ...((o['takeMemory'] as string[] | undefined) ?? []).map((id) => [id, 'memory'] as const),
        ]);
        const namespace = g.namespace ?? opened.engine.defaultNamespace;
        const folder = await openCairnFolder(opened.repository, namespace);
        const r = await opened.engine.sync(folder, { namespace, resolve });
        if (g.json) out(JSON.stringify(r, null, 2));
        else {
          out(
            `${r.folder}: ${r.written.length} written, ${r.removed.length} removed, ${r.imported.length} imported, ${r.superseded.length} replaced by edits, ` +
              `${r.updated.length} updated, ${r.forgotten.length} forgotten, ${r.unchanged} unchanged`,
          );
          for (const h of r.held) out(`held for review: ${h.id} (cairn quarantine show ${h.quarantine})`);
          for (const i of r.invalid) out(`not read: ${i.file}: ${i.message}`);
          for (const c of r.conflicts) out(`conflict: ${c.id}: ${c.reason} (cairn sync --take-file ${c.id} or --take-memory ${c.id})`);
        }
        if (r.conflicts.length > 0) {
          throw new CairnError('CONFLICT', `${r.conflicts.length} memories changed on both sides; nothing of them was merged`, {
            hint: 'keep one side with --take-file <id> or --take-memory <id> and sync again',
          });
        }
      } finally {
        await opened.close();
      }
    });
}
