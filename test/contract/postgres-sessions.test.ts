import { describe } from 'node:test';
import { pgSkip, postgresStoreFactory } from '../helpers/postgres.js';
import { describeSessionStoreContract } from './session-store-contract.js';

// Sessions and request budgets in a real PostgreSQL database: the same cases as the process's own store,
// the concurrent one included (many requests at once get exactly the bucket).
if (pgSkip) {
  describe('SessionStore contract: postgres', { skip: pgSkip }, () => {});
} else {
  const make = postgresStoreFactory();
  describeSessionStoreContract('postgres', async () => {
    const store = await make();
    return { store: store.sessions, close: () => store.close() };
  });
}
