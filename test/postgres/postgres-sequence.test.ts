/**
 * The per-namespace event sequence on PostgreSQL stays gap-free with writers in several processes: four
 * child processes, each with its own pool, append events to the same two namespaces at once, and every
 * third transaction rolls back after taking its number. Afterwards each namespace holds 1…n with no gap and
 * no duplicate, and the global position (gseq) is unique and orders each namespace's events by seq.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createPostgresStore } from '../../src/adapters/postgres/postgres-store.js';
import { createTestDatabase, pgSkip, testStoreConfig, type TestDatabase } from '../helpers/postgres.js';

const STORE_MODULE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'adapters', 'postgres', 'postgres-store.js');
const CONFIG_MODULE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'adapters', 'postgres', 'postgres-config.js');

/** One writer process: `count` transactions, alternating namespaces; every third one throws after appending. */
const WRITER = `
const { createPostgresStore } = await import(process.env.STORE_MODULE);
const { parsePostgresUrl } = await import(process.env.CONFIG_MODULE);
const { rootCertPath, ...config } = parsePostgresUrl(process.env.DB_URL);
const store = createPostgresStore({ ...config, poolSize: 2 });
const me = process.env.WRITER;
let committed = 0;
for (let i = 0; i < Number(process.env.COUNT); i++) {
  const namespace = i % 2 === 0 ? 'team/a' : 'team/b';
  try {
    await store.transaction(async (tx) => {
      await tx.appendEvent({ namespace, type: 'memory.saved', memoryId: null, payload: { writer: me, i }, at: new Date().toISOString() });
      if (i % 3 === 2) throw new Error('rolled back on purpose');
    });
    committed++;
  } catch (err) {
    if (!String(err.message).includes('rolled back on purpose')) throw err;
  }
}
await store.close();
process.stdout.write(String(committed));
`;

function writer(url: string, id: number, count: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER], {
      env: { ...process.env, STORE_MODULE, CONFIG_MODULE, DB_URL: url, WRITER: String(id), COUNT: String(count) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`writer ${id} exited ${code}: ${err}`))));
  });
}

describe('PostgreSQL event sequence with writers in several processes', { skip: pgSkip }, () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
    const store = createPostgresStore(testStoreConfig(db.url));
    await store.open(); // the schema exists before the writers race
    await store.close();
  });
  after(async () => db?.drop());

  it('four processes, rollbacks included: every namespace is 1…n without a gap, gseq unique and in seq order', async () => {
    const committed = await Promise.all([1, 2, 3, 4].map((id) => writer(db.url, id, 60)));
    const store = createPostgresStore(testStoreConfig(db.url));
    try {
      const total = committed.reduce((a, b) => a + b, 0);
      assert.equal(total, 4 * 40, 'two of every three transactions committed');
      const scopes = await store.scopes();
      assert.deepEqual(
        scopes.map((s) => [s.scope, s.events, s.lastSeq]),
        [
          ['team/a', 80, 80],
          ['team/b', 80, 80],
        ],
        'events = last sequence number: no gap',
      );
      const all: { namespace: string; seq: number; gseq: number }[] = [];
      for await (const page of store.iterateEvents(0, 50)) all.push(...page);
      assert.equal(all.length, total, 'the log in position order holds every committed event');
      assert.equal(new Set(all.map((e) => e.gseq)).size, total, 'positions are unique');
      for (const ns of ['team/a', 'team/b']) {
        const seqs: number[] = all.filter((e) => e.namespace === ns).map((e) => e.seq);
        assert.deepEqual(seqs, Array.from({ length: 80 }, (_, i) => i + 1), `${ns}: read in position order, the sequence is 1…80`);
      }
    } finally {
      await store.close();
    }
  });
});
