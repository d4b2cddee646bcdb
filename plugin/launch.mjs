#!/usr/bin/env node
// Launcher of the cairn Claude Code plugin. Plain JavaScript with no dependencies, because Claude Code
// installs plugins without running install scripts: the native SQLite driver is not built and dist/ (the
// compiled CLI) is absent. On first start this installs cairn's runtime into the plugin's data directory
// (${CLAUDE_PLUGIN_DATA}/runtime) with `npm ci`, which also compiles it, then runs `cairn <args>` from there.
//
//   node launch.mjs <cairn arguments…>        e.g. `mcp`, `hook stop`, `--version`
//
// Contracts:
// - One install at a time: a lock directory guards it; other starts wait for it (or, for hooks, skip).
// - Hooks (`hook <event>`) never block or fail the session while the runtime is missing: they start the
//   install in the background and exit 0; SessionStart says so in one line to the user.
// - `mcp` answers the MCP handshake at once with no tools, its name and instructions saying it is still
//   setting up (or why that failed), then hands the connection to the real server when the runtime is
//   ready and tells the client its tools changed.
// - A failed install is reported with its cause read from npm's output (plugin/install-cause.mjs).
// - Other commands wait for the install, with progress on stderr.
// - stdout carries only the protocol (MCP) or the hook's JSON; everything else goes to the log file.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, closeSync, cpSync, existsSync, mkdirSync, readFileSync, openSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { installFailureCause } from './install-cause.mjs';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
/** What the runtime is built from: copied from the plugin into the data directory. */
const SOURCES = ['package.json', 'package-lock.json', 'tsconfig.json', 'bin', 'src'];
/** Unit tests next to the code are not part of the runtime (they may import test-only files). */
const isSource = (path) => !/\.test\.ts$/u.test(path);
/** Dev dependencies the build needs; the others (test tools) are left out of the runtime. */
const buildDependency = (name) => name === 'typescript' || name.startsWith('@types/');
const INSTALL_FLAG = '--cairn-launcher-install';
const STALE_LOCK_MS = 20 * 60_000;
const RETRY_FAILED_AFTER_MS = 10 * 60_000;

/**
 * The plugin's data directory. Claude Code passes it to hooks and MCP servers; a command run from the Bash
 * tool (the plugin's bin/ is on its PATH) does not get it, so it is derived from the install location
 * (~/.claude/plugins/cache/<marketplace>/<plugin>/<version> → ~/.claude/plugins/data/<plugin>-<marketplace>).
 */
function dataDir() {
  if (process.env.CLAUDE_PLUGIN_DATA) return process.env.CLAUDE_PLUGIN_DATA;
  const cached = /^(.*[\\/]plugins)[\\/]cache[\\/]([^\\/]+)[\\/]([^\\/]+)[\\/][^\\/]+$/u.exec(ROOT);
  if (cached) return join(cached[1], 'data', `${cached[3]}@${cached[2]}`.replace(/[^A-Za-z0-9_-]/gu, '-'));
  return join(process.env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'cairn', 'plugin');
}

const DATA = dataDir();
const RUNTIME = join(DATA, 'runtime');
const STAGING = join(DATA, 'runtime.staging');
const LOCK = join(DATA, 'install.lock');
const LOG = join(DATA, 'install.log');
const FAILED = join(DATA, 'install-failed.json');
const MARKER = '.cairn-runtime.json';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function log(line) {
  mkdirSync(DATA, { recursive: true });
  appendFileSync(LOG, `${new Date().toISOString()} [${process.pid}] ${line}\n`);
}

/** Identifies what would be installed: the plugin's sources and the Node ABI the native driver is built for. */
function fingerprint() {
  const hash = createHash('sha256').update(`${process.platform} ${process.arch} abi${process.versions.modules}\n`);
  const walk = (rel) => {
    const abs = join(ROOT, rel);
    if (!existsSync(abs)) return;
    if (statSync(abs).isDirectory()) for (const name of readdirSync(abs).sort()) walk(join(rel, name));
    else if (isSource(rel)) hash.update(`${rel}\n`).update(readFileSync(abs));
  };
  for (const rel of SOURCES) walk(rel);
  return hash.digest('hex');
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

const installed = (fp) => readJson(join(RUNTIME, MARKER))?.fingerprint === fp;

/** What a person reads about a failed install: its cause (older records have only the error). */
const failureCause = (failure) => failure?.cause ?? failure?.error ?? 'see the log';

/** The line a command prints when the runtime could not be set up. */
function cannotSetUp() {
  return `cairn: could not set up its runtime: ${failureCause(readJson(FAILED))}; see ${LOG}\n`;
}

/** A failed install of these same sources, recent enough not to retry on its own. */
function recentFailure(fp) {
  const f = readJson(FAILED);
  return f && f.fingerprint === fp && Date.now() - f.at < RETRY_FAILED_AFTER_MS ? f : null;
}

function lockHolder() {
  if (!existsSync(LOCK)) return null;
  const owner = readJson(join(LOCK, 'owner.json'));
  let alive = false;
  try {
    if (owner?.pid) process.kill(owner.pid, 0);
    alive = Boolean(owner?.pid);
  } catch (err) {
    alive = err.code === 'EPERM';
  }
  const age = Date.now() - (owner?.at ?? statSync(LOCK).mtimeMs);
  // A lock whose owner is gone, or that is older than any install takes, is stale. A lock just created by
  // a live process may not have its owner file yet: it counts as held.
  if ((owner && !alive) || age > STALE_LOCK_MS) return { stale: true };
  return { stale: false, pid: owner?.pid };
}

function tryLock() {
  mkdirSync(DATA, { recursive: true });
  const holder = lockHolder();
  if (holder?.stale) {
    log('removing a stale install lock');
    rmSync(LOCK, { recursive: true, force: true });
  }
  try {
    mkdirSync(LOCK);
  } catch (err) {
    if (err.code === 'EEXIST') return false;
    throw err;
  }
  writeFileSync(join(LOCK, 'owner.json'), JSON.stringify({ pid: process.pid, at: Date.now() }));
  return true;
}

/** Removes dev dependencies the build does not need from package.json and the lockfile, so `npm ci` agrees. */
function pruneDevDependencies(dir) {
  const pkgPath = join(dir, 'package.json');
  const lockPath = join(dir, 'package-lock.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  const keep = Object.fromEntries(Object.entries(pkg.devDependencies ?? {}).filter(([name]) => buildDependency(name)));
  pkg.devDependencies = keep;
  writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));
  const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
  const packages = lock.packages;
  packages[''].devDependencies = keep;
  // Keep only what is reachable from the root, resolving each name the way Node does (nearest node_modules up).
  const reached = new Set(['']);
  const queue = [''];
  while (queue.length) {
    const at = queue.pop();
    const entry = packages[at] ?? {};
    const deps = { ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies, ...(at === '' ? entry.devDependencies : {}) };
    for (const name of Object.keys(deps)) {
      for (let base = at; ; ) {
        const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
        if (packages[candidate]) {
          if (!reached.has(candidate)) reached.add(candidate), queue.push(candidate);
          break;
        }
        if (!base) break;
        const up = base.lastIndexOf('/node_modules/');
        base = up === -1 ? '' : base.slice(0, up);
      }
    }
  }
  for (const key of Object.keys(packages)) if (!reached.has(key)) delete packages[key];
  writeFileSync(lockPath, JSON.stringify(lock, null, 2));
}

/** Installs the runtime; the caller holds the lock. Returns true on success. */
function install(fp) {
  const started = Date.now();
  log(`installing cairn's runtime into ${RUNTIME} (npm ci; builds the SQLite driver and compiles cairn)`);
  try {
    rmSync(STAGING, { recursive: true, force: true });
    mkdirSync(STAGING, { recursive: true });
    for (const rel of SOURCES) cpSync(join(ROOT, rel), join(STAGING, rel), { recursive: true, filter: isSource });
    pruneDevDependencies(STAGING);
    const logFd = openSync(LOG, 'a');
    const npmFrom = statSync(LOG).size; // npm's output starts here in the log, to tell the cause of a failure
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const ci = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: STAGING, stdio: ['ignore', logFd, logFd], shell: process.platform === 'win32' });
    closeSync(logFd);
    if (ci.error || ci.status !== 0) {
      const output = readFileSync(LOG, 'utf8').slice(npmFrom);
      throw Object.assign(new Error(`npm ci failed (${ci.error?.message ?? `exit ${ci.status}`})`), { cause: installFailureCause({ spawnError: ci.error, exitCode: ci.status, output }) });
    }
    const check = spawnSync(process.execPath, [join(STAGING, 'bin', 'cairn.js'), '--version'], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`the installed cairn does not start: ${check.stderr.trim()}`);
    writeFileSync(join(STAGING, MARKER), JSON.stringify({ fingerprint: fp, version: check.stdout.trim(), node: process.version, installedAt: new Date().toISOString() }));
    const old = `${RUNTIME}.old-${process.pid}`;
    if (existsSync(RUNTIME)) renameSync(RUNTIME, old);
    renameSync(STAGING, RUNTIME);
    rmSync(old, { recursive: true, force: true });
    rmSync(FAILED, { force: true });
    log(`installed cairn ${check.stdout.trim()} in ${Math.round((Date.now() - started) / 1000)} s`);
    return true;
  } catch (err) {
    const cause = typeof err.cause === 'string' ? err.cause : err.message;
    log(`install failed: ${err.message}; cause: ${cause}`);
    writeFileSync(FAILED, JSON.stringify({ fingerprint: fp, at: Date.now(), error: err.message, cause }));
    rmSync(STAGING, { recursive: true, force: true });
    return false;
  }
}

/** Installs when no one else is installing; true when this process did the install. */
function installIfFree(fp) {
  if (!tryLock()) return false;
  try {
    if (!installed(fp)) install(fp);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
  return true;
}

let lastBackgroundStart = 0;

/** Starts the install in a detached process, unless one is running, was just started, or just failed. */
function installInBackground(fp) {
  if (existsSync(LOCK) && !lockHolder()?.stale) return;
  if (recentFailure(fp) || Date.now() - lastBackgroundStart < 5000) return;
  lastBackgroundStart = Date.now();
  mkdirSync(DATA, { recursive: true });
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), INSTALL_FLAG], { detached: true, stdio: 'ignore', env: { ...process.env, CLAUDE_PLUGIN_DATA: DATA } });
  child.unref();
}

/** Waits until the runtime matches `fp`, installing it here when no one else is. Resolves false on failure. */
async function waitForRuntime(fp, { installHere }) {
  for (let announced = false; ; ) {
    if (installed(fp)) return true;
    const failure = recentFailure(fp);
    if (failure && !existsSync(LOCK)) return false;
    if (failure) {
      // The install that just failed is still letting go of its lock: no retry starts while a failure is
      // recent, so this is the end of that attempt, not a new set-up to announce.
      await sleep(100);
      continue;
    }
    if (installHere) {
      if (!announced) process.stderr.write(`cairn: setting up its runtime in ${RUNTIME} (first start only, about 2–3 minutes); log: ${LOG}\n`);
      announced = true;
      if (installIfFree(fp)) return installed(fp);
    } else if (!existsSync(LOCK)) {
      installInBackground(fp);
    }
    await sleep(500);
  }
}

function runtimeBin() {
  return join(RUNTIME, 'bin', 'cairn.js');
}

/** Runs cairn from the runtime in this process (stdin and stdout stay the caller's). */
async function runCairn(args) {
  process.argv = [process.argv[0], runtimeBin(), ...args];
  await import(pathToFileURL(runtimeBin()).href);
}

/** Reads what Claude Code writes to a hook's stdin, so it never sees a closed pipe; gives up after a second. */
function drainStdin() {
  return new Promise((resolve) => {
    if (process.stdin.isTTY) return resolve();
    const done = () => resolve();
    process.stdin.on('data', () => {}).on('end', done).on('error', done);
    setTimeout(done, 1000).unref();
  });
}

async function hookWhileMissing(fp, event) {
  await drainStdin();
  installInBackground(fp);
  if (event !== 'session-start') return;
  const failure = recentFailure(fp);
  const systemMessage = failure
    ? `cairn could not set up its runtime: ${failureCause(failure)}. It tries again in a few minutes; details in ${LOG}`
    : `cairn is setting up its runtime (first start only, about 2–3 minutes); its memory tools appear when it is ready. Log: ${LOG}`;
  process.stdout.write(`${JSON.stringify({ systemMessage })}\n`);
}

/**
 * Serves MCP over stdio while the runtime installs: the handshake is answered at once with no tools, then
 * the connection is handed to the real server (which is initialized with the client's own request) and the
 * client is told the tool list changed.
 */
async function mcpWhileInstalling(fp, args) {
  const failure = recentFailure(fp);
  const NOTE = failure
    ? `cairn could not set up its runtime: ${failureCause(failure)}. It has no tools until that is fixed; details in ${LOG}`
    : 'cairn is still setting up its runtime (first start only, about 2–3 minutes): it has no tools yet, and they appear on their own when it is ready.';
  const send = (msg) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
  let initialize = null;
  let initialized = null;
  let forward = null; // set once the real server takes over
  const queued = [];
  createInterface({ input: process.stdin })
    .on('line', (line) => {
      if (forward) return forward(line);
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        return;
      }
      if (msg.method === 'initialize') {
        initialize = msg;
        send({ id: msg.id, result: { protocolVersion: msg.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'cairn (setting up)', title: failure ? 'cairn: set-up failed' : 'cairn: still setting up, tools in 2–3 minutes', version: 'setting-up' }, instructions: NOTE } });
      } else if (msg.method === 'notifications/initialized') initialized = msg;
      else if (msg.id === undefined || !msg.method) return;
      else if (msg.method === 'tools/list') send({ id: msg.id, result: { tools: [] } });
      else if (msg.method === 'ping') send({ id: msg.id, result: {} });
      else if (msg.method === 'tools/call') send({ id: msg.id, result: { content: [{ type: 'text', text: NOTE }], isError: true } });
      else send({ id: msg.id, error: { code: -32601, message: NOTE } });
    })
    .on('close', () => (forward ? forward(null) : process.exit(0)));

  // A failed install leaves the placeholder up, saying why (a server that exits only shows as "failed" in
  // the agent's list); it tries again once the failure is old enough, and hands over when that works.
  for (let told = false; !(await waitForRuntime(fp, { installHere: false })); await sleep(30_000)) {
    if (!told) process.stderr.write(cannotSetUp());
    told = true;
  }
  log('runtime ready: handing the MCP connection to cairn');
  const child = spawn(process.execPath, [runtimeBin(), ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.on('exit', (code) => process.exit(code ?? 1));
  const HANDSHAKE_ID = 'cairn-launcher-initialize';
  let handshaking = Boolean(initialize);
  forward = (line) => (line === null ? child.stdin.end() : handshaking ? queued.push(line) : child.stdin.write(`${line}\n`));
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (handshaking) {
      if (readJsonLine(line)?.id !== HANDSHAKE_ID) return;
      handshaking = false;
      if (initialized) child.stdin.write(`${JSON.stringify(initialized)}\n`);
      for (const q of queued.splice(0)) child.stdin.write(`${q}\n`);
      send({ method: 'notifications/tools/list_changed' });
      return;
    }
    process.stdout.write(`${line}\n`);
  });
  if (initialize) child.stdin.write(`${JSON.stringify({ ...initialize, id: HANDSHAKE_ID })}\n`);
}

function readJsonLine(line) {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}

async function main(args) {
  if (args[0] === INSTALL_FLAG) {
    installIfFree(fingerprint());
    return;
  }
  // Outside Claude Code, a built checkout (npm ci in the repository) runs directly.
  if (!process.env.CLAUDE_PLUGIN_DATA && existsSync(join(ROOT, 'dist', 'src', 'surfaces', 'cli', 'main.js'))) {
    process.argv = [process.argv[0], join(ROOT, 'bin', 'cairn.js'), ...args];
    await import(pathToFileURL(join(ROOT, 'bin', 'cairn.js')).href);
    return;
  }
  const fp = fingerprint();
  if (installed(fp)) return runCairn(args);
  if (args[0] === 'hook') {
    try {
      await hookWhileMissing(fp, args[1]);
    } catch (err) {
      log(`hook ${args[1]} while the runtime is missing: ${err.message}`);
    }
    process.exit(0);
  }
  if (args[0] === 'mcp') return mcpWhileInstalling(fp, args);
  if (!(await waitForRuntime(fp, { installHere: true }))) {
    process.stderr.write(cannotSetUp());
    process.exit(1);
  }
  return runCairn(args);
}

await main(process.argv.slice(2));
