/**
 * `cairn init <agent>`: connects an agent to cairn in the current project — its MCP configuration, the memory
 * rules in its instruction file, and its capture hooks or plugin where it has them. Idempotent (a second
 * run changes no byte), never touches what the user wrote outside cairn's own key or marked block, and
 * `--dry-run` prints the diff without writing.
 */
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { unifiedDiff } from './init-edit.js';
import { AGENTS, displayPath, planInit, type InitContext, type PlannedFile } from './init-targets.js';

interface InitIo {
  stdout: NodeJS.WritableStream;
}

/** This installation's bin (dist/src/surfaces/cli/init.js → bin/cairn.js). */
function cairnBin(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'bin', 'cairn.js');
}

/** Writes through a temp file and a rename, so an agent never reads half a config; keeps the file's mode (~/.claude.json is 0600). */
function writeAtomically(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.cairn-${process.pid}.tmp`;
  writeFileSync(tmp, text);
  if (existsSync(path)) chmodSync(tmp, statSync(path).mode & 0o7777);
  renameSync(tmp, path);
}

const SCOPE_HEADING: Record<PlannedFile['scope'], string> = {
  shared: 'to commit (no path of this machine in them):',
  machine: 'this machine only (they hold paths of this machine; keep them out of git):',
};

function action(f: PlannedFile): 'created' | 'updated' | 'removed' | 'unchanged' {
  return f.before === null ? 'created' : f.before === f.after ? 'unchanged' : f.after === null ? 'removed' : 'updated';
}

/** Registers `cairn init` on the program. */
export function registerInit(program: Command, io: InitIo): void {
  program
    .command('init')
    .description(`connect an agent to cairn in this project: MCP config, memory rules, hooks (${AGENTS.join(', ')})`)
    .argument('<agent>', AGENTS.join(' | '))
    .option('--dir <path>', 'project directory (default: the current directory)')
    .option('--db <path>', 'pin this database in the configuration (default: cairn’s default database, shared by every agent)')
    .option('--dry-run', 'print the changes as a diff and write nothing')
    .option('--json', 'print JSON')
    .action(async (agent: string, o: { dir?: string; db?: string; dryRun?: boolean; json?: boolean }, cmd: Command) => {
      // Loaded here, not at startup: open-engine pulls in zod and the SQLite driver, which every other
      // command would otherwise pay for.
      const { agentHomes, gitTopLevel } = await import('../open-engine.js');
      const globals = cmd.optsWithGlobals() as { db?: string; json?: boolean };
      const db = o.db ?? globals.db;
      const projectDir = resolve(o.dir ?? '.');
      const homes = agentHomes();
      const ctx: InitContext = {
        projectDir,
        kimiHome: homes.kimiHome,
        claudeConfig: homes.claudeConfig,
        cursorHome: homes.cursorHome,
        geminiHome: homes.geminiHome,
        codexHome: homes.codexHome,
        opencodeConfig: homes.opencodeConfig,
        claudeProject: gitTopLevel(projectDir) ?? projectDir,
        node: process.execPath,
        bin: cairnBin(),
        db: db ? resolve(db) : undefined,
      };
      const files = planInit(agent, ctx);
      const out = (s: string) => io.stdout.write(s);
      if (!o.dryRun) for (const f of files) if (f.before !== f.after) f.after === null ? rmSync(f.path, { force: true }) : writeAtomically(f.path, f.after);
      if (o.json || globals.json) {
        const report = files.map((f) => ({ path: f.path, action: action(f), what: f.what, scope: f.scope, ...(o.dryRun && f.before !== f.after ? { diff: unifiedDiff(displayPath(ctx, f.path), f.before, f.after ?? '') } : {}) }));
        out(`${JSON.stringify({ agent, dryRun: Boolean(o.dryRun), projectDir: ctx.projectDir, files: report }, null, 2)}\n`);
        return;
      }
      for (const scope of ['shared', 'machine'] as const) {
        const group = files.filter((f) => f.scope === scope);
        if (group.length === 0) continue;
        out(`${SCOPE_HEADING[scope]}\n`);
        for (const f of group) {
          const verb = o.dryRun && action(f) !== 'unchanged' ? `would be ${action(f)}` : action(f);
          out(`  ${verb.padEnd(16)} ${displayPath(ctx, f.path)}  (${f.what})\n`);
        }
      }
      if (o.dryRun) {
        for (const f of files) if (f.before !== f.after) out(`\n${unifiedDiff(displayPath(ctx, f.path), f.before, f.after ?? '')}`);
        out('\ndry run: nothing was written\n');
      } else if (files.every((f) => f.before === f.after)) {
        out(`${agent} is already set up for cairn here\n`);
      }
    });
}
