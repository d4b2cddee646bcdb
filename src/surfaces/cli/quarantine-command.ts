import type { Command } from 'commander';
import type { Engine } from '../../core/engine.js';
import { CairnError } from '../../interfaces/errors.js';
import type { QuarantineView } from '../../interfaces/quarantine.js';
import { heldReasons, validateFilter } from '../../core/quarantine.js';
import type { OpenedEngine } from '../open-engine.js';

type OpenFn = (flags: { db?: string; namespace?: string }, opts?: { withoutEmbedder?: boolean }) => Promise<OpenedEngine>;

interface Io {
  stdout: NodeJS.WritableStream;
}

function line(v: QuarantineView): string {
  const preview = v.preview === null ? '(text gone)' : JSON.stringify(v.preview);
  const decided = v.status === 'held' ? '' : ` ${v.status} ${v.decidedAt?.slice(0, 19) ?? ''}`;
  const why = heldReasons(v)[0];
  return `${v.id}  ${v.createdAt.slice(0, 19)}  ${v.score.toFixed(3)}  ${v.hash.slice(0, 12)}  ${preview.padEnd(20)} ${v.op}/${v.source ?? '-'}${v.attempts > 1 ? ` ×${v.attempts}` : ''}${decided}${why ? `  — ${why}` : ''}`;
}

/**
 * `cairn quarantine list|show|release|drop|poison`: the operator's review queue of the ingest filter. Listing and
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

  /** The review filter options every listing and bulk command shares. */
  const filterOptions = (c: Command) =>
    c
      .option('--status <status>', 'held (default), released, dropped or all')
      .option('--ns <namespace>', 'only this namespace')
      .option('--source <source>', 'only writes from this source (mcp, import, cli, turn, page, http…)')
      .option('--held-for <words>', 'only entries one of whose reasons contains these words (e.g. "remote code")')
      .option('--min-score <x>', 'only entries scored at least this')
      .option('--max-score <x>', 'only entries scored at most this')
      .option('--since <date>', 'only entries held at or after this date/time')
      .option('--until <date>', 'only entries held before this date/time');
  const filterOf = (o: Record<string, unknown>, ids: string[] = []) =>
    validateFilter({
      status: o['status'],
      namespace: o['ns'],
      source: o['source'],
      reason: o['heldFor'],
      minScore: o['minScore'],
      maxScore: o['maxScore'],
      since: o['since'],
      until: o['until'],
      ...(ids.length ? { ids } : {}),
    });

  filterOptions(sub('list', 'list held writes (store-wide) with totals: id, time, score, hash, 16-character preview, source, first reason'))
    .option('--limit <n>', 'how many to show (default 50)')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const limit = o['limit'] === undefined ? undefined : Number(o['limit']);
        const review = await engine.reviewQuarantine(filterOf(o), limit === undefined ? {} : { limit });
        if (g.json) return json(review);
        const status = (o['status'] as string | undefined) ?? 'held';
        out(`${review.total} ${status} in total; ${review.matched} match${review.matched === review.entries.length ? '' : `; showing the newest ${review.entries.length}`}`);
        for (const [reason, n] of Object.entries(review.byReason).slice(0, 8)) out(`  ${String(n).padStart(6)}  ${reason}`);
        if (review.entries.length === 0) return;
        out('id                          time                 score  hash          preview              source');
        for (const e of review.entries) out(line(e));
      }, true);
    });

  sub('show', 'show one held write: hash, preview, score, source, time (the text only with --reveal)')
    .argument('<id>', 'quarantine id')
    .option('--reveal', 'also print the full held text')
    .action(async (id: string, o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const d = await engine.getQuarantined(id, { reveal: Boolean(o['reveal']), by: 'cli' });
        if (!d) throw new CairnError('NOT_FOUND', `no quarantine entry ${id}`);
        if (g.json) return json(d);
        out(`id        ${d.id}`);
        out(`status    ${d.status}${d.decidedAt ? ` at ${d.decidedAt}` : ''}${d.reason ? ` — ${d.reason}` : ''}`);
        out(`hash      ${d.hash}`);
        out(`preview   ${d.preview === null ? '(text gone)' : JSON.stringify(d.preview)}`);
        out(`score     ${d.score.toFixed(4)} (${d.pass} pass, anchor ${d.anchor ?? '-'}${d.tricks.length ? `, undid ${d.tricks.join(', ')}` : ''})`);
        for (const [i, r] of (d.reasons ?? []).entries()) out(`${i === 0 ? 'why       ' : '          '}${r}`);
        out(`source    ${d.op} via ${d.source ?? '-'}${d.agent ? ` by ${d.agent}` : ''} in ${d.namespace}`);
        out(`time      ${d.createdAt}${d.attempts > 1 ? ` (${d.attempts} attempts, last ${d.lastAttemptAt})` : ''}`);
        if (d.memoryIds.length) out(`memories  ${d.memoryIds.join(', ')}`);
        if (o['reveal']) out(d.text === null ? 'text      (gone)' : `text\n${d.text}`);
      }, true);
    });

  /** A bulk decision: by ids or by filter (`--all-matching`), counted first with `--dry-run`. */
  const bulk = async (engine: Engine, action: 'release' | 'drop', ids: string[], o: Record<string, unknown>, g: { json?: boolean }) => {
    if (ids.length === 0 && !o['allMatching']) throw new CairnError('INVALID_INPUT', `give quarantine ids, or --all-matching with filters, to ${action}`, { field: 'id' });
    const r = await engine.decideQuarantined(action, filterOf(o, ids), {
      ...(o['reason'] === undefined ? {} : { reason: o['reason'] as string }),
      dryRun: Boolean(o['dryRun']),
      ...(o['teach'] === false ? { teach: false } : {}),
    });
    if (g.json) return json(r);
    if (r.dryRun) return out(`would ${action} ${r.matched} held entr${r.matched === 1 ? 'y' : 'ies'} (dry run; nothing changed)`);
    out(`${action === 'release' ? 'released' : 'dropped'} ${r.done.length} of ${r.matched}${r.failed.length ? `; ${r.failed.length} failed` : ''}`);
    for (const f of r.failed.slice(0, 20)) out(`  ${f.id}: ${f.error}`);
    if (r.failed.length) throw new CairnError('CONFLICT', `${r.failed.length} entries could not be ${action === 'release' ? 'released' : 'dropped'}`);
  };

  filterOptions(sub('release', 'commit held writes as the original calls would have, by ids or --all-matching filters; un-learns the anchor that held them'))
    .argument('[ids...]', 'quarantine ids')
    .requiredOption('--reason <text>', 'why the texts are safe to store')
    .option('--all-matching', 'every held entry matching the filters')
    .option('--dry-run', 'only count what would be released')
    .action(async (ids: string[], o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        if (ids.length === 1 && !o['allMatching'] && !o['dryRun']) {
          const r = await engine.releaseQuarantined(ids[0] as string, { reason: o['reason'] as string });
          if (g.json) return json(r);
          return out(`released ${r.entry.id}: ${r.duplicate ? 'already present as' : 'stored as'} ${r.memoryIds.join(', ') || '(no memory)'}`);
        }
        await bulk(engine, 'release', ids, o, g);
      }, false);
    });

  filterOptions(sub('drop', 'discard held writes for good, confirming them as attacks: the filter learns them, so variants are held for every agent'))
    .argument('[ids...]', 'quarantine ids')
    .option('--reason <text>', 'why they are dropped')
    .option('--no-teach', 'discard without teaching the filter (unwanted, but not an attack)')
    .option('--all-matching', 'every held entry matching the filters')
    .option('--dry-run', 'only count what would be dropped')
    .action(async (ids: string[], o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        if (ids.length === 1 && !o['allMatching'] && !o['dryRun']) {
          const e = await engine.dropQuarantined(ids[0] as string, { ...(o['reason'] === undefined ? {} : { reason: o['reason'] as string }), teach: o['teach'] !== false });
          if (g.json) return json(e);
          return out(`dropped ${e.id}${e.taught ? ' (learned: reworded variants are now held for every agent)' : ''}`);
        }
        await bulk(engine, 'drop', ids, o, g);
      }, false);
    });

  sub('poison', 'mark a stored memory as poisoned: it leaves recall at once, the event is logged, and the filter learns it')
    .argument('<memory-id>', 'memory id')
    .option('--reason <text>', 'why it is poisoned')
    .option('--no-teach', 'only remove it from recall, without teaching the filter')
    .action(async (id: string, o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const m = await engine.markPoisoned(id, {
          ...(o['reason'] === undefined ? {} : { reason: o['reason'] as string }),
          teach: o['teach'] !== false,
        });
        if (g.json) return json(m);
        out(`marked ${m.id} poisoned: it no longer appears in recall${o['teach'] !== false ? '; reworded copies are now held for every agent' : ''}`);
      }, false);
    });
}
