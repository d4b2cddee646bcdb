import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionStore } from '../../src/interfaces/sessions.js';

/**
 * The contract of a `SessionStore` (browser sessions and request budgets of the HTTP server): the process's
 * own (core/sessions.ts) and every shared backend run the same cases. The last one sends many requests at
 * once: a shared store must hand out exactly the bucket's size, no more.
 */
export function describeSessionStoreContract(name: string, make: () => Promise<{ store: SessionStore; close(): Promise<void> }>): void {
  describe(`SessionStore contract: ${name}`, () => {
    const hash = (c: string) => c.repeat(64).slice(0, 64);

    it('keeps, finds, replaces and deletes a session by its id hash', async () => {
      const { store, close } = await make();
      try {
        assert.equal(await store.getSession(hash('a')), null);
        await store.putSession({ idHash: hash('a'), tokenHash: hash('b'), tokenId: 'tok_1', csrf: 'x1', expiresAt: 1_000_000 });
        assert.deepEqual(await store.getSession(hash('a')), { idHash: hash('a'), tokenHash: hash('b'), tokenId: 'tok_1', csrf: 'x1', expiresAt: 1_000_000 });
        await store.putSession({ idHash: hash('a'), tokenHash: hash('b'), tokenId: 'tok_1', csrf: 'x2', expiresAt: 2_000_000 });
        assert.equal((await store.getSession(hash('a')))?.csrf, 'x2');
        await store.deleteSession(hash('a'));
        await store.deleteSession(hash('a'));
        assert.equal(await store.getSession(hash('a')), null);
      } finally {
        await close();
      }
    });

    it('prunes expired sessions and the oldest beyond the limit', async () => {
      const { store, close } = await make();
      try {
        for (const [c, exp] of [['1', 10], ['2', 5000], ['3', 6000], ['4', 7000]] as const) {
          await store.putSession({ idHash: hash(c), tokenHash: hash('f'), tokenId: 't', csrf: c, expiresAt: exp });
        }
        assert.equal(await store.pruneSessions(100, 2), 2);
        assert.equal(await store.getSession(hash('1')), null, 'expired');
        assert.equal(await store.getSession(hash('2')), null, 'oldest beyond the limit');
        assert.ok(await store.getSession(hash('4')));
      } finally {
        await close();
      }
    });

    it('gives a bucket its size at once, then waits, and refills with time', async () => {
      const { store, close } = await make();
      try {
        const t0 = 1_700_000_000_000;
        const waits: number[] = [];
        for (let i = 0; i < 7; i++) waits.push(await store.takeRequest('token:a', 5, t0));
        assert.deepEqual(waits.slice(0, 5), [0, 0, 0, 0, 0]);
        assert.ok(waits[5]! >= 1 && waits[5]! <= 12, `wait ${waits[5]}`);
        assert.equal(await store.takeRequest('token:b', 5, t0), 0, 'buckets are per key');
        assert.equal(await store.takeRequest('token:a', 5, t0 + 12_001), 0, 'one request back after 12 s at 5 a minute');
        assert.ok((await store.takeRequest('token:a', 5, t0 + 12_002)) >= 1);
      } finally {
        await close();
      }
    });

    it('hands out exactly the bucket under concurrent requests', async () => {
      const { store, close } = await make();
      try {
        const t = 1_700_000_000_000;
        const waits = await Promise.all(Array.from({ length: 60 }, () => store.takeRequest('token:burst', 20, t)));
        assert.equal(waits.filter((w) => w === 0).length, 20);
      } finally {
        await close();
      }
    });
  });
}
