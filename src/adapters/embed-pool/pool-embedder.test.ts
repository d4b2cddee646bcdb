import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { after, describe, it } from 'node:test';
import { isCairnError } from '../../interfaces/errors.js';
import { createUseEmbedder } from '../embed-use/use-embedder.js';
import { createPoolEmbedder } from './pool-embedder.js';

const inThread = createUseEmbedder();
const TEXTS = [
  'the build uses pnpm, never npm',
  'deploys go out on Tuesdays after the freeze',
  'a',
  'unicode ✓ 日本語 text with émoji 🎉',
  'x'.repeat(600),
];
const TEN = Array.from({ length: 10 }, (_, i) => `note ${i}: the checkout service retries payment ${i + 1} times`);

describe('embedding pool (worker threads, real model)', () => {
  const pools: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const p of pools) await p.close();
  });

  it('gives exactly the vectors of the in-thread embedder, call for call, while running concurrent calls together', async () => {
    const pool = createPoolEmbedder({ workers: 2 });
    pools.push(pool);
    const calls = [...TEXTS.map((t) => [t]), TEN, TEXTS];
    const fromPool = await Promise.all(calls.map((texts) => pool.embed(texts)));
    for (const [i, texts] of calls.entries()) {
      const expected = await inThread.embed(texts);
      assert.equal(fromPool[i]?.length, texts.length);
      assert.deepEqual(fromPool[i], expected, `call ${i} (${texts.length} texts): bit-for-bit the same vectors`);
    }
    const stats = pool.stats();
    assert.equal(stats.texts, 5 + 10 + 5);
    assert.ok(stats.batches < calls.length, `${calls.length} concurrent calls went out in ${stats.batches} batches`);
    assert.equal(stats.workers, 2);
    assert.ok((pool.loadTimeMs() ?? 0) > 0);
  });

  it("a text without tokens ('') gets the in-thread embedder's vector through the workers, one vector per text, last or alone", async () => {
    const pool = createPoolEmbedder({ workers: 1 });
    pools.push(pool);
    const note = 'deploys go out on Tuesdays after the freeze';
    const [empty] = await inThread.embed(['']);
    assert.equal(empty?.length, 512);
    assert.deepEqual(await pool.embed([note, '']), await inThread.embed([note, '']));
    assert.deepEqual(await pool.embed(['']), [empty]);
    const together = await Promise.all([pool.embed(['']), pool.embed([note])]);
    assert.deepEqual(together.map((v) => v.length), [1, 1], 'in one batch with another call, one vector each');
    assert.deepEqual(together[0]?.[0]?.length, 512);
  });

  it('texts arriving while a batch runs join the next batch', async () => {
    const pool = createPoolEmbedder({ workers: 1 });
    pools.push(pool);
    const questions = ['how do we deploy', 'where are the tests', 'which database', 'who owns billing', 'what is the rate limit', 'how are secrets kept'];
    const answers = await Promise.all(questions.map((q) => pool.embed([q])));
    // The first call goes out alone; the other five arrive while it runs and share the second batch.
    assert.deepEqual(pool.stats(), { workers: 1, batches: 2, texts: 6, largestBatch: 5, restarts: 0 });
    for (const [i, q] of questions.entries()) assert.deepEqual(answers[i], await inThread.embed([q]));
    await pool.embed(['one more']);
    assert.equal(pool.stats().batches, 3, 'an idle pool sends a lone call at once');
  });

  it('a thread that dies fails only its own request, with a clear error, and is replaced', async () => {
    const pool = createPoolEmbedder({ workers: 1, workerUrl: new URL('./crashing-worker.fixture.js', import.meta.url) });
    pools.push(pool);
    await pool.embed(['warm the thread up']);
    const crashed = pool.embed(['__crash__']);
    const queued = pool.embed(['this request waits behind the crash']);
    await assert.rejects(crashed, (err: unknown) => isCairnError(err) && err.code === 'EMBEDDER_UNAVAILABLE' && /embedding thread stopped \(exit code 3\).*retry/u.test(err.message));
    assert.deepEqual(await queued, await inThread.embed(['this request waits behind the crash']), 'the queued request is embedded by the new thread');
    assert.equal(pool.stats().restarts, 1);
    assert.equal(pool.stats().workers, 1);
    assert.deepEqual(await pool.embed(['after the crash']), await inThread.embed(['after the crash']));
  });

  it('on Linux its threads run at a higher nice value than the event loop, which keeps its own', { skip: process.platform !== 'linux' && 'the nice value is per thread only on Linux' }, async () => {
    const base = getPriority();
    const niceOf = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ')[16]);
    const tasks = () => readdirSync('/proc/self/task');
    const before = new Set(tasks());
    const pool = createPoolEmbedder({ workers: 2, nice: 7 });
    pools.push(pool);
    assert.deepEqual(await pool.embed(['deploys go out on Tuesdays']), await inThread.embed(['deploys go out on Tuesdays']), 'the same vectors at any priority');
    const started = tasks().filter((tid) => !before.has(tid));
    const niced = started.filter((tid) => niceOf(tid) === Math.min(19, base + 7));
    assert.equal(niced.length, 2, `two new threads at nice ${base} + 7 (new threads' nice values: ${started.map(niceOf).join(', ')})`);
    assert.equal(niceOf(String(process.pid)), base, 'the event loop keeps its nice value');
    assert.equal(getPriority(), base);
  });

  it('close stops every thread and fails what was still waiting', async () => {
    const pool = createPoolEmbedder({ workers: 2 });
    await pool.embed(['load the model']);
    const waiting = assert.rejects(pool.embed(TEN), (err: unknown) => isCairnError(err) && err.code === 'EMBEDDER_UNAVAILABLE' && /closed/u.test(err.message));
    await pool.close();
    await waiting;
    assert.equal(pool.stats().workers, 0);
    await assert.rejects(pool.embed(['after close']), (err: unknown) => isCairnError(err) && err.code === 'EMBEDDER_UNAVAILABLE');
  });
});
