/**
 * End-to-end tests of `cairn init <agent>`: the real bin writes each agent's MCP configuration, rules and
 * hooks into a temp project that already holds the user's own content, keeps that content, changes no byte
 * on a second run, and writes nothing with --dry-run.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse as parseSmolToml } from 'smol-toml';
import { MEMORY_RULES, memoryRulesMarkdown } from '../../src/core/agent-rules.js';

// dist/test/e2e/init.test.js → repository root
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = join(ROOT, 'bin', 'cairn.js');
const NODE = process.execPath;
const BEGIN = '<!-- cairn:begin';
const END = '<!-- cairn:end -->';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let sandbox: string;

function cairn(args: string[], options: { cwd: string; home: string; env?: Record<string, string> }): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const env = { PATH: process.env['PATH'] ?? '', HOME: options.home, XDG_CONFIG_HOME: join(options.home, '.config'), ...options.env };
    const child = spawn(NODE, [BIN, ...args], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

async function ok(args: string[], options: { cwd: string; home: string; env?: Record<string, string> }): Promise<string> {
  const r = await cairn(args, options);
  assert.equal(r.code, 0, `cairn ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  assert.equal(r.stderr, '', `cairn ${args.join(' ')} wrote to stderr`);
  return r.stdout;
}

/** Every file under `dir` with its bytes, to compare whole trees. */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else files.set(relative(dir, p), readFileSync(p, 'latin1'));
    }
  };
  if (existsSync(dir)) walk(dir);
  return files;
}

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const read = (path: string) => readFileSync(path, 'utf8');
/** TOML as plain objects (the parser's tables have no prototype). */
const parseToml = (text: string) => JSON.parse(JSON.stringify(parseSmolToml(text))) as Record<string, any>;
const json = (path: string) => JSON.parse(read(path)) as Record<string, any>;

/** The text between cairn's markers, asserting there is exactly one block. */
function block(path: string): string {
  const text = read(path);
  assert.equal(text.split(BEGIN).length - 1, 1, `${path}: one begin marker`);
  assert.equal(text.split(END).length - 1, 1, `${path}: one end marker`);
  return text.slice(text.indexOf('\n', text.indexOf(BEGIN)) + 1, text.indexOf(END)).trimEnd();
}

const USER_MD = '# Shop\n\nUse pnpm, never npm.\nTests: `pnpm test`.\n';
const USER_SERVER = { command: 'npx', args: ['-y', '@acme/other-mcp'], env: { TOKEN: 'x' } };
const PROJECT_OPENCODE = '{\n  "$schema": "https://opencode.ai/config.json",\n  "instructions": ["docs/style.md"]\n}\n';
const PROJECT_CODEX = 'approval_policy = "on-request"\n';

interface Case {
  /** Writes the user's own content into the project (and Kimi's home). */
  seed(project: string, home: string): void;
  /** Checks what init wrote and that the user's content survived. */
  check(project: string, home: string): void;
}

function assertServer(entry: any, shape: 'claude' | 'plain'): void {
  assert.ok(entry, 'the cairn server entry exists');
  if (shape === 'claude') assert.equal(entry.type, 'stdio');
  assert.equal(entry.command, NODE);
  assert.deepEqual(entry.args, [BIN, 'mcp']);
}

function assertRules(path: string, userText: string | null): void {
  assert.equal(block(path), memoryRulesMarkdown(), `${path}: the rules between the markers`);
  for (const rule of MEMORY_RULES) assert.ok(read(path).includes(rule));
  if (userText !== null) assert.ok(read(path).startsWith(userText), `${path}: the user's text is kept as it was, before cairn's block`);
}

const CASES: Record<string, Case> = {
  claude: {
    seed(p) {
      write(join(p, 'CLAUDE.md'), USER_MD);
      write(join(p, '.mcp.json'), `${JSON.stringify({ mcpServers: { other: USER_SERVER } }, null, 2)}\n`);
      write(join(p, '.claude', 'settings.json'), `${JSON.stringify({ permissions: { allow: ['Bash(pnpm test)'] }, hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo mine' }] }] } }, null, 2)}\n`);
    },
    check(p, home) {
      // The files a team commits hold no path of this machine: not the node, the bin or the project.
      for (const shared of ['.mcp.json', join('.claude', 'settings.json'), 'CLAUDE.md']) {
        const text = read(join(p, shared));
        for (const machinePath of [NODE, BIN, p]) assert.ok(!text.includes(machinePath), `${shared} holds ${machinePath}`);
      }
      assert.deepEqual(json(join(p, '.mcp.json')), { mcpServers: { other: USER_SERVER } }, '.mcp.json is the user\'s, unchanged');
      assert.deepEqual(json(join(p, '.claude', 'settings.json')), { permissions: { allow: ['Bash(pnpm test)'] }, hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo mine' }] }] } });
      // The per-machine parts: Claude Code's local-scope server and its local settings.
      const local = json(join(home, '.claude.json'));
      assertServer(local['projects'][p].mcpServers.cairn, 'claude');
      const settings = json(join(p, '.claude', 'settings.local.json'));
      const commands = (event: string) => (settings['hooks'][event] as any[]).flatMap((g) => g.hooks.map((h: any) => h.command as string));
      assert.deepEqual(commands('Stop'), [`${NODE} ${BIN} hook stop`]);
      assert.deepEqual(commands('PreCompact'), [`${NODE} ${BIN} hook pre-compact`]);
      assert.equal(settings['hooks'].PreCompact[0].matcher, 'manual|auto');
      assert.deepEqual(commands('SessionStart'), [`${NODE} ${BIN} hook session-start`]);
      assert.deepEqual(commands('UserPromptSubmit'), [`${NODE} ${BIN} hook user-prompt-submit`]);
      assertRules(join(p, 'CLAUDE.md'), USER_MD);
    },
  },
  opencode: {
    seed(p, home) {
      write(join(p, 'AGENTS.md'), USER_MD);
      write(join(p, 'opencode.json'), PROJECT_OPENCODE);
      // JSONC with a comment and the user's own layout: both must survive.
      write(join(home, '.config', 'opencode', 'opencode.json'), '{\n  // my model\n  "model": "anthropic/claude-sonnet-4",\n  "mcp": {\n    "other": { "type": "remote", "url": "http://127.0.0.1:9/mcp" }\n  }\n}\n');
    },
    check(p, home) {
      assert.equal(read(join(p, 'opencode.json')), PROJECT_OPENCODE, "the project's own opencode.json is left as it was");
      const text = read(join(home, '.config', 'opencode', 'opencode.json'));
      assert.ok(text.includes('// my model'), 'the comment is kept');
      assert.ok(text.includes('"other": { "type": "remote", "url": "http://127.0.0.1:9/mcp" }'), "the user's entry keeps its layout");
      const config = JSON.parse(text.replace('// my model', '')) as Record<string, any>;
      assert.equal(config['model'], 'anthropic/claude-sonnet-4');
      assert.deepEqual(config['mcp'].cairn, { type: 'local', command: [NODE, BIN, 'mcp'], enabled: true });
      assertRules(join(p, 'AGENTS.md'), USER_MD);
      const plugin = read(join(home, '.config', 'opencode', 'plugins', 'cairn.js'));
      assert.ok(plugin.includes("'experimental.session.compacting'"));
      assert.ok(plugin.includes(JSON.stringify([NODE, BIN])), 'the plugin calls this installation');
      assert.equal(existsSync(join(p, '.opencode')), false, 'nothing of this machine in the project');
    },
  },
  kimi: {
    seed(p, home) {
      write(join(p, 'AGENTS.md'), USER_MD);
      write(join(p, '.kimi-code', 'mcp.json'), `${JSON.stringify({ mcpServers: { other: USER_SERVER } }, null, 2)}\n`);
      write(join(home, '.kimi-code', 'config.toml'), 'default_model = "kimi-k2"\n\n[[hooks]]\nevent = "Stop"\ncommand = "echo mine"\n');
    },
    check(p, home) {
      const mcp = json(join(p, '.kimi-code', 'mcp.json'));
      assert.deepEqual(mcp['mcpServers'].other, USER_SERVER);
      assertServer(mcp['mcpServers'].cairn, 'plain');
      assertRules(join(p, 'AGENTS.md'), USER_MD);
      const config = parseToml(read(join(home, '.kimi-code', 'config.toml')));
      assert.equal(config['default_model'], 'kimi-k2');
      const hooks = config['hooks'] as { event: string; command: string; timeout?: number }[];
      assert.deepEqual(hooks[0], { event: 'Stop', command: 'echo mine' });
      assert.deepEqual(
        hooks.slice(1).map((h) => [h.event, h.command]),
        [
          ['UserPromptSubmit', `${NODE} ${BIN} hook user-prompt-submit`],
          ['PreCompact', `${NODE} ${BIN} hook pre-compact`],
          ['Stop', `${NODE} ${BIN} hook stop`],
        ],
      );
      for (const h of hooks) assert.deepEqual(Object.keys(h).filter((k) => !['event', 'command', 'matcher', 'timeout'].includes(k)), [], 'Kimi accepts only four keys');
    },
  },
  codex: {
    seed(p, home) {
      write(join(p, 'AGENTS.md'), USER_MD);
      write(join(p, '.codex', 'config.toml'), PROJECT_CODEX);
      write(join(home, '.codex', 'config.toml'), 'model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "npx"\nargs = ["-y", "@acme/other-mcp"]\n');
    },
    check(p, home) {
      assert.equal(read(join(p, '.codex', 'config.toml')), PROJECT_CODEX, "the project's own Codex config is left as it was");
      const text = read(join(home, '.codex', 'config.toml'));
      assert.ok(text.startsWith('model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "npx"\n'), "the user's text is kept");
      const config = parseToml(text);
      assert.equal(config['model'], 'gpt-5');
      assert.deepEqual(config['mcp_servers'].other, { command: 'npx', args: ['-y', '@acme/other-mcp'] });
      assert.deepEqual(config['mcp_servers'].cairn, { command: NODE, args: [BIN, 'mcp'] });
      assertRules(join(p, 'AGENTS.md'), USER_MD);
    },
  },
  cursor: {
    seed(p, home) {
      write(join(p, '.cursor', 'mcp.json'), `${JSON.stringify({ mcpServers: { team: USER_SERVER } }, null, 2)}\n`);
      write(join(home, '.cursor', 'mcp.json'), `${JSON.stringify({ mcpServers: { other: USER_SERVER } }, null, 2)}\n`);
      write(join(p, '.cursor', 'rules', 'style.mdc'), '---\nalwaysApply: true\n---\nTabs, not spaces.\n');
    },
    check(p, home) {
      assert.deepEqual(json(join(p, '.cursor', 'mcp.json')), { mcpServers: { team: USER_SERVER } }, "the project's servers are left as they were");
      const mcp = json(join(home, '.cursor', 'mcp.json'));
      assert.deepEqual(mcp['mcpServers'].other, USER_SERVER);
      assertServer(mcp['mcpServers'].cairn, 'plain');
      assert.equal(read(join(p, '.cursor', 'rules', 'style.mdc')), '---\nalwaysApply: true\n---\nTabs, not spaces.\n');
      const rule = join(p, '.cursor', 'rules', 'cairn.mdc');
      assert.match(read(rule), /^---\ndescription: .+\nalwaysApply: true\n---\n/u, 'a rule Cursor always applies');
      assertRules(rule, null);
    },
  },
  gemini: {
    seed(p, home) {
      write(join(p, 'GEMINI.md'), USER_MD);
      write(join(p, '.gemini', 'settings.json'), `${JSON.stringify({ contextFileName: 'GEMINI.md' }, null, 2)}\n`);
      write(join(home, '.gemini', 'settings.json'), `${JSON.stringify({ theme: 'GitHub', mcpServers: { other: USER_SERVER } }, null, 2)}\n`);
    },
    check(p, home) {
      assert.deepEqual(json(join(p, '.gemini', 'settings.json')), { contextFileName: 'GEMINI.md' });
      const settings = json(join(home, '.gemini', 'settings.json'));
      assert.equal(settings['theme'], 'GitHub');
      assert.deepEqual(settings['mcpServers'].other, USER_SERVER);
      assertServer(settings['mcpServers'].cairn, 'plain');
      assertRules(join(p, 'GEMINI.md'), USER_MD);
    },
  },
};

let counter = 0;
function project(): { project: string; home: string } {
  const base = join(sandbox, `p${++counter}`);
  const dirs = { project: join(base, 'project'), home: join(base, 'home') };
  mkdirSync(dirs.project, { recursive: true });
  mkdirSync(dirs.home, { recursive: true });
  return dirs;
}

describe('cairn init <agent>', () => {
  before(() => {
    sandbox = mkdtempSync(join(tmpdir(), 'cairn-init-'));
  });
  after(() => rmSync(sandbox, { recursive: true, force: true }));

  for (const [agent, c] of Object.entries(CASES)) {
    it(`${agent}: writes config and rules, keeps the user's content, a second run changes nothing`, async () => {
      const { project: p, home } = project();
      c.seed(p, home);
      const first = await ok(['init', agent], { cwd: p, home });
      assert.match(first, /created|updated/u);
      c.check(p, home);
      const afterFirst = snapshot(dirname(p));
      const second = await ok(['init', agent], { cwd: p, home });
      assert.deepEqual(snapshot(dirname(p)), afterFirst, 'a second run changes no byte');
      assert.doesNotMatch(second, /created|updated/u);
      assert.match(second, /already set up/u);
    });

    it(`${agent}: --dry-run shows the change and writes nothing`, async () => {
      const { project: p, home } = project();
      c.seed(p, home);
      const before = snapshot(dirname(p));
      const out = await ok(['init', agent, '--dry-run'], { cwd: p, home });
      assert.deepEqual(snapshot(dirname(p)), before, 'nothing was written');
      assert.match(out, /^\+\+\+ b\//mu, 'a diff of each file');
      assert.ok(out.includes(`+${MEMORY_RULES[0]!.slice(0, 20)}`) || out.includes(MEMORY_RULES[0]!.slice(0, 20)), 'the rules appear in the diff');
      assert.match(out, /dry run: nothing was written/u);
      // The dry run shows exactly what the real run then writes.
      const json = JSON.parse(await ok(['init', agent, '--dry-run', '--json'], { cwd: p, home })) as { files: { path: string; action: string; diff?: string }[] };
      await ok(['init', agent], { cwd: p, home });
      for (const f of json.files) assert.equal(f.action === 'unchanged', f.diff === undefined, `${f.path}: a diff exactly when it changes`);
      c.check(p, home);
    });
  }

  it('works in an empty project, and the agents that share AGENTS.md share one block', async () => {
    const { project: p, home } = project();
    for (const agent of ['opencode', 'kimi', 'codex']) await ok(['init', agent], { cwd: p, home });
    assert.equal(read(join(p, 'AGENTS.md')), `${BEGIN} (managed by \`cairn init\`: it replaces what is between these two lines) -->\n${memoryRulesMarkdown()}\n${END}\n`);
    const config = JSON.parse(read(join(home, '.config', 'opencode', 'opencode.json'))) as Record<string, unknown>;
    assert.equal(config['$schema'], 'https://opencode.ai/config.json');
  });

  it('replaces only what is between the markers, and --db is pinned as an absolute path', async () => {
    const { project: p, home } = project();
    write(join(p, 'GEMINI.md'), `${USER_MD}\n${BEGIN} -->\nan old rule\n${END}\n\n## After\n\nMore of the user's text.\n`);
    await ok(['init', 'gemini', '--db', 'data/mem.db'], { cwd: p, home });
    const text = read(join(p, 'GEMINI.md'));
    assert.ok(text.startsWith(`${USER_MD}\n${BEGIN}`));
    assert.ok(text.endsWith(`${END}\n\n## After\n\nMore of the user's text.\n`));
    assert.equal(block(join(p, 'GEMINI.md')), memoryRulesMarkdown());
    assert.deepEqual(json(join(home, '.gemini', 'settings.json'))['mcpServers'].cairn.args, [BIN, 'mcp', '--db', join(p, 'data', 'mem.db')]);
  });

  it('refuses what it cannot merge safely and leaves the file as it was', async () => {
    const { project: p, home } = project();
    const broken = `${USER_MD}${BEGIN} -->\nno end marker\n`;
    write(join(p, 'CLAUDE.md'), broken);
    const r = await cairn(['init', 'claude'], { cwd: p, home });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /CLAUDE\.md: cairn's markers .* are unbalanced/u);
    assert.equal(read(join(p, 'CLAUDE.md')), broken);
    assert.equal(existsSync(join(p, '.claude', 'settings.local.json')), false, 'nothing is written when one file cannot be merged');
    assert.equal(existsSync(join(home, '.claude.json')), false);

    write(join(p, '.cursor', 'mcp.json'), '{ "mcpServers": { "other": } }');
    const bad = await cairn(['init', 'cursor'], { cwd: p, home });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /\.cursor\/mcp\.json is not valid JSON/u);

    write(join(home, '.codex', 'config.toml'), '[mcp_servers.cairn]\ncommand = "my-own-cairn"\n');
    const own = await cairn(['init', 'codex'], { cwd: p, home });
    assert.equal(own.code, 2);
    assert.match(own.stderr, /already defines \[mcp_servers\.cairn\]/u);
  });

  it('claude: says which files to commit and which are this machine\'s, and keeps ~/.claude.json\'s other settings and mode', async () => {
    const { project: p, home } = project();
    write(join(home, '.claude.json'), `${JSON.stringify({ theme: 'dark', projects: { '/elsewhere': { mcpServers: { x: USER_SERVER } } } }, null, 2)}\n`);
    chmodSync(join(home, '.claude.json'), 0o600);
    const out = await ok(['init', 'claude'], { cwd: p, home });
    const [shared, machine] = out.split(/^this machine only/mu);
    assert.match(shared!, /^to commit \(no path of this machine in them\):\n  created +CLAUDE\.md/mu);
    assert.match(machine!, /keep them out of git\):\n/u);
    assert.match(machine!, /created +\.claude\/settings\.local\.json/u);
    assert.ok(machine!.includes(`updated          ${join(home, '.claude.json')}  (MCP server "cairn", local scope`), out);
    const config = json(join(home, '.claude.json'));
    assert.equal(config['theme'], 'dark');
    assert.deepEqual(config['projects']['/elsewhere'], { mcpServers: { x: USER_SERVER } });
    assert.equal(statSync(join(home, '.claude.json')).mode & 0o777, 0o600, 'the file stays private');
    const report = JSON.parse(await ok(['init', 'claude', '--json'], { cwd: p, home })) as { files: { path: string; scope: string }[] };
    assert.deepEqual(
      report.files.map((f) => [relative(dirname(p), f.path), f.scope]),
      [
        [join('home', '.claude.json'), 'machine'],
        [join('project', '.claude', 'settings.local.json'), 'machine'],
        [join('project', 'CLAUDE.md'), 'shared'],
      ],
    );
  });

  it('claude: takes what an earlier init put in .mcp.json and .claude/settings.json back out, keeping the user\'s entries', async () => {
    const { project: p, home } = project();
    const old = (hook: string) => ({ hooks: [{ type: 'command', command: `/usr/bin/node /old/clone/bin/cairn.js hook ${hook}`, timeout: 15 }] });
    write(join(p, '.mcp.json'), `${JSON.stringify({ mcpServers: { other: USER_SERVER, cairn: { type: 'stdio', command: '/usr/bin/node', args: ['/old/clone/bin/cairn.js', 'mcp'] } } }, null, 2)}\n`);
    write(join(p, '.claude', 'settings.json'), `${JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo mine' }] }, old('stop')], PreCompact: [old('pre-compact')], SessionStart: [old('session-start')], UserPromptSubmit: [old('user-prompt-submit')] } }, null, 2)}\n`);
    const out = await ok(['init', 'claude'], { cwd: p, home });
    assert.match(out, /updated +\.mcp\.json  \(no cairn entry/u);
    assert.deepEqual(json(join(p, '.mcp.json')), { mcpServers: { other: USER_SERVER } });
    assert.deepEqual(json(join(p, '.claude', 'settings.json')), { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo mine' }] }] } });
    assert.equal((json(join(p, '.claude', 'settings.local.json'))['hooks'].Stop as unknown[]).length, 1);
    // A settings file holding only cairn's hooks loses its hooks key entirely.
    write(join(p, '.claude', 'settings.json'), `${JSON.stringify({ model: 'opus', hooks: { Stop: [old('stop')] } }, null, 2)}\n`);
    await ok(['init', 'claude'], { cwd: p, home });
    assert.deepEqual(json(join(p, '.claude', 'settings.json')), { model: 'opus' });
  });

  it('the files to commit hold no path of this machine; the others are outside the project or its local-only files', async () => {
    // In the project, only Claude Code's local settings (kept out of git by Claude Code) and Kimi Code's MCP
    // file (Kimi Code reads servers from the project only) may hold this machine's paths.
    const localOnly = [join('.claude', 'settings.local.json'), join('.kimi-code', 'mcp.json')];
    for (const agent of ['claude', 'opencode', 'codex', 'cursor', 'gemini', 'kimi']) {
      const { project: p, home } = project();
      const report = JSON.parse(await ok(['init', agent, '--json'], { cwd: p, home })) as { files: { path: string; scope: string }[] };
      for (const f of report.files) {
        const inProject = !relative(p, f.path).startsWith('..');
        const holdsPath = read(f.path).includes(BIN);
        if (f.scope === 'shared') assert.ok(inProject && !holdsPath, `${agent}: ${f.path} is to commit and holds no path of this machine`);
        else assert.ok(holdsPath && (!inProject || localOnly.includes(relative(p, f.path))), `${agent}: ${f.path} is this machine's, outside the project or local-only`);
      }
      assert.ok(report.files.some((f) => f.scope === 'shared'), `${agent}: the rules are to commit`);
    }
  });

  it('takes cairn entries an earlier init wrote into project files back out, for every agent that now keeps them per machine', async () => {
    const { project: p, home } = project();
    const old = { command: '/usr/bin/node', args: ['/old/clone/bin/cairn.js', 'mcp'] };
    write(join(p, '.cursor', 'mcp.json'), `${JSON.stringify({ mcpServers: { cairn: old, team: USER_SERVER } }, null, 2)}\n`);
    write(join(p, '.gemini', 'settings.json'), `${JSON.stringify({ theme: 'GitHub', mcpServers: { cairn: old } }, null, 2)}\n`);
    write(join(p, 'opencode.json'), `${JSON.stringify({ mcp: { cairn: { type: 'local', command: ['/usr/bin/node', '/old/clone/bin/cairn.js', 'mcp'], enabled: true } } }, null, 2)}\n`);
    write(join(p, '.codex', 'config.toml'), 'model = "gpt-5"\n\n# cairn:begin (managed by `cairn init`: it replaces what is between these two lines)\n[mcp_servers.cairn]\ncommand = "/usr/bin/node"\nargs = ["/old/clone/bin/cairn.js", "mcp"]\n# cairn:end\n');
    write(join(p, '.opencode', 'plugins', 'cairn.js'), '// Generated by `cairn init opencode`; run it again to update this file, delete it to remove.\nexport const CairnMemory = async () => ({});\n');
    write(join(p, '.opencode', 'plugins', 'mine.js'), 'export const Mine = async () => ({});\n');
    for (const agent of ['cursor', 'gemini', 'opencode', 'codex']) await ok(['init', agent], { cwd: p, home });
    assert.equal(existsSync(join(p, '.opencode', 'plugins', 'cairn.js')), false, 'the old project plugin is removed: the global one replaces it');
    assert.equal(read(join(p, '.opencode', 'plugins', 'mine.js')), 'export const Mine = async () => ({});\n');
    assert.deepEqual(json(join(p, '.cursor', 'mcp.json')), { mcpServers: { team: USER_SERVER } });
    assert.deepEqual(json(join(p, '.gemini', 'settings.json')), { theme: 'GitHub', mcpServers: {} });
    assert.deepEqual(json(join(p, 'opencode.json')), { mcp: {} });
    assert.equal(read(join(p, '.codex', 'config.toml')), 'model = "gpt-5"\n');
    // A server of the user's own named cairn (not one of this installation's paths) stays.
    const mine = { command: 'cairn', args: ['mcp'] };
    write(join(p, '.cursor', 'mcp.json'), `${JSON.stringify({ mcpServers: { cairn: mine } }, null, 2)}\n`);
    await ok(['init', 'cursor'], { cwd: p, home });
    assert.deepEqual(json(join(p, '.cursor', 'mcp.json')), { mcpServers: { cairn: mine } });
  });

  it('an unknown agent exits 2 with one line naming the agents', async () => {
    const { project: p, home } = project();
    const r = await cairn(['init', 'vim'], { cwd: p, home });
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'cairn: unknown agent "vim": choose one of claude, opencode, kimi, codex, cursor, gemini\n');
    assert.deepEqual(readdirSync(p), []);
  });

  it('the OpenCode plugin loads as an ES module and hands the conversation to cairn hook pre-compact', async () => {
    const { project: p, home } = project();
    const db = join(p, 'memory.db');
    await ok(['init', 'opencode', '--db', db], { cwd: p, home });
    const copy = join(p, 'plugin-copy.mjs');
    cpSync(join(home, '.config', 'opencode', 'plugins', 'cairn.js'), copy);
    const mod = (await import(pathToFileURL(copy).href)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(mod), ['CairnMemory'], 'OpenCode calls every export as a plugin: only one');
    const plugin = mod['CairnMemory'] as (ctx: unknown) => Promise<Record<string, (input: unknown, output: unknown) => Promise<void>>>;
    const said = 'From now on we always round VAT per invoice line, never on the total, because the tax office requires it.';
    // The shape OpenCode's client returns for a session's messages.
    const messages = [
      { info: { role: 'user', time: { created: Date.now() } }, parts: [{ type: 'text', text: said }] },
      { info: { role: 'assistant', time: { created: Date.now() } }, parts: [{ type: 'text', text: 'Noted, per line.' }, { type: 'tool', tool: 'bash' }] },
    ];
    const hooks = await plugin({ client: { session: { messages: async () => ({ data: messages }) } }, directory: p });
    assert.equal(typeof hooks['experimental.session.compacting'], 'function');
    // The plugin's cairn runs with OpenCode's environment, here this process's: keep it in the sandbox.
    const saved = { HOME: process.env['HOME'], XDG_DATA_HOME: process.env['XDG_DATA_HOME'], CAIRN_EMBEDDER: process.env['CAIRN_EMBEDDER'] };
    Object.assign(process.env, { HOME: home, XDG_DATA_HOME: join(home, '.local', 'share'), CAIRN_EMBEDDER: 'none' });
    try {
      await hooks['experimental.session.compacting']!({ sessionID: 'ses_1' }, { context: [] });
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    if (existsSync(db)) {
      const list = await ok(['list', '--db', db, '--namespace', p, '--json'], { cwd: p, home, env: { CAIRN_EMBEDDER: 'none' } });
      assert.ok((JSON.parse(list) as { memories: { text: string }[] }).memories.some((m) => m.text === said), `the user's statement was captured: ${list}`);
    } else {
      const hook = await cairn(['hook', '--help'], { cwd: p, home });
      assert.notEqual(hook.code, 0, 'cairn hook exists, so the capture should have written the database');
    }
  });
});
