import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecallBatch, type PendingRecall } from './recall-batch.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `ok()` holds, at most `ms` (a loaded machine runs timers late). */
async function until(ok: () => boolean, ms = 10_000): Promise<void> {
  const started = Date.now();
  while (!ok() && Date.now() - started < ms) await sleep(10);
}

describe('RecallBatch (recall counts written in batches)', () => {
  it('writes a full batch before record returns, in order, and a partial one after the delay', async () => {
    const written: PendingRecall[][] = [];
    const batch = new RecallBatch(async (b) => void written.push(b), undefined, { batch: 3, delayMs: 60_000 });
    await batch.record('ns', ['a'], 't1');
    await batch.record('ns', [], 't1');
    await batch.record('ns', ['b', 'c'], 't2');
    assert.equal(written.length, 0, 'two searches of three wait (an empty one is no search)');
    await batch.record('other', ['d'], 't3');
    assert.deepEqual(written, [
      [
        { namespace: 'ns', ids: ['a'], at: 't1' },
        { namespace: 'ns', ids: ['b', 'c'], at: 't2' },
        { namespace: 'other', ids: ['d'], at: 't3' },
      ],
    ]);
    const timed = new RecallBatch(async (b) => void written.push(b), undefined, { batch: 3, delayMs: 30 });
    await timed.record('ns', ['e'], 't4');
    await until(() => written.length === 2);
    assert.deepEqual(written[1], [{ namespace: 'ns', ids: ['e'], at: 't4' }], 'written by the timer');
  });

  it('a flush waits for a write already under way, so what it returns after is written', async () => {
    const written: PendingRecall[][] = [];
    let release: () => void = () => undefined;
    let slow = true;
    const batch = new RecallBatch(
      (b) =>
        slow
          ? new Promise<void>((resolve) => {
              release = () => {
                written.push(b);
                resolve();
              };
            })
          : Promise.resolve(void written.push(b)),
      undefined,
      { batch: 100, delayMs: 20 },
    );
    await batch.record('ns', ['a'], 't1');
    await sleep(100); // the timer has started the slow write
    slow = false;
    let flushed = false;
    const flush = batch.flush().then(() => (flushed = true));
    await sleep(50);
    assert.equal(flushed, false, 'still waiting for the timer write');
    release();
    await flush;
    assert.deepEqual(written, [[{ namespace: 'ns', ids: ['a'], at: 't1' }]]);
  });

  it('close hands over what waits and keeps nothing after; a failed timer write is logged', async () => {
    const logged: string[] = [];
    const batch = new RecallBatch(async () => Promise.reject(new Error('server gone')), (m) => logged.push(m), { batch: 100, delayMs: 20 });
    await batch.record('ns', ['a'], 't1');
    await until(() => logged.length > 0);
    assert.deepEqual(logged, ['recall counts not recorded: server gone']);
    await batch.record('ns', ['b'], 't2');
    assert.deepEqual(batch.close(), [{ namespace: 'ns', ids: ['b'], at: 't2' }]);
    await batch.record('ns', ['c'], 't3');
    assert.deepEqual(batch.close(), [], 'nothing kept after close');
  });
});
