#!/usr/bin/env node
// Runs every compiled *.test.js under dist/ with node's test runner. Node 20 cannot take globs, and given a
// folder it would also run every .js file under a test/ folder (fixtures, child scripts, shared suites),
// so the files are listed here. Extra arguments filter by substring: node scripts/run-tests.mjs durability
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const dist = join(root, 'dist');
const filters = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const passThrough = process.argv.slice(2).filter((a) => a.startsWith('--'));

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : walk(p);
    return e.name.endsWith('.test.js') ? [p] : [];
  });
}

const files = walk(dist)
  .filter((f) => !relative(dist, f).startsWith('bench'))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error('no test files found under dist/ (run npm run build first)');
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...passThrough, ...files], { stdio: 'inherit', cwd: root });
process.exit(r.status ?? 1);
