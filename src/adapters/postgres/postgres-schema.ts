/**
 * Schema of the PostgreSQL store, as ordered migrations (postgres-migrations.ts applies them). Keys, times and
 * ids are `text COLLATE "C"`: ISO 8601 times and ULIDs sort by their bytes, whatever the database's collation.
 * JSON bodies are kept as the exact text cairn wrote (`text`, not `jsonb`), so a payload reads back byte for
 * byte and the canonical checksum equals SQLite's. Columns that hold user text are `STORAGE EXTERNAL`: a long
 * value goes to TOAST uncompressed, so an erasure's byte check of the files can see it (compressed, it could
 * hide from the scan).
 */

/** How vectors are kept: a pgvector column with an HNSW index, or `real[]` without an index (no pgvector). */
export type VectorStorage = 'pgvector' | 'array';

/** The meta key of the re-analysis still to do: the last memory pk done (step 7 sets it to 0, the end removes it). */
export const REANALYSIS_MARK = 'reanalysed_through';

/** Lock key (pg_advisory_xact_lock) under which the global log position is assigned at commit. */
export const GSEQ_LOCK = 727_001;
/** Lock key of the migrations. */
export const MIGRATION_LOCK = 727_002;
/** Lock key of erasures in progress: writers take it shared, an erasure's start takes it exclusive. */
export const ERASURE_LOCK = 727_003;
/** Lock key of the store-wide embedder record. */
export const EMBEDDER_LOCK = 727_004;
/** Lock key serialising the writers that found no embedder recorded and may record the first one. */
export const EMBEDDER_RECORD_LOCK = 727_005;
/** Lock key (with the dimension as second key) of a vector index being built outside a transaction. */
export const VECTOR_INDEX_LOCK = 727_006;

export const MIGRATIONS: readonly ((storage: VectorStorage) => string)[] = [
  // 1: everything the SQLite schema holds after its 7 steps, in one step.
  (storage) => `
  CREATE TABLE meta (key text COLLATE "C" PRIMARY KEY, value text NOT NULL);
  CREATE TABLE memories (
    pk bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text COLLATE "C" NOT NULL UNIQUE,
    namespace text COLLATE "C" NOT NULL,
    text text NOT NULL,
    kind text COLLATE "C" NOT NULL,
    importance integer NOT NULL,
    tags text NOT NULL,
    task_id text,
    metadata text NOT NULL,
    route text,
    created_at text COLLATE "C" NOT NULL,
    updated_at text COLLATE "C" NOT NULL,
    expires_at text COLLATE "C",
    supersedes text COLLATE "C",
    superseded_by text COLLATE "C",
    forgotten_at text COLLATE "C",
    forget_reason text,
    dedupe_key text COLLATE "C" NOT NULL,
    vector_hash text COLLATE "C",
    code text,
    feedback text,
    -- BM25 document length: the analysed terms plus one, as FTS5 counts its namespace column too.
    doc_length integer NOT NULL
  );
  ALTER TABLE memories ALTER COLUMN text SET STORAGE EXTERNAL, ALTER COLUMN metadata SET STORAGE EXTERNAL;
  CREATE INDEX memories_namespace_id ON memories (namespace, id) INCLUDE (doc_length);
  CREATE INDEX memories_expires ON memories (expires_at) WHERE expires_at IS NOT NULL;
  CREATE UNIQUE INDEX memories_live_dedupe ON memories (namespace, dedupe_key) WHERE forgotten_at IS NULL AND superseded_by IS NULL;

  -- The lexical index: one posting per (namespace, term, memory) with the term's frequency. Terms arrive
  -- analysed by core (lexical.ts) and are stored as they are: nothing is re-tokenised.
  CREATE TABLE memory_terms (
    namespace text COLLATE "C" NOT NULL,
    term text COLLATE "C" NOT NULL,
    memory_pk bigint NOT NULL REFERENCES memories (pk) ON DELETE CASCADE,
    tf integer NOT NULL,
    PRIMARY KEY (namespace, term, memory_pk)
  );
  CREATE INDEX memory_terms_memory ON memory_terms (memory_pk);

  CREATE TABLE memory_vectors (
    memory_pk bigint PRIMARY KEY REFERENCES memories (pk) ON DELETE CASCADE,
    namespace text COLLATE "C" NOT NULL,
    active boolean NOT NULL,
    kind text COLLATE "C" NOT NULL,
    embedding ${storage === 'pgvector' ? 'vector' : 'real[]'} NOT NULL
  );
  CREATE INDEX memory_vectors_namespace ON memory_vectors (namespace);

  -- The log. seq: gap-free per namespace, assigned under the namespace's lock; gseq: the position in commit
  -- order, assigned at commit by the deferred trigger below under one short lock.
  CREATE SEQUENCE events_gseq;
  CREATE TABLE events (
    namespace text COLLATE "C" NOT NULL,
    seq bigint NOT NULL,
    gseq bigint UNIQUE,
    type text COLLATE "C" NOT NULL,
    memory_id text COLLATE "C",
    payload text NOT NULL,
    at text COLLATE "C" NOT NULL,
    PRIMARY KEY (namespace, seq)
  );
  ALTER TABLE events ALTER COLUMN payload SET STORAGE EXTERNAL;
  CREATE INDEX events_type ON events (namespace, type);
  CREATE INDEX events_memory ON events (memory_id) WHERE memory_id IS NOT NULL;
  CREATE FUNCTION cairn_assign_gseq() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_advisory_xact_lock(${GSEQ_LOCK});
    UPDATE events SET gseq = nextval('events_gseq') WHERE namespace = NEW.namespace AND seq = NEW.seq AND gseq IS NULL;
    RETURN NULL;
  END $$;
  CREATE CONSTRAINT TRIGGER events_assign_gseq AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION cairn_assign_gseq();

  CREATE TABLE vector_blobs (hash text COLLATE "C" PRIMARY KEY, data bytea NOT NULL);
  CREATE TABLE snapshots (
    scope text COLLATE "C" PRIMARY KEY,
    version integer NOT NULL,
    seq bigint NOT NULL,
    blob bytea NOT NULL,
    blob_sha256 text NOT NULL,
    checksum text NOT NULL,
    engine_version integer NOT NULL,
    created_at text NOT NULL
  );
  CREATE TABLE settings (namespace text COLLATE "C" NOT NULL, key text COLLATE "C" NOT NULL, value text NOT NULL, PRIMARY KEY (namespace, key));

  CREATE TABLE quarantine (id text COLLATE "C" PRIMARY KEY, hash text COLLATE "C" NOT NULL, entry text NOT NULL, status text COLLATE "C" NOT NULL, created_at text COLLATE "C" NOT NULL);
  ALTER TABLE quarantine ALTER COLUMN entry SET STORAGE EXTERNAL;
  CREATE INDEX quarantine_status ON quarantine (status, created_at);
  CREATE INDEX quarantine_hash ON quarantine (hash);
  CREATE TABLE quarantine_vault (id text COLLATE "C" PRIMARY KEY, text text NOT NULL, request text NOT NULL);
  ALTER TABLE quarantine_vault ALTER COLUMN text SET STORAGE EXTERNAL, ALTER COLUMN request SET STORAGE EXTERNAL;
  CREATE TABLE learned_anchors (id text COLLATE "C" PRIMARY KEY, vector bytea NOT NULL, created_at text NOT NULL);
  CREATE TABLE anchor_cache (key text COLLATE "C" PRIMARY KEY, vectors bytea NOT NULL);

  CREATE TABLE access_tokens (
    id text COLLATE "C" PRIMARY KEY,
    hash text COLLATE "C" NOT NULL UNIQUE,
    name text,
    namespaces text NOT NULL,
    scope text NOT NULL,
    created_at text COLLATE "C" NOT NULL,
    expires_at text,
    revoked_at text,
    last_used_at text
  );
  CREATE TABLE recall_counts (memory_id text COLLATE "C" PRIMARY KEY, namespace text COLLATE "C" NOT NULL, count integer NOT NULL, last_at text NOT NULL);
  CREATE INDEX recall_counts_namespace ON recall_counts (namespace, count);
  CREATE TABLE pending_erasures (id text COLLATE "C" PRIMARY KEY, scope text NOT NULL, plan text, started_at text COLLATE "C" NOT NULL);
  ALTER TABLE pending_erasures ALTER COLUMN plan SET STORAGE EXTERNAL;
  INSERT INTO meta (key, value) VALUES ('vector_storage', '${storage}');
  `,
  // 2: browser sessions and request budgets of the HTTP server, shared by every server process.
  () => `
  CREATE TABLE http_sessions (
    id_hash text COLLATE "C" PRIMARY KEY,
    token_hash text COLLATE "C" NOT NULL,
    token_id text COLLATE "C" NOT NULL,
    csrf text NOT NULL,
    expires_at bigint NOT NULL
  );
  CREATE INDEX http_sessions_expires ON http_sessions (expires_at);
  CREATE TABLE rate_buckets (key text COLLATE "C" PRIMARY KEY, tokens double precision NOT NULL, at bigint NOT NULL, granted boolean NOT NULL);
  `,
  // 3: each namespace's document count and total document length, kept by triggers in the writing
  // transaction, so BM25's statistics cost one row read instead of a scan of the namespace's memories.
  // Writers of a namespace already hold its scope lock, so its row adds no contention. The fill runs before
  // the triggers exist, so the table's lock keeps writers out from before the fill to the migration's commit:
  // it waits for the writers already in a transaction (a count taken before their commit would miss their
  // rows for good) and holds new ones until the triggers are in place.
  () => `
  LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE;
  CREATE TABLE namespace_stats (namespace text COLLATE "C" PRIMARY KEY, documents bigint NOT NULL, total_length bigint NOT NULL);
  INSERT INTO namespace_stats (namespace, documents, total_length) SELECT namespace, count(*), sum(doc_length) FROM memories GROUP BY namespace;
  CREATE FUNCTION cairn_namespace_stats() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE left_over bigint;
  BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
      UPDATE namespace_stats SET documents = documents - 1, total_length = total_length - OLD.doc_length
        WHERE namespace = OLD.namespace RETURNING documents INTO left_over;
      IF left_over = 0 THEN DELETE FROM namespace_stats WHERE namespace = OLD.namespace; END IF;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
      INSERT INTO namespace_stats (namespace, documents, total_length) VALUES (NEW.namespace, 1, NEW.doc_length)
        ON CONFLICT (namespace) DO UPDATE SET documents = namespace_stats.documents + 1, total_length = namespace_stats.total_length + excluded.total_length;
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER memories_namespace_stats AFTER INSERT OR DELETE ON memories FOR EACH ROW EXECUTE FUNCTION cairn_namespace_stats();
  CREATE TRIGGER memories_namespace_stats_update AFTER UPDATE OF namespace, doc_length ON memories FOR EACH ROW
    WHEN (OLD.namespace IS DISTINCT FROM NEW.namespace OR OLD.doc_length IS DISTINCT FROM NEW.doc_length) EXECUTE FUNCTION cairn_namespace_stats();
  `,
  // 4: the older notes a memory probably updates, found when it was written (the JSON text cairn wrote; NULL
  // when none), as SQLite's migration 12. The partial index keeps recall's lookup to the notes that have some.
  () => `
  ALTER TABLE memories ADD COLUMN likely_replaces text;
  CREATE INDEX memories_replacing ON memories (namespace) WHERE likely_replaces IS NOT NULL;
  `,
  // 5: each (namespace, term)'s document frequency, kept by statement triggers on the postings in the writing
  // transaction, so BM25's idf and recall's term weights read one row per term instead of counting the term's
  // postings (O(df): tens of thousands of index entries per common term at 100k memories). A row goes with
  // the term's last posting, so no term of an erased memory stays behind. Keyed by term first, so the
  // store-wide sum over namespaces uses the same index. Writers of a namespace hold its scope lock, so its
  // rows add no contention. The postings' lock keeps writers out across the fill, as in step 3.
  () => `
  LOCK TABLE memory_terms IN SHARE ROW EXCLUSIVE MODE;
  CREATE TABLE term_stats (term text COLLATE "C" NOT NULL, namespace text COLLATE "C" NOT NULL, documents bigint NOT NULL, PRIMARY KEY (term, namespace));
  INSERT INTO term_stats (term, namespace, documents) SELECT term, namespace, count(*) FROM memory_terms GROUP BY term, namespace;
  -- One function for the three triggers: an insert has only \`added\`, a delete only \`removed\`, an update
  -- (a move between namespaces) both; a branch that does not run never reads the table it lacks.
  CREATE FUNCTION cairn_term_stats() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
      UPDATE term_stats s SET documents = s.documents - gone.n
        FROM (SELECT term, namespace, count(*) AS n FROM removed GROUP BY term, namespace) gone
        WHERE s.term = gone.term AND s.namespace = gone.namespace;
      DELETE FROM term_stats s WHERE s.documents <= 0 AND (s.term, s.namespace) IN (SELECT term, namespace FROM removed);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
      INSERT INTO term_stats (term, namespace, documents) SELECT term, namespace, count(*) FROM added GROUP BY term, namespace ORDER BY term, namespace
        ON CONFLICT (term, namespace) DO UPDATE SET documents = term_stats.documents + excluded.documents;
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER memory_terms_stats_insert AFTER INSERT ON memory_terms REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_term_stats();
  CREATE TRIGGER memory_terms_stats_delete AFTER DELETE ON memory_terms REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_term_stats();
  CREATE TRIGGER memory_terms_stats_update AFTER UPDATE ON memory_terms REFERENCING OLD TABLE AS removed NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_term_stats();
  `,
  // 6: the lexical statement reads the index only. Its postings scan needs each posting's tf (now in the
  // postings' key index, so the scattered heap rows are no longer fetched one page per posting) and, per
  // matching memory, the document length and the columns of the activity filter (a covering index of
  // memories, a few bytes per row instead of the whole row). Index-only once the visibility map is set
  // (autovacuum sets it as rows age; a posting is rewritten only when its memory is re-indexed or moved).
  // On a store that has data, both indexes are built beforehand beside the tables (CONCURRENT_BUILDS), so
  // this step only swaps the key in (a brief exclusive lock, no rebuild); a new store builds them here.
  () => `
  ${step6Index('memory_terms_key', false)};
  ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey, ADD CONSTRAINT memory_terms_pkey PRIMARY KEY USING INDEX memory_terms_key;
  ${step6Index('memories_lexical', false)};
  `,
  // 7: core's analyser changed its terms (British spellings folded to American ones, spelling.ts; a folder
  // written with its trailing slash is a term of its own, lexical.ts). The step only records that every
  // memory is to be re-analysed (the mark in meta); continueReanalysis does it after the migration, in pages
  // of their own transactions that rewrite only the memories whose terms changed, so writers are never held
  // for the whole pass. Recorded first, so no older cairn (writing the old terms) opens the store afterwards.
  () => `INSERT INTO meta (key, value) VALUES ('reanalysed_through', '0') ON CONFLICT (key) DO NOTHING;`,
  // 8: a vector row stays in its table page up to 8,160 bytes (a 2 KB vector of 512 dimensions, up to about
  // 2,000 dimensions) instead of going to TOAST past 2 KB, so reading a vector is one page read, not an index
  // lookup and two more pages: exact rescoring of 364 proposed vectors at 100k took 5 ms against 15–21 ms
  // (pg-scale store, one run each). Rows written before keep their place until the table is rewritten
  // (VACUUM FULL, as an erasure runs). A catalog change only: no rewrite, a brief lock.
  () => `ALTER TABLE memory_vectors SET (toast_tuple_target = 8160);`,
  // 9: a namespace's coarse lists as a long-lived process built them (postgres-saved-lists.ts), so the next one
  // takes them instead of building them again (at 1M vectors about 86 s of a core). A cache, never a source:
  // taken only while no event since its log position changed vectors wholesale, emptied when an erasure starts.
  // Kept uncompressed (bytes of floats and keys compress little).
  () => `
  CREATE TABLE recall_lists (namespace text COLLATE "C" PRIMARY KEY, dimensions integer NOT NULL, position bigint NOT NULL, shape text NOT NULL, body bytea NOT NULL);
  ALTER TABLE recall_lists ALTER COLUMN body SET STORAGE EXTERNAL;
  `,
  // 10: whether the text read like an instruction when written, and under which rules (Memory.instructionCheck,
  // JSON; NULL for memories, and routes, written before it was kept), so recall's spotlighting need not run the rules again. A nullable
  // column without a default: a catalog change only, no rewrite.
  () => `ALTER TABLE memories ADD COLUMN instruction_check text;`,
];

/** Step 6's two indexes: the postings' key carrying tf, and the covering index of the lexical filter. */
const STEP6_INDEXES = {
  memory_terms_key: { unique: true, on: 'memory_terms (namespace, term, memory_pk) INCLUDE (tf)' },
  memories_lexical: { unique: false, on: 'memories (pk) INCLUDE (doc_length, forgotten_at, superseded_by, expires_at)' },
} as const;

/** The statement building one of step 6's indexes, inside the step or CONCURRENTLY beforehand (CONCURRENT_BUILDS). */
function step6Index(index: keyof typeof STEP6_INDEXES, concurrently: boolean): string {
  const { unique, on } = STEP6_INDEXES[index];
  return `CREATE ${unique ? 'UNIQUE ' : ''}INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS ${index} ON ${on}`;
}

/** An index a step needs, built before the step's transaction without blocking writers (CONCURRENTLY). */
export interface ConcurrentBuild {
  index: string;
  sql: string;
}

/**
 * Per step (index into MIGRATIONS), the indexes to build CONCURRENTLY, outside any transaction, before the
 * step runs on a store whose tables already exist: building them inside the migration's transaction would
 * hold the table's lock (writes, or for a key swap every read) for the whole build, minutes at millions of
 * postings. The step itself then finds them (IF NOT EXISTS) and only swaps them in.
 */
export const CONCURRENT_BUILDS: Readonly<Record<number, readonly ConcurrentBuild[]>> = {
  5: (['memory_terms_key', 'memories_lexical'] as const).map((index) => ({ index, sql: step6Index(index, true) })),
};

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Every table of the schema (erasure compacts them; the tests read their files). */
export const TABLES = [
  'meta',
  'memories',
  'memory_terms',
  'memory_vectors',
  'events',
  'vector_blobs',
  'snapshots',
  'settings',
  'quarantine',
  'quarantine_vault',
  'learned_anchors',
  'anchor_cache',
  'access_tokens',
  'recall_counts',
  'pending_erasures',
  'http_sessions',
  'rate_buckets',
  'recall_lists',
  'namespace_stats',
  'term_stats',
] as const;

/**
 * The HNSW index for vectors of `dimensions`: an expression index (the column is an untyped `vector`, so the
 * dimension is fixed by the embedder record, not by the schema), partial on that dimension, so vectors of a
 * new embedder after a reset never enter (or break) the old one. Built after the transaction that records
 * the embedder commits, never inside a write transaction; queries before it exists scan exactly.
 */
export function hnswIndexName(dimensions: number): string {
  return `memory_vectors_hnsw_${dimensions}`;
}

/**
 * The graph's build: m 16 (pgvector's default) and ef_construction 200 (its default is 64). On near copies at
 * 100k it raised the walk's recall@10 at ef_search 200 from 0.57 to 0.843 and made the walk faster (52 against
 * 99 ms p50); the build took 186 s against about 51 s at load 10–12 (postgres-driver.ts has the figures). An
 * index built before keeps its parameters, even through `REINDEX`, which rebuilds with the index's stored
 * options: `ALTER INDEX … SET (ef_construction = 200)` first (postgres-vector-index.ts hnswBuildProblem).
 */
export const HNSW_BUILD_PARAMS = { m: 16, ef_construction: 200 } as const;
/** pgvector's own values, which an index built without them (by an older cairn) has. */
export const HNSW_DEFAULT_PARAMS = { m: 16, ef_construction: 64 } as const;
const HNSW_BUILD = `WITH (m = ${HNSW_BUILD_PARAMS.m}, ef_construction = ${HNSW_BUILD_PARAMS.ef_construction})`;

export function hnswIndexSql(dimensions: number, options: { concurrently?: boolean } = {}): string {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 2000) throw new Error(`bad dimensions ${dimensions}`);
  return `CREATE INDEX ${options.concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS ${hnswIndexName(dimensions)} ON memory_vectors USING hnsw ((embedding::vector(${dimensions})) vector_cosine_ops) ${HNSW_BUILD} WHERE vector_dims(embedding) = ${dimensions}`;
}
