/**
 * cairn with Claude Code itself (@anthropic-ai/claude-code 2.1.332, installed by .ci/run into .ci/tools). Claude Code cannot
 * reach its model here, but its offline commands and the start of a session (hooks, MCP servers) run. Every
 * call gets a throwaway HOME, no API key and a time limit.
 */
import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cliJson, createSandbox } from './mcp-scenario.js';
import { serve } from './served.js';

// dist/test/e2e/claude-code.test.js → repository root
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = join(ROOT, 'bin', 'cairn.js');
// Claude Code is not a dependency of cairn (the plugin install would download it for every user): .ci/run
// installs it into .ci/tools; CAIRN_CLAUDE_BIN points at another copy.
const CLAUDE =
  process.env['CAIRN_CLAUDE_BIN'] ??
  [join(ROOT, '.ci', 'tools', 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe'), join(ROOT, 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe')].find((p) => existsSync(p)) ??
  join(ROOT, '.ci', 'tools', 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');
const MARKETPLACE = 'cairn-memory';

/** Why a case cannot run (a cairn command it needs is missing), or null. Runs in a throwaway home: never the real one. */
function missingCommand(args: string[]): string | null {
  const probeHome = mkdtempSync(join(tmpdir(), 'cairn-claude-probe-'));
  try {
    const env = { PATH: process.env['PATH'] ?? '', HOME: probeHome, XDG_DATA_HOME: join(probeHome, 'data'), XDG_CONFIG_HOME: join(probeHome, 'config') };
    const r = spawnSync(process.execPath, [BIN, ...args, '--help'], { encoding: 'utf8', timeout: 30_000, env });
    return r.status === 0 ? null : `\`cairn ${args.join(' ')}\` is not available in this build (${(r.stderr || '').trim().split('\n')[0]})`;
  } finally {
    rmSync(probeHome, { recursive: true, force: true });
  }
}

const claudeMissing = existsSync(CLAUDE) ? null : `Claude Code not found at ${CLAUDE} ; to run these, bash .ci/run installs it (npm install --prefix .ci/tools @anthropic-ai/claude-code@2.1.332), or set CAIRN_CLAUDE_BIN=<path to claude>`;
const mcpMissing = missingCommand(['mcp']);
const hookMissing = missingCommand(['hook']);

let sandbox: string;
let home: string;
let nodeOnly: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A clean environment: throwaway HOME and no credentials. npm keeps the machine's own user config and cache
 * (plugin installs run npm), and PATH may be narrowed to hide npm from what Claude Code starts.
 */
function cleanEnv(path = process.env['PATH'] ?? ''): NodeJS.ProcessEnv {
  const realHome = process.env['HOME'] || homedir();
  const npmrc = process.env['npm_config_userconfig'] || join(realHome, '.npmrc');
  return {
    PATH: path,
    HOME: home,
    TMPDIR: join(sandbox, 'tmp'),
    CAIRN_EMBEDDER: 'none',
    npm_config_cache: process.env['npm_config_cache'] || join(realHome, '.npm'),
    ...(existsSync(npmrc) ? { npm_config_userconfig: npmrc } : {}),
    DISABLE_AUTOUPDATER: '1',
  };
}

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const limit = options.timeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish in ${limit} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, limit);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

const claude = (args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }) => run(CLAUDE, args, options);

async function ok(r: Promise<Run>, what: string): Promise<string> {
  const done = await r;
  assert.equal(done.code, 0, `${what} exited ${done.code}\nstdout: ${done.stdout}\nstderr: ${done.stderr}`);
  return done.stdout + done.stderr;
}

/** Starts a session that cannot reach the model: the session start (hooks, MCP servers) still runs. Returns its debug log. */
async function sessionStart(cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  await claude(['-p', 'hello', '--debug'], { cwd, env, timeoutMs: 90_000 });
  const latest = join(home, '.claude', 'debug', 'latest');
  assert.ok(existsSync(latest), 'claude --debug wrote a debug log');
  return readFileSync(latest, 'utf8');
}

function project(name: string): string {
  const dir = join(sandbox, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe('Claude Code', { skip: claudeMissing ?? false }, () => {
  before(() => {
    sandbox = mkdtempSync(join(tmpdir(), 'cairn-claude-'));
    home = join(sandbox, 'home');
    mkdirSync(home, { recursive: true });
    mkdirSync(join(sandbox, 'tmp'), { recursive: true });
    nodeOnly = join(sandbox, 'node-only-bin');
    mkdirSync(nodeOnly);
    symlinkSync(process.execPath, join(nodeOnly, 'node'));
  });
  after(() => rmSync(sandbox, { recursive: true, force: true }));

  it('claude plugin validate accepts the repository as plugin and marketplace', async () => {
    const out = await ok(claude(['plugin', 'validate', '--strict', ROOT], { cwd: sandbox }), 'claude plugin validate');
    assert.match(out, /Validation passed/u);
    assert.match(out, /mcpServers: cairn stdio node/u);
    for (const event of ['SessionStart', 'UserPromptSubmit', 'PreCompact', 'Stop']) assert.match(out, new RegExp(`hooks: ${event}`, 'u'));
  });

  it('the marketplace is added from the repository and the plugin installs and is enabled', async () => {
    const cwd = project('install');
    assert.match(await ok(claude(['plugin', 'marketplace', 'add', ROOT], { cwd }), 'marketplace add'), new RegExp(`Successfully added marketplace: ${MARKETPLACE}`, 'u'));
    // Installing runs `npm ci --ignore-scripts` in the plugin copy (Claude Code gives it 60 s).
    assert.match(await ok(claude(['plugin', 'install', `cairn@${MARKETPLACE}`], { cwd, timeoutMs: 180_000 }), 'plugin install'), new RegExp(`Successfully installed plugin: cairn@${MARKETPLACE}`, 'u'));
    const list = await ok(claude(['plugin', 'list'], { cwd }), 'plugin list');
    assert.match(list, new RegExp(`cairn@${MARKETPLACE}[\\s\\S]*?Status: ✔ enabled`, 'u'));
  });

  it('a session starts with the plugin: hooks exit 0 at once and its MCP server connects while the runtime is set up', async () => {
    const cwd = project('session');
    // npm is hidden from the session, so the plugin's background install fails fast instead of running here
    // (the install itself is covered by the launcher's test).
    const log = await sessionStart(cwd, cleanEnv(nodeOnly));
    assert.match(log, /SessionStart:startup \[node "[^"]+\/plugin\/launch\.mjs" hook session-start\] \(plugin cairn@cairn-memory\) finished with status 0/u);
    // The MCP server starts the same background install, which fails at once without npm: the line says either
    // that set-up is under way or, when the failure came first, its cause.
    assert.match(log, /"systemMessage":"cairn (is setting up its runtime|could not set up its runtime: npm was not found on the PATH)/u);
    assert.match(log, /UserPromptSubmit \[node "[^"]+\/plugin\/launch\.mjs" hook user-prompt-submit\] \(plugin cairn@cairn-memory\) finished with status 0/u);
    assert.match(log, /MCP server "plugin:cairn:cairn": Successfully connected/u);
    assert.doesNotMatch(log, /MCP server "plugin:cairn:cairn": Connection failed/u);
  });

  it('claude mcp add … cairn mcp: claude mcp list reports cairn connected', { skip: mcpMissing ?? false }, async () => {
    const cwd = project('mcp-add');
    await ok(claude(['mcp', 'add', 'cairn', '--', 'node', BIN, 'mcp', '--db', join(sandbox, 'mcp-add.db')], { cwd }), 'claude mcp add');
    const list = await ok(claude(['mcp', 'list'], { cwd, timeoutMs: 90_000 }), 'claude mcp list');
    assert.match(list, /^cairn: node \S+bin\/cairn\.js mcp --db \S+ - ✔ Connected$/mu);
  });

  it('claude mcp add --transport http with a bearer header: a team server with --auth shows connected; a wrong token does not', async () => {
    const team = createSandbox('claude-team');
    const created = await cliJson<{ token: string }>(team, ['token', 'create', '--namespace', 'team', '--scope', 'write']);
    const served = await serve(team, ['--auth', '--quiet', '--namespace', 'team']);
    try {
      const cwd = project('mcp-http');
      await ok(claude(['mcp', 'add', '--transport', 'http', 'cairn-team', served.url.href, '--header', `Authorization: Bearer ${created.token}`], { cwd }), 'claude mcp add (good token)');
      await ok(claude(['mcp', 'add', '--transport', 'http', 'cairn-wrong', served.url.href, '--header', 'Authorization: Bearer cairn_wrongwrongwrongwrongwrongwrongwrong'], { cwd }), 'claude mcp add (wrong token)');
      const list = await claude(['mcp', 'list'], { cwd, timeoutMs: 90_000 });
      assert.match(list.stdout, /^cairn-team: http:\/\/\S+\/mcp \(HTTP\) - ✔ Connected$/mu, list.stdout);
      assert.doesNotMatch(list.stdout, /^cairn-wrong: .*✔ Connected$/mu, list.stdout);
    } finally {
      served.child.kill('SIGKILL');
      team.remove();
    }
  });

  it('cairn init claude: Claude Code reads the local-scope server and runs cairn hooks from the local settings at session start', { skip: hookMissing ?? mcpMissing ?? false }, async () => {
    const cwd = project('init');
    await ok(run(process.execPath, [BIN, 'init', 'claude', '--db', join(sandbox, 'init.db')], { cwd, env: { ...cleanEnv(), CAIRN_EMBEDDER: 'none' } }), 'cairn init claude');
    assert.equal(existsSync(join(cwd, '.mcp.json')), false, 'nothing of this machine goes into the shared .mcp.json');
    const get = await ok(claude(['mcp', 'get', 'cairn'], { cwd, timeoutMs: 90_000 }), 'claude mcp get');
    assert.match(get, /Scope: Local config \(private to you in this project\)/u);
    assert.ok(get.includes(`Args: ${BIN} mcp --db ${join(sandbox, 'init.db')}`), get);
    const list = await ok(claude(['mcp', 'list'], { cwd, timeoutMs: 90_000 }), 'claude mcp list');
    assert.match(list, /^cairn: \S+ \S+bin\/cairn\.js mcp --db \S+ - ✔ Connected$/mu, list);
    const log = await sessionStart(cwd, cleanEnv());
    assert.match(log, /SessionStart:startup \[\S+ \S+bin\/cairn\.js --db \S+ hook session-start\] finished with status 0/u);
  });

  it('cairn init claude in a git repository files the local server under the repository, as Claude Code looks it up from any folder of it', { skip: mcpMissing ?? false }, async () => {
    const repo = project('init-repo');
    spawnSync('git', ['init', '-q', repo]);
    const sub = join(repo, 'packages', 'shop');
    mkdirSync(sub, { recursive: true });
    await ok(run(process.execPath, [BIN, 'init', 'claude', '--db', join(sandbox, 'init-repo.db')], { cwd: repo }), 'cairn init claude');
    const list = await ok(claude(['mcp', 'list'], { cwd: sub, timeoutMs: 90_000 }), 'claude mcp list in a subfolder');
    assert.match(list, /^cairn: \S+ \S+bin\/cairn\.js mcp --db \S+init-repo\.db - ✔ Connected$/mu, list);
  });
});
