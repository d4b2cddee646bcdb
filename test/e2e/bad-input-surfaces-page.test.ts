/**
 * Bad input through the brain page, in a real headless Chromium against the real `cairn serve --auth` with
 * the real embedding model: every bad text is typed into "Add a memory" and imported as a JSON-lines file
 * through the page. The page never breaks (no script error, no CSP violation); a held write's alert names
 * its quarantine id and reasons; a refused one says why; every held write is in the Quarantine tab, and
 * revealing one shows exactly what was typed. Screenshots go to test-artifacts/bad-input-page/.
 */
import * as assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { BAD, heldId } from './bad-inputs.js';
import { bearerApi, type Brain, login, startBrain, stopBrain, until, WAIT, watch } from './brain-harness.js';
import { ROOT } from './mcp-scenario.js';

const ARTIFACTS = join(ROOT, 'test-artifacts', 'bad-input-page');
const STEP = { timeout: 240_000 };

type Outcome = 'stored' | 'QUARANTINED' | 'INVALID_INPUT';

describe('bad input through the brain page in headless Chromium', { concurrency: false }, () => {
  let b: Brain;
  let page: Page;
  const problems: string[] = [];
  const held = new Map<string, string>(); // label → quarantine id
  const api = (method: string, path: string, body?: unknown) => bearerApi(b.base, b.token, method, path, body);

  before(async () => {
    b = await startBrain('bad-input-page', 'bad-input-admin', ARTIFACTS);
    const context = await b.browser.newContext({ viewport: { width: 1366, height: 900 } });
    context.setDefaultTimeout(WAIT);
    page = watch(await context.newPage(), 'admin', problems);
    await login(page, b.base, b.token);
  });

  after(() => stopBrain(b));

  /** Types `text` into "Add a memory" and saves: stored (the form closes) or refused (the alert says why). */
  async function add(label: string, text: string): Promise<{ outcome: Outcome; message: string }> {
    if (await page.getByTestId('alert-dismiss').isVisible()) await page.getByTestId('alert-dismiss').click();
    if (!(await page.getByTestId('add-form').isVisible())) await page.getByTestId('add-open').click();
    await page.getByTestId('add-text').fill(text);
    await page.getByTestId('add-save').click();
    const alert = page.getByTestId('alert-message');
    await until(page, `${label}: saved or refused`, () => alert.or(page.locator('#add-form[hidden]')).first().waitFor({ state: 'attached', timeout: 60_000 }));
    if (!(await alert.isVisible())) return { outcome: 'stored', message: '' };
    const message = (await alert.textContent()) ?? '';
    const meta = (await page.locator('#alert .alert-meta').textContent()) ?? '';
    const code = /QUARANTINED|INVALID_INPUT/u.exec(meta)?.[0];
    assert.ok(code, `${label}: the alert names the code: ${meta} — ${message.slice(0, 300)}`);
    return { outcome: code as Outcome, message };
  }

  it('"Add a memory" with each bad text: stored, held with its id and reasons, or refused with the reason; the page keeps working', STEP, async () => {
    const outcomes: Record<string, Outcome> = {};
    for (const [label, text] of BAD) {
      const r = await add(label, text);
      outcomes[label] = r.outcome;
      if (r.outcome === 'QUARANTINED') held.set(label, heldId(`${label} via the page`, r.message));
      if (r.outcome === 'INVALID_INPUT') assert.match(r.message, /NUL|surrogate|bytes; the limit/u, `${label}: says what is wrong: ${r.message.slice(0, 300)}`);
      assert.doesNotMatch(r.message, /at .+\.js:\d+/u, `${label}: no stack trace`);
    }
    await page.screenshot({ path: join(ARTIFACTS, '01-after-adds.png'), fullPage: false });
    // The outcomes the API gives for the same texts (bad-input-surfaces.test.ts), except that a NUL or a lone
    // surrogate may not survive the way into Chromium's textarea (a lone surrogate arrives as U+FFFD): then
    // the note is stored, and what is stored holds neither.
    const seen = JSON.stringify(outcomes);
    const stored = ((await api('GET', '/memories?limit=200')).body as { memories: { text: string }[] }).memories.map((m) => m.text);
    for (const [label, words] of [['NUL', 'writes a NUL byte'], ['lone surrogate', 'sits in this note about the encoder']] as const) {
      assert.ok(outcomes[label] === 'INVALID_INPUT' || outcomes[label] === 'stored', seen);
      if (outcomes[label] === 'stored') assert.ok(stored.some((t) => t.includes(words)), `${label}: the note is stored`);
    }
    for (const t of stored) assert.ok(!t.includes('\u0000') && !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u.test(t), 'no NUL or lone surrogate was stored');
    assert.equal(outcomes['over 32 KB'], 'INVALID_INPUT', seen);
    assert.equal(outcomes['emoji'], 'stored', seen);
    assert.equal(outcomes['injection at the end of a long note'], 'QUARANTINED', seen);
    assert.equal(outcomes['zero-width disguise'], 'QUARANTINED', seen);
    // What was stored is shown as text, the page still searches.
    await page.getByTestId('search-input').fill('deploys green cache fix');
    await page.getByTestId('search-submit').click();
    await until(page, 'the emoji note is listed', () => page.getByTestId('results').getByText('deploys are green again').first().waitFor());
    assert.deepEqual(problems, [], 'no script errors or CSP violations');
  });

  it('imports the bad texts as a JSON-lines file through the page: the held count comes first, nothing held is lost', STEP, async () => {
    const file = `${BAD.map(([, text]) => JSON.stringify({ text, tags: ['imported'] })).join('\n')}\nnot json at all\n`;
    await page.getByTestId('import-file').setInputFiles({ name: 'bad.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(file, 'utf8') });
    const status = page.getByTestId('status');
    await until(page, 'the import summary', () => status.filter({ hasText: /Imported bad\.jsonl/u }).waitFor({ timeout: 120_000 }));
    const summary = (await status.textContent()) ?? '';
    assert.match(summary, /^HELD FOR REVIEW [1-9]\d* /u, `the held count comes first: ${summary}`);
    await page.screenshot({ path: join(ARTIFACTS, '02-import.png'), fullPage: false });

    // Every held write, from the form and from the import, is in the queue and on the Quarantine tab.
    // The import held the same texts the form did, in the same namespace: the same entries, held again.
    const queue = (await api('GET', '/quarantine?status=held&limit=1000')).body as { total: number; entries: { id: string; attempts: number }[] };
    const byId = new Map(queue.entries.map((e) => [e.id, e]));
    for (const [label, id] of held) {
      assert.ok(byId.has(id), `${label}: ${id} is still held`);
      assert.equal(byId.get(id)?.attempts, 2, `${label}: held from the form, then again from the import`);
    }
    assert.equal(Number(/^HELD FOR REVIEW (\d+)/u.exec(summary)?.[1]), held.size, summary);
    await page.getByTestId('tab-quarantine').click();
    await until(page, 'the totals', () => page.getByTestId('quarantine-total').filter({ hasText: new RegExp(`^${queue.total} held in total`, 'u') }).waitFor());
    for (const id of held.values()) assert.equal(await page.locator(`[data-testid="quarantine-row"][data-id="${id}"]`).count(), 1, `${id} is listed`);

    // Revealing the held long note shows it exactly as it was typed, injection at its end included.
    const longId = held.get('injection at the end of a long note') as string;
    const row = page.locator(`[data-testid="quarantine-row"][data-id="${longId}"]`);
    await row.getByTestId('quarantine-reveal').click();
    await until(page, 'the revealed text', () => row.getByTestId('quarantine-text').waitFor({ state: 'visible' }));
    const long = BAD.find(([l]) => l === 'injection at the end of a long note')?.[1] as string;
    assert.equal(await row.getByTestId('quarantine-text').textContent(), long);
    await page.screenshot({ path: join(ARTIFACTS, '03-quarantine-reveal.png'), fullPage: false });
    assert.deepEqual(problems, [], 'no script errors or CSP violations');
  });
});
