/**
 * `cairn doctor` on PostgreSQL, through the real bin: with pgvector it names the versions, the HNSW index and
 * server-side fusion; in a database whose role may not create the extension it says that vectors have no
 * index and recall fuses in cairn, and the store warns once on stderr, not on stdout.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { BIN, NO_MODEL, useSandbox } from '../e2e/mcp-scenario.js';
import { createTestDatabase, pgSkip, type TestDatabase } from '../helpers/postgres.js';

describe('cairn doctor on PostgreSQL', { skip: pgSkip }, () => {
  const sandbox = useSandbox('pg-doctor', NO_MODEL);
  const dbs: TestDatabase[] = [];
  before(async () => {
    dbs.push(await createTestDatabase({ vector: true }), await createTestDatabase({ vector: false }));
  });
  after(async () => {
    for (const db of dbs) await db.drop();
  });
  const cairn = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: sandbox.cwd, env: sandbox.env, encoding: 'utf8', timeout: 60_000 });

  it('with pgvector: versions, HNSW index, server-side fusion, no database problem', () => {
    const db = dbs[0] as TestDatabase;
    assert.equal(cairn(['save', 'Deploys go out on Tuesdays', '--db', db.url, '--namespace', 'doc']).status, 0);
    const r = cairn(['doctor', '--json', '--db', db.url, '--namespace', 'doc']);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.equal(report['backend'], 'postgres');
    assert.equal(report['database'], db.url, 'the URL (no password here) names the database');
    assert.match(String(report['postgres']), /^\d+\.\d+/u);
    assert.match(String(report['pgvector']), /^0\.\d+\.\d+$/u);
    assert.match(String(report['serverSideFusion']), /^yes/u);
    assert.match(String(report['vectorIndex']), /^hnsw/u);
    assert.equal((report['capabilities'] as Record<string, boolean>)['serverSideFusion'], true);
    assert.deepEqual(report['failures'], []);
    assert.deepEqual(report['problems'], ['no embedder configured: recall uses keywords and recency only']);
    assert.equal(r.stderr, '', 'nothing to warn about');
  });

  it('without pgvector: no index, fusion in cairn, said once on stderr', () => {
    const db = dbs[1] as TestDatabase;
    const r = cairn(['doctor', '--json', '--db', db.url, '--namespace', 'doc']);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.equal(report['pgvector'], 'not installed');
    assert.match(String(report['vectorIndex']), /^none/u);
    assert.match(String(report['serverSideFusion']), /^no/u);
    assert.equal((report['capabilities'] as Record<string, boolean>)['serverSideFusion'], false);
    const problems = report['problems'] as string[];
    assert.ok(problems.some((p) => /no pgvector: this role may not create the vector extension/u.test(p)), problems.join('; '));
    assert.deepEqual(report['failures'], [], 'a fallback is not a failure');
    const warnings = r.stderr.split('\n').filter((l) => /without pgvector/u.test(l));
    assert.equal(warnings.length, 1, `one warning on stderr: ${r.stderr}`);
  });
});
