/**
 * The same memories on SQLite and on PostgreSQL recall the same way: one engine per backend, the real
 * embedding model, the same notes saved at the same clock times, and every query returns the same notes in
 * the same order with the same relevance (PostgreSQL fusing server-side in one statement, SQLite in cairn).
 * BM25 on PostgreSQL uses FTS5's constants, idf and document length, so in one namespace the lexical scores
 * are SQLite's; cosines differ only in float rounding.
 */
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUseEmbedder } from '../../src/adapters/embed-use/use-embedder.js';
import { createPostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { createSqliteStore } from '../../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../../src/core/engine.js';
import type { Store } from '../../src/interfaces/store.js';
import { createTestDatabase, pgSkip, testStoreConfig, type TestDatabase } from '../helpers/postgres.js';

const NOTES = [
  'PAYMENTS_V2_ENABLED gates the new checkout flow in shop/checkout/tax.py',
  'Prices are stored in integer cents, never as floating point numbers',
  'Deploys go out on Tuesdays after the release freeze is lifted',
  'The invoice export rounds VAT per line, not per invoice total',
  'getUserName returns null for deleted accounts; callers must check',
  'ERR_STOCK_DRIFT_17 means the warehouse count and the ledger disagree',
  'Retry the payment webhook three times with exponential backoff',
  'The staging database is reset every night at 02:00 UTC',
  'We chose PostgreSQL over MongoDB for the order service because of transactions',
  'The API allows 100 requests per minute per client',
  'Feature flags live in config/flags.yaml and are read at startup',
  'Never log card numbers; the redaction filter masks PANs in src/log/redact.ts',
  'The mobile app talks to the BFF at api.internal/v3, not to services directly',
  'Refunds older than 90 days need a manager approval in the back office',
  'Use snake_case for database column names and camelCase in TypeScript',
  'The nightly report job writes CSVs to s3://acme-reports/daily/',
  'Search indexes are rebuilt on Sunday mornings; expect slow queries then',
  'Tax rates come from the TAX_TABLE_2026 constant until the provider API is ready',
];

const QUERIES = [
  'what is the traffic limit',
  'PAYMENTS_V2_ENABLED',
  'when do we ship releases',
  'how is money represented',
  'shop/checkout/tax.py',
  'which database did we pick and why',
  'naming convention for columns',
  'what does the stock drift error mean',
];

describe('recall parity: SQLite and PostgreSQL', { skip: pgSkip }, () => {
  const embedder = createUseEmbedder();
  const dir = mkdtempSync(join(tmpdir(), 'cairn-parity-'));
  let db: TestDatabase;
  let clock = Date.parse('2026-03-01T09:00:00.000Z');
  const engines: Engine[] = [];
  const stores: Store[] = [];

  before(async () => {
    db = await createTestDatabase({ vector: true });
    stores.push(createSqliteStore({ path: join(dir, 'parity.db') }), createPostgresStore(testStoreConfig(db.url)));
    for (const store of stores) {
      engines.push(new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: 'acme/shop', now: () => new Date(clock), ingestFilter: { enabled: false } }));
    }
    for (const text of NOTES) {
      clock += 3 * 3_600_000;
      for (const engine of engines) await engine.save({ text });
    }
    clock += 86_400_000;
  });
  after(async () => {
    for (const s of stores) await s.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('PostgreSQL fuses server-side, SQLite in cairn', () => {
    assert.equal(stores[0]?.capabilities.serverSideFusion, false);
    assert.equal(stores[1]?.capabilities.serverSideFusion, true);
  });

  for (const query of QUERIES) {
    it(`"${query}" returns the same notes in the same order with the same relevance`, async () => {
      const [onSqlite, onPostgres] = await Promise.all(engines.map((e) => e.search(query, { limit: 8, countRecall: false })));
      assert.ok(onSqlite && onPostgres);
      assert.ok(onSqlite.length > 0, 'the query finds something');
      assert.deepEqual(
        onPostgres.map((r) => r.memory.text),
        onSqlite.map((r) => r.memory.text),
      );
      onSqlite.forEach((s, i) => {
        const p = onPostgres[i]!;
        assert.ok(Math.abs((s.scoreDetails.relevance ?? 0) - (p.scoreDetails.relevance ?? 0)) < 1e-3, `#${i} relevance ${s.scoreDetails.relevance} vs ${p.scoreDetails.relevance}`);
        assert.ok(Math.abs((s.scoreDetails.signals.lexical.raw ?? 0) - (p.scoreDetails.signals.lexical.raw ?? 0)) < 1e-6, `#${i} BM25 ${s.scoreDetails.signals.lexical.raw} vs ${p.scoreDetails.signals.lexical.raw}`);
      });
    });
  }
});
