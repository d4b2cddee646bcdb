import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createSqliteStore } from '../../src/adapters/sqlite/sqlite-store.js';
import { createUseEmbedder } from '../../src/adapters/embed-use/use-embedder.js';
import { createGptTokenCounter } from '../../src/adapters/tokenizer/gpt-token-counter.js';
import { parseConversations } from '../../src/core/conversation.js';
import { Engine } from '../../src/core/engine.js';
import { verify } from '../../src/core/replay.js';
import { repoRoot } from './helpers.js';

const dataFile = process.env['CAIRN_LOCOMO'] ?? join(repoRoot, '..', 'shared', 'data', 'locomo', 'locomo10.json');
const dir = mkdtempSync(join(tmpdir(), 'cairn-locomo-replay-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// Embedding every turn of the ten conversations takes about ten minutes on two cores, so the default run takes
// the two shortest conversations (about a thousand turns); CAIRN_TEST_LOCOMO=all replays all ten.
const ALL = process.env['CAIRN_TEST_LOCOMO'] === 'all';

describe('replay equality on LoCoMo', { skip: existsSync(dataFile) ? false : `LoCoMo data not found at ${dataFile}; it lives outside the clone: put locomo10.json in ../shared/data/locomo/ beside the clone, or set CAIRN_LOCOMO=<path to locomo10.json>` }, () => {
  it(`${ALL ? 'every conversation' : 'the two shortest conversations'} ingested turn by turn replay to the same checksum (stops at the first mismatch)`, { timeout: 1_200_000 }, async () => {
    const every = parseConversations(JSON.parse(readFileSync(dataFile, 'utf8')));
    assert.equal(every.length, 10);
    const conversations = ALL ? every : [...every].sort((a, b) => a.turns.length - b.turns.length).slice(0, 2);
    const embedder = createUseEmbedder();
    for (const conversation of conversations) {
      const store = createSqliteStore({ path: join(dir, `${conversation.id}.db`) });
      // The ingest filter is off here: this test is about replay, and the filter's extra embeddings (de-obfuscated
      // text, sentence windows) would double its run time. Replay across quarantine events is tested with security.
      const engine = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: `locomo/${conversation.id}`, ingestFilter: { enabled: false } });
      const [ingested] = await engine.ingest([conversation]);
      assert.equal(ingested?.turns, conversation.turns.length);
      const scratch = createSqliteStore({ path: ':memory:' });
      const report = await verify(store, scratch);
      await scratch.close();
      await store.close();
      assert.ok(report.ok, `${conversation.id}: live ${report.liveChecksum} ≠ replayed ${report.replayedChecksum}`);
      // A turn the ingest filter holds leaves one store-wide quarantine event instead of its two events.
      const held = ingested?.quarantined ?? 0;
      assert.equal(report.events, (conversation.turns.length - held) * 2 + held + 1, `${conversation.id}: one turn event + one item per stored turn, one quarantine event per held turn, plus the embedder record`);
    }
  });
});
