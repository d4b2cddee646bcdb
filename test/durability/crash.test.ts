import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createSqliteStore } from '../../src/adapters/sqlite/sqlite-store.js';
import { findGaps, verify } from '../../src/core/replay.js';
import { assertTurnsWhole, exited, startWriter, waitForLine } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-crash-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const KILLS = Number(process.env['CAIRN_CRASH_KILLS'] ?? 50);

describe('crash safety', () => {
  it(`survives ${KILLS} SIGKILLs in the middle of turn commits: verify holds, no half-written turn, no gap`, { timeout: 600_000 }, async () => {
    const db = join(dir, 'crash.db');
    const ns = 'acme/crash';
    let committedSeen = 0;
    let previousTurns = 0;
    for (let i = 0; i < KILLS; i++) {
      const child = startWriter(['turns', db, ns, `s${i}`, '100000', '3']);
      // Once it has committed a turn, let it go on for a random moment, then kill it without warning:
      // the kill lands anywhere in a turn (embedding, inside the transaction, between turns).
      await waitForLine(child, (l) => /^\d+$/u.test(l));
      await new Promise((r) => setTimeout(r, Math.random() * 200));
      child.kill('SIGKILL');
      const { signal } = await exited(child);
      assert.equal(signal, 'SIGKILL', `child ${i} ended on its own: ${child.stderrText()}`);
      committedSeen += child.lines.filter((l) => /^\d+$/u.test(l)).length;

      const store = createSqliteStore({ path: db });
      const scratch = createSqliteStore({ path: ':memory:' });
      try {
        assert.deepEqual(await findGaps(store), [], `gap after kill ${i}`);
        const turns = await assertTurnsWhole(store, ns);
        assert.ok(turns >= previousTurns, 'no committed turn is ever lost');
        previousTurns = turns;
        const report = await verify(store, scratch);
        assert.ok(report.ok, `verify failed after kill ${i}: ${JSON.stringify(report)}`);
      } finally {
        await scratch.close();
        await store.close();
      }
    }
    // The children really were writing when killed (acknowledged commits ≤ stored turns).
    assert.ok(committedSeen >= KILLS, `children committed only ${committedSeen} turns before being killed`);
    assert.ok(previousTurns >= committedSeen, `${committedSeen} acknowledged turns but ${previousTurns} stored`);
  });
});
