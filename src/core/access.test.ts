import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createSqliteStore } from '../adapters/sqlite/sqlite-store.js';
import { isCairnError } from '../interfaces/errors.js';
import { AccessControl, authorize, hashSecret, parseExpiry, scopeAllows } from './access.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-access-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('access tokens', () => {
  it('scopes nest: admin ⊃ write ⊃ read', () => {
    assert.ok(scopeAllows('admin', 'write') && scopeAllows('write', 'read') && scopeAllows('read', 'read'));
    assert.ok(!scopeAllows('read', 'write') && !scopeAllows('write', 'admin'));
  });

  it('authorize refuses other namespaces, lower scopes, and store-wide operations without *', () => {
    const t = { id: 'tok_1', scope: 'write' as const, namespaces: ['a', 'b'] };
    authorize(t, 'read', 'a');
    authorize(t, 'write', 'b');
    for (const [need, ns] of [
      ['write', 'c'],
      ['admin', 'a'],
      ['read', null],
    ] as const) {
      assert.throws(() => authorize(t, need, ns), (e: unknown) => isCairnError(e, 'FORBIDDEN'));
    }
    authorize({ id: 'tok_2', scope: 'admin', namespaces: ['*'] }, 'admin', null);
  });

  it('expiry: durations, ISO dates, and clear errors for the past or nonsense', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    assert.equal(parseExpiry('30d', now), '2026-01-31T00:00:00.000Z');
    assert.equal(parseExpiry('12h', now), '2026-01-01T12:00:00.000Z');
    assert.equal(parseExpiry('2w', now), '2026-01-15T00:00:00.000Z');
    assert.equal(parseExpiry('2026-06-01', now), '2026-06-01T00:00:00.000Z');
    assert.equal(parseExpiry(undefined, now), null);
    for (const bad of ['0d', 'soon', '2025-01-01', '30 days']) assert.throws(() => parseExpiry(bad, now), (e: unknown) => isCairnError(e, 'INVALID_INPUT'), bad);
  });

  it('a created token authenticates until it expires or is revoked; the file holds its hash, not the secret', async () => {
    let clock = new Date('2026-01-01T00:00:00Z');
    const path = join(dir, 'tokens.db');
    const store = createSqliteStore({ path });
    const access = new AccessControl({ store, now: () => clock });
    const { token, record } = await access.create({ namespaces: ['acme/shop'], scope: 'write', expires: '1d', name: 'ci' });
    assert.match(token, /^cairn_[A-Za-z0-9_-]{43}$/u);
    assert.equal(record.status, 'active');
    assert.equal((await access.authenticate(token)).id, record.id);
    for (const bad of [undefined, '', 'cairn_x', token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A')]) {
      await assert.rejects(access.authenticate(bad), (e: unknown) => isCairnError(e, 'UNAUTHORIZED'));
    }
    await assert.rejects(access.create({ namespaces: [], scope: 'read' }), (e: unknown) => isCairnError(e, 'INVALID_INPUT'));
    await assert.rejects(access.create({ namespaces: ['a'], scope: 'root' }), (e: unknown) => isCairnError(e, 'INVALID_INPUT'));
    clock = new Date('2026-01-02T00:00:01Z');
    await assert.rejects(access.authenticate(token), /expired/u);
    clock = new Date('2026-01-01T01:00:00Z');
    await access.revoke(record.id);
    await assert.rejects(access.authenticate(token), /revoked/u);
    await assert.rejects(access.revoke('tok_missing'), (e: unknown) => isCairnError(e, 'NOT_FOUND'));
    await store.close();
    const bytes = readFileSync(path);
    assert.ok(!bytes.includes(Buffer.from(token)), 'the secret is not in the file');
    assert.ok(bytes.includes(Buffer.from(hashSecret(token))), 'its hash is');
  });
});
