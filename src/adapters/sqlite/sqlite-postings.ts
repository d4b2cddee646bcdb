// BM25 over posting lists kept in memory: FTS5's own scores, bit for bit, without FTS5 scoring every match.
import { BM25_B as B, BM25_K1 as K1 } from '../../core/fusion.js';
import type { SqliteConnection, WriteEffects } from './sqlite-connection.js';
import type { RankedRow } from './sqlite-bm25-pruning.js';


/**
 * Postings kept by default: 4 bytes of rowid and 4 of frequency each, 256 MB at most. A 100k store holds 3.5M in
 * all; at 1M (35M) the latency bench's searches read 27M over 70 queries, and with 8M kept they thrashed (p50
 * 176 ms against 127 ms with 40M).
 */
export const DEFAULT_MAX_POSTINGS = 32_000_000;

/**
 * After the lists were dropped (another process's commit, a delete or re-index), this many lexical searches are
 * left to FTS5 before lists are read again: reading them costs several FTS5 searches (at 100k, 270 ms against
 * 36 ms; at 1M seconds), so a store written between most searches never pays it every time, and one written now
 * and then reads them once it is quiet again.
 */
export const QUIET_SEARCHES = 16;

/**
 * Terms this long are never cut: FTS5 cuts tokens over 32 KB short, and a UTF-16 unit is at most 3 bytes of UTF-8.
 * Saves and queries are at most 32 KB, so none reaches the cut through them; a longer term is left to FTS5.
 */
const MAX_TERM_CHARS = 8192;

/** Namespaces whose membership (one byte a rowid) is kept at once. */
const MAX_NAMESPACES = 8;

export interface PostingCacheConfig {
  /** Postings kept in memory across all terms; a term holding more is scored by FTS5. Default 32M. */
  maxPostings?: number;
}

/** One term's rows in the `terms` column and how often each holds it, in arrays that grow as rows arrive. */
interface Postings {
  rows: Int32Array;
  freqs: Uint32Array;
  length: number;
  /** What it counts in `held`: its rows, and one for a list of none. */
  weight: number;
}

/** What the kept lists hold, and how the searches since the store opened were scored. */
export interface PostingStats {
  terms: number;
  postings: number;
  maxPostings: number;
  /** Searches scored from the lists, and searches left to FTS5 (soon after a drop, or a term with more postings than may be kept). */
  scored: number;
  leftToFts5: number;
}

/** A query's matches in one namespace with their scores, unordered; `best` orders as FTS5's `ORDER BY rank, rowid`. */
export interface ScoredMatches {
  readonly count: number;
  best(fetch: number): RankedRow[];
}

/**
 * Posting lists of the full-text table read once (through an fts5vocab `instance` table) and kept, with every
 * row's token count (its `docsize` record) and the rows of recently searched namespaces. A query then sums
 * FTS5's bm25 terms itself: the same idf (ln in SQLite, as FTS5 computes it), the same average length (the
 * table's averages record), each phrase added in the order given (the FTS5 statement's), so each score has
 * FTS5's bits. At 100k
 * memories a query of three common terms matches 56k rows: FTS5 scores them in about 50 ms, the sums here
 * take a few.
 *
 * For long-lived processes (a first search reads its terms' lists, which costs several FTS5 searches: 270 ms
 * at 100k), and only inside a read transaction, so every list comes from one snapshot. This connection's commits update
 * the lists (a new row appends to its terms' lists); a delete, an update of the indexed terms, or another
 * process's commit (`PRAGMA data_version`) drops everything, and FTS5 scores the next QUIET_SEARCHES searches.
 */
export class SqlitePostings {
  private readonly maxPostings: number;
  private readonly lists = new Map<string, Postings>();
  private readonly members = new Map<string, Uint8Array>();
  /** Tokens of each row in both columns, by rowid (0: no row). */
  private docSize: Int32Array | null = null;
  private held = 0;
  private version = -1;
  private acc = new Float64Array(0);
  private touched = new Int32Array(0);
  private scored = 0;
  private leftToFts5 = 0;
  /** Lexical searches since the lists were last dropped (none were yet: as if long quiet). */
  private quiet = QUIET_SEARCHES;

  constructor(
    private readonly c: SqliteConnection,
    config: PostingCacheConfig,
  ) {
    this.maxPostings = config.maxPostings ?? DEFAULT_MAX_POSTINGS;
    c.onCommit((effects) => this.committed(effects));
  }

  /** Drops everything when another connection committed since the lists were read. Call inside the read transaction. */
  private sync(): void {
    const version = this.c.dataVersion();
    if (version !== this.version) {
      if (this.version !== -1) this.clear();
      this.version = version;
    }
  }

  private clear(): void {
    this.quiet = 0;
    this.lists.clear();
    this.members.clear();
    this.docSize = null;
    this.held = 0;
  }

  private committed({ inserted, recounted }: WriteEffects): void {
    if (recounted.size > 0) {
      this.clear();
      return;
    }
    if (!this.docSize) return;
    for (const { rowid, namespace, terms } of inserted) {
      this.ensureRow(rowid);
      // Each term is one token of the `terms` column and the namespace one of `ns` (sqlite-schema.ts).
      (this.docSize as Int32Array)[rowid] = terms.length + 1;
      const counts = new Map<string, number>();
      for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const [term, f] of counts) {
        const list = this.lists.get(term);
        if (!list) continue;
        if (list.length === list.rows.length) {
          const rows = new Int32Array(Math.max(16, list.length * 2));
          const freqs = new Uint32Array(rows.length);
          rows.set(list.rows);
          freqs.set(list.freqs);
          list.rows = rows;
          list.freqs = freqs;
        }
        list.rows[list.length] = rowid;
        list.freqs[list.length] = f;
        list.length++;
        list.weight++;
        this.held++;
      }
      const member = this.members.get(namespace);
      if (member) member[rowid] = 1;
    }
    this.evict();
  }

  /** Grows the per-row arrays so `rowid` has a place. */
  private ensureRow(rowid: number): void {
    const size = this.docSize as Int32Array;
    if (rowid < size.length) return;
    const grown = new Int32Array(Math.max(rowid + 1, Math.ceil(size.length * 1.5)));
    grown.set(size);
    this.docSize = grown;
    for (const [ns, member] of this.members) {
      const m = new Uint8Array(grown.length);
      m.set(member);
      this.members.set(ns, m);
    }
  }

  /**
   * Every row of `namespaceToken`'s namespace matching any of `terms` (a `terms:(a OR b …)` match), scored as
   * `bm25(memories_fts, 0.0, 1.0)` would score it; null when a term's list is too large to keep (FTS5 then
   * scores the query). Call inside a read transaction.
   */
  score(terms: readonly string[], namespace: string, namespaceToken: string): ScoredMatches | null {
    if (new Set(terms).size !== terms.length) return null; // a repeated phrase counts twice in FTS5: left to it
    // FTS5 cuts a token of more than 32 KB short, in the index and in a query; left to it.
    if (terms.some((t) => t.length > MAX_TERM_CHARS)) return null;
    this.sync();
    if (this.quiet < QUIET_SEARCHES) {
      this.quiet++;
      this.leftToFts5++;
      return null;
    }
    const lists: Postings[] = [];
    for (const term of terms) {
      const list = this.list(term);
      if (!list) {
        this.leftToFts5++;
        return null;
      }
      lists.push(list);
    }
    this.scored++;
    const member = this.member(namespace, namespaceToken);
    const docSize = this.docSize as Int32Array;
    const { rows: nRow, tokens } = fullTextTotals(this.c);
    if (nRow === 0) return { count: 0, best: () => [] };
    const avgdl = tokens / nRow;
    if (this.acc.length < docSize.length) {
      this.acc = new Float64Array(docSize.length);
      this.touched = new Int32Array(docSize.length);
    }
    const acc = this.acc;
    const touched = this.touched;
    let n = 0;
    const ln = this.c.stmt('SELECT ln(?) AS v').pluck();
    // FTS5's idf: its count of rows holding the phrase is over the whole table, whatever the namespace. Read
    // before any sum, so nothing can throw while `acc` holds a query's partial sums.
    const idfs = lists.map((list) => {
      const raw = ln.get((nRow - list.length + 0.5) / (list.length + 0.5)) as number;
      return raw <= 0 ? 1e-6 : raw;
    });
    for (const [l, list] of lists.entries()) {
      const idf = idfs[l] as number;
      const { rows, freqs, length } = list;
      for (let i = 0; i < length; i++) {
        const row = rows[i] as number;
        if (member[row] !== 1) continue;
        const f = freqs[i] as number;
        // The expression of fts5Bm25Function, in its order of operations.
        const term = idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * (docSize[row] as number)) / avgdl)));
        if (acc[row] === 0) touched[n++] = row;
        acc[row] = (acc[row] as number) + term;
      }
    }
    const found = touched.slice(0, n);
    const scores = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const row = found[i] as number;
      scores[i] = acc[row] as number;
      acc[row] = 0;
    }
    return { count: n, best: (fetch) => bestOf(found, scores, fetch) };
  }

  stats(): PostingStats {
    return { terms: this.lists.size, postings: this.held, maxPostings: this.maxPostings, scored: this.scored, leftToFts5: this.leftToFts5 };
  }

  /** How many rows of the namespace hold each term (the namespace's document frequencies), or null as in score. */
  namespaceFrequencies(terms: readonly string[], namespace: string, namespaceToken: string): Map<string, number> | null {
    if (terms.some((t) => t.length > MAX_TERM_CHARS)) return null;
    this.sync();
    if (this.quiet < QUIET_SEARCHES) return null;
    // Held here: reading one term's list may evict another's from the kept ones.
    const lists = new Map<string, Postings>();
    for (const term of terms) {
      const list = this.list(term);
      if (!list) return null;
      lists.set(term, list);
    }
    const member = this.member(namespace, namespaceToken);
    const out = new Map<string, number>();
    for (const [term, { rows, length }] of lists) {
      let df = 0;
      for (let i = 0; i < length; i++) if (member[rows[i] as number] === 1) df++;
      out.set(term, df);
    }
    return out;
  }

  /** The term's list (read now when missing), or null when it holds more postings than may be kept. */
  private list(term: string): Postings | null {
    const kept = used(this.lists, term);
    if (kept) return kept;
    this.loadDocSizes();
    const rows = this.instances(term, 'terms');
    // fts5vocab returns a term's instances in rowid order; sorted if ever not, so a row's instances sit together.
    for (let i = 1; i < rows.length; i++) {
      if ((rows[i] as number) < (rows[i - 1] as number)) {
        rows.sort();
        break;
      }
    }
    const freqs = new Uint32Array(rows.length);
    let length = 0;
    for (let i = 0; i < rows.length; i++) {
      // An instance per occurrence, in rowid order: a row holding the term twice comes twice in a row.
      if (length > 0 && rows[length - 1] === rows[i]) freqs[length - 1] = (freqs[length - 1] as number) + 1;
      else {
        rows[length] = rows[i] as number;
        freqs[length] = 1;
        length++;
      }
    }
    if (length > this.maxPostings) return null;
    // Trimmed to its rows (the instances may be several a row); a list holding none still counts one.
    const list = { rows: rows.slice(0, length), freqs: freqs.slice(0, length), length, weight: Math.max(1, length) };
    this.lists.set(term, list);
    this.held += list.weight;
    this.evict();
    return list;
  }

  /** Drops the least recently used lists while more postings are held than allowed. */
  private evict(): void {
    for (const [term, list] of this.lists) {
      if (this.held <= this.maxPostings) return;
      this.lists.delete(term);
      this.held -= list.weight;
    }
  }

  /** Which rows belong to the namespace (read from its token's postings in `ns` when not kept). */
  private member(namespace: string, namespaceToken: string): Uint8Array {
    const kept = used(this.members, namespace);
    if (kept) return kept;
    this.loadDocSizes();
    const member = new Uint8Array((this.docSize as Int32Array).length);
    for (const row of this.instances(namespaceToken, 'ns')) member[row] = 1;
    this.members.set(namespace, member);
    for (const ns of this.members.keys()) {
      if (this.members.size <= MAX_NAMESPACES) break;
      this.members.delete(ns);
    }
    return member;
  }

  /** The rowid of each instance of `token` in `column`, in rowid order (one string from SQLite: 10× fewer calls than a row each). */
  private instances(token: string, column: 'ns' | 'terms'): Int32Array {
    // A table of the connection's temporary schema: nothing is written to the store. Looked for each time, since
    // changing `temp_store` (bulk transactions and the erasure's compaction do) drops every temporary table.
    if (this.c.stmt(`SELECT 1 FROM temp.sqlite_master WHERE name = 'memories_fts_instances'`).get() === undefined) {
      this.c.db.exec('CREATE VIRTUAL TABLE temp.memories_fts_instances USING fts5vocab(main, memories_fts, instance)');
    }
    const joined = this.c.stmt(`SELECT group_concat(doc, ',') FROM temp.memories_fts_instances WHERE term = ? AND col = ?`).pluck().get(token, column) as string | null;
    if (!joined) return new Int32Array(0);
    const parts = joined.split(',');
    const rows = new Int32Array(parts.length);
    for (let i = 0; i < parts.length; i++) rows[i] = Number(parts[i]);
    return rows;
  }

  /** Every row's token count, from the `docsize` records (a varint per column). */
  private loadDocSizes(): void {
    if (this.docSize) return;
    // Both aggregates read the rows in one pass, so the nth id goes with the nth record.
    const row = this.c.stmt(`SELECT group_concat(id, ',') AS ids, group_concat(hex(sz), '') AS sizes FROM memories_fts_docsize`).get() as { ids: string | null; sizes: string | null };
    const ids = row.ids ? row.ids.split(',').map(Number) : [];
    const values = readVarints(Buffer.from(row.sizes ?? '', 'hex'));
    const columns = ids.length > 0 ? values.length / ids.length : 0;
    const sizes = new Int32Array(ids.reduce((max, id) => Math.max(max, id), 0) + 1);
    for (const [n, id] of ids.entries()) {
      let tokens = 0;
      for (let c = 0; c < columns; c++) tokens += values[n * columns + c] as number;
      sizes[id] = tokens;
    }
    this.docSize = sizes;
    for (const [ns, member] of this.members) if (member.length < sizes.length) this.members.delete(ns);
  }
}

/** FTS5's row count and token total over both columns: its averages record, which bm25 reads. */
export function fullTextTotals(c: SqliteConnection): { rows: number; tokens: number } {
  const row = c.stmt('SELECT block FROM memories_fts_data WHERE id = 1').get() as { block: Buffer } | undefined;
  if (!row) return { rows: 0, tokens: 0 };
  const values = readVarints(row.block);
  return { rows: values[0] ?? 0, tokens: values.slice(1).reduce((a, b) => a + b, 0) };
}

/** The kept value of `key`, moved to the end of `map` (most recently used last: eviction takes the first). */
function used<T>(map: Map<string, T>, key: string): T | undefined {
  const kept = map.get(key);
  if (kept !== undefined) {
    map.delete(key);
    map.set(key, kept);
  }
  return kept;
}

/** The best `fetch` of the scored rows by score, then rowid (FTS5's `ORDER BY rank, rowid`, rank being −score). */
function bestOf(rows: Int32Array, scores: Float64Array, fetch: number): RankedRow[] {
  const n = rows.length;
  let picked: number[];
  if (fetch >= n) picked = Array.from({ length: n }, (_, i) => i);
  else {
    const threshold = kthLargest(scores.slice(), fetch);
    picked = [];
    for (let i = 0; i < n; i++) if ((scores[i] as number) >= threshold) picked.push(i);
  }
  picked.sort((a, b) => (scores[b] as number) - (scores[a] as number) || (rows[a] as number) - (rows[b] as number));
  return picked.slice(0, fetch).map((i) => ({ rowid: rows[i] as number, rank: -(scores[i] as number) }));
}

/** The k-th largest value (1-based) of `values`, which it reorders (quickselect). */
function kthLargest(values: Float64Array, k: number): number {
  let lo = 0;
  let hi = values.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1] as number;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((values[i] as number) > pivot) i++;
      while ((values[j] as number) < pivot) j--;
      if (i <= j) {
        const t = values[i] as number;
        values[i] = values[j] as number;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return values[target] as number;
  }
  return values[target] as number;
}

/** SQLite's varints (FTS5 writes its records with them): big-endian 7-bit groups, the ninth byte whole. */
function readVarints(buf: Uint8Array): number[] {
  const out: number[] = [];
  let i = 0;
  while (i < buf.length) {
    let value = 0;
    let j = 0;
    for (; j < 8; j++) {
      const byte = buf[i++] ?? 0;
      value = value * 128 + (byte & 0x7f);
      if (!(byte & 0x80)) break;
    }
    if (j === 8) value = value * 256 + (buf[i++] ?? 0);
    out.push(value);
  }
  return out;
}
