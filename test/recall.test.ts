import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import type { MemoryInput, SearchResult } from '../src/interfaces/memory.js';
import type { Store } from '../src/interfaces/store.js';

/**
 * Recall quality on the real embedder, default weights, no reranker: what an agent gets out of a store
 * of ordinary project notes. Each case names the note that must come first.
 */

const NS = 'github.com/acme/shop';

/** Notes a coding agent would collect in a web shop project; every query below has to beat them. */
const DISTRACTORS = [
  'The CI pipeline runs unit tests and the linter on every pull request',
  'Deploys go out from GitHub Actions on every merge to main',
  'Postgres is the primary database; migrations live in db/migrations',
  'Use pnpm, not npm, to install dependencies in this repository',
  'Product images are resized by a Lambda function before upload to S3',
  'The checkout page must load in under two seconds on a 3G connection',
  'Feature flags are read from LaunchDarkly when the server starts',
  'Logs are shipped to Datadog with the service tag shop-api',
  'The frontend is a Next.js app in the web/ folder',
  'Email templates are written in MJML and compiled at build time',
  'The search box is backed by an Elasticsearch index rebuilt every night',
  'Customer passwords are hashed with argon2id',
  'Sessions are stored in Redis and expire after 30 minutes of inactivity',
  'Webhooks from the payment provider are retried five times with exponential backoff',
  'TypeScript code uses camelCase for functions and PascalCase for classes',
  'The old flag PAYMENTS_V1_ENABLED was removed in March',
  'ERR_STOCK_DRIFT_18 is raised when a reservation outlives its cart',
  'The cart totals are computed in shop/checkout/cart.py',
  'Prices are stored as integers in cents to avoid rounding errors',
  'Background jobs run on Sidekiq with three worker processes',
  'Admin users must sign in with two-factor authentication',
  'The staging environment is reset every Sunday night',
  'API responses are cached by the CDN for sixty seconds',
  'Translations live in locales/ as one JSON file per language',
  'Every new endpoint needs an OpenAPI description before review',
  'The mobile app talks to the same REST API as the website',
  'Database backups are taken every six hours and kept for thirty days',
  'Error pages are served from a static bucket when the app is down',
  'Integration tests need Docker running locally',
  'Code review needs one approval from the owning team',
];

const TARGETS = {
  rateLimit: 'The API allows 100 requests per minute per client',
  paymentsFlag: 'Set PAYMENTS_V2_ENABLED=true to send card payments through the new provider',
  stockError: 'ERR_STOCK_DRIFT_17 means the warehouse count and the database disagree; run the reconcile job',
  taxFile: 'Sales tax rules are implemented in shop/checkout/tax.py',
  snakeCase: 'Python code in this repository uses snake_case for functions and variables',
};

const embedder = createUseEmbedder();
const root = mkdtempSync(join(tmpdir(), 'cairn-recall-'));
let store: Store;
let engine: Engine;
const idOf = new Map<string, string>();

before(async () => {
  store = createSqliteStore({ path: join(root, 'recall.db') });
  engine = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: NS });
  const inputs: MemoryInput[] = [...DISTRACTORS, ...Object.values(TARGETS)].map((text) => ({ text }));
  for (const r of await engine.saveMany(inputs)) idOf.set(r.memory.text, r.id);
  assert.equal(idOf.size, DISTRACTORS.length + Object.keys(TARGETS).length);
});

after(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

function top(results: SearchResult[]): string {
  return results[0]?.memory.text ?? '(nothing)';
}

function explain(results: SearchResult[]): string {
  return results
    .slice(0, 5)
    .map((r, i) => `${i + 1}. ${r.score.toFixed(4)} v${r.scoreDetails.signals.vector.rank ?? '-'} l${r.scoreDetails.signals.lexical.rank ?? '-'} ${r.memory.text}`)
    .join('\n');
}

async function expectFirst(query: string, expected: string): Promise<void> {
  const results = await engine.search(query);
  assert.equal(top(results), expected, `"${query}" should find "${expected}" first; got:\n${explain(results)}`);
}

describe('recall quality', () => {
  it('a paraphrase finds the note by meaning: "what is the traffic limit"', async () => {
    // USE-lite puts the page-speed constraint a hair closer (cosine 0.30 each); rank fusion used to break that
    // tie by insertion order. The rate-limit note must come through the relevance floor, near the top.
    const results = await engine.search('what is the traffic limit');
    const at = results.findIndex((r) => r.memory.text === TARGETS.rateLimit);
    assert.ok(at >= 0 && at <= 1, explain(results));
  });

  it('another wording of the same question finds it too', async () => {
    await expectFirst('how many requests can a client make', TARGETS.rateLimit);
  });

  it('"API rate limiting" finds the rate-limit note first, above the shorter notes that also say "API"', async () => {
    await expectFirst('API rate limiting', TARGETS.rateLimit);
  });

  describe('identifiers find their note first, alone or inside a question', () => {
    const cases: [string, string][] = [
      ['PAYMENTS_V2_ENABLED', TARGETS.paymentsFlag],
      ['what does PAYMENTS_V2_ENABLED do', TARGETS.paymentsFlag],
      ['ERR_STOCK_DRIFT_17', TARGETS.stockError],
      ['how do I fix ERR_STOCK_DRIFT_17', TARGETS.stockError],
      ['shop/checkout/tax.py', TARGETS.taxFile],
      ['who owns shop/checkout/tax.py', TARGETS.taxFile],
      ['snake_case', TARGETS.snakeCase],
      ['do we use snake_case', TARGETS.snakeCase],
    ];
    for (const [query, expected] of cases) {
      it(query, async () => {
        await expectFirst(query, expected);
      });
    }
  });

  it('after superseding, only the new note is recalled', async () => {
    const old = await engine.save({ text: 'The staging database is hosted on db-staging-1 in the old data centre' });
    const query = 'where is the staging database hosted';
    await expectFirst(query, old.memory.text);
    const next = await engine.supersede(old.id, { text: 'The staging database moved to db-staging-2 in the new cloud account' });
    const results = await engine.search(query, { limit: 50 });
    assert.equal(top(results), next.memory.text, explain(results));
    assert.ok(!results.some((r) => r.memory.id === old.id), 'the superseded note is not recalled at any rank');
    const pack = await engine.context(query);
    assert.ok(pack.text.includes('db-staging-2'));
    assert.ok(!pack.text.includes('db-staging-1'));
  });

  it('a newer note on the same topic outranks an older one', async () => {
    const older = await engine.save({ text: 'Run the end-to-end tests with make e2e before a release', createdAt: '2026-03-02T09:00:00Z' });
    const newer = await engine.save({ text: 'Run the end-to-end tests with pnpm e2e before a release', createdAt: '2026-04-02T09:00:00Z' });
    const results = await engine.search('how do I run the end-to-end tests');
    const rankOf = (id: string) => results.findIndex((r) => r.memory.id === id);
    assert.ok(rankOf(older.id) >= 0 && rankOf(newer.id) >= 0, `both are recalled:\n${explain(results)}`);
    assert.ok(rankOf(newer.id) < rankOf(older.id), `the newer note comes first:\n${explain(results)}`);
    assert.equal(rankOf(newer.id), 0, explain(results));
  });

  it(
    'a newer note outranks an older one whose wording matches slightly better',
    async () => {
      const older = await engine.save({ text: 'Start the dev server with make dev', createdAt: '2026-03-05T09:00:00Z' });
      const newer = await engine.save({ text: 'Start the dev server with pnpm dev --turbo', createdAt: '2026-04-05T09:00:00Z' });
      const results = await engine.search('how do I start the dev server');
      assert.equal(results[0]?.memory.id, newer.id, explain(results));
      assert.ok(results.some((r) => r.memory.id === older.id));
    },
  );
});
