/**
 * What `cairn init <agent>` writes for each agent: its MCP configuration (pointing at this installation's bin
 * by absolute path), the memory rules in its instruction file, and for some agents the hooks or plugin that
 * capture before compaction. Each file is marked as one a team commits or one of this machine only. What holds
 * a path of this machine goes where the agent keeps per-machine settings, so the project's shared files stay
 * shareable: for Claude Code the local-scope MCP server in ~/.claude.json and .claude/settings.local.json; for
 * Cursor, Gemini CLI, Codex and OpenCode their user configuration (cairn's server is the same in every project:
 * it takes the namespace from the repository it runs in). A cairn entry an earlier init wrote into a project
 * file is taken back out. Kimi Code's project mcp.json is the exception, listed as this machine's.
 * Planning reads files and returns their new text; writing is the caller's (so `--dry-run` shares every line).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { memoryRulesMarkdown } from '../../core/agent-rules.js';
import { CairnError } from '../../interfaces/errors.js';
import { MARKDOWN_MARKERS, TOML_MARKERS, editJson, type JsonEdit, objectAt, outsideBlock, removeBlock, shellQuote, tomlString, upsertBlock } from './init-edit.js';

export const AGENTS = ['claude', 'opencode', 'kimi', 'codex', 'cursor', 'gemini'] as const;
export type AgentName = (typeof AGENTS)[number];

export function isAgent(name: string): name is AgentName {
  return (AGENTS as readonly string[]).includes(name);
}

export interface InitContext {
  /** The project the agent works in; project-level files are written here. */
  projectDir: string;
  /** Kimi Code's home (`$KIMI_CODE_HOME`, default ~/.kimi-code): its hooks live only in its user config. */
  kimiHome: string;
  /** Claude Code's user file (`$CLAUDE_CONFIG_DIR/.claude.json`, default ~/.claude.json): local-scope MCP servers. */
  claudeConfig: string;
  /** The key Claude Code files this project's local settings under: the git top level, else the project. */
  claudeProject: string;
  /** The user configuration folders of Cursor (~/.cursor), Gemini CLI (~/.gemini), Codex ($CODEX_HOME) and OpenCode ($XDG_CONFIG_HOME/opencode). */
  cursorHome: string;
  geminiHome: string;
  codexHome: string;
  opencodeConfig: string;
  /** The Node.js executable and cairn's bin, both absolute: agents start servers without the user's PATH. */
  node: string;
  bin: string;
  /** A database to pin in the server and hook commands; default: cairn's own default, shared by all agents. */
  db?: string | undefined;
}

export interface PlannedFile {
  /** Absolute path. */
  path: string;
  /** Current text; null when the file does not exist. */
  before: string | null;
  /** Text after init; equal to `before` when nothing changes; null: init removes the file. */
  after: string | null;
  /** What cairn puts in it, for the report. */
  what: string;
  /** `shared`: holds no path of this machine, meant to be committed; `machine`: this machine's only. */
  scope: 'shared' | 'machine';
}

/** The hook events cairn handles, with the names Claude Code and Kimi Code give them. */
const HOOK_EVENTS = [
  { event: 'SessionStart', command: 'session-start', matcher: 'startup|resume|clear|compact', timeout: 30 },
  { event: 'UserPromptSubmit', command: 'user-prompt-submit', timeout: 15 },
  { event: 'PreCompact', command: 'pre-compact', matcher: 'manual|auto', timeout: 60 },
  { event: 'Stop', command: 'stop', timeout: 15 },
] as const;

function read(path: string): string | null {
  return existsSync(path) ? readFileSync(path, 'utf8') : null;
}

function dbArgs(ctx: InitContext): string[] {
  return ctx.db ? ['--db', ctx.db] : [];
}

function serverArgs(ctx: InitContext): string[] {
  return [ctx.bin, 'mcp', ...dbArgs(ctx)];
}

function hookCommand(ctx: InitContext, command: string): string {
  return [ctx.node, ctx.bin, ...dbArgs(ctx), 'hook', command].map(shellQuote).join(' ');
}

/** True for a hook command that cairn wrote, whatever path it used then (so a re-run replaces it). */
function isCairnHook(command: unknown, hook: string): boolean {
  return typeof command === 'string' && new RegExp(`cairn(\\.js|\\.mjs)?'?\\s.*\\bhook ${hook}$`, 'u').test(command);
}

function file(ctx: InitContext, rel: string, what: string, scope: PlannedFile['scope'], edit: (before: string | null, path: string) => string): PlannedFile {
  const path = join(ctx.projectDir, rel);
  const before = read(path);
  return { path, before, after: edit(before, rel), what, scope };
}

function rules(ctx: InitContext, rel: string, header = ''): PlannedFile {
  return file(ctx, rel, 'memory rules between cairn markers', 'shared', (before, name) => upsertBlock(before === null && header ? header : before, memoryRulesMarkdown(), MARKDOWN_MARKERS, name));
}

/** A file of this machine outside the project (an agent's user configuration). */
function userFile(path: string, what: string, edit: (before: string | null, path: string) => string): PlannedFile {
  const before = read(path);
  return { path, before, after: edit(before, path), what, scope: 'machine' };
}

/** `mcpServers.cairn` in the `{ "mcpServers": { … } }` shape Kimi Code, Cursor and Gemini CLI share. */
function mcpServersEdit(entry: Record<string, unknown>): (before: string | null, name: string) => string {
  return (before, name) =>
    editJson(before, name, (root) => {
      objectAt(root, 'mcpServers', name);
      return [[['mcpServers', 'cairn'], entry]];
    });
}

/** Claude Code's local-scope server: `projects[<project>].mcpServers.cairn` in its user file, as `claude mcp add --scope local` writes it. */
function claudeLocalServer(ctx: InitContext): PlannedFile {
  const entry = { type: 'stdio', command: ctx.node, args: serverArgs(ctx), env: {} };
  return userFile(ctx.claudeConfig, 'MCP server "cairn", local scope: private to you in this project', (before, path) =>
    editJson(before, path, (root) => {
      const project = objectAt(objectAt(root, 'projects', path), ctx.claudeProject, path);
      objectAt(project, 'mcpServers', path);
      return [[['projects', ctx.claudeProject, 'mcpServers', 'cairn'], entry]];
    }),
  );
}

/** True for a server entry an earlier `cairn init` wrote: it starts a cairn bin by absolute path (`args`, or OpenCode's `command` list). */
function isCairnServer(entry: unknown): boolean {
  const e = entry as { args?: unknown; command?: unknown } | null;
  const args = Array.isArray(e?.args) ? e.args : Array.isArray(e?.command) ? e.command.slice(1) : null;
  return Array.isArray(args) && typeof args[0] === 'string' && /^\/.*\bcairn(\.js|\.mjs)?$/u.test(args[0]) && args.includes('mcp');
}

/** Takes the `cairn` entry an earlier `cairn init` put in a project file at `at` back out (a server of the user's stays). */
function withoutOldServer(ctx: InitContext, rel: string, at: [string, string]): PlannedFile[] {
  if (read(join(ctx.projectDir, rel)) === null) return [];
  return [
    file(ctx, rel, 'no cairn entry: its paths are this machine\'s', 'shared', (before, name) =>
      editJson(before, name, (root) => {
        const servers = objectAt(root, at[0], name);
        return isCairnServer(servers[at[1]]) ? [[at, undefined]] : [];
      }),
    ),
  ];
}

function isCairnGroup(group: unknown, hook: string): boolean {
  const handlers = (group as { hooks?: unknown } | null)?.hooks;
  return Array.isArray(handlers) && handlers.some((x: unknown) => isCairnHook((x as { command?: unknown } | null)?.command, hook));
}

function hookGroups(hooks: Record<string, unknown>, event: string, name: string): unknown[] {
  const groups = hooks[event] ?? [];
  if (!Array.isArray(groups)) throw new CairnError('INVALID_INPUT', `${name}: hooks.${event} must be a list`, { field: 'file' });
  return groups;
}

function claudeHooks(ctx: InitContext): PlannedFile {
  return file(ctx, join('.claude', 'settings.local.json'), 'hooks: SessionStart, UserPromptSubmit, PreCompact, Stop → cairn hook', 'machine', (before, name) =>
    editJson(before, name, (root) => {
      const hooks = objectAt(root, 'hooks', name);
      return HOOK_EVENTS.map((h): JsonEdit => {
        const group = { ...('matcher' in h ? { matcher: h.matcher } : {}), hooks: [{ type: 'command', command: hookCommand(ctx, h.command), timeout: h.timeout }] };
        const ours = hookGroups(hooks, h.event, name).findIndex((g) => isCairnGroup(g, h.command));
        return [['hooks', h.event, ours], group];
      });
    }),
  );
}

/** Takes the hooks an earlier `cairn init` put in the shared .claude/settings.json back out (the user's stay). */
function claudeSharedHooks(ctx: InitContext): PlannedFile[] {
  const rel = join('.claude', 'settings.json');
  if (read(join(ctx.projectDir, rel)) === null) return [];
  return [
    file(ctx, rel, 'no cairn hooks: their paths are this machine\'s', 'shared', (before, name) =>
      editJson(before, name, (root) => {
        const hooks = objectAt(root, 'hooks', name);
        const edits: JsonEdit[] = [];
        let emptied = 0;
        for (const h of HOOK_EVENTS) {
          const groups = hookGroups(hooks, h.event, name);
          const ours = groups.flatMap((g, i) => (isCairnGroup(g, h.command) ? [i] : []));
          if (ours.length === 0) continue;
          if (ours.length === groups.length) {
            emptied++;
            edits.push([['hooks', h.event], undefined]);
          } else {
            // From the last, so each index still points at its group when its turn comes.
            for (const i of ours.reverse()) edits.push([['hooks', h.event, i], undefined]);
          }
        }
        return emptied > 0 && emptied === Object.keys(hooks).length ? [[['hooks'], undefined]] : edits;
      }),
    ),
  ];
}

/** opencode.json or opencode.jsonc in `dir`: the one that exists (OpenCode reads either). */
function openCodeFile(dir: string): string {
  return !existsSync(join(dir, 'opencode.json')) && existsSync(join(dir, 'opencode.jsonc')) ? 'opencode.jsonc' : 'opencode.json';
}

function openCodeConfig(ctx: InitContext): PlannedFile {
  return userFile(join(ctx.opencodeConfig, openCodeFile(ctx.opencodeConfig)), 'MCP server "cairn" in the mcp block (user config)', (before, name) =>
    editJson(before, name, (root) => {
      objectAt(root, 'mcp', name);
      const cairn: JsonEdit = [['mcp', 'cairn'], { type: 'local', command: [ctx.node, ...serverArgs(ctx)], enabled: true }];
      return before === null ? [[['$schema'], 'https://opencode.ai/config.json'], cairn] : [cairn];
    }),
  );
}

const GENERATED = '// Generated by `cairn init opencode`';

/** The OpenCode plugin (V1 hooks object, see opencode.ai/docs/plugins), a global one: capture before compaction. */
function openCodePlugin(ctx: InitContext): PlannedFile {
  const cairn = JSON.stringify([ctx.node, ctx.bin, ...dbArgs(ctx)]);
  const text = `${GENERATED}; run it again to update this file, delete it to remove.
// Before OpenCode compacts a session, the conversation so far is handed to \`cairn hook pre-compact\` (as a
// Claude Code style transcript), so what was decided survives the compaction.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CAIRN = ${cairn};

function hook(event, payload, cwd) {
  return new Promise((resolve) => {
    const child = spawn(CAIRN[0], [...CAIRN.slice(1), 'hook', event], { cwd, stdio: ['pipe', 'ignore', 'ignore'] });
    const timer = setTimeout(() => child.kill(), 60_000);
    child.on('error', resolve);
    child.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

async function writeTranscript(client, sessionID, dir) {
  try {
    const response = await client.session.messages({ path: { id: sessionID } });
    const lines = [];
    for (const m of response?.data ?? []) {
      const role = m?.info?.role;
      if (role !== 'user' && role !== 'assistant') continue;
      const text = (m.parts ?? []).filter((p) => p?.type === 'text' && !p.synthetic && p.text).map((p) => p.text).join('\\n');
      if (!text) continue;
      const timestamp = new Date(m.info.time?.created ?? Date.now()).toISOString();
      lines.push(JSON.stringify({ type: role, sessionId: sessionID, timestamp, message: { role, content: [{ type: 'text', text }] } }));
    }
    const path = join(dir, 'transcript.jsonl');
    writeFileSync(path, lines.length ? \`\${lines.join('\\n')}\\n\` : '');
    return path;
  } catch {
    return undefined;
  }
}

export const CairnMemory = async ({ client, directory }) => ({
  'experimental.session.compacting': async (input) => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-opencode-'));
    try {
      const transcript_path = await writeTranscript(client, input.sessionID, dir);
      await hook('pre-compact', { session_id: input.sessionID, transcript_path, cwd: directory, hook_event_name: 'PreCompact', trigger: 'auto', agent: 'opencode' }, directory);
    } catch {
      // Memory capture must never break compaction.
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
});
`;
  return userFile(join(ctx.opencodeConfig, 'plugins', 'cairn.js'), 'plugin: capture before compaction → cairn hook pre-compact (user config)', (before, name) => {
    if (before !== null && !before.startsWith(GENERATED)) {
      throw new CairnError('INVALID_INPUT', `${name} exists and was not written by cairn init; move it away to let cairn write its plugin there`, { field: 'file' });
    }
    return before === text ? before : text;
  });
}

/** The project plugin an earlier `cairn init opencode` wrote (it held this machine's paths): removed, the global one replaces it. */
function openCodeOldPlugin(ctx: InitContext): PlannedFile[] {
  const path = join(ctx.projectDir, '.opencode', 'plugins', 'cairn.js');
  const before = read(path);
  if (before === null || !before.startsWith(GENERATED)) return [];
  return [{ path, before, after: null, what: 'removed: the plugin now lives in the user config', scope: 'shared' }];
}

/** Kimi Code's `[[hooks]]` live in its user config only (not per project). */
function kimiHooks(ctx: InitContext): PlannedFile {
  const path = join(ctx.kimiHome, 'config.toml');
  const before = read(path);
  const events = HOOK_EVENTS.filter((h) => h.event !== 'SessionStart'); // Kimi does not inject SessionStart output
  const body = events.flatMap((h) => ['[[hooks]]', `event = ${tomlString(h.event)}`, `command = ${tomlString(hookCommand(ctx, h.command))}`, `timeout = ${h.timeout}`, '']).slice(0, -1).join('\n');
  return { path, before, after: upsertBlock(before, body, TOML_MARKERS, path), what: `[[hooks]] ${events.map((h) => h.event).join(', ')} → cairn hook (user config)`, scope: 'machine' };
}

/** Takes the block an earlier `cairn init codex` put in the project's .codex/config.toml back out. */
function codexProjectBlock(ctx: InitContext): PlannedFile[] {
  const rel = join('.codex', 'config.toml');
  if (read(join(ctx.projectDir, rel)) === null) return [];
  return [file(ctx, rel, "no cairn block: its paths are this machine's", 'shared', (before, name) => removeBlock(before ?? '', TOML_MARKERS, name))];
}

function codexConfig(ctx: InitContext): PlannedFile {
  return userFile(join(ctx.codexHome, 'config.toml'), '[mcp_servers.cairn] between cairn markers (user config)', (before, name) => {
    // A [mcp_servers.cairn] table the user wrote stays theirs: a second one would make the file invalid.
    if (before !== null && /^\s*\[\s*mcp_servers\s*\.\s*(?:cairn|"cairn")\s*\]/mu.test(outsideBlock(before, TOML_MARKERS, name))) {
      throw new CairnError('INVALID_INPUT', `${name} already defines [mcp_servers.cairn] outside cairn's markers; remove it to let cairn init manage it, or keep editing it by hand`, { field: 'file' });
    }
    const body = ['[mcp_servers.cairn]', `command = ${tomlString(ctx.node)}`, `args = [${serverArgs(ctx).map(tomlString).join(', ')}]`].join('\n');
    return upsertBlock(before, body, TOML_MARKERS, name);
  });
}

const CURSOR_RULE_HEADER = `---
description: cairn memory - look up before exploring, store what was learned after each action
alwaysApply: true
---
`;

/** Plans every file `cairn init <agent>` writes. Throws INVALID_INPUT for an unknown agent. */
export function planInit(agent: string, ctx: InitContext): PlannedFile[] {
  if (!isAgent(agent)) throw new CairnError('INVALID_INPUT', `unknown agent "${agent}": choose one of ${AGENTS.join(', ')}`, { field: 'agent' });
  const stdio = { command: ctx.node, args: serverArgs(ctx) };
  switch (agent) {
    case 'claude':
      return [claudeLocalServer(ctx), claudeHooks(ctx), ...withoutOldServer(ctx, '.mcp.json', ['mcpServers', 'cairn']), ...claudeSharedHooks(ctx), rules(ctx, 'CLAUDE.md')];
    case 'opencode':
      return [openCodeConfig(ctx), openCodePlugin(ctx), ...withoutOldServer(ctx, openCodeFile(ctx.projectDir), ['mcp', 'cairn']), ...openCodeOldPlugin(ctx), rules(ctx, 'AGENTS.md')];
    case 'kimi':
      // Kimi Code reads its MCP servers from the project: this one file holds this machine's paths.
      return [file(ctx, join('.kimi-code', 'mcp.json'), 'MCP server "cairn"', 'machine', mcpServersEdit(stdio)), rules(ctx, 'AGENTS.md'), kimiHooks(ctx)];
    case 'codex':
      return [codexConfig(ctx), ...codexProjectBlock(ctx), rules(ctx, 'AGENTS.md')];
    case 'cursor':
      return [
        userFile(join(ctx.cursorHome, 'mcp.json'), 'MCP server "cairn" (user config)', mcpServersEdit(stdio)),
        ...withoutOldServer(ctx, join('.cursor', 'mcp.json'), ['mcpServers', 'cairn']),
        rules(ctx, join('.cursor', 'rules', 'cairn.mdc'), CURSOR_RULE_HEADER),
      ];
    case 'gemini':
      return [
        userFile(join(ctx.geminiHome, 'settings.json'), 'MCP server "cairn" (user config)', mcpServersEdit(stdio)),
        ...withoutOldServer(ctx, join('.gemini', 'settings.json'), ['mcpServers', 'cairn']),
        rules(ctx, 'GEMINI.md'),
      ];
  }
}

/** A path for the report: relative to the project when inside it. */
export function displayPath(ctx: InitContext, path: string): string {
  const rel = relative(ctx.projectDir, path);
  return rel.startsWith('..') ? path : rel;
}
