/**
 * The Claude Code plugin's launcher (plugin/launch.mjs), run on a copy of the plugin the way Claude Code
 * runs it: without dist/ and without built native modules, with a fresh CLAUDE_PLUGIN_DATA. One case runs
 * the real first-start install (`npm ci`, which builds the SQLite driver: minutes); the others make the
 * install fail at once by leaving npm off the PATH.
 */
import * as assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// dist/test/e2e/plugin-launcher.test.js → repository root
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const INSTALL_MINUTES = 15;

let sandbox: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A copy of what a plugin install holds: the committed sources, no dist/, no node_modules. */
function pluginCopy(name: string): string {
  const dir = join(sandbox, name);
  for (const rel of ['package.json', 'package-lock.json', 'tsconfig.json', 'bin', 'src', 'plugin', '.claude-plugin', '.mcp.json', 'hooks']) {
    cpSync(join(ROOT, rel), join(dir, rel), { recursive: true });
  }
  return dir;
}

/** The caller's environment without what an outer npm run or cairn settings would leak into the launcher. */
function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_package_|npm_lifecycle_|CAIRN_|CLAUDE)/u.test(k)));
  return { ...clean, CAIRN_EMBEDDER: 'none', ...extra };
}

/** A PATH holding only `node`: the launcher cannot find npm, so an install fails at once. */
function pathWithoutNpm(): string {
  const dir = join(sandbox, 'node-only-bin');
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true });
    symlinkSync(process.execPath, join(dir, 'node'));
  }
  return dir;
}

function launch(plugin: string, args: string[], environment: NodeJS.ProcessEnv, stdin = ''): Promise<Run> {
  const started = Date.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(plugin, 'plugin', 'launch.mjs'), ...args], { cwd: sandbox, env: environment });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr, ms: Date.now() - started }));
    child.stdin.end(stdin);
  });
}

async function waitFor(what: string, check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A minimal MCP client over the launcher's stdio: requests by id, notifications collected. */
function mcpClient(child: ChildProcessWithoutNullStreams) {
  const pending = new Map<number, (msg: Record<string, any>) => void>();
  const notifications: string[] = [];
  let nextId = 1;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const msg = JSON.parse(line) as Record<string, any>;
    if (msg['id'] !== undefined && pending.has(msg['id'] as number)) pending.get(msg['id'] as number)!(msg);
    else if (msg['method']) notifications.push(msg['method'] as string);
  });
  return {
    notifications,
    request(method: string, params: unknown = {}): Promise<Record<string, any>> {
      const id = nextId++;
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return new Promise((r) => pending.set(id, r));
    },
    notify(method: string): void {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
    },
  };
}

/**
 * The install builds better-sqlite3, and without network access to its prebuilt binaries it compiles SQLite
 * from source (minutes on a loaded machine). Users online get the prebuilt binary through prebuild-install;
 * the test takes that same path with a local prebuild packed from the repository's own build.
 */
function localPrebuild(): Record<string, string> {
  const pkgDir = join(ROOT, 'node_modules', 'better-sqlite3');
  const built = join(pkgDir, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(built)) return {};
  const { version } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  const stage = join(sandbox, 'prebuild-stage');
  const dir = join(sandbox, 'prebuilds');
  mkdirSync(join(stage, 'build', 'Release'), { recursive: true });
  mkdirSync(dir, { recursive: true });
  cpSync(built, join(stage, 'build', 'Release', 'better_sqlite3.node'));
  const tarball = join(dir, `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`);
  execFileSync('tar', ['-czf', tarball, '-C', stage, 'build/Release/better_sqlite3.node']);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

const HOOK_INPUT = JSON.stringify({ session_id: 's1', transcript_path: '/nonexistent.jsonl', cwd: '/tmp', hook_event_name: 'SessionStart', source: 'startup' });

describe('plugin launcher', () => {
  before(() => {
    sandbox = mkdtempSync(join(tmpdir(), 'cairn-launcher-'));
  });
  after(() => rmSync(sandbox, { recursive: true, force: true }));

  it('first start: hooks return at once, one install runs while other starts wait, MCP is handed over', { timeout: INSTALL_MINUTES * 60_000 }, async () => {
    const plugin = pluginCopy('plugin-a');
    const data = join(sandbox, 'data-a');
    const e = env({ CLAUDE_PLUGIN_DATA: data, CLAUDE_PLUGIN_ROOT: plugin, ...localPrebuild() });
    const log = join(data, 'install.log');

    // SessionStart while nothing is installed: exit 0 within a few seconds, one line for the user.
    const hook = await launch(plugin, ['hook', 'session-start'], e, HOOK_INPUT);
    assert.equal(hook.code, 0, hook.stderr);
    assert.ok(hook.ms < 5000, `the hook took ${hook.ms} ms`);
    const message = JSON.parse(hook.stdout) as { systemMessage: string };
    assert.match(message.systemMessage, /setting up its runtime .*2–3 minutes/u);
    assert.ok(message.systemMessage.includes(log), 'the message says where the log is');
    const stop = await launch(plugin, ['hook', 'stop'], e, '{}');
    assert.deepEqual([stop.code, stop.stdout], [0, ''], 'other hooks exit 0 silently');

    // The MCP server answers the handshake at once, with no tools yet.
    const server = spawn(process.execPath, [join(plugin, 'plugin', 'launch.mjs'), 'mcp', '--db', join(sandbox, 'a.db')], { cwd: sandbox, env: e });
    let serverErr = '';
    server.stderr.setEncoding('utf8').on('data', (d: string) => (serverErr += d));
    const mcp = mcpClient(server);
    const init = await mcp.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
    assert.equal(init['result'].serverInfo.name, 'cairn (setting up)');
    assert.match(init['result'].instructions, /still setting up its runtime .*no tools yet/u);
    assert.deepEqual(init['result'].capabilities.tools, { listChanged: true });
    mcp.notify('notifications/initialized');
    assert.deepEqual((await mcp.request('tools/list'))['result'], { tools: [] });
    const early = await mcp.request('tools/call', { name: 'context_query', arguments: { query: 'x' } });
    assert.equal(early['result'].isError, true);

    // Two commands started now wait for the install the hook started; neither installs again.
    const [v1, v2] = await Promise.all([launch(plugin, ['--version'], e), launch(plugin, ['--version'], e)]);
    for (const v of [v1, v2]) assert.deepEqual([v.code, v.stdout], [0, '0.1.0\n'], v.stderr);
    const installs = readFileSync(log, 'utf8').split('\n').filter((l) => l.includes("installing cairn's runtime"));
    assert.equal(installs.length, 1, `one install, log:\n${readFileSync(log, 'utf8')}`);
    assert.match(readFileSync(log, 'utf8'), /installed cairn 0\.1\.0 in \d+ s/u);
    const runtime = join(data, 'runtime');
    assert.ok(existsSync(join(runtime, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')), 'the native driver is built');
    assert.ok(existsSync(join(runtime, 'dist', 'src', 'surfaces', 'cli', 'main.js')), 'cairn is compiled');
    assert.equal(existsSync(join(runtime, 'node_modules', '@anthropic-ai', 'claude-code')), false, 'test-only dev dependencies are left out');
    await waitFor('the lock to be released', () => !existsSync(join(data, 'install.lock')), 10_000);

    // The MCP connection moves to the real server: the client is told, then sees and calls its tools.
    await waitFor('tools/list_changed', () => mcp.notifications.includes('notifications/tools/list_changed'), 60_000);
    const tools = ((await mcp.request('tools/list'))['result'].tools as { name: string }[]).map((t) => t.name);
    for (const name of ['context_query', 'memory_store', 'memory_forget']) assert.ok(tools.includes(name), `${name} in ${tools.join(', ')}`);
    const stored = await mcp.request('tools/call', { name: 'memory_store', arguments: { content: 'VAT is rounded per invoice line, never on the total', category: 'decision', importance: 6, tags: ['tax', 'invoices'] } });
    assert.notEqual(stored['result'].isError, true, JSON.stringify(stored));
    const found = await mcp.request('tools/call', { name: 'search_memory', arguments: { query: 'VAT rounding' } });
    assert.match(JSON.stringify(found['result']), /rounded per invoice line/u);
    const exited = new Promise<number | null>((r) => server.on('close', r));
    server.stdin.end();
    assert.equal(await exited, 0, serverErr);

    // Installed: commands and hooks run cairn directly.
    const fast = await launch(plugin, ['--version'], e);
    assert.deepEqual([fast.code, fast.stdout], [0, '0.1.0\n']);
    const readyHook = await launch(plugin, ['hook', 'session-start'], e, HOOK_INPUT);
    assert.equal(readyHook.code, 0, readyHook.stderr);
    assert.doesNotMatch(readyHook.stdout, /setting up/u);
  });

  it('an install that cannot run fails the command, never the hooks, and is not retried by every hook', async () => {
    const plugin = pluginCopy('plugin-b');
    const data = join(sandbox, 'data-b');
    const e = env({ CLAUDE_PLUGIN_DATA: data, PATH: pathWithoutNpm() });
    const first = await launch(plugin, ['hook', 'user-prompt-submit'], e, '{"prompt":"hi"}');
    assert.deepEqual([first.code, first.stdout], [0, ''], first.stderr);
    await waitFor('the failed install to be recorded', () => existsSync(join(data, 'install-failed.json')), 30_000);
    const hook = await launch(plugin, ['hook', 'session-start'], e, HOOK_INPUT);
    assert.equal(hook.code, 0);
    const npmMissing = "npm was not found on the PATH Claude Code runs with (cairn's runtime is installed with npm, which comes with Node.js)";
    assert.equal((JSON.parse(hook.stdout) as { systemMessage: string }).systemMessage, `cairn could not set up its runtime: ${npmMissing}. It tries again in a few minutes; details in ${join(data, 'install.log')}`);
    const cli = await launch(plugin, ['--version'], e);
    assert.equal(cli.code, 1);
    assert.equal(cli.stderr, `cairn: could not set up its runtime: ${npmMissing}; see ${join(data, 'install.log')}\n`);
    // The placeholder MCP server says so too, in its name and its instructions.
    const server = spawn(process.execPath, [join(plugin, 'plugin', 'launch.mjs'), 'mcp'], { cwd: sandbox, env: e });
    const init = await mcpClient(server).request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
    server.kill();
    assert.equal(init['result'].serverInfo.name, 'cairn (setting up)');
    assert.equal(init['result'].serverInfo.title, 'cairn: set-up failed');
    assert.ok((init['result'].instructions as string).includes(npmMissing), init['result'].instructions);
    const attempts = readFileSync(join(data, 'install.log'), 'utf8').split('\n').filter((l) => l.includes('install failed'));
    assert.equal(attempts.length, 1, 'one attempt, then hooks and commands wait before retrying');
  });

  it('while the runtime is still being set up, the placeholder MCP server says so in its name and instructions', async () => {
    const plugin = pluginCopy('plugin-d');
    const e = env({ CLAUDE_PLUGIN_DATA: join(sandbox, 'data-d'), PATH: pathWithoutNpm() });
    const server = spawn(process.execPath, [join(plugin, 'plugin', 'launch.mjs'), 'mcp'], { cwd: sandbox, env: e });
    const mcp = mcpClient(server);
    const init = await mcp.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
    assert.equal(init['result'].serverInfo.name, 'cairn (setting up)');
    assert.equal(init['result'].serverInfo.title, 'cairn: still setting up, tools in 2–3 minutes');
    assert.equal(init['result'].instructions, 'cairn is still setting up its runtime (first start only, about 2–3 minutes): it has no tools yet, and they appear on their own when it is ready.');
    assert.deepEqual((await mcp.request('tools/list'))['result'], { tools: [] });
    server.kill();
  });

  it('a lock left by a process that died is taken over', async () => {
    const plugin = pluginCopy('plugin-c');
    const data = join(sandbox, 'data-c');
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('close', r));
    mkdirSync(join(data, 'install.lock'), { recursive: true });
    writeFileSync(join(data, 'install.lock', 'owner.json'), JSON.stringify({ pid: dead.pid, at: Date.now() }));
    const r = await launch(plugin, ['--version'], env({ CLAUDE_PLUGIN_DATA: data, PATH: pathWithoutNpm() }));
    assert.equal(r.code, 1, 'npm is missing, so the install itself fails');
    const text = readFileSync(join(data, 'install.log'), 'utf8');
    assert.match(text, /removing a stale install lock/u);
    assert.match(text, /installing cairn's runtime/u);
    assert.equal(existsSync(join(data, 'install.lock')), false);
  });
});
