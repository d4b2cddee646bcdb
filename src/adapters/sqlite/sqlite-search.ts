import { CairnError } from '../../interfaces/errors.js';
import { vectorFromBytes } from '../../core/checksum.js';
import type { CandidateFilter, EmbedderInfo, LexicalHit, StoreTx, VectorHit } from '../../interfaces/store.js';
import { vectorTableSql } from './sqlite-vector-table.js';
import type { SqliteConnection, WriteEffects } from './sqlite-connection.js';
import { filterSql, nsToken, quoteTerm, type Row } from './sqlite-rows.js';
import { firstFetch } from './sqlite-over-fetch.js';
import { widening } from '../vector-codes/scan-fetch.js';
import { SqlitePostings, fullTextTotals, type PostingCacheConfig, type PostingStats } from './sqlite-postings.js';
import { mergePruned, prunedMatches, splitForPruning, type PrunedSplit, type RankedRow } from './sqlite-bm25-pruning.js';

/** The best `fetch` full-text rows of a match, by BM25 then rowid (ties as FTS5 returns its matches). */
const RANKED_SQL = `SELECT rowid, bm25(memories_fts, 0.0, 1.0) AS rank FROM memories_fts WHERE memories_fts MATCH @match ORDER BY rank, rowid LIMIT @fetch`;

/** sqlite-vec's largest k in one KNN query. */
const MAX_KNN = 4096;

/** Search: cosine KNN over sqlite-vec, BM25 over FTS5, term document frequencies, the embedder record and vector index. */
export class SqliteSearch {
  /** BM25 from posting lists kept in memory, when configured (long-lived processes). */
  private readonly postings: SqlitePostings | null;

  constructor(
    private readonly c: SqliteConnection,
    postingCache: PostingCacheConfig | boolean = false,
  ) {
    c.onCommit((effects) => this.countsCommitted(effects));
    this.postings = postingCache ? new SqlitePostings(c, postingCache === true ? {} : postingCache) : null;
  }

  async getVectors(ids: string[]): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    if (ids.length === 0) return out;
    if (this.c.vectorDims === null) this.c.read('reading the vector index', () => this.c.loadVectorInfo());
    if (this.c.vectorDims === null) return out;
    return this.c.read('reading vectors', () => {
      // The log's copy of the vector (one B-tree lookup by its hash; a vec0 lookup by rowid costs several times
      // more), or the vector table's when the blob is missing. A memory has a vector row exactly when it has a
      // vector hash (writeVector sets both, every removal clears both).
      // All of them in one statement (a search asks for its first twenty).
      const vec = this.c.stmt(
        `SELECT m.id AS id, COALESCE(b.data, (SELECT embedding FROM ${this.c.vectorTable} WHERE rowid = m.rowid)) AS embedding FROM memories m
           LEFT JOIN vector_blobs b ON b.hash = m.vector_hash WHERE m.id IN (SELECT value FROM json_each(?)) AND m.vector_hash IS NOT NULL`,
      );
      const found = new Map((vec.all(JSON.stringify(ids)) as { id: string; embedding: Buffer | null }[]).map((v) => [v.id, v.embedding]));
      for (const id of ids) {
        const embedding = found.get(id);
        if (embedding) out.set(id, vectorFromBytes(embedding));
      }
      return out;
    });
  }

  async vectorCandidates(vector: Float32Array, k: number, filter: CandidateFilter): Promise<VectorHit[]> {
    if (this.c.vectorDims === null) this.c.read('reading the vector index', () => this.c.loadVectorInfo());
    if (this.c.vectorDims === null) return [];
    if (vector.length !== this.c.vectorDims) {
      throw new CairnError('EMBEDDER_MISMATCH', `query vector has ${vector.length} dimensions; the store holds ${this.c.vectorDims}`, { hint: 'run `cairn reindex`' });
    }
    const params: Row = { q: vector, namespace: filter.namespace, now: filter.now };
    const post = filterSql(filter, params);
    const index = this.c.vectorIndex;
    const indexed = index ? await this.c.readAsync('vector search', () => index.search(vector, k, filter, post, params)) : null;
    if (indexed) return indexed;
    return this.c.read('vector search', () => {
      const knnWhere = ['v.embedding MATCH @q', 'v.k = @k', 'v.namespace = @namespace'];
      if (!filter.includeInactive) knnWhere.push('v.active = 1');
      if (filter.kinds && filter.kinds.length === 1) {
        knnWhere.push('v.kind = @vkind');
        params['vkind'] = filter.kinds[0];
      }
      // Expiry, tags and several kinds are checked after the KNN. Widen the KNN until k rows pass that
      // filter or the index has no more rows; past the KNN's own limit, scan the namespace exactly, so
      // nearer inactive or filtered-out memories never hide the k nearest matching ones.
      params['limit'] = k;
      const knn = this.c.stmt(
        `SELECT m.id AS id, v.distance AS distance, (${post}) AS ok FROM (SELECT rowid, distance FROM ${this.c.vectorTable} v WHERE ${knnWhere.join(' AND ')}) v
         JOIN memories m ON m.rowid = v.rowid ORDER BY v.distance`,
      );
      let fetch = Math.min(MAX_KNN, filter.tags?.length || (filter.kinds?.length ?? 0) > 1 ? k * 4 : k + 16);
      for (;;) {
        params['k'] = fetch;
        const rows = knn.all(params) as { id: string; distance: number; ok: number }[];
        const hits = rows.filter((r) => r.ok === 1).slice(0, k);
        if (hits.length >= k || rows.length < fetch) return hits.map((r) => ({ id: r.id, similarity: 1 - r.distance }));
        if (fetch >= MAX_KNN) break;
        fetch = Math.min(MAX_KNN, fetch * 4);
      }
      const rows = this.c.stmt(
          `SELECT m.id AS id, vec_distance_cosine(v.embedding, @q) AS distance FROM memories m JOIN ${this.c.vectorTable} v ON v.rowid = m.rowid
           WHERE m.namespace = @namespace AND ${post} ORDER BY distance LIMIT @limit`,
        )
        .all(params) as { id: string; distance: number }[];
      return rows.map((r) => ({ id: r.id, similarity: 1 - r.distance }));
    });
  }

  async lexicalCandidates(terms: string[], k: number, filter: CandidateFilter): Promise<LexicalHit[]> {
    if (terms.length === 0 || k <= 0) return [];
    return this.c.read('full-text search', () => {
      // Inside a write transaction of this connection the averages record lags FTS5's own count: no pruning.
      if (this.c.db.inTransaction) return this.rankedCandidates(terms, k, filter, false);
      // One snapshot for the counts, the parts and the whole query: a commit between them would mix two states.
      return this.inSnapshot(() => this.rankedCandidates(terms, k, filter, true));
    });
  }

  /**
   * `read` in a read-only transaction of its own: one snapshot. It writes nothing, so the counts it reads are
   * committed ones and may be kept (see countsKept), and posting lists may be read and used.
   */
  private inSnapshot<T>(read: () => T): T {
    this.readSnapshot = true;
    try {
      return this.c.db.transaction(read)();
    } finally {
      this.readSnapshot = false;
    }
  }

  private rankedCandidates(terms: string[], k: number, filter: CandidateFilter, mayPrune: boolean): LexicalHit[] {
    const params: Row = { now: filter.now, namespace: filter.namespace };
    const post = filterSql(filter, params);
    // FTS5 ranks alone, then only the best rows are looked up in memories for the filter: joining every match
    // cost as much as scoring it (a 4-term query matches a fifth of a 100k namespace). The same rows as ranking
    // the filtered join: both orders are by BM25 then rowid, so the best rows that pass among the best `fetch`
    // are the best that pass. Fewer than k passing among a full `fetch` widens it, up to every match. The
    // namespace is part of the filter.
    const ranked = this.c.stmt(RANKED_SQL);
    const passing = this.c.stmt(
      `SELECT m.rowid AS rowid, m.id AS id FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(@rowids)) AND +m.namespace = @namespace AND ${post}`,
    );
    const passingIds = (rowids: number[]) => new Map((passing.all({ ...params, rowids: JSON.stringify(rowids) }) as { rowid: number; id: string }[]).map((r) => [r.rowid, r.id]));
    // A namespace holding most of the store is matched without its token, and the rows of other namespaces
    // are left out with the filter: BM25 sums over the query's phrases and the token's adds exactly 0 (its
    // column weighs 0), so the scores are the same, but FTS5 then neither intersects every match with the
    // namespace's posting list nor reads all of it for the token's IDF (0.82 of the time at 100k).
    const share = this.counted(filter.namespace).documents / Math.max(1, this.counted().documents);
    const byToken = share < 0.5;
    const scope = byToken ? `ns:${quoteTerm(nsToken(filter.namespace))} AND ` : '';
    const first = firstFetch(k);
    const split = mayPrune ? this.split(terms, filter.namespace) : null;
    // A split query runs with its common terms first, the order its parts sum them in: the same bits either way.
    const ordered = split ? [...split.common, ...split.rare] : terms;
    // Scored from the kept posting lists when there are some, summed in the same order: the same bits, the same rows.
    const scored = mayPrune && this.postings ? this.postings.score(ordered, filter.namespace, nsToken(filter.namespace)) : null;
    if (scored) return bestPassing((fetch) => scored.best(fetch), first, k, passingIds);
    if (split) {
      const pruned = this.prunedCandidates(split, k, scope, first, passingIds);
      if (pruned) return pruned;
    }
    const match = `${scope}terms:(${ordered.map(quoteTerm).join(' OR ')})`;
    return bestPassing((fetch) => ranked.all({ match, fetch }) as RankedRow[], byToken ? first : Math.ceil(first / share), k, passingIds);
  }

  /** How a query splits for pruning (sqlite-bm25-pruning.ts), or null. */
  private split(terms: string[], namespace: string): PrunedSplit | null {
    const { documents, frequencies } = this.termDocumentFrequenciesSync(terms, namespace);
    return splitForPruning(terms, frequencies, documents, this.fullTextRows(), (term) => this.termDocumentFrequenciesSync([term]).frequencies.get(term) ?? 0);
  }

  /**
   * The best k of a query holding a common term without scoring each of its matches (sqlite-bm25-pruning.ts):
   * the rows matching a rare term and no common one, and those matching both kinds, each ranked by FTS5 with the
   * whole query's scores; null when the two do not prove their best k after one widening, and the whole query
   * runs. Counted in `pruning`.
   */
  private prunedCandidates(split: PrunedSplit, k: number, scope: string, first: number, passingIds: (rowids: number[]) => Map<number, string>): LexicalHit[] | null {
    const ranked = this.c.stmt(RANKED_SQL);
    const { rareOnly, both } = prunedMatches(split, scope);
    for (const fetch of widening(first, first * 4)) {
      const rareRows = ranked.all({ match: rareOnly, fetch }) as RankedRow[];
      const bothRows = ranked.all({ match: both, fetch }) as RankedRow[];
      const ids = passingIds([...rareRows, ...bothRows].map((r) => r.rowid));
      const merged = mergePruned(rareRows, bothRows, fetch, split.commonBound, k, (rowid) => ids.has(rowid));
      if ('best' in merged) {
        this.pruning.proved++;
        return merged.best.map((r) => ({ id: ids.get(r.rowid) as string, score: r.score }));
      }
      // Both parts hold all their matches, or no fetch can lift the k-th best above the bound.
      if (merged.failed === 'bound' || (rareRows.length < fetch && bothRows.length < fetch)) break;
    }
    this.pruning.wholeQuery++;
    return null;
  }

  /** The kept posting lists (sqlite-postings.ts), or null when none are kept. */
  postingStats(): PostingStats | null {
    return this.postings?.stats() ?? null;
  }

  /** Queries that split for pruning (sqlite-bm25-pruning.ts): answered from the parts, or by the whole query. */
  readonly pruning = { proved: 0, wholeQuery: 0 };

  /** Rows of the full-text table (FTS5's own count, which its IDF uses): the first varint of its averages record. */
  private fullTextRows(): number {
    return fullTextTotals(this.c).rows;
  }

  /**
   * Document frequencies are kept in memory (counting a common term reads its whole posting list, counting a
   * namespace's memories its index): this connection's commits update them as they change them (each new
   * memory adds one document and one to each of its terms; a namespace re-indexed, deleted from or cleared
   * is counted again), and another process's commit, seen through `PRAGMA data_version`, drops them all.
   * Counts read inside an open write transaction, which may see its uncommitted rows, are not kept.
   */
  private readonly dfCache = new Map<string, { documents: number; frequencies: Map<string, number> }>();
  private dfVersion = -1;

  private countsCommitted({ inserted, recounted }: WriteEffects): void {
    if (recounted.size > 0) {
      this.dfCache.delete('');
      for (const namespace of recounted) this.dfCache.delete(`ns:${namespace}`);
    }
    for (const { namespace, terms } of inserted) {
      const distinct = new Set(terms);
      for (const key of ['', `ns:${namespace}`]) {
        const cache = this.dfCache.get(key);
        if (!cache) continue;
        cache.documents++;
        for (const term of distinct) {
          const df = cache.frequencies.get(term);
          if (df !== undefined) cache.frequencies.set(term, df + 1);
        }
      }
    }
  }

  /** True while lexicalCandidates reads in its own read-only transaction. */
  private readSnapshot = false;

  /**
   * Counts may be kept outside a transaction and in lexicalCandidates' read-only one (its data version is its
   * snapshot's, which counted() compares), never in a write transaction, which may see its uncommitted rows.
   */
  private countsKept(): boolean {
    return !this.c.db.inTransaction || this.readSnapshot;
  }

  /** The cached counts of the namespace (or the whole store): its memories, and the terms counted so far. */
  private counted(namespace?: string): { documents: number; frequencies: Map<string, number> } {
    const version = this.c.dataVersion();
    if (this.dfVersion !== version) {
      this.dfVersion = version;
      this.dfCache.clear();
    }
    const key = namespace === undefined ? '' : `ns:${namespace}`;
    let cache = this.dfCache.get(key);
    if (!cache || cache.frequencies.size > 100_000) {
      const documents =
        namespace === undefined
          ? (this.c.stmt('SELECT COUNT(*) AS n FROM memories').get() as { n: number }).n
          : (this.c.stmt('SELECT COUNT(*) AS n FROM memories WHERE namespace = ?').get(namespace) as { n: number }).n;
      cache = { documents, frequencies: new Map() };
      if (this.countsKept()) this.dfCache.set(key, cache);
    }
    return cache;
  }

  /**
   * Store-wide counts come from the FTS5 vocabulary table, and so do a namespace's when it holds every memory;
   * otherwise from the kept posting lists, or by counting the matches of its namespace token and the term (the
   * index holds both in one row).
   */
  async termDocumentFrequencies(terms: string[], namespace?: string): Promise<{ documents: number; frequencies: Map<string, number> }> {
    return this.c.read('counting terms', () =>
      this.postings && !this.c.db.inTransaction ? this.inSnapshot(() => this.termDocumentFrequenciesSync(terms, namespace)) : this.termDocumentFrequenciesSync(terms, namespace),
    );
  }

  private termDocumentFrequenciesSync(terms: string[], namespace?: string): { documents: number; frequencies: Map<string, number> } {
    const cache = this.counted(namespace);
    const storeWide = namespace === undefined || cache.documents === this.counted().documents;
    const missing = [...new Set(terms)].filter((t) => !cache.frequencies.has(t));
    const listed = !storeWide && missing.length > 0 && this.postings && this.readSnapshot ? this.postings.namespaceFrequencies(missing, namespace, nsToken(namespace)) : null;
    const counted = storeWide
      ? (term: string) => (this.c.stmt(`SELECT doc FROM memories_fts_vocab WHERE col = 'terms' AND term = ?`).get(term) as { doc: number } | undefined)?.doc ?? 0
      : (term: string) =>
          (this.c.stmt('SELECT COUNT(*) AS n FROM memories_fts WHERE memories_fts MATCH ?').get(`ns:${quoteTerm(nsToken(namespace))} AND terms:${quoteTerm(term)}`) as { n: number }).n;
    const frequencies = new Map<string, number>();
    const keep = this.countsKept();
    const count = (term: string) => listed?.get(term) ?? counted(term);
    for (const term of new Set(terms)) {
      let df = cache.frequencies.get(term);
      if (df === undefined) {
        df = count(term);
        if (keep) cache.frequencies.set(term, df);
      }
      if (df > 0) frequencies.set(term, df);
    }
    return { documents: cache.documents, frequencies };
  }

  private embedderSync(): EmbedderInfo | null {
    const row = this.c.stmt(`SELECT value FROM meta WHERE key = 'embedder'`).get() as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as EmbedderInfo) : null;
  }

  async embedder(): Promise<EmbedderInfo | null> {
    return this.c.read('reading the embedder record', () => this.embedderSync());
  }

  /**
   * Creates the vector table of this dimension if it is missing, in its own short write (outside any
   * transaction of the store, which may not run DDL). Never drops one: a table left empty by a reindex to
   * another dimension stays, since dropping it could pull it from under another process that prepared it.
   */
  async prepareVectors(info: EmbedderInfo): Promise<void> {
    const ready = this.c.read('reading the vector tables', () => this.c.hasVectorTable(info.dimensions));
    if (ready) return;
    this.c.refuseWrite('preparing the vector table');
    await this.c.mutex.run(() => this.c.whileBusy('preparing the vector table', () => this.c.db.exec(vectorTableSql(info.dimensions))));
  }

  /** This part's operations inside a write transaction (the caller holds the write lock). */
  tx(): Pick<StoreTx, 'embedder' | 'setEmbedder' | 'resetVectors'> {
    return {
    embedder: async () => this.embedderSync(),
    setEmbedder: async (info) => {
      const existing = this.c.stmt(`SELECT value FROM meta WHERE key = 'embedder'`).get() as { value: string } | undefined;
      if (existing) {
        const e = JSON.parse(existing.value) as EmbedderInfo;
        if (e.id === info.id && e.dimensions === info.dimensions) {
          this.c.vectorDims = e.dimensions;
          return;
        }
        throw new CairnError('EMBEDDER_MISMATCH', `the store already holds vectors from ${e.id} (${e.dimensions} dimensions)`, {
          hint: 'run `cairn reindex`',
        });
      }
      if (!this.c.hasVectorTable(info.dimensions)) {
        throw new CairnError('INTERNAL', `no vector table for ${info.dimensions} dimensions: Store.prepareVectors must run before the transaction that records the embedder`);
      }
      this.c.stmt(`INSERT INTO meta (key, value) VALUES ('embedder', ?)`).run(JSON.stringify(info));
      this.c.vectorDims = info.dimensions;
    },
    resetVectors: async () => {
      // Rows only: the table stays (a later prepareVectors of the same dimension finds it), so no DDL runs here.
      if (this.c.vectorDims !== null) this.c.stmt(`DELETE FROM ${this.c.vectorTable}`).run();
      this.c.stmt('UPDATE memories SET vector_hash = NULL WHERE vector_hash IS NOT NULL').run();
      this.c.stmt(`DELETE FROM meta WHERE key = 'embedder'`).run();
      this.c.vectorDims = null;
    },
    };
  }
}

/**
 * The best k ranked rows that pass the filter: the best `fetch` ranked rows (by BM25, then rowid), widened while
 * fewer than k of them pass; ends once k pass or the matches run out (fewer rows than fetched).
 */
function bestPassing(rowsOf: (fetch: number) => RankedRow[], first: number, k: number, passingIds: (rowids: number[]) => Map<number, string>): LexicalHit[] {
  let hits: LexicalHit[] = [];
  for (const fetch of widening(first)) {
    const rows = rowsOf(fetch);
    const ids = passingIds(rows.map((r) => r.rowid));
    hits = [];
    for (const r of rows) {
      const id = ids.get(r.rowid);
      if (id !== undefined && hits.push({ id, score: -r.rank }) === k) break;
    }
    if (hits.length >= k || rows.length < fetch) break;
  }
  return hits;
}
