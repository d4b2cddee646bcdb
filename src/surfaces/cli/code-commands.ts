import type { Command } from 'commander';
import { BRANCH_GRACE_DAYS } from '../../core/branches.js';
import { renderFollowed } from '../../core/render.js';
import type { Engine } from '../../core/engine.js';
import type { FeedbackVerdict, MemoryScope } from '../../interfaces/memory.js';
import type { OpenedEngine } from '../open-engine.js';

type OpenFn = (flags: { db?: string; namespace?: string }, opts?: { withoutEmbedder?: boolean }) => Promise<OpenedEngine>;

interface Io {
  stdout: NodeJS.WritableStream;
}

/**
 * Commands about memory and the code it is anchored to: `cairn follow` points a memory at its files' new
 * paths after a move, `cairn branches` settles branch-scoped notes, `cairn scope` sets the default scope.
 * Each command parses, calls one engine method and formats.
 */
export function registerCodeCommands(program: Command, io: Io, open: OpenFn): void {
  const out = (s: string): void => {
    io.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
  };
  const json = (v: unknown): void => out(JSON.stringify(v, null, 2));

  async function run(cmd: Command, fn: (engine: Engine, g: { json?: boolean }, opened: OpenedEngine) => Promise<void>, withoutEmbedder = false): Promise<void> {
    const g = cmd.optsWithGlobals() as { db?: string; namespace?: string; json?: boolean };
    const opened = await open({ ...(g.db ? { db: g.db } : {}), ...(g.namespace ? { namespace: g.namespace } : {}) }, { withoutEmbedder });
    try {
      await fn(opened.engine, g, opened);
    } finally {
      await opened.close();
    }
  }

  const sub = (name: string, description: string) =>
    program.command(name).description(description).option('--db <path>', 'database file').option('--namespace <ns>', 'namespace').option('--json', 'print JSON');

  sub('follow', 'point a memory (or route) at the new paths of files git saw renamed since it was written')
    .argument('<id>', 'memory id')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const r = await engine.followMoves(id, { metadata: { source: 'cli', origin: 'user' } });
        if (g.json) return json({ id: r.memory.id, supersedes: r.supersedes, moved: r.moved, memory: r.memory });
        out(renderFollowed(r));
      });
    });

  sub('branches', 'settle branch-scoped notes: merged branches join the repository tier, deleted unmerged ones are dropped after the grace period')
    .action(async (_o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const r = await engine.reconcileBranches();
        if (g.json) return json(r);
        out(`${r.promoted.length} notes joined the repository tier; ${r.dropped.length} forgotten (branch deleted unmerged, reversible with cairn restore)`);
        for (const [branch, n] of Object.entries(r.open)) out(`  ${branch}: ${n} notes kept to the branch`);
        for (const w of r.waiting) out(`  ${w.branch}: deleted unmerged since ${w.since.slice(0, 10)}; ${w.notes} notes forgotten ${BRANCH_GRACE_DAYS} days after that`);
      }, true);
    });

  sub('scope', 'show or set the scope of notes saved without one: repository (shared by every branch) or branch')
    .argument('[scope]', 'repository or branch')
    .action(async (scope: string | undefined, _o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const value = scope === undefined ? await engine.getDefaultScope() : await engine.setDefaultScope(scope as MemoryScope);
        if (g.json) return json({ namespace: engine.defaultNamespace, scope: value });
        out(`${engine.defaultNamespace}: new notes are ${value === 'branch' ? 'kept to the current branch until it merges' : 'shared by every branch'} (${value})`);
      }, true);
    });

  sub('feedback', 'mark a recalled memory useful, wrong or stale (wrong and stale ones sink in recall and go on the review list)')
    .argument('<id>', 'memory id')
    .argument('<verdict>', 'useful, wrong or stale')
    .action(async (id: string, verdict: string, _o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const m = await engine.rate(id, verdict as FeedbackVerdict);
        if (g.json) return json({ id: m.id, verdict, feedback: m.feedback });
        out(`marked ${m.id} ${verdict} (useful ${m.feedback?.useful}, wrong ${m.feedback?.wrong}, stale ${m.feedback?.stale})`);
      }, true);
    });

  sub('review', 'memories marked wrong or stale more often than useful, most doubted first')
    .option('--limit <n>', 'how many (default 50)', (v: string) => Number(v))
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const list = await engine.reviewList({ ...(o['limit'] !== undefined ? { limit: o['limit'] as number } : {}) });
        if (g.json) return json({ memories: list });
        if (list.length === 0) return out('nothing to review');
        for (const m of list) out(`${m.id}  useful ${m.feedback?.useful} wrong ${m.feedback?.wrong} stale ${m.feedback?.stale}  ${JSON.stringify(m.text.slice(0, 100))}`);
      }, true);
    });
}
