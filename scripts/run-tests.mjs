#!/usr/bin/env node
// Runs every compiled *.test.js under dist/ with node's test runner. Node 20 cannot take globs, and given a
// folder it would also run every .js file under a test/ folder (fixtures, child scripts, shared suites),
// so the files are listed here. Extra arguments filter by substring: node scripts/run-tests.mjs durability
//
// What a person sees: each failure with where it is and what was expected, the skipped suites with how to
// run them, and the totals (scripts/test-summary-reporter.mjs); node's full spec output goes to
// test-artifacts/test-log.txt. The tests run with HOME and the XDG folders in a throwaway directory, so
// nothing they do can write into the real home; npm keeps the real cache and user config (the plugin
// tests install packages).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { homedir, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const dist = resolve(process.env.CAIRN_TEST_DIST ?? join(root, 'dist'));
const artifacts = resolve(process.env.CAIRN_TEST_ARTIFACTS ?? join(root, 'test-artifacts'));
const filters = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const passThrough = process.argv.slice(2).filter((a) => a.startsWith('--'));

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : walk(p);
    return e.name.endsWith('.test.js') ? [p] : [];
  });
}

/**
 * The longest files (40 s to two minutes each on a 2-core machine, as test-artifacts/file-times.txt lists them;
 * a few seconds to half a minute for most others; locomo-replay when the LoCoMo data is there) start first,
 * longest first, so the two workers finish together instead of one of them running a long file alone at the
 * end. Any other file follows in name order; a name here that no longer exists is ignored.
 */
const LONGEST_FIRST = [
  'test/e2e/cli.test.js',
  'test/durability/crash.test.js',
  'test/e2e/claude-code.test.js',
  'test/contract/postgres-store.test.js',
  'test/e2e/http-auth.test.js',
  'test/e2e/plugin-launcher.test.js',
  'test/durability/locomo-replay.test.js',
  'test/e2e/brain-page-curate.test.js',
  'src/core/engine.test.js',
  'test/security.test.js',
  'test/related-terms.test.js',
  'test/durability/concurrency.test.js',
];
const rank = (f) => {
  const i = LONGEST_FIRST.indexOf(relative(dist, f).split('\\').join('/'));
  return i < 0 ? LONGEST_FIRST.length : i;
};
const files = (existsSync(dist) ? walk(dist) : [])
  .filter((f) => !relative(dist, f).startsWith('bench'))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort()
  .sort((a, b) => rank(a) - rank(b));
if (files.length === 0) {
  console.error(`no test files found under ${relative(process.cwd(), dist) || '.'}${filters.length ? ` matching ${filters.join(', ')}` : ''} (run npm run build first)`);
  process.exit(1);
}

mkdirSync(artifacts, { recursive: true });
const log = join(artifacts, 'test-log.txt');
const realHome = process.env.HOME || homedir();
const home = mkdtempSync(join(tmpdir(), 'cairn-test-home-'));
const npmrc = join(realHome, '.npmrc');
const env = {
  ...process.env,
  HOME: home,
  XDG_CONFIG_HOME: join(home, '.config'),
  XDG_DATA_HOME: join(home, '.local', 'share'),
  XDG_CACHE_HOME: join(home, '.cache'),
  XDG_STATE_HOME: join(home, '.local', 'state'),
  npm_config_cache: process.env.npm_config_cache || join(realHome, '.npm'),
  ...(process.env.npm_config_userconfig || existsSync(npmrc) ? { npm_config_userconfig: process.env.npm_config_userconfig || npmrc } : {}),
  CAIRN_TEST_ROOT: root,
  CAIRN_TEST_DIST: dist,
  CAIRN_TEST_FILES: String(files.length),
  CAIRN_TEST_LOG: relative(process.cwd(), log),
  CAIRN_TEST_TIMES: join(artifacts, 'file-times.txt'),
};
// A reporter asked for on the command line replaces both of ours.
const reporters = passThrough.some((a) => a.startsWith('--test-reporter'))
  ? []
  : [`--test-reporter=${join(root, 'scripts', 'test-summary-reporter.mjs')}`, '--test-reporter-destination=stdout', '--test-reporter=spec', `--test-reporter-destination=${log}`];
console.log(`running ${files.length} test file${files.length === 1 ? '' : 's'}; the full log goes to ${relative(process.cwd(), log)}`);
try {
  const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...reporters, ...passThrough, ...files], { stdio: 'inherit', cwd: root, env });
  process.exitCode = r.status ?? 1;
} finally {
  rmSync(home, { recursive: true, force: true });
}
