import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { findGaps, verify } from '../../src/core/replay.js';
import { Engine } from '../../src/core/engine.js';
import { createGptTokenCounter } from '../../src/adapters/tokenizer/gpt-token-counter.js';
import { openStoreAt } from '../../src/surfaces/open-engine.js';
import { assertTurnsWhole, exited, startWriter, waitForLine } from './helpers.js';
import { pgSkip, storeFactories, type StoreFactory } from '../helpers/stores.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-durable-conc-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// Every backend of test/helpers/stores.ts: the writers are separate processes reaching one database by its
// location (a file, or a PostgreSQL database), as agents on several machines would.
for (const factory of storeFactories()) describeConcurrency(factory);
if (pgSkip) describe('several processes committing turns to one database on postgres', { skip: pgSkip }, () => {});

function describeConcurrency(factory: StoreFactory): void {
  describe(`several processes committing turns to one database on ${factory.name}`, () => {
    it('keeps every event, gap-free sequences, whole turns, and a verifiable state', { timeout: 300_000 }, async () => {
      const shared = await factory.shared();
      after(() => shared.drop());
      const db = shared.location;
      const TURNS = 25;
      // Four writers: two share a namespace (their sequence numbers interleave), two have their own.
      const plan = [
        ['acme/shared', 'w1'],
        ['acme/shared', 'w2'],
        ['acme/one', 'w3'],
        ['acme/two', 'w4'],
      ] as const;
      const children = plan.map(([ns, session]) => startWriter(['turns', db, ns, session, String(TURNS), '4']));
      const results = await Promise.all(children.map((c) => exited(c)));
      results.forEach((r, i) => assert.equal(r.code, 0, `writer ${i} failed: ${children[i]!.stderrText()}`));
      for (const c of children) assert.doesNotMatch(c.stderrText(), /SQLITE_BUSY|database is locked/u);

      const store = await openStoreAt(db, { mustExist: false });
      const scratch = await factory.make();
      try {
        assert.deepEqual(await findGaps(store), []);
        assert.equal(await assertTurnsWhole(store, 'acme/shared'), 2 * TURNS);
        assert.equal(await assertTurnsWhole(store, 'acme/one'), TURNS);
        assert.equal(await assertTurnsWhole(store, 'acme/two'), TURNS);
        const scopes = new Map((await store.scopes()).map((s) => [s.scope, s]));
        // each turn = turn event + one item event
        assert.equal(scopes.get('acme/shared')?.lastSeq, 4 * TURNS);
        assert.equal(scopes.get('acme/one')?.lastSeq, 2 * TURNS);
        const report = await verify(store, scratch);
        assert.ok(report.ok, JSON.stringify(report));
      } finally {
        await scratch.close();
        await store.close();
      }
    });

    it('resolves a snapshot race by compare-and-swap: one checkpoint wins, the other gets CONFLICT', { timeout: 120_000 }, async () => {
      const shared = await factory.shared();
      after(() => shared.drop());
      const db = shared.location;
      const engine = new Engine({ store: await openStoreAt(db, { mustExist: false }), embedder: null, tokenCounter: createGptTokenCounter(), defaultNamespace: 'acme/race' });
      for (let i = 0; i < 5; i++) await engine.commitTurn({ session: 's', turn: i, text: `turn ${i}: the cache key includes the tenant id ${i}` });
      const first = await engine.checkpoint();
      assert.equal(first.version, 1);
      await engine.store.close();

      for (let round = 0; round < 3; round++) {
        const barrier = join(dir, `go-${factory.name}-${round}`);
        const expected: string = String(first.version + round);
        const racers: ReturnType<typeof startWriter>[] = [0, 1].map(() => startWriter(['checkpoint', db, 'acme/race', expected, barrier]));
        await Promise.all(racers.map((r) => waitForLine(r, (l) => l === 'ready')));
        writeFileSync(barrier, 'go');
        await Promise.all(racers.map((r) => exited(r)));
        const outcomes: { ok: boolean; code?: string; version?: number }[] = racers.map((r) => JSON.parse(r.lines.find((l) => l.startsWith('{')) ?? '{}') as { ok: boolean; code?: string; version?: number });
        assert.equal(outcomes.filter((o) => o.ok).length, 1, JSON.stringify(outcomes));
        const loser = outcomes.find((o) => !o.ok);
        assert.equal(loser?.code, 'CONFLICT');
        assert.equal(outcomes.find((o) => o.ok)?.version, Number(expected) + 1);
      }
      const store = await openStoreAt(db, { mustExist: false });
      assert.equal((await store.getSnapshot('acme/race'))?.version, 4);
      await store.close();
    });
  });
}
