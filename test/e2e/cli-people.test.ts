/**
 * The CLI as a person meets it: the grouped help, usage errors that point at the command's own help,
 * `cairn hook --help`, "nothing found" that says where it looked, and import's progress with its total.
 * Every case spawns the real bin in a sandbox home.
 */
import * as assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BIN, cli, collect, createSandbox, type Run, type Sandbox } from './mcp-scenario.js';

let box: Sandbox;

function spawnRun(command: string, args: string[]): Promise<Run> {
  return collect(command, args, { cwd: box.cwd, env: { ...box.env, CAIRN_EMBEDDER: 'none' } });
}

const bare = (args: string[]) => spawnRun(process.execPath, [BIN, ...args]);

describe('the CLI for people', () => {
  before(() => {
    box = createSandbox('cli-people');
  });
  after(() => box.remove());

  it('--help lists the commands in four groups, each command once', async () => {
    const help = await bare(['--help']);
    assert.equal(help.code, 0, help.stderr);
    const headings = [...help.stdout.matchAll(/^(\S[^\n]*):$/gmu)].map((m) => m[1]);
    assert.deepEqual(headings, ['Options', 'Daily use', 'Agents and set-up', 'Team server', 'Maintenance and proofs', 'Commands']);
    const section = (name: string) => help.stdout.split(`${name}:\n`)[1]!.split('\n\n')[0]!;
    const names = (name: string) => section(name).split('\n').map((l) => l.trim().split(' ')[0]);
    assert.deepEqual(names('Daily use').slice(0, 3), ['save', 'search', 'context']);
    assert.deepEqual(names('Agents and set-up'), ['init', 'mcp', 'hook', 'doctor']);
    assert.deepEqual(names('Team server'), ['serve', 'token', 'quarantine']);
    assert.ok(names('Maintenance and proofs').includes('verify'));
    assert.deepEqual(names('Commands'), ['help'], 'nothing is left ungrouped');
    assert.match(help.stdout, /cairn <command> --help/u, 'says where each command’s options are');
  });

  it('a usage error points at the help of the command it came from', async () => {
    const missing = await bare(['save']);
    assert.equal(missing.code, 2);
    assert.equal(missing.stderr, "cairn: missing required argument 'text' (run cairn save --help for usage)\n");
    const choice = await bare(['search', 'x', '--bogus']);
    assert.match(choice.stderr, /^cairn: unknown option '--bogus' \(run cairn search --help for usage\)\n$/u);
    const nested = await bare(['token', 'bogus']);
    assert.match(nested.stderr, /\(run cairn token --help for usage\)\n$/u);
    const top = await bare(['sav']);
    assert.match(top.stderr, /Did you mean save\?\) \(run cairn --help for usage\)\n$/u);
  });

  it('cairn hook --help prints the hook help, exits 0 and writes no hooks.log', async () => {
    for (const args of [['hook', '--help'], ['hook', '-h']]) {
      const r = await bare(args);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^Usage: cairn hook \[options\] <event>/u);
      assert.doesNotMatch(r.stdout + r.stderr, /unknown event/u);
    }
    assert.equal(existsSync(join(box.env['XDG_DATA_HOME']!, 'cairn', 'hooks.log')), false, 'no warning was logged');
  });

  it('search and context with nothing found name the namespace searched and the namespaces that hold memories', async () => {
    const empty = await cli(box, ['search', 'rounding']);
    assert.equal(empty.code, 0, empty.stderr);
    assert.equal(empty.stdout, `no memories found in namespace ${box.cwd}\n`, 'with no memory anywhere, only where it looked');
    const emptyContext = await cli(box, ['context', 'fix invoice rounding']);
    assert.equal(emptyContext.stdout, `nothing to put in a context: no memory or route matches in namespace ${box.cwd}\n`);
    for (const ns of ['acme/shop', 'acme/api']) {
      const saved = await cli(box, ['save', 'VAT is rounded per invoice line', '--namespace', ns]);
      assert.equal(saved.code, 0, saved.stderr);
    }
    const elsewhere = await cli(box, ['search', 'rounding']);
    assert.equal(elsewhere.stdout, `no memories found in namespace ${box.cwd}\nmemories are held in 2 other namespaces: acme/api (1), acme/shop (1); search one with --namespace <ns>\n`);
    const context = await cli(box, ['context', 'rounding']);
    assert.match(context.stdout, /^nothing to put in a context: no memory or route matches in namespace \S+\nmemories are held in 2 other namespaces/u);
    const found = await cli(box, ['search', 'rounding', '--namespace', 'acme/shop']);
    assert.match(found.stdout, /^ 1\. \S+ .*VAT is rounded per invoice line/u, 'the control: the namespace named does hold it');
    // Memories there, but none clears the relevance floor: "nothing relevant", not "nothing stored".
    const offTopic = await cli(box, ['search', 'recipe for sourdough bread', '--namespace', 'acme/shop']);
    assert.equal(offTopic.code, 0, offTopic.stderr);
    assert.match(offTopic.stdout, /^nothing relevant recalled in namespace acme\/shop: it holds 1 memory, none matching well enough\n/u);
  });

  it('import on a terminal shows the bar with the total from its first line', async () => {
    const file = join(box.dir, 'notes.jsonl');
    const lines = Array.from({ length: 120 }, (_, i) => JSON.stringify({ text: `Imported note number ${i} about the release checklist` }));
    writeFileSync(file, `${lines.join('\n')}\n\n`);
    // `script` runs the command on a pseudo-terminal, so stderr is a TTY as in a person's shell.
    const command = [process.execPath, BIN, 'import', file, '--db', box.db, '--namespace', 'imports'].map((w) => `'${w}'`).join(' ');
    const r = await spawnRun('script', ['-qec', command, '/dev/null']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const first = r.stdout.split('\r').find((s) => s.startsWith('importing'));
    assert.equal(first, `importing [${'-'.repeat(30)}] 0/120`, JSON.stringify(r.stdout));
    assert.match(r.stdout, new RegExp(`\\rimporting \\[${'#'.repeat(30)}\\] 120/120\\r?\\n`, 'u'));
    assert.match(r.stdout, /imported 120, duplicate 0, rejected 0/u);
  });
});
