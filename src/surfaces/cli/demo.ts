import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `cairn demo`: the main job in one minute. A "Monday" process saves the decisions a session made; a fresh
 * "Tuesday" process, which shares nothing with it but the database file, recalls them by paraphrase and by
 * identifier; then a decision is replaced and the old one leaves recall. Every step is its own OS process
 * running the real `cairn` binary, exactly as agents and hooks would.
 */

const NAMESPACE = 'demo/acme-shop';

const MONDAY: { args: string[]; say: string }[] = [
  { args: ['The API allows 100 requests per minute per client.', '--kind', 'constraint', '--importance', '8'], say: 'rate limit' },
  { args: ['Leave the payment module alone until the PSP migration ships.', '--kind', 'constraint', '--importance', '9'], say: 'hands off payments' },
  { args: ['VAT is rounded per invoice line, never on the invoice total.', '--kind', 'decision', '--tags', 'tax,invoices'], say: 'VAT rounding' },
  { args: ['Database column names use snake_case.', '--kind', 'convention'], say: 'naming' },
  { args: ['PAYMENTS_V2_ENABLED must stay false in production until finance signs off.', '--kind', 'gotcha'], say: 'feature flag' },
];

const TUESDAY: { query: string; expect: string; why: string }[] = [
  { query: 'what is the traffic limit', expect: '100 requests per minute', why: 'paraphrase: no word in common' },
  { query: 'how do we round tax on invoices', expect: 'VAT is rounded per invoice line', why: 'paraphrase' },
  { query: 'PAYMENTS_V2_ENABLED', expect: 'must stay false in production', why: 'exact identifier' },
  { query: 'can I refactor the checkout payment code', expect: 'Leave the payment module alone', why: 'constraint before touching code' },
];

function binPath(): string {
  // dist/src/surfaces/cli/demo.js → bin/cairn.js
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'bin', 'cairn.js');
}

interface CairnRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

function run(db: string, args: string[], env: NodeJS.ProcessEnv): CairnRun {
  const started = performance.now();
  const r = spawnSync(process.execPath, [binPath(), ...args, '--db', db, '--namespace', NAMESPACE], { encoding: 'utf8', env });
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr, ms: performance.now() - started };
}

function fail(step: string, r: CairnRun): never {
  throw new Error(`demo step "${step}" failed (exit ${r.code}): ${r.stderr.trim()}`);
}

export async function runDemo(options: { out: (s: string) => void; dbPath?: string | undefined; keep?: boolean }): Promise<void> {
  const { out } = options;
  const dir = options.dbPath ? null : mkdtempSync(join(tmpdir(), 'cairn-demo-'));
  const db = options.dbPath ?? join(dir as string, 'demo.db');
  // The demo touches nothing in the home folder: the vectors its searches keep go to a folder of its own.
  const cache = mkdtempSync(join(tmpdir(), 'cairn-demo-cache-'));
  const env = { ...process.env, XDG_CACHE_HOME: cache };
  const cairn = (database: string, args: string[]) => run(database, args, env);
  let passed = 0;
  try {
    out(`cairn demo: database ${db}, namespace ${NAMESPACE}\n`);
    out('Monday: a session works on the shop and saves what the user decided (one process per save, as a hook would).');
    for (const step of MONDAY) {
      const r = cairn(db, ['save', ...step.args, '--json']);
      if (r.code !== 0) fail(`save ${step.say}`, r);
      const saved = JSON.parse(r.stdout) as { id: string; duplicate: boolean };
      out(`  saved ${saved.id}  ${JSON.stringify(step.args[0])}${saved.duplicate ? ' (already known)' : ''}`);
    }
    out('');
    out('Tuesday: a fresh process, nothing in its context, asks in its own words.');
    for (const q of TUESDAY) {
      const r = cairn(db, ['search', q.query, '--limit', '3', '--json']);
      if (r.code !== 0) fail(`search ${q.query}`, r);
      const { results } = JSON.parse(r.stdout) as { results: { id: string; text: string; score: number }[] };
      const top = results[0];
      const ok = Boolean(top && top.text.includes(q.expect));
      if (ok) passed++;
      out(`  ${ok ? 'ok ' : 'MISS'} "${q.query}"  (${q.why}, ${Math.round(r.ms)} ms)`);
      out(`       → ${top ? top.text : 'nothing found'}`);
    }

    out('\nThe session also records where the tax code lives (a route), for whoever touches it next.');
    const route = cairn(db, ['route', '--title', 'checkout tax', '--description', 'VAT and tax computation for checkout and invoices', '--paths', 'shop/checkout/tax.py,shop/billing/invoice.py', '--json']);
    if (route.code !== 0) fail('save route', route);
    out('  saved a route: checkout tax lives in shop/checkout/tax.py and shop/billing/invoice.py');
    out('\nContext pack for an agent starting "fix rounding on invoices", within 200 tokens:');
    const ctx = cairn(db, ['context', 'fix rounding on invoices', '--budget', '200', '--json']);
    if (ctx.code !== 0) fail('context', ctx);
    const pack = JSON.parse(ctx.stdout) as { text: string; tokens: number };
    out(pack.text.split('\n').map((l) => `  | ${l}`).join('\n'));
    out(`  (${pack.tokens} tokens)`);

    out('\nWednesday: the limit changes. The new note supersedes the old one, which leaves recall.');
    const before = JSON.parse(cairn(db, ['search', 'requests per minute', '--limit', '1', '--json']).stdout) as { results: { id: string }[] };
    const oldId = before.results[0]?.id;
    if (!oldId) throw new Error('demo: the rate-limit note was not found');
    const sup = cairn(db, ['supersede', oldId, 'The API allows 300 requests per minute per client since the gateway upgrade.', '--json']);
    if (sup.code !== 0) fail('supersede', sup);
    const after = JSON.parse(cairn(db, ['search', 'what is the traffic limit', '--limit', '3', '--json']).stdout) as { results: { id: string; text: string }[] };
    const stillOld = after.results.some((r) => r.id === oldId);
    const newTop = after.results[0]?.text.includes('300 requests') ?? false;
    if (newTop && !stillOld) passed++;
    out(`  ${newTop && !stillOld ? 'ok ' : 'MISS'} "what is the traffic limit" → ${after.results[0]?.text ?? 'nothing'}`);
    out(`       the old note ${oldId} is ${stillOld ? 'STILL recalled' : 'no longer recalled (cairn restore can bring it back)'}`);

    const total = TUESDAY.length + 1;
    out(`\n${passed}/${total} recalls correct.${options.keep || options.dbPath ? ` Database kept at ${db}.` : ''}`);
    if (passed !== total) process.exitCode = 1;
  } finally {
    rmSync(cache, { recursive: true, force: true });
    if (dir && !options.keep) rmSync(dir, { recursive: true, force: true });
  }
}
