import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Store } from '../../src/interfaces/store.js';
import { bodyOf } from '../../src/core/events.js';

export const here = dirname(fileURLToPath(import.meta.url));
/** The compiled child script (dist/test/fixtures/turn-writer.js). */
export const writerScript = join(here, '..', 'fixtures', 'turn-writer.js');
/** Repository root, from dist/test/durability. */
export const repoRoot = join(here, '..', '..', '..');

export function startWriter(args: string[]): ChildProcess & { lines: string[]; stderrText: () => string } {
  const child = spawn(process.execPath, [writerScript, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }) as ChildProcess & {
    lines: string[];
    stderrText: () => string;
  };
  child.lines = [];
  let buf = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    const parts = buf.split('\n');
    buf = parts.pop() ?? '';
    child.lines.push(...parts);
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.stderrText = () => err;
  return child;
}

export function waitForLine(child: ReturnType<typeof startWriter>, predicate: (line: string) => boolean, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const tick = () => {
      if (child.lines.some(predicate)) return resolve();
      if (child.exitCode !== null) return reject(new Error(`child exited ${child.exitCode} before the expected line: ${child.stderrText()}`));
      if (Date.now() - started > timeoutMs) return reject(new Error('timed out waiting for the child'));
      setTimeout(tick, 5);
    };
    tick();
  });
}

export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/**
 * Checks that no turn is half-written: every item a turn event names is a memory, and every memory written
 * by a turn is named by exactly one turn event. Returns the number of turns.
 */
export async function assertTurnsWhole(store: Store, namespace: string): Promise<number> {
  const named = new Map<string, number>();
  let turns = 0;
  let after = 0;
  for (;;) {
    const page = await store.events(namespace, after, 5000);
    if (page.length === 0) break;
    for (const e of page) {
      const body = bodyOf(e);
      if (body.type === 'turn.committed') {
        turns++;
        for (const id of body.items) named.set(id, (named.get(id) ?? 0) + 1);
      }
    }
    after = page[page.length - 1]!.seq;
  }
  const memories = new Set<string>();
  for await (const page of store.iterateMemories(namespace)) {
    for (const m of page) {
      memories.add(m.id);
      if (m.metadata.source === 'turn' && !named.has(m.id)) throw new Error(`memory ${m.id} has no turn event: half-written turn`);
    }
  }
  for (const id of named.keys()) if (!memories.has(id)) throw new Error(`turn event names ${id}, which is not stored: half-written turn`);
  return turns;
}
