// The `npm test` reporter for people: each failure as it happens (where it is, what was expected), then the
// skipped suites with why and how to run them, then node's own totals. The full spec output goes to a log
// file beside it (see run-tests.mjs). Node's test runner loads this as a custom reporter.
import { writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';

const root = process.env.CAIRN_TEST_ROOT ?? process.cwd();
const dist = process.env.CAIRN_TEST_DIST ?? root;
const totalFiles = Number(process.env.CAIRN_TEST_FILES ?? 0);
const logFile = process.env.CAIRN_TEST_LOG ?? ''; // as the person who ran the tests sees it
const timesFile = process.env.CAIRN_TEST_TIMES ?? ''; // absolute; as seen, it sits beside the log
const progress = Boolean(process.stderr.isTTY) && totalFiles > 0;
const red = (s) => (process.stdout.isTTY ? `\x1b[31m${s}\x1b[0m` : s);

function short(file) {
  return relative(dist, file ?? '').replace(/\.js$/u, '.ts');
}

/** The lines of an error worth reading: its message and the first frames inside the project. */
function describe(error) {
  const cause = error?.cause && typeof error.cause === 'object' ? error.cause : error;
  const message = String(cause?.message ?? cause ?? error?.message ?? 'failed').trimEnd().split('\n').slice(0, 24);
  const frames = String(cause?.stack ?? '')
    .split('\n')
    .filter((l) => /^\s+at /u.test(l) && (l.includes(root) || l.includes(dist)) && !l.includes('node_modules'))
    .slice(0, 3)
    .map((l) => l.trim().replace('file://', '').replace(`${root}/`, '').replace(`${dirname(dist)}/`, ''));
  return [...message, ...frames];
}

export default async function* summary(source) {
  const stacks = new Map(); // file → names by nesting, from test:start
  const skipped = [];
  const todos = [];
  const totals = [];
  let failures = 0;
  let cancelled = 0;
  let filesDone = 0;
  const fileTimes = []; // [seconds, file], for the slowest-files list at the end
  const path = (data) => {
    const names = (stacks.get(data.file) ?? []).slice(0, data.nesting);
    return [short(data.file), ...names, data.name].join(' › ');
  };
  const clearProgress = () => (progress ? '\r\x1b[K' : '');
  for await (const { type, data } of source) {
    if (type === 'test:start') {
      const stack = stacks.get(data.file) ?? [];
      stack[data.nesting] = data.name;
      stack.length = data.nesting + 1;
      stacks.set(data.file, stack);
    } else if (type === 'test:pass') {
      if (data.skip !== undefined) skipped.push(`${path(data)}${typeof data.skip === 'string' ? `: ${data.skip}` : ''}`);
      else if (data.todo !== undefined) todos.push(`${path(data)}${typeof data.todo === 'string' ? `: ${data.todo}` : ''}`);
    } else if (type === 'test:fail') {
      // A todo that fails is a known gap, not a failure (node counts it under todo too).
      if (data.todo !== undefined) {
        todos.push(`${path(data)}${typeof data.todo === 'string' ? `: ${data.todo}` : ''} (still failing)`);
        continue;
      }
      const kind = data.details?.error?.failureType;
      if (kind === 'subtestsFailed') continue; // its failing subtests are reported themselves
      if (kind === 'cancelledByParent') {
        // Cancelled with its suite (a failed hook, a test that never settled): one line, the cause is above or here.
        cancelled++;
        const reason = String(data.details?.error?.message ?? 'cancelled').split('\n')[0];
        yield `${clearProgress()}${red('✖')} ${path(data)} (cancelled: ${reason})\n`;
        continue;
      }
      failures++;
      const lines = describe(data.details?.error);
      yield `${clearProgress()}${red('✖')} ${path(data)}\n${lines.map((l) => `    ${l}`).join('\n')}\n\n`;
    } else if (type === 'test:complete' && data.nesting === 0 && data.name === data.file) {
      filesDone++;
      fileTimes.push([(data.details?.duration_ms ?? 0) / 1000, short(data.file)]);
      const kind = data.details?.error?.failureType;
      if (!data.details?.passed && kind !== 'subtestsFailed' && kind !== undefined) {
        // The file itself failed (it did not load, or crashed outside any test).
        failures++;
        yield `${clearProgress()}${red('✖')} ${short(data.file)} (the file failed to run)\n${describe(data.details?.error).map((l) => `    ${l}`).join('\n')}\n\n`;
      }
      if (progress) process.stderr.write(`\r\x1b[K  ${filesDone}/${totalFiles} test files done…`);
    } else if (type === 'test:diagnostic' && data.nesting === 0 && /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /u.test(data.message)) {
      totals.push(data.message);
    }
  }
  if (progress) process.stderr.write('\r\x1b[K');
  if (skipped.length) yield `Skipped (${skipped.length}), with why and how to run them:\n${skipped.map((s) => `  - ${s}`).join('\n')}\n\n`;
  if (todos.length) yield `Known gaps (todo, not failures):\n${todos.map((s) => `  - ${s}`).join('\n')}\n\n`;
  if (fileTimes.length > 1) {
    // Every file's time goes beside the log, slowest first; the three slowest are named here.
    fileTimes.sort((a, b) => b[0] - a[0]);
    const list = fileTimes.map(([s, f]) => `${s.toFixed(1).padStart(7)}  ${f}`).join('\n');
    if (timesFile) writeFileSync(timesFile, `seconds per test file (two run at a time), slowest first\n${list}\n`);
    yield `Slowest files: ${fileTimes.slice(0, 3).map(([s, f]) => `${f} ${s.toFixed(0)} s`).join(', ')}${timesFile && logFile ? ` (all in ${join(dirname(logFile), basename(timesFile))})` : ''}\n`;
  }
  yield `${totals.map((t) => `# ${t}`).join('\n')}\n`;
  const log = logFile ? `; everything is in ${logFile}` : '';
  if (failures || cancelled) yield `${red(`${failures} failing`)}${cancelled ? `, ${cancelled} cancelled` : ''}: each is shown above${log}\n`;
  else yield `all passed${log}\n`;
}
