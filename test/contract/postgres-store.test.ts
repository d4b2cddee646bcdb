import { describe } from 'node:test';
import { pgSkip, postgresCatalog, postgresStoreFactory } from '../helpers/postgres.js';
import { describeStoreContract } from './store-contract.js';

// The one Store contract, on a real PostgreSQL server: with pgvector (HNSW, server-side fusion) and in a
// database whose role may not create the extension (vectors without an index, fusion in cairn).
if (pgSkip) {
  describe('Store contract: postgres', { skip: pgSkip }, () => {});
} else {
  describeStoreContract('postgres (pgvector)', postgresStoreFactory({ vector: true }), { catalog: postgresCatalog });
  describeStoreContract('postgres (no pgvector)', postgresStoreFactory({ vector: false }), { catalog: postgresCatalog });
}
