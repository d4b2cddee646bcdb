import type { Command } from 'commander';
import type { Engine } from '../../core/engine.js';
import { CairnError } from '../../interfaces/errors.js';
import type { QuarantineView } from '../../interfaces/quarantine.js';
import type { OpenedEngine } from '../open-engine.js';

type OpenFn = (flags: { db?: string; namespace?: string }, opts?: { withoutEmbedder?: boolean }) => Promise<OpenedEngine>;

interface Io {
  stdout: NodeJS.WritableStream;
}

function line(v: QuarantineView): string {
  const preview = v.preview === null ? '(text gone)' : JSON.stringify(v.preview);
  const decided = v.status === 'held' ? '' : ` ${v.status} ${v.decidedAt?.slice(0, 19) ?? ''}`;
  return `${v.id}  ${v.createdAt.slice(0, 19)}  ${v.score.toFixed(3)}  ${v.hash.slice(0, 12)}  ${preview.padEnd(20)} ${v.op}/${v.source ?? '-'}${v.attempts > 1 ? ` ×${v.attempts}` : ''}${decided}`;
}

/**
 * `cairn quarantine list|show|release|drop`: the operator's review queue of the ingest filter. Listing and
 * `show` print a hash, a 16-character preview and the score, never the held text unless `--reveal`.
 * Each command parses, calls one engine method and formats.
 */
export function registerQuarantineCommands(program: Command, io: Io, open: OpenFn): void {
  const out = (s: string): void => {
    io.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
  };
  const json = (v: unknown): void => out(JSON.stringify(v, null, 2));

  async function run(cmd: Command, fn: (engine: Engine, g: { json?: boolean }) => Promise<void>, withoutEmbedder: boolean): Promise<void> {
    const g = cmd.optsWithGlobals() as { db?: string; namespace?: string; json?: boolean };
    const opened = await open({ ...(g.db ? { db: g.db } : {}), ...(g.namespace ? { namespace: g.namespace } : {}) }, { withoutEmbedder });
    try {
      await fn(opened.engine, g);
    } finally {
      await opened.close();
    }
  }

  const quarantine = program
    .command('quarantine')
    .description('review writes the ingest filter held: list, show, release (with a reason) or drop them');
  const sub = (name: string, description: string) =>
    quarantine.command(name).description(description).option('--db <path>', 'database file').option('--json', 'print JSON');

  sub('list', 'list held writes (store-wide): id, time, score, hash, 16-character preview, source')
    .option('--status <status>', 'held (default), released, dropped or all')
    .option('--limit <n>', 'how many (default 50)')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const limit = o['limit'] === undefined ? undefined : Number(o['limit']);
        const entries = await engine.listQuarantine({
          ...(o['status'] ? { status: o['status'] as 'held' } : {}),
          ...(limit === undefined ? {} : { limit }),
        });
        if (g.json) return json({ entries });
        if (entries.length === 0) return out('quarantine is empty');
        out('id                          time                 score  hash          preview              source');
        for (const e of entries) out(line(e));
      }, true);
    });

  sub('show', 'show one held write: hash, preview, score, source, time (the text only with --reveal)')
    .argument('<id>', 'quarantine id')
    .option('--reveal', 'also print the full held text')
    .action(async (id: string, o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const d = await engine.getQuarantined(id, { reveal: Boolean(o['reveal']) });
        if (!d) throw new CairnError('NOT_FOUND', `no quarantine entry ${id}`);
        if (g.json) return json(d);
        out(`id        ${d.id}`);
        out(`status    ${d.status}${d.decidedAt ? ` at ${d.decidedAt}` : ''}${d.reason ? ` — ${d.reason}` : ''}`);
        out(`hash      ${d.hash}`);
        out(`preview   ${d.preview === null ? '(text gone)' : JSON.stringify(d.preview)}`);
        out(`score     ${d.score.toFixed(4)} (${d.pass} pass, anchor ${d.anchor ?? '-'}${d.tricks.length ? `, undid ${d.tricks.join(', ')}` : ''})`);
        out(`source    ${d.op} via ${d.source ?? '-'}${d.agent ? ` by ${d.agent}` : ''} in ${d.namespace}`);
        out(`time      ${d.createdAt}${d.attempts > 1 ? ` (${d.attempts} attempts, last ${d.lastAttemptAt})` : ''}`);
        if (d.memoryIds.length) out(`memories  ${d.memoryIds.join(', ')}`);
        if (o['reveal']) out(d.text === null ? 'text      (gone)' : `text\n${d.text}`);
      }, true);
    });

  sub('release', 'commit a held write as the original call would have; its learned anchor is removed')
    .argument('<id>', 'quarantine id')
    .requiredOption('--reason <text>', 'why the text is safe to store')
    .action(async (id: string, o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const r = await engine.releaseQuarantined(id, { reason: o['reason'] as string });
        if (g.json) return json(r);
        out(`released ${r.entry.id}: ${r.duplicate ? 'already present as' : 'stored as'} ${r.memoryIds.join(', ') || '(no memory)'}`);
      }, false);
    });

  sub('drop', 'discard a held write for good, confirming it as an attack: the filter learns it, so variants are held for every agent')
    .argument('<id>', 'quarantine id')
    .option('--reason <text>', 'why it is dropped')
    .option('--no-teach', 'discard without teaching the filter (unwanted, but not an attack)')
    .action(async (id: string, o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const e = await engine.dropQuarantined(id, { ...(o['reason'] === undefined ? {} : { reason: o['reason'] as string }), teach: o['teach'] !== false });
        if (g.json) return json(e);
        out(`dropped ${e.id}${e.taught ? ' (learned: reworded variants are now held for every agent)' : ''}`);
      }, true);
    });
}
