/**
 * Memory and the code on the brain page, in a real headless Chromium against the real `cairn serve --auth`
 * running inside a real git repository: a route whose file was renamed shows its stale mark in the search
 * results; the detail panel shows its anchors and takes useful / wrong / stale marks; the Usage tab shows
 * the feedback counts and the review list.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { bearerApi, CHROMIUM, launchChromium, login, reloaded, stopServed, until, WAIT, watch } from './brain-harness.js';
import { cli, createSandbox, type Sandbox } from './mcp-scenario.js';
import { serve, type Served } from './served.js';

const NS = 'github.com/acme/page';

describe('memory and the code on the brain page in headless Chromium', { concurrency: false }, () => {
  let sandbox: Sandbox;
  let served: Served;
  let browser: Browser;
  let page: Page;
  let token = '';
  let routeId = '';
  const problems: string[] = [];

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: the brain page tests drive a real Chromium`);
    sandbox = createSandbox('brain-code');
    Object.assign(sandbox.env, { CAIRN_NAMESPACE: NS, CAIRN_EMBEDDER: 'none', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: join(sandbox.dir, 'gitconfig') });
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: sandbox.cwd, env: { ...sandbox.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.com' }, stdio: 'ignore' });
    git('init', '-q', '-b', 'main');
    mkdirSync(join(sandbox.cwd, 'shop'));
    writeFileSync(join(sandbox.cwd, 'shop/tax.py'), 'def vat(): pass\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'first');
    const created = await cli(sandbox, ['token', 'create', '--namespace', '*', '--scope', 'admin', '--name', 'reviewer', '--json']);
    assert.equal(created.code, 0, created.stderr);
    token = (JSON.parse(created.stdout) as { token: string }).token;
    served = await serve(sandbox, ['--auth', '--quiet']);
    const base = new URL('/', served.url);
    const saved = await bearerApi(base, token, 'POST', '/routes', { namespace: NS, title: 'checkout tax', description: 'VAT rounding of checkout totals', paths: ['shop/tax.py'] });
    assert.equal(saved.status, 201, JSON.stringify(saved.body));
    routeId = saved.body.id;
    mkdirSync(join(sandbox.cwd, 'shop/billing'));
    git('mv', 'shop/tax.py', 'shop/billing/tax.py');
    git('commit', '-q', '-m', 'move');
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    context.setDefaultTimeout(WAIT);
    page = watch(await context.newPage(), 'reviewer', problems);
    await login(page, base, token);
    await page.getByTestId('namespace').selectOption(NS).catch(() => {});
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await stopServed(served);
    sandbox?.remove();
  });

  it('a search result whose file moved shows the stale mark and its reason', async () => {
    await page.getByTestId('search-input').fill('checkout tax VAT rounding');
    await reloaded(page, 'search', () => page.getByTestId('search-input').press('Enter'));
    const card = page.locator(`#results > [data-testid="memory-card"][data-id="${routeId}"]`);
    await until(page, 'the stale badge', () => card.getByTestId('memory-stale').waitFor({ timeout: WAIT }));
    assert.equal(await card.getByTestId('memory-stale').textContent(), 'stale: shop/tax.py moved to shop/billing/tax.py');
  });

  it('the detail panel shows the anchors and counts a wrong mark', async () => {
    await page.locator(`#results > [data-testid="memory-card"][data-id="${routeId}"]`).getByTestId('memory-open').click();
    await until(page, 'the detail', () => page.locator(`[data-testid="detail"][data-id="${routeId}"]`).waitFor({ timeout: WAIT }));
    assert.match((await page.getByTestId('detail-anchors').textContent()) ?? '', /shop\/tax\.py/u);
    assert.equal(await page.getByTestId('feedback-wrong').textContent(), 'Wrong (0)');
    await page.getByTestId('feedback-wrong').click();
    await until(page, 'the count', () => page.locator('[data-testid="feedback-wrong"]', { hasText: 'Wrong (1)' }).waitFor({ timeout: WAIT }));
  });

  it('the Usage tab shows the feedback counts and the review list', async () => {
    await page.getByTestId('tab-charts').click();
    await until(page, 'the feedback counts', () => page.getByTestId('feedback-counts').waitFor({ timeout: WAIT }));
    assert.equal(await page.getByTestId('feedback-counts').textContent(), 'Feedback: 0 useful · 1 wrong · 0 stale, on 1 memories; 1 to review');
    assert.equal(await page.locator(`[data-testid="review-list"] li[data-id="${routeId}"]`).count(), 1);
  });

  it('raised no script error and no Content-Security-Policy violation', () => {
    assert.deepEqual(problems, []);
  });
});
