import { createReadStream, createWriteStream, existsSync, openSync, statSync, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseConversations } from '../../core/conversation.js';
import { Command, CommanderError, Option } from 'commander';
import type { Engine } from '../../core/engine.js';
import { CairnError, isCairnError } from '../../interfaces/errors.js';
import { MEMORY_KINDS, MEMORY_SCOPES, type Memory, type MemoryKind, type MemoryScope, type SaveResult, type SearchResult, type SignalWeights } from '../../interfaces/memory.js';
import { parseAnchorSpec } from '../../core/anchors.js';
import { renderStale } from '../../core/render.js';
import { registerCodeCommands } from './code-commands.js';
import { registerSyncCommand } from './sync.js';
import type { OpenedEngine } from '../open-engine.js';
import { runDemo } from './demo.js';
import { registerInit } from './init.js';
import { createProgress } from './progress.js';
import { registerQuarantineCommands } from './quarantine-command.js';
import { registerHookCommand } from '../hooks/hook-command.js';
import { registerMcpCommands } from '../mcp/mcp-commands.js';
import { registerEraseCommands } from './erase-command.js';
import { registerTokenCommands } from './token-command.js';
import { registerMigrateCommand } from './migrate-command.js';

/** Exit codes of the scriptable contract. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_INVALID = 2;

interface GlobalOpts {
  db?: string;
  namespace?: string;
  json?: boolean;
}

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const VERSION = '0.1.0';

function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function int(name: string) {
  return (value: string): number => {
    if (!/^-?\d+$/u.test(value.trim())) throw new CairnError('INVALID_INPUT', `${name}: must be a whole number (got ${JSON.stringify(value)})`, { field: name });
    return Number(value);
  };
}

/** A decimal number as written ("0.5", "1", "-2"); null for anything else (empty, "0x1", "1e", "Infinity"). */
function decimal(raw: string | undefined): number | null {
  return raw !== undefined && /^\s*-?(?:\d+\.?\d*|\.\d+)\s*$/u.test(raw) ? Number(raw) : null;
}

function parseShare(value: string): number {
  const n = decimal(value);
  if (n === null) throw new CairnError('INVALID_INPUT', `set: expected a number from 0 to 1 such as 0.5 (got ${JSON.stringify(value)})`, { field: 'set' });
  return n;
}

function parseWeights(value: string): Partial<SignalWeights> {
  const out: Record<string, number> = {};
  for (const part of list(value)) {
    const [key, raw] = part.split('=');
    const n = decimal(raw);
    if (!key || n === null) {
      throw new CairnError('INVALID_INPUT', `weights: expected name=number pairs such as vector=0.5,lexical=1 (got ${JSON.stringify(part)})`, { field: 'weights' });
    }
    out[key.trim()] = n;
  }
  return out as Partial<SignalWeights>;
}

/** A --kind filter as given; the engine checks each kind (core/validate.ts). */
function kinds(value: string): MemoryKind[] {
  return list(value) as MemoryKind[];
}

function short(text: string, max = 100): string {
  const one = text.replace(/\s+/gu, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

function describe(m: Memory): string {
  const flags = [m.forgottenAt ? 'forgotten' : '', m.supersededBy ? `superseded by ${m.supersededBy}` : '', m.expiresAt ? `expires ${m.expiresAt.slice(0, 10)}` : '']
    .filter(Boolean)
    .join(', ');
  const tags = m.tags.length ? ` #${m.tags.join(' #')}` : '';
  return `${m.id}  ${m.createdAt.slice(0, 10)}  ${m.kind.padEnd(10)} ${short(m.text)}${tags}${flags ? `  (${flags})` : ''}`;
}

/** The JSON shape of one search result (part of the scriptable contract). */
export function resultJson(r: SearchResult): Record<string, unknown> {
  const m = r.memory;
  return {
    id: m.id,
    text: m.text,
    score: r.score,
    kind: m.kind,
    namespace: m.namespace,
    createdAt: m.createdAt,
    importance: m.importance,
    tags: m.tags,
    metadata: m.metadata,
    ...(m.route ? { route: m.route } : {}),
    ...(m.code ? { code: m.code } : {}),
    ...(r.stale ? { stale: r.stale } : {}),
    scoreDetails: r.scoreDetails,
  };
}

function formatScore(r: SearchResult): string {
  const s = r.scoreDetails.signals;
  const rerank = r.scoreDetails.rerank === null ? '' : `, rerank ${r.scoreDetails.rerank.toFixed(3)}`;
  const demotion = r.scoreDetails.feedback;
  const marks = demotion ? `${demotion.steps} wrong/stale mark${demotion.steps === 1 ? '' : 's'} beyond the useful ones: ×1/${2 ** demotion.steps}` : null;
  if (r.scoreDetails.method === 'score') {
    // Relevance 0–100 and each signal's points, one decimal each; the total shown is their sum (a feedback
    // demotion is its own negative term).
    const tenth = (x: number) => Math.round(x * 10) / 10;
    const pts = (x: number) => tenth(x).toFixed(1);
    const feedback = demotion ? tenth(demotion.contribution) : 0;
    const lift = r.scoreDetails.context ? tenth(r.scoreDetails.context.contribution) : 0;
    const total = tenth(s.vector.contribution) + tenth(s.lexical.contribution) + tenth(s.recency.contribution) + lift + feedback;
    const raw = [
      s.vector.raw === null ? null : `cosine ${s.vector.raw.toFixed(2)}`,
      s.lexical.raw === null ? null : `bm25 ${s.lexical.raw.toFixed(2)}`,
      s.lexical.coverage === undefined ? null : `${Math.round(100 * s.lexical.coverage)} % of the query's words`,
      s.recency.raw === null ? null : `${Math.round(s.recency.raw)} days old`,
      marks,
    ].filter(Boolean);
    const minus = demotion ? ` − feedback ${(-feedback).toFixed(1)}` : '';
    const plus = r.scoreDetails.context ? ` + session ${lift.toFixed(1)}` : '';
    return `relevance ${total.toFixed(1)} = vector ${pts(s.vector.contribution)} + lexical ${pts(s.lexical.contribution)} + recency ${pts(s.recency.contribution)}${plus}${minus} (${raw.join(', ')}${rerank})`;
  }
  const part = (name: string, d: { rank: number | null; contribution: number }) => (d.rank === null ? `${name} -` : `${name} #${d.rank} +${d.contribution.toFixed(4)}`);
  const feedback = demotion ? `, feedback ${demotion.contribution.toFixed(4)} (${marks})` : '';
  return `${r.score.toFixed(4)} (${part('vector', s.vector)}, ${part('lexical', s.lexical)}, ${part('recency', s.recency)}${feedback}${rerank})`;
}

/** "likely replaces 01H…: "Deploys go out on Thursdays"" lines after a save, with the way to act on them. */
function likelyLines(r: SaveResult): string[] {
  const lines = (r.likelyReplaces ?? []).map((l) => `likely replaces ${l.id}: ${JSON.stringify(l.text.length > 100 ? `${l.text.slice(0, 99)}…` : l.text)}`);
  return lines.length ? [...lines, `(to replace it: cairn supersede <id> <text>, or save with --supersedes <id>)`] : [];
}

async function readJson(path: string): Promise<unknown> {
  if (!existsSync(path)) throw new CairnError('INVALID_INPUT', `file ${path} does not exist`, { field: 'file' });
  try {
    return JSON.parse(await readFile(path, 'utf8')) as unknown;
  } catch (err) {
    throw new CairnError('INVALID_INPUT', `${path} is not valid JSON: ${(err as Error).message}`, { field: 'file' });
  }
}

/** Opens an output file now, so a bad path fails before anything is exported rather than silently after. */
function openOutput(path: string): WriteStream {
  try {
    return createWriteStream(path, { fd: openSync(path, 'w') });
  } catch (err) {
    throw new CairnError('INVALID_INPUT', `cannot write ${path}: ${(err as Error).message}`, { field: 'out', cause: err });
  }
}

async function readLines(path: string): Promise<AsyncIterable<string>> {
  if (!existsSync(path)) throw new CairnError('INVALID_INPUT', `file ${path} does not exist`, { field: 'file' });
  if (statSync(path).isDirectory()) throw new CairnError('INVALID_INPUT', `${path} is a directory`, { field: 'file' });
  // Iterated from the start, so the lines are buffered until the engine reads them: it loads its import code first,
  // and a readline interface drops the lines it emits before anyone iterates it (and its end with them).
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity })[Symbol.asyncIterator]();
  return { [Symbol.asyncIterator]: () => lines };
}

/**
 * Builds the `cairn` command. Each action parses its input, calls the engine, formats the answer: no rule
 * lives here. The engine is opened lazily so `--help` loads neither the database nor the model.
 */
/**
 * The exit code a command asks for when it finishes without throwing but must not report success (verify
 * found a difference, doctor a failure, an import held lines for review). Kept per program, never in
 * `process.exitCode`, so `main` run in-process (tests) returns it and leaves the host process alone.
 */
const exitCodes = new WeakMap<Command, number>();

export function buildProgram(io: CliIo, open: (flags: GlobalOpts, opts?: { withoutEmbedder?: boolean; longLived?: boolean }) => Promise<OpenedEngine>): Command {
  const fail = (code: number): void => {
    exitCodes.set(program, Math.max(exitCodes.get(program) ?? EXIT_OK, code));
  };
  const out = (s: string): void => {
    io.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
  };
  const json = (v: unknown): void => out(JSON.stringify(v, null, 2));

  const program = new Command('cairn')
    .description('Persistent memory for coding agents: save decisions, recall them in any later session.')
    .version(VERSION)
    .option('--db <path>', 'database file (env CAIRN_DB; default ~/.local/share/cairn/cairn.db)')
    .option('--namespace <ns>', 'namespace (env CAIRN_NAMESPACE; default: the git repository of the working directory)')
    .option('--json', 'print JSON for scripts')
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: usageError('cairn'),
    })
    .exitOverride();

  const sub = (name: string, description: string) =>
    program
      .command(name)
      .description(description)
      .option('--db <path>', 'database file')
      .option('--namespace <ns>', 'namespace')
      .option('--json', 'print JSON');

  sub('save', 'save a memory')
    .argument('<text...>', 'what to remember')
    .addOption(new Option('--kind <kind>', 'kind of memory').choices(MEMORY_KINDS.filter((k) => k !== 'route')))
    .option('--tags <a,b>', 'comma-separated tags', list)
    .option('--importance <n>', 'importance 1–10 (default 5)', int('importance'))
    .option('--task <id>', 'task this memory belongs to')
    .option('--expires <date>', 'ISO date after which it is no longer recalled')
    .option('--supersedes <id>', 'id of the memory this one replaces')
    .option('--source <source>', 'provenance source (default cli)')
    .option('--anchor <specs>', 'files it is about, comma-separated: path, path:12-30, path#symbol (paths in the text are anchored anyway)', list)
    .addOption(new Option('--scope <scope>', 'branch: recall it only on the current git branch until the branch merges').choices(MEMORY_SCOPES))
    .action(async (textParts: string[], o: Record<string, unknown>, cmd: Command) => {
    await run(cmd, async (engine, g) => {
      const result = await engine.save({
        text: textParts.join(' '),
        namespace: g.namespace,
        kind: o['kind'] as MemoryKind | undefined,
        tags: o['tags'] as string[] | undefined,
        importance: o['importance'] as number | undefined,
        taskId: o['task'] as string | undefined,
        expiresAt: o['expires'] as string | undefined,
        supersedes: o['supersedes'] as string | undefined,
        metadata: { source: (o['source'] as string | undefined) ?? 'cli', origin: 'user' },
        ...(o['anchor'] ? { anchors: (o['anchor'] as string[]).map(parseAnchorSpec) } : {}),
        ...(o['scope'] ? { scope: o['scope'] as MemoryScope } : {}),
      });
      if (g.json) json({ id: result.id, duplicate: result.duplicate, memory: result.memory, likelyReplaces: result.likelyReplaces ?? [] });
      else {
        out(result.duplicate ? `duplicate of ${result.id} (nothing new saved)` : `saved ${result.id} (${result.memory.kind}) in ${result.memory.namespace}${result.memory.supersedes ? `, replacing ${result.memory.supersedes}` : ''}`);
        for (const line of likelyLines(result)) out(line);
      }
    });
  });

  /** Opens the engine for `cmd`, runs `fn`, closes. */
  async function run(cmd: Command, fn: (engine: Engine, g: GlobalOpts, opened: OpenedEngine) => Promise<void>, openOpts: { withoutEmbedder?: boolean } = {}) {
    const g = cmd.optsWithGlobals() as GlobalOpts;
    const opened = await open(g, openOpts);
    try {
      await fn(opened.engine, g, opened);
    } finally {
      await opened.close();
    }
  }

  sub('route', 'save a route: where something lives in the code')
    .requiredOption('--title <title>', 'short name, e.g. "checkout tax"')
    .option('--description <text>', 'what lives there', '')
    .option('--paths <a,b>', 'comma-separated paths', list, [])
    .option('--supersedes <id>', 'id of the route this one replaces')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const route = { title: o['title'] as string, description: o['description'] as string, paths: o['paths'] as string[] };
        const r = await engine.saveRoute(route, { namespace: g.namespace, supersedes: o['supersedes'] as string | undefined, metadata: { source: 'cli', origin: 'user' } });
        if (g.json) json({ id: r.id, duplicate: r.duplicate, memory: r.memory });
        else out(r.duplicate ? `duplicate of ${r.id}` : `saved route ${r.id}`);
      });
    });

  sub('search', 'hybrid recall: vectors + keywords + recency')
    .argument('<query...>', 'what to look for')
    .option('--limit <n>', 'results to return (default 10)', int('limit'))
    .option('--kind <kinds>', 'only these kinds (comma-separated)', kinds)
    .option('--tags <a,b>', 'only memories with any of these tags', list)
    .option('--weights <w>', 'fusion weights, e.g. vector=0.5,lexical=1,recency=0.1', parseWeights)
    .option('--all', 'include forgotten, superseded and expired memories')
    .option('--explain', 'show each signal’s rank and contribution')
    .action(async (queryParts: string[], o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const results = await engine.search(queryParts.join(' '), {
          namespace: g.namespace,
          limit: o['limit'] as number | undefined,
          kinds: o['kind'] as MemoryKind[] | undefined,
          tags: o['tags'] as string[] | undefined,
          weights: o['weights'] as Partial<SignalWeights> | undefined,
          includeInactive: Boolean(o['all']),
        });
        if (g.json) return json({ results: results.map(resultJson) });
        if (results.length === 0) return out(await nothingIn(engine, g, 'no memories found'));
        results.forEach((r, i) => {
          out(`${String(i + 1).padStart(2)}. ${describe(r.memory)}${renderStale(r.stale)}`);
          if (o['explain']) out(`    score ${formatScore(r)}`);
        });
      });
    });

  sub('context', 'pack the best memories and routes for a task into a token budget')
    .argument('<query...>', 'the task or question')
    .option('--budget <tokens>', 'token budget (default 1000)', int('budget'))
    .action(async (queryParts: string[], o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const pack = await engine.context(queryParts.join(' '), { namespace: g.namespace, tokenBudget: o['budget'] as number | undefined });
        if (g.json) json({ text: pack.text, tokens: pack.tokens, memories: pack.memories.map(resultJson), routes: pack.routes.map(resultJson), omitted: pack.omitted });
        else if (pack.memories.length === 0 && pack.routes.length === 0) out(await nothingIn(engine, g, 'nothing to put in a context: no memory or route matches'));
        else out(pack.text);
      });
    });

  sub('get', 'show one memory')
    .argument('<id>', 'memory id')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const m = await engine.get(id, { namespace: g.namespace });
        if (!m) throw new CairnError('NOT_FOUND', `no memory ${id} in namespace ${g.namespace ?? engine.defaultNamespace}`);
        if (g.json) return json(m);
        out(describe(m));
        out(m.text);
        out(`namespace ${m.namespace}; importance ${m.importance}; provenance ${JSON.stringify(m.metadata)}`);
        if (m.supersedes) out(`supersedes ${m.supersedes}`);
        if (m.forgottenAt) out(`forgotten ${m.forgottenAt}${m.forgetReason ? `: ${m.forgetReason}` : ''}`);
      }, { withoutEmbedder: true });
    });

  sub('list', 'list memories, newest first')
    .option('--kind <kinds>', 'only these kinds', kinds)
    .option('--tags <a,b>', 'only these tags', list)
    .option('--limit <n>', 'how many (default 50)', int('limit'))
    .option('--before <id>', 'only memories older than this id (paging)')
    .option('--all', 'include forgotten, superseded and expired memories')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const memories = await engine.list({
          namespace: g.namespace,
          kinds: o['kind'] as MemoryKind[] | undefined,
          tags: o['tags'] as string[] | undefined,
          limit: o['limit'] as number | undefined,
          before: o['before'] as string | undefined,
          includeInactive: Boolean(o['all']),
        });
        if (g.json) return json({ memories });
        if (memories.length === 0) return out('no memories');
        for (const m of memories) out(describe(m));
      }, { withoutEmbedder: true });
    });

  sub('forget', 'forget a memory (reversible with restore)')
    .argument('<id>', 'memory id')
    .option('--reason <text>', 'why it is forgotten')
    .action(async (id: string, o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const m = await engine.forget(id, { namespace: g.namespace, reason: o['reason'] as string | undefined });
        if (g.json) json({ id: m.id, forgottenAt: m.forgottenAt });
        else out(`forgot ${m.id} (cairn restore ${m.id} brings it back)`);
      }, { withoutEmbedder: true });
    });

  sub('restore', 'bring a forgotten memory back')
    .argument('<id>', 'memory id')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const m = await engine.restore(id, { namespace: g.namespace });
        if (g.json) json({ id: m.id, restored: true });
        else out(`restored ${m.id}`);
      }, { withoutEmbedder: true });
    });

  sub('supersede', 'replace a memory with a new one; the old one leaves recall')
    .argument('<id>', 'id of the memory to replace')
    .argument('<text...>', 'the new text')
    .action(async (id: string, textParts: string[], _o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const r = await engine.supersede(id, { text: textParts.join(' '), namespace: g.namespace, metadata: { source: 'cli', origin: 'user' } });
        if (g.json) json({ id: r.id, supersedes: id, memory: r.memory });
        else out(`saved ${r.id}, which supersedes ${id}`);
      });
    });

  sub('import', 'import memories from a JSONL file (one object a line: text, namespace, kind, tags, importance, createdAt, externalId); exits 1 when a line was held for review')
    .argument('<file>', 'JSONL file')
    .action(async (file: string, _o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        // Counted first (a quick read of the file), so the bar has its total from the start.
        const total = await countLines(file);
        const lines = await readLines(file);
        const progress = createProgress('importing');
        progress.update(0, total);
        const counts = await engine.importLines(lines, (done) => progress.update(done, total));
        progress.finish();
        // Held lines first, so thousands of them cannot pass unnoticed behind the imported count; and exit 1,
        // as a held save does, so a script notices too.
        const held = counts.quarantined.length;
        if (held) fail(EXIT_FAILURE);
        if (g.json) return json(counts);
        out(`${held ? `HELD FOR REVIEW ${held} (not stored; cairn quarantine list --source import), ` : ''}imported ${counts.imported}, duplicate ${counts.duplicate}, rejected ${counts.rejected}`);
        for (const q of counts.quarantined.slice(0, 50)) io.stderr.write(`line ${q.line}: held for review as quarantine ${q.id} (score ${q.score.toFixed(3)}); see cairn quarantine show ${q.id}\n`);
        for (const e of counts.errors.slice(0, 50)) io.stderr.write(`line ${e.line}: ${e.message}\n`);
        if (counts.errors.length > 50) io.stderr.write(`… and ${counts.errors.length - 50} more rejected lines\n`);
      });
    });

  sub('export', 'export memories as JSONL that import reads back')
    .option('--out <file>', 'write to a file instead of stdout')
    .option('--all', 'include forgotten, superseded and expired memories')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const file = o['out'] ? openOutput(o['out'] as string) : null;
        file?.on('error', () => {}); // reported by end() below; without a listener it would crash the process
        const target: NodeJS.WritableStream = file ?? io.stdout;
        let n = 0;
        for await (const line of engine.exportLines({ namespace: g.namespace, includeInactive: Boolean(o['all']) })) {
          if (!target.write(`${line}\n`)) await new Promise((r) => target.once('drain', r));
          n++;
        }
        if (file) {
          await new Promise<void>((resolve, reject) => {
            file.end((err?: Error | null) => (err ? reject(new CairnError('INTERNAL', `writing ${String(o['out'])}: ${err.message}`, { cause: err })) : resolve()));
          });
          io.stderr.write(`exported ${n} memories to ${o['out']}\n`);
        }
      }, { withoutEmbedder: true });
    });

  sub('stats', 'count memories per namespace')
    .action(async (_o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const s = await engine.stats();
        if (g.json) return json(s);
        out(`${s.total} memories, ${s.events} events`);
        for (const n of s.namespaces) out(`  ${n.namespace}: ${n.live} live, ${n.forgotten} forgotten, ${n.superseded} superseded, ${n.expired} expired`);
      }, { withoutEmbedder: true });
    });

  sub('reindex', 're-embed every memory with the configured embedder')
    .action(async (_o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const progress = createProgress('re-embedding');
        const r = await engine.reindex((d, t) => progress.update(d, t));
        progress.finish();
        if (g.json) json(r);
        else out(`re-embedded ${r.reindexed} memories with ${r.embedder.id} (${r.embedder.dimensions} dimensions)`);
      });
    });

  sub('purge-expired', 'delete expired memories for good')
    .option('--all-namespaces', 'purge every namespace')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const n = await engine.purgeExpired({ namespace: g.namespace, all: Boolean(o['allNamespaces']) });
        if (g.json) json({ purged: n });
        else out(`purged ${n} expired memories`);
      }, { withoutEmbedder: true });
    });

  sub('weights', "show or set this namespace's fusion weights")
    .option('--set <w>', 'e.g. vector=0.5,lexical=1,recency=0.1', parseWeights)
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const w = o['set']
          ? await engine.setWeights(o['set'] as Partial<SignalWeights>, { namespace: g.namespace })
          : await engine.getWeights({ namespace: g.namespace });
        if (g.json) json(w);
        else out(`vector ${w.vector}, lexical ${w.lexical}, recency ${w.recency}`);
      }, { withoutEmbedder: true });
    });

  sub('related-terms', "show or set how much related engineering terms count in this namespace's word matching")
    .option('--set <weight>', 'from 0 (off) to 1; the default is 0.5', parseShare)
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const r = o['set'] !== undefined ? await engine.setRelatedTerms(o['set'] as number, { namespace: g.namespace }) : await engine.getRelatedTerms({ namespace: g.namespace });
        if (g.json) json(r);
        else out(r.weight > 0 ? `related terms on, weight ${r.weight}` : 'related terms off');
      }, { withoutEmbedder: true });
    });

  sub('verify', 'replay the whole event log into a scratch store and prove the live state identical')
    .action(async (_o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g, opened) => {
        const { store: scratch, where } = await opened.scratchStore();
        try {
          const r = await engine.verify(scratch);
          if (g.json) json({ ...r, scratch: where });
          else {
            out(`replayed into     ${where}`);
            out(`replayed ${r.events} events in ${r.scopes} scopes (${r.memories} memories), mode ${r.mode}, ${r.replayMs} ms (${r.eventsPerSecond} events/s)`);
            out(`live checksum     ${r.liveChecksum}`);
            out(`replayed checksum ${r.replayedChecksum}`);
            if (r.vectorIndex) out(`vector index      ${r.vectorIndex.status}: ${r.vectorIndex.detail}`);
            for (const gap of r.gaps) out(`GAP in scope ${JSON.stringify(gap.scope)}: missing seq ${gap.missing.slice(0, 20).join(', ')}${gap.missing.length > 20 ? ' …' : ''}`);
            out(r.ok ? 'verified: the live state is byte-identical to a replay of the log' : 'NOT verified: see above');
          }
          if (!r.ok) fail(EXIT_FAILURE);
        } finally {
          await scratch.close();
        }
      }, { withoutEmbedder: true });
    });

  sub('recover', 'rebuild the live state from the newest valid snapshots plus the log (all namespaces unless --namespace)')
    .action(async (_o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const r = await engine.recover(g.namespace ? { namespace: g.namespace } : { all: true });
        if (g.json) return json(r);
        for (const s of r.scopes) {
          const label = s.scope === '' ? '(store)' : s.scope;
          const problem = s.snapshotProblem ? `, snapshot discarded: ${s.snapshotProblem}` : '';
          out(`${label}: ${s.mode}${s.snapshotSeq ? ` from snapshot at seq ${s.snapshotSeq}` : ''}, ${s.eventsReplayed} events replayed${problem}`);
        }
        out(`recovered: ${r.eventsReplayed} events replayed in ${r.ms} ms; checksum ${r.checksum}`);
        for (const gap of r.gaps) out(`GAP in scope ${JSON.stringify(gap.scope)}: missing seq ${gap.missing.slice(0, 20).join(', ')}`);
      }, { withoutEmbedder: true });
    });

  sub('checkpoint', "write a snapshot of this namespace's state (compare-and-swap)")
    .option('--expect-version <n>', 'fail with a conflict unless the current snapshot has this version (0: none)', int('expect-version'))
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const ev = o['expectVersion'] as number | undefined;
        const r = await engine.checkpoint({ namespace: g.namespace, ...(ev === undefined ? {} : { expectedVersion: ev === 0 ? null : ev }) });
        if (g.json) json(r);
        else out(`snapshot version ${r.version} at seq ${r.seq}`);
      }, { withoutEmbedder: true });
    });

  sub('turn', 'commit one conversation turn atomically (turn event + memory item + periodic snapshot)')
    .argument('<text...>', 'the turn text')
    .requiredOption('--session <id>', 'session id')
    .requiredOption('--turn <n>', 'turn number', int('turn'))
    .option('--speaker <name>', 'who spoke')
    .action(async (textParts: string[], o: Record<string, unknown>, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const r = await engine.commitTurn({
          namespace: g.namespace,
          session: o['session'] as string,
          turn: o['turn'] as number,
          text: textParts.join(' '),
          ...(o['speaker'] ? { speaker: o['speaker'] as string } : {}),
        });
        if (g.json) json(r);
        else out(`turn committed | event_seq=${r.eventSeq} | items +${r.itemsAdded} | dedupe update=${r.deduplicated} | snapshot ${r.snapshot ? `v${r.snapshotVersion}` : 'no'}`);
      });
    });

  sub('ingest', 'commit every turn of a conversation file (LoCoMo sample or { "turns": [...] }), one transaction per turn')
    .argument('<file>', 'conversation JSON')
    .action(async (file: string, _o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g) => {
        const conversations = parseConversations(await readJson(file));
        const progress = createProgress('ingesting');
        const r = await engine.ingest(conversations, { namespace: g.namespace, onProgress: (d, t) => progress.update(d, t) });
        progress.finish();
        if (g.json) return json({ conversations: r });
        for (const c of r) out(`${c.conversation} → ${c.namespace}: ${c.turns} turns, ${c.itemsAdded} memories, ${c.snapshots} snapshots`);
      });
    });

  sub('doctor', 'check the installation and the database')
    .action(async (_o: unknown, cmd: Command) => {
      await run(cmd, async (engine, g, opened) => {
        const report = await doctor(engine, opened);
        if ((report['failures'] as string[]).length > 0) fail(EXIT_FAILURE);
        if (g.json) return json(report);
        for (const [k, v] of Object.entries(report)) {
          if (k === 'problems' || k === 'failures') continue;
          out(`${k.padEnd(18)} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
        }
        const problems = report['problems'] as string[];
        out(problems.length ? `problems:\n${problems.map((p) => `  - ${p}`).join('\n')}` : 'problems           none');
      });
    });

  sub('demo', 'watch one session save decisions and a fresh one recall them by paraphrase')
    .option('--keep', 'keep the demo database and print its path')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      const g = cmd.optsWithGlobals() as GlobalOpts;
      await runDemo({ out, dbPath: g.db, keep: Boolean(o['keep']) });
    });

  registerMcpCommands(program, open);
  registerEraseCommands(program, open, out);
  registerQuarantineCommands(program, io, open);
  registerTokenCommands(program, io, open);
  registerMigrateCommand(program, async (location, options) => (await import('../open-engine.js')).openStoreAt(location, options), out);
  registerCodeCommands(program, io, open);
  registerSyncCommand(program, io, open);
  registerInit(program, io);
  registerHookCommand(program, io);
  groupCommands(program);
  program.addHelpText('after', '\nRun cairn <command> --help for the options of one command.');
  return program;
}

/** The groups `cairn --help` lists the commands in, in order. */
const COMMAND_GROUPS: [heading: string, commands: string[]][] = [
  ['Daily use:', ['save', 'search', 'context', 'get', 'list', 'forget', 'restore', 'supersede', 'route', 'follow', 'sync', 'branches', 'scope', 'feedback', 'review', 'import', 'export', 'stats', 'demo']],
  ['Agents and set-up:', ['init', 'mcp', 'hook', 'doctor']],
  ['Team server:', ['serve', 'token', 'quarantine']],
  ['Maintenance and proofs:', ['verify', 'recover', 'checkpoint', 'reindex', 'weights', 'related-terms', 'purge-expired', 'erase', 'verify-certificate', 'migrate', 'turn', 'ingest']],
];

/** Prints a usage error as one line on stderr, pointing at the help of the command it came from. */
function usageError(path: string): (message: string, write: (s: string) => void) => void {
  return (message, write) => write(`cairn: ${message.replace(/^error: /u, '').trim().replace(/\s*\n\s*/gu, ' ')} (run ${path} --help for usage)\n`);
}

/** Sorts the commands into the help's groups (in the groups' order) and gives every command its own usage-error pointer. */
function groupCommands(program: Command): void {
  const byName = new Map(program.commands.map((c) => [c.name(), c]));
  const ordered: Command[] = [];
  for (const [heading, names] of COMMAND_GROUPS) {
    for (const name of names) {
      const command = byName.get(name);
      if (!command) continue;
      command.helpGroup(heading);
      ordered.push(command);
      byName.delete(name);
    }
  }
  // A command no group names still shows, under the last group, rather than vanish from the help.
  for (const command of byName.values()) ordered.push(command.helpGroup(COMMAND_GROUPS[COMMAND_GROUPS.length - 1]![0]));
  (program.commands as Command[]).splice(0, program.commands.length, ...ordered);
  const point = (command: Command, path: string) => {
    command.configureOutput({ ...command.configureOutput(), outputError: usageError(path) });
    for (const child of command.commands) point(child, `${path} ${child.name()}`);
  };
  for (const command of program.commands) point(command, `cairn ${command.name()}`);
}

/** The non-blank lines of a file (what import reports progress in). */
async function countLines(path: string): Promise<number> {
  let n = 0;
  for await (const line of await readLines(path)) if (line.trim() !== '') n++;
  return n;
}

/** "Nothing found" naming the namespace searched, and the other namespaces that hold memories. */
async function nothingIn(engine: Engine, g: GlobalOpts, what: string): Promise<string> {
  const namespace = g.namespace ?? engine.defaultNamespace;
  const namespaces = (await engine.stats()).namespaces;
  const held = namespaces.find((n) => n.namespace === namespace)?.live ?? 0;
  const others = namespaces.filter((n) => n.namespace !== namespace && n.live > 0);
  // Memories here but none cleared the relevance floor: that is "nothing relevant", not "nothing stored".
  const line = held > 0 ? `nothing relevant recalled in namespace ${namespace}: it holds ${held} ${held === 1 ? 'memory' : 'memories'}, none matching well enough` : `${what} in namespace ${namespace}`;
  if (others.length === 0) return line;
  const shown = others.slice(0, 5).map((n) => `${n.namespace} (${n.live})`).join(', ');
  return `${line}\nmemories are held in ${others.length === 1 ? 'another namespace' : `${others.length} other namespaces`}: ${shown}${others.length > 5 ? ', …' : ''}; search one with --namespace <ns>`;
}

/**
 * Doctor's report. `problems` lists everything worth knowing; `failures` the subset that means the
 * installation or the database is broken (a damaged file, an embedder that fails or does not match the
 * vectors, an erasure left unfinished): doctor exits 1 when there is any.
 */
async function doctor(engine: Engine, opened: OpenedEngine): Promise<Record<string, unknown>> {
  const problems: string[] = [];
  const failures: string[] = [];
  const fail = (p: string) => {
    problems.push(p);
    failures.push(p);
  };
  const report = await engine.store.diagnostics();
  for (const f of report.failures) fail(f);
  problems.push(...report.notes);
  for (const e of await engine.store.pendingErasures()) {
    const scope = 'namespace' in e.scope ? `--namespace ${JSON.stringify(e.scope.namespace)}` : '--subject <id>';
    fail(`erasure ${e.id} (started ${e.startedAt}) is unfinished and keeps writers out of its scope: run cairn erase ${scope} again to finish it`);
  }
  const stored = await engine.store.embedder();
  let embedder: Record<string, unknown> = { provider: opened.config.embedder.provider };
  if (engine.embedder) {
    try {
      const t0 = performance.now();
      await engine.embedder.embed(['cairn doctor']);
      embedder = { ...embedder, id: engine.embedder.id, dimensions: engine.embedder.dimensions, loadMs: Math.round(engine.embedder.loadTimeMs() ?? performance.now() - t0), ok: true };
    } catch (err) {
      fail(`embedder failed: ${(err as Error).message}`);
      embedder = { ...embedder, ok: false };
    }
    if (stored && (stored.id !== engine.embedder.id || stored.dimensions !== engine.embedder.dimensions)) {
      fail(`the store holds vectors from ${stored.id}; the configured embedder is ${engine.embedder.id}: run cairn reindex`);
    }
  } else {
    problems.push('no embedder configured: recall uses keywords and recency only');
  }
  const caps = engine.store.capabilities;
  const proof = engine.store.erasureProof;
  if (!proof) problems.push(`no erasure proof: ${engine.store.noErasureProof ?? 'the store offers none'}; cairn erase refuses`);
  const stats = await engine.stats();
  return {
    database: report.location,
    namespace: `${opened.config.namespace} (from ${opened.config.namespaceSource})`,
    configFile: opened.config.configFile ?? 'none',
    backend: report.backend,
    schemaVersion: report.schemaVersion,
    ...report.facts,
    databaseBytes: report.bytes,
    embedder,
    storedEmbedder: stored ?? 'none yet',
    reranker: engine.hasReranker ? opened.config.reranker : 'none',
    ingestFilter: ingestFilterLine(engine),
    anchorCache: await anchorCacheLine(engine),
    redaction: engine.securityStatus().redaction.mode,
    capabilities: caps,
    erasureProof: proof ? proof.method : 'none (cairn erase refuses)',
    memories: stats.total,
    events: stats.events,
    namespaces: stats.namespaces.length,
    problems,
    failures,
  };
}

/** The filter's anchor cache, checked (and rewritten when damaged) only when the filter runs with an embedder. */
async function anchorCacheLine(engine: Engine): Promise<string> {
  if (!engine.securityStatus().filter.active || !engine.embedder) return 'not used';
  const { checkAnchorCache } = await import('../../core/ingest-filter.js');
  return (await checkAnchorCache(engine.store, engine.embedder)) === 'valid' ? 'valid' : 'rebuilt (it was missing, failed its checksum or was made for another catalogue)';
}

function ingestFilterLine(engine: Engine): string {
  const f = engine.securityStatus().filter;
  if (!f.active) return `off (${f.reason})`;
  return `on, threshold ${f.threshold ?? 'calibrated'}, learned ${f.learnedThreshold}${f.deobfuscate ? ', de-obfuscation' : ''}${f.windows ? ', windows' : ''}`;
}

/** An error is one line on stderr even when it quotes input with line breaks. */
function oneLine(message: string): string {
  return message.replace(/\r/gu, '\\r').replace(/\n/gu, '\\n');
}

/** Runs the CLI; resolves to the exit code. Errors become one line on stderr. */
export async function main(argv: string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const open = async (flags: GlobalOpts, opts: { withoutEmbedder?: boolean; longLived?: boolean } = {}) => {
    const { openEngine } = await import('../open-engine.js');
    return openEngine({ db: flags.db, namespace: flags.namespace }, opts);
  };
  const program = buildProgram(io, open);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCodes.get(program) ?? EXIT_OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT_OK;
      return EXIT_INVALID; // commander already printed the message
    }
    const wantsJson = argv.includes('--json');
    if (isCairnError(err)) {
      if (wantsJson) io.stderr.write(`${JSON.stringify({ error: { code: err.code, message: err.message, field: err.field, hint: err.hint } })}\n`);
      else io.stderr.write(`cairn: ${oneLine(err.message)}${err.hint ? ` (${oneLine(err.hint)})` : ''}\n`);
      return err.code === 'INVALID_INPUT' ? EXIT_INVALID : EXIT_FAILURE;
    }
    io.stderr.write(`cairn: unexpected error: ${oneLine((err as Error).message)}\n`);
    if (process.env['CAIRN_DEBUG']) io.stderr.write(`${(err as Error).stack}\n`);
    return EXIT_FAILURE;
  }
}
