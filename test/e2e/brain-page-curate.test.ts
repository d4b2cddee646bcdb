/**
 * The brain page as a person curates with it, in a real headless Chromium against the real `cairn serve
 * --auth`: add a memory, edit its kind, tags and importance, import and export a namespace, select several
 * to tag, forget and restore them, browse by source, agent and session, follow a live feed of what agents
 * store (server-sent events, written by another process too), and the layout at 390 px, the status line,
 * the replace confirmation and the usage chart's axes. Screenshots of each view, light, dark and narrow, go
 * to test-artifacts/brain-page-curate/.
 */
import * as assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { bearerApi, login, reloaded, startBrain, statusSays, stopBrain, until, WAIT, watch } from './brain-harness.js';
import { cli, ROOT, type Sandbox } from './mcp-scenario.js';
import type { Served } from './served.js';

const ARTIFACTS = join(ROOT, 'test-artifacts', 'brain-page-curate');
const STEP = { timeout: 60_000 };
const NS = 'shop';
const CHART_NS = 'shop-history';

describe('curating on the brain page in headless Chromium', { concurrency: false }, () => {
  let sandbox: Sandbox;
  let served: Served;
  let base: URL;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let token = '';
  const problems: string[] = [];
  const api = (method: string, path: string, body?: unknown) => bearerApi(base, token, method, path, body);
  const memory = async (id: string) => (await api('GET', `/memories/${id}?namespace=${NS}`)).body.memory;
  const cards = (p: Page) => p.locator('#results > [data-testid="memory-card"]');
  const cardOf = (p: Page, id: string) => p.locator(`#results > [data-testid="memory-card"][data-id="${id}"]`);

  /** One screenshot of the view in light, dark and at 390 px. */
  async function shots(p: Page, view: string): Promise<void> {
    const size = p.viewportSize() ?? { width: 1280, height: 860 };
    await p.emulateMedia({ colorScheme: 'light' });
    await p.screenshot({ path: join(ARTIFACTS, `${view}-light.png`) });
    await p.emulateMedia({ colorScheme: 'dark' });
    await p.screenshot({ path: join(ARTIFACTS, `${view}-dark.png`) });
    await p.emulateMedia({ colorScheme: 'light' });
    await p.setViewportSize({ width: 390, height: 844 });
    await p.screenshot({ path: join(ARTIFACTS, `${view}-narrow.png`) });
    await p.setViewportSize(size);
  }

  async function browseWith(p: Page, fields: Record<string, string>): Promise<string[]> {
    for (const id of ['filter-source', 'filter-agent', 'filter-session']) await p.getByTestId(id).fill(fields[id] ?? '');
    await reloaded(p, `browse ${JSON.stringify(fields)}`, () => p.getByTestId('filter-apply').click());
    return cards(p).evaluateAll((els) => els.map((e) => e.getAttribute('data-id') ?? ''));
  }

  const selectCards = async (p: Page, ids: string[]) => {
    for (const id of ids) await cardOf(p, id).getByTestId('memory-select').check();
  };

  before(async () => {
    ({ sandbox, served, browser, base, token } = await startBrain('brain-curate', 'curator', ARTIFACTS));
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
    context.setDefaultTimeout(WAIT);
    page = watch(await context.newPage(), 'curator', problems);
    await login(page, base, token);
    await page.getByTestId('namespace').selectOption(NS).catch(() => {});
  });

  after(() => stopBrain({ sandbox, served, browser, base, token }));

  it('adds a memory with kind, tags, importance and task; it opens with them, and the server has them', STEP, async () => {
    // The namespace does not exist yet: the page works in the token's default until it does, so add there first.
    const r = await api('POST', '/memories', { text: 'The shop ships from Rotterdam', namespace: NS, kind: 'fact' });
    assert.equal(r.status, 201);
    await page.reload();
    await page.getByTestId('whoami-id').waitFor();
    await page.getByTestId('namespace').selectOption(NS);
    await page.getByTestId('add-open').click();
    assert.equal(await page.getByTestId('add-open').getAttribute('aria-expanded'), 'true');
    await page.getByTestId('add-text').fill('We decided that VAT is rounded per invoice line, never on the total');
    await page.getByTestId('add-kind').selectOption('decision');
    await page.getByTestId('add-tags').fill('tax, #invoices');
    await page.getByTestId('add-importance').fill('8');
    await page.getByTestId('add-task').fill('SHOP-12');
    await shots(page, '01-add-form');
    await page.getByTestId('add-save').click();
    await until(page, 'the new memory opens', () => page.locator('[data-testid="detail"][data-id]').waitFor());
    const id = (await page.getByTestId('detail').getAttribute('data-id')) as string;
    await statusSays(page, new RegExp(`Saved decision ${id} in ${NS}`, 'u'));
    assert.equal(await page.getByTestId('detail-importance').textContent(), '8');
    const stored = await memory(id);
    assert.deepEqual([stored.kind, stored.tags, stored.importance, stored.taskId], ['decision', ['tax', 'invoices'], 8, 'SHOP-12']);
    assert.equal(await page.getByTestId('add-form').isVisible(), false, 'the form closes after saving');
    await cardOf(page, id).waitFor();
  });

  it('edits kind, tags and importance of a memory (PATCH), and the page and server show the change', STEP, async () => {
    const id = (await page.getByTestId('detail').getAttribute('data-id')) as string;
    assert.equal(await page.getByTestId('edit-kind').inputValue(), 'decision');
    assert.equal(await page.getByTestId('edit-tags').inputValue(), 'tax, invoices');
    await page.getByTestId('edit-kind').selectOption('constraint');
    await page.getByTestId('edit-tags').fill('tax, invoices, billing');
    await page.getByTestId('edit-importance').fill('9');
    await page.getByTestId('edit-save').click();
    await until(page, 'the edit is saved', () => page.locator('[data-testid="detail-importance"]:text-is("9")').waitFor());
    const stored = await memory(id);
    assert.deepEqual([stored.kind, stored.tags, stored.importance], ['constraint', ['tax', 'invoices', 'billing'], 9]);
    assert.equal(await page.locator('#detail-title').textContent(), 'Constraint');
    await until(page, 'the list shows the new kind', () => cardOf(page, id).locator('[data-testid="memory-kind"]:text-is("constraint")').waitFor());
    await shots(page, '02-detail-edit');
    await page.getByTestId('detail-close').click();
  });

  it('imports a JSONL file with the Import button, and the Export button downloads the namespace', STEP, async () => {
    const lines = [
      { text: 'Checkout calls the PSP through the payments adapter only', kind: 'constraint', metadata: { source: 'mcp', agent: 'claude-code', sessionId: 's-1' } },
      { text: 'Feature flag PAYMENTS_V2_ENABLED is read once at boot', kind: 'gotcha', metadata: { source: 'mcp', agent: 'opencode', sessionId: 's-2' } },
      { text: 'Database column names use snake_case in every table', kind: 'convention', metadata: { source: 'pre-compact-hook', sessionId: 's-2' } },
      { text: 'Release builds are tagged from the main branch only', kind: 'decision', metadata: { source: 'cli' } },
    ];
    const file = join(sandbox.dir, 'team-notes.jsonl');
    writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n{"text": broken\n`);
    await reloaded(page, 'the list after the import', () => page.getByTestId('import-file').setInputFiles(file));
    await until(page, 'the import report', () => page.locator('[data-testid="status"]:has-text("Imported team-notes.jsonl")').waitFor());
    await statusSays(page, /Imported team-notes\.jsonl: 4 new, 0 already stored, 1 rejected; line 5: not valid JSON/u);
    assert.equal(await cards(page).count(), 6);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export').click()]);
    assert.equal(download.suggestedFilename(), `cairn-${NS}.jsonl`);
    const exported = readFileSync((await download.path()) as string, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { text: string; namespace: string });
    assert.equal(exported.length, 6);
    assert.ok(exported.every((e) => e.namespace === NS));
    for (const l of lines) assert.ok(exported.some((e) => e.text === l.text), `${l.text} is exported`);
    await shots(page, '03-imported');
  });

  it('browsing filters by source, agent and session', STEP, async () => {
    const all = await api('GET', `/memories?namespace=${NS}`);
    const idOf = (text: string) => (all.body.memories as { id: string; text: string }[]).find((m) => m.text.startsWith(text))!.id;
    const [psp, flag, snake] = [idOf('Checkout calls'), idOf('Feature flag'), idOf('Database column')];
    assert.deepEqual((await browseWith(page, { 'filter-source': 'mcp' })).sort(), [psp, flag].sort());
    assert.deepEqual(await browseWith(page, { 'filter-source': 'mcp', 'filter-agent': 'opencode' }), [flag]);
    assert.deepEqual((await browseWith(page, { 'filter-session': 's-2' })).sort(), [flag, snake].sort());
    await shots(page, '04-browse-by-session');
    assert.deepEqual(await browseWith(page, { 'filter-agent': 'nobody' }), []);
    assert.equal(await page.getByTestId('list-empty').isVisible(), true);
    assert.equal((await browseWith(page, {})).length, 6, 'the control: without a filter every memory shows');
  });

  it('selects several memories to tag, forget and restore them at once', STEP, async () => {
    const ids = await cards(page).evaluateAll((els) => els.slice(0, 3).map((e) => e.getAttribute('data-id') ?? ''));
    await selectCards(page, ids);
    assert.equal(await page.getByTestId('bulk-count').textContent(), '3 selected');
    await page.getByTestId('bulk-tag').fill('reviewed');
    await shots(page, '05-bulk-selected');
    await reloaded(page, 'the list after tagging', () => page.getByTestId('bulk-tag-add').click());
    for (const id of ids) assert.ok((await memory(id)).tags.includes('reviewed'), `${id} is tagged`);
    assert.equal(await page.getByTestId('bulk-bar').isVisible(), false, 'the selection is done with');

    await selectCards(page, ids.slice(0, 2));
    await reloaded(page, 'the list after forgetting', () => page.getByTestId('bulk-forget').click());
    await statusSays(page, /Forgot 2 memories/u);
    for (const id of ids.slice(0, 2)) assert.ok((await memory(id)).forgottenAt, `${id} is forgotten`);
    assert.equal(await cardOf(page, ids[0]!).count(), 0, 'forgotten memories leave the list');
    assert.equal(await cardOf(page, ids[2]!).count(), 1, 'the one not selected stays');

    await page.getByTestId('filter-inactive').check();
    await reloaded(page, 'the list with inactive', () => page.getByTestId('filter-apply').click());
    await selectCards(page, ids.slice(0, 2));
    assert.equal(await page.getByTestId('bulk-forget').isVisible(), false, 'nothing selected can be forgotten again');
    await reloaded(page, 'the list after restoring', () => page.getByTestId('bulk-restore').click());
    for (const id of ids.slice(0, 2)) assert.equal((await memory(id)).forgottenAt, null, `${id} is restored`);
    await page.getByTestId('filter-inactive').uncheck();
    await reloaded(page, 'the list without inactive', () => page.getByTestId('filter-apply').click());
  });

  it('the live feed shows what is stored as it lands, from this server and from another process, filtered by source', STEP, async () => {
    await page.getByTestId('tab-feed').click();
    await until(page, 'the feed connects', () => page.locator('[data-testid="feed-state"][data-state="live"]').waitFor());
    assert.equal(await page.getByTestId('feed-empty').isVisible(), true);
    await api('POST', '/memories', { text: 'Invoices are numbered per year, starting at 1', namespace: NS, kind: 'decision' });
    // Another process on the same database, as an agent's own server or a hook would be.
    const saved = await cli(sandbox, ['save', 'Refunds go back to the original payment method', '--namespace', NS, '--kind', 'constraint', '--source', 'mcp']);
    assert.equal(saved.code, 0, saved.stderr);
    await until(page, 'both stores in the feed', () => page.locator('#feed-list[data-received="2"]').waitFor());
    const texts = await page.getByTestId('feed-open').allTextContents();
    assert.deepEqual(texts, ['Refunds go back to the original payment method', 'Invoices are numbered per year, starting at 1'], 'newest first');
    assert.deepEqual(await page.getByTestId('feed-provenance').allTextContents(), ['mcp', 'http']);
    await shots(page, '06-live-feed');

    await page.getByTestId('feed-source').fill('mcp');
    await page.getByTestId('feed-apply').click();
    await until(page, 'the filtered feed connects', () => page.locator('[data-testid="feed-state"][data-state="live"]:has-text("only source mcp")').waitFor());
    await api('POST', '/memories', { text: 'Coupons never stack with sale prices', namespace: NS });
    const other = await cli(sandbox, ['save', 'Gift cards are sold in whole euros only', '--namespace', NS, '--source', 'mcp']);
    assert.equal(other.code, 0, other.stderr);
    await until(page, 'the mcp store in the filtered feed', () => page.locator('#feed-list[data-received="1"]').waitFor());
    await page.waitForTimeout(1500); // one more poll: the http store must not follow
    assert.deepEqual(await page.getByTestId('feed-open').allTextContents(), ['Gift cards are sold in whole euros only']);
    await page.getByTestId('feed-open').click();
    await until(page, 'the stored memory opens', () => page.locator('[data-testid="detail-text"]:text-is("Gift cards are sold in whole euros only")').waitFor());
  });

  it('the status line belongs to the tab it was said on, and the replace confirmation is in view', STEP, async () => {
    await page.getByTestId('tab-memories').click();
    await page.getByTestId('browse-all').click();
    await cards(page).first().waitFor();
    await page.getByTestId('add-open').click();
    await page.getByTestId('add-text').fill('Prices are shown with VAT included');
    await page.getByTestId('add-save').click();
    await until(page, 'the add is confirmed', () => page.locator('[data-testid="status"]:has-text("Saved")').waitFor());
    await page.getByTestId('tab-routes').click();
    assert.equal(await page.getByTestId('status').textContent(), '', 'another tab starts without the old message');
    assert.equal(await page.getByTestId('status').isVisible(), false);

    await page.getByTestId('tab-memories').click();
    await page.setViewportSize({ width: 1280, height: 560 });
    await cards(page).last().getByTestId('memory-open').click();
    await page.getByTestId('replace-open').click();
    await page.getByTestId('replace-text').fill('Prices are shown with VAT included, rounded to the cent');
    await page.getByTestId('replace-save').click();
    await until(page, 'the replace is confirmed', () => page.locator('[data-testid="status"]:has-text("Replaced")').waitFor());
    const box = await page.getByTestId('status').boundingBox();
    const view = page.viewportSize()!;
    assert.ok(box && box.y >= 0 && box.y + box.height <= view.height && box.x >= 0 && box.x + box.width <= view.width, `the confirmation is wholly in view: ${JSON.stringify(box)}`);
    await shots(page, '07-replaced');
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('at 390 px the header and the tabs fit the screen; each view is screenshotted light, dark and narrow', STEP, async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const tab of ['memories', 'feed', 'routes', 'charts', 'tokens']) {
      await page.getByTestId(`tab-${tab}`).click();
      const right = async (selector: string) => {
        const box = await page.locator(selector).first().boundingBox();
        return box ? box.x + box.width : Infinity;
      };
      const widths = { page: await page.locator('html').evaluate((el) => el.scrollWidth), header: await right('.topbar'), tabs: await right('.tabs') };
      const wide = widths.page > 390 ? await page.locator('body *:visible').evaluateAll((els) => els.filter((e) => e.getBoundingClientRect().right > 391).slice(0, 5).map((e) => `${e.tagName}#${e.id}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)) : [];
      assert.ok(widths.page <= 390 && widths.header <= 390 && widths.tabs <= 390, `${tab} at 390 px: ${JSON.stringify(widths)}; wider: ${wide.join(', ')}`);
    }
    const lastTab = page.getByTestId('tab-tokens');
    await lastTab.focus();
    const tabBox = await lastTab.boundingBox();
    assert.ok(tabBox && tabBox.x + tabBox.width <= 390, 'a tab scrolled to is reachable on the screen');
    await page.setViewportSize({ width: 1280, height: 860 });
    for (const tab of ['routes', 'charts', 'tokens', 'memories']) {
      await page.getByTestId(`tab-${tab}`).click();
      await page.waitForTimeout(200);
      await shots(page, `08-${tab}`);
    }
  });

  it('the usage chart prints each y tick once and its day labels do not touch', STEP, async () => {
    // A month of one memory a day: the maximum is 1, and thirty day labels must share the axis.
    const day = (i: number) => new Date(Date.UTC(2026, 10, 1 + i, 12)).toISOString();
    const lines = Array.from({ length: 31 }, (_, i) => JSON.stringify({ text: `Daily standup note number ${i} about the release`, namespace: CHART_NS, createdAt: day(i) }));
    const res = await fetch(new URL(`/api/import?namespace=${CHART_NS}`, base), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, body: lines.join('\n') });
    assert.equal(res.status, 200, await res.text());
    await page.reload();
    await page.getByTestId('whoami-id').waitFor();
    await page.getByTestId('namespace').selectOption(CHART_NS);
    await page.getByTestId('tab-charts').click();
    await page.getByTestId('svg-created').waitFor();
    const ticks = await page.locator('[data-testid="svg-created"] text[data-tick]').allTextContents();
    assert.deepEqual(ticks, ['0', '1'], 'each tick once');
    const boxes = await page.locator('[data-testid="svg-created"] text.x-label').evaluateAll((els) => els.map((e) => e.getBoundingClientRect()).map((r) => ({ left: r.left, right: r.right })));
    const labels = await page.locator('[data-testid="svg-created"] text.x-label').allTextContents();
    assert.ok(labels.length >= 4, `the axis is labelled: ${labels.join(' ')}`);
    assert.equal(labels[labels.length - 1], '12-01', 'the last day is labelled');
    for (let i = 1; i < boxes.length; i++) assert.ok(boxes[i]!.left > boxes[i - 1]!.right, `labels ${labels[i - 1]} and ${labels[i]} do not touch`);
    await shots(page, '09-usage-chart');
  });

  it('raised no script error and no Content-Security-Policy violation', () => {
    assert.deepEqual(problems, []);
  });
});
