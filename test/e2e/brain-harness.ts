/**
 * What the brain page's Chromium tests share: a real headless Chromium, a watch for script errors and CSP
 * violations, waits that report what the page's alert said, and the bearer-token API calls a script makes.
 */
import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { cli, createSandbox, type Sandbox } from './mcp-scenario.js';
import { serve, type Served } from './served.js';

export const CHROMIUM = process.env['CAIRN_CHROMIUM'] ?? '/usr/bin/chromium';
export const WAIT = 15_000;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** Watches a page for script errors and Content-Security-Policy violations, collected into `problems`. */
export function watch(p: Page, who: string, problems: string[]): Page {
  p.on('pageerror', (err) => problems.push(`${who}: page error: ${err.message}`));
  p.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/iu.test(m.text())) problems.push(`${who}: ${m.text()}`);
  });
  return p;
}

/** Waits for `what`; on a timeout, the failure says what the page's alert region said. */
export async function until(p: Page, what: string, wait: () => Promise<unknown>): Promise<void> {
  try {
    await wait();
  } catch (err) {
    const alert = (await p.getByTestId('alert').textContent().catch(() => '')) ?? '';
    throw new Error(`${what}: ${(err as Error).message.split('\n')[0]}${alert ? ` (the page's alert says: ${alert})` : ''}`);
  }
}

/** Runs `action` and waits until the memory list has been rendered again after it. */
export async function reloaded(p: Page, what: string, action: () => Promise<unknown>): Promise<void> {
  // A load already in flight would count as the one awaited: let it land first.
  await p.locator('#results[aria-busy="false"]').waitFor({ state: 'attached' });
  const seen = Number((await p.getByTestId('results').getAttribute('data-loaded')) ?? '0');
  await action();
  // (Locators, not waitForFunction: the page's CSP rightly refuses the eval that polling a string needs.)
  await until(p, what, () => p.locator(`#results[aria-busy="false"][data-loaded]:not([data-loaded="${seen}"])`).waitFor({ state: 'attached', timeout: WAIT }));
}

/**
 * Waits until the status line matches: a page action may say its result after the list it reloaded has
 * landed (the namespaces load after it), so reading the line once as soon as the list is back races it.
 */
export async function statusSays(p: Page, pattern: RegExp): Promise<void> {
  await until(p, `the status line saying ${pattern}`, () => p.getByTestId('status').filter({ hasText: pattern }).waitFor({ state: 'attached', timeout: WAIT }));
}

export async function login(p: Page, base: URL, token: string): Promise<void> {
  await p.goto(base.href);
  await p.getByTestId('login-token').fill(token);
  await p.getByTestId('login-submit').click();
  await until(p, 'logged in', () => p.getByTestId('whoami-id').waitFor({ timeout: WAIT }));
}

export interface ApiReply {
  status: number;
  body: any;
}

/** A JSON API call with a bearer token, as a script would make it. */
export async function bearerApi(base: URL, token: string, method: string, path: string, body?: unknown): Promise<ApiReply> {
  const res = await fetch(new URL(`/api${path}`, base), {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

/** Stops `cairn serve`: SIGTERM, then SIGKILL after five seconds. */
export async function stopServed(served: Served | undefined): Promise<void> {
  if (!served || served.child.exitCode !== null) return;
  served.child.kill('SIGTERM');
  const timer = setTimeout(() => served.child.kill('SIGKILL'), 5_000);
  await served.exited;
  clearTimeout(timer);
}

/** A brain page test's world: its sandbox, an admin token for every namespace, `cairn serve --auth` and Chromium. */
export interface Brain {
  sandbox: Sandbox;
  served: Served;
  browser: Browser;
  base: URL;
  token: string;
}

/** Empties `artifacts`, creates a sandbox and an admin token named `tokenName`, starts Chromium and the server. */
export async function startBrain(name: string, tokenName: string, artifacts: string): Promise<Brain> {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: the brain page tests drive a real Chromium (apt-get install chromium)`);
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });
  const sandbox = createSandbox(name);
  const created = await cli(sandbox, ['token', 'create', '--namespace', '*', '--scope', 'admin', '--name', tokenName, '--json']);
  assert.equal(created.code, 0, created.stderr);
  const token = (JSON.parse(created.stdout) as { token: string }).token;
  const [browser, served] = await Promise.all([launchChromium(), serve(sandbox, ['--auth', '--quiet'])]);
  return { sandbox, served, browser, base: new URL('/', served.url), token };
}

/** Closes Chromium, stops the server and removes the sandbox of `startBrain`. */
export async function stopBrain(brain: Brain | undefined): Promise<void> {
  await brain?.browser.close().catch(() => {});
  await stopServed(brain?.served);
  brain?.sandbox.remove();
}
