import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeSessionStoreContract } from '../../test/contract/session-store-contract.js';
import { createMemorySessionStore, hashSessionId, SESSION_TTL_MS, SessionBook } from './sessions.js';

describeSessionStoreContract('process memory', async () => ({ store: createMemorySessionStore(), close: async () => {} }));

describe('SessionBook', () => {
  it('keeps only the hash of a session id, and ends a session at its expiry', async () => {
    let now = 1_000_000;
    const store = createMemorySessionStore();
    const book = new SessionBook({ store, rateLimitPerMinute: 0, now: () => now });
    const { sessionId, csrf } = await book.open({ id: 'tok_1', hash: 'f'.repeat(64) });
    assert.equal(await store.getSession(sessionId), null, 'the cookie value is not a key');
    assert.equal((await store.getSession(hashSessionId(sessionId)))?.csrf, csrf);
    assert.equal((await book.find(sessionId))?.tokenId, 'tok_1');
    now += SESSION_TTL_MS + 1;
    assert.equal(await book.find(sessionId), null);
    assert.equal(await store.getSession(hashSessionId(sessionId)), null, 'an expired session is removed when found');
  });

  it('closes a session, and 0 a minute means no limit', async () => {
    const book = new SessionBook({ store: createMemorySessionStore(), rateLimitPerMinute: 0 });
    const { sessionId } = await book.open({ id: 't', hash: 'e'.repeat(64) });
    await book.close(sessionId);
    assert.equal(await book.find(sessionId), null);
    for (let i = 0; i < 1000; i++) assert.equal(await book.take('token:t'), 0);
  });
});
