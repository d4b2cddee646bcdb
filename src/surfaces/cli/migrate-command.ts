import type { Command } from 'commander';
import { migrateStore } from '../../core/migrate.js';
import type { Store } from '../../interfaces/store.js';
import { createProgress } from './progress.js';

type OpenStore = (location: string, options: { mustExist: boolean }) => Promise<Store>;

/**
 * `cairn migrate --from <file or url> --to <file or url> [--json]`: copies a whole store (log, projection,
 * quarantine vault, learned anchors, tokens) into a new, empty one of any backend and proves the copy
 * equal by three checksums. Progress goes to stderr; the summary (or JSON) to stdout. Exit 1 when a
 * checksum differs.
 */
export function registerMigrateCommand(program: Command, openStore: OpenStore, write: (s: string) => void): void {
  program
    .command('migrate')
    .description('copy a whole store into a new, empty one (SQLite file or PostgreSQL URL) and prove equal checksums')
    .requiredOption('--from <file-or-url>', 'the store to copy (left unchanged)')
    .requiredOption('--to <file-or-url>', 'the new store (must be empty; a file is created)')
    .option('--json', 'print JSON')
    .action(async (o: { from: string; to: string; json?: boolean }, cmd: Command) => {
      const json = Boolean(o.json ?? (cmd.optsWithGlobals() as { json?: boolean }).json);
      const source = await openStore(o.from, { mustExist: true });
      try {
        const target = await openStore(o.to, { mustExist: false });
        try {
          const progress = createProgress('migrating events');
          const r = await migrateStore(source, target, { onProgress: (d, t) => progress.update(d, t) });
          progress.finish();
          if (json) write(JSON.stringify({ from: source.location, to: target.location, ...r }, null, 2));
          else {
            write(`copied ${r.events} events in ${r.scopes} scopes (${r.memories} memories), ${r.vaultEntries} held texts, ${r.learnedAnchors} learned anchors, ${r.tokens} tokens from ${source.location} to ${target.location} in ${r.ms} ms`);
            for (const k of ['log', 'state', 'quarantine'] as const) {
              write(`  ${r.source[k] === r.target[k] ? 'ok  ' : 'DIFF'} ${k.padEnd(10)} ${r.source[k]}${r.source[k] === r.target[k] ? '' : ` ≠ ${r.target[k]}`}`);
            }
            write(r.ok ? 'migrated: the new store holds the same log, state and quarantine' : 'NOT migrated cleanly: a checksum differs (see above); the source is unchanged');
          }
          if (!r.ok) process.exitCode = 1;
        } finally {
          await target.close();
        }
      } finally {
        await source.close();
      }
    });
}
