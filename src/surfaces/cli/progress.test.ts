import * as assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createProgress } from './progress.js';

function stream(isTTY: boolean): { s: PassThrough & { isTTY?: boolean }; text: () => string } {
  const s = new PassThrough() as PassThrough & { isTTY?: boolean };
  s.isTTY = isTTY;
  let text = '';
  s.setEncoding('utf8').on('data', (d: string) => (text += d));
  return { s, text: () => text };
}

describe('createProgress', () => {
  it('on a terminal, shows the bar with its total from the first update and ends on a full line', async () => {
    const { s, text } = stream(true);
    const p = createProgress('importing', s);
    p.update(0, 200);
    await sleep(5);
    assert.equal(text(), `\rimporting [${'-'.repeat(30)}] 0/200`);
    p.update(200, 200);
    p.finish();
    await sleep(5);
    assert.ok(text().endsWith(`\rimporting [${'#'.repeat(30)}] 200/200\n`), JSON.stringify(text()));
  });

  it('elsewhere, prints plain lines with the total and the share, not a bar', async () => {
    const { s, text } = stream(false);
    const p = createProgress('importing', s, { plainEveryMs: 1 });
    p.update(0, 400);
    await sleep(5);
    p.update(100, 400); // the clock starts with the first work done: nothing printed yet
    await sleep(5);
    p.update(300, 400);
    await sleep(5);
    p.update(400, 400);
    p.finish();
    await sleep(5);
    assert.equal(text(), 'importing 300 of 400 (75%)\nimporting 400 of 400 (100%)\n');
  });
});
