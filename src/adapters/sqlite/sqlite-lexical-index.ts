/**
 * The impact-ordered side index of the full-text table: BM25's best rows of a large namespace found by reading
 * only the heads of the query terms' posting lists, instead of FTS5 scoring every row that matches (about
 * 0.45 µs a matching row, and a common term matches a fifth of a large store).
 *
 * Kept with memories_fts, row for row, in the same transactions (writeRow / removeRow, called wherever the
 * full-text row is written or deleted):
 *   lexical_docs     one row per full-text row: its namespace key, its token count as FTS5 records it (the
 *                    docsize record, every column) and its terms with their counts (JSON object);
 *   lexical_postings one row per (term, row): the namespace key and the row's impact for the term, the BM25
 *                    weight at the reference length `lexical_avgdl` (meta) scaled to an integer, in descending
 *                    order: the heads of a term's list in a namespace are its best rows;
 *   lexical_counts   docs, postings and the postings the docs hold, kept by triggers: the index is used only
 *                    when it covers every full-text row and every posting is there (an emptied or half-written
 *                    table is never read, FTS5 answers instead until it is rebuilt).
 *
 * The scores are FTS5's `bm25(memories_fts, 0.0, 1.0)`, operation for operation (fts5_aux.c, k1 = 1.2,
 * b = 0.75): N and the total token count from FTS5's averages record, a term's row count from the vocabulary,
 * idf = ln((N − nHit + 0.5)/(nHit + 0.5)) through SQLite's own ln() (1e-6 when not positive), and
 * Σ over the query's phrases in order of idf × (f × (k1 + 1)) / (f + k1 × (1 − b + b × D / avgdl)). So the rows
 * and their order are the ones FTS5's `ORDER BY rank` gives (ties in ascending rowid), and the threshold
 * algorithm below stops as soon as no unread row can enter the best `fetch`: exact, not approximate.
 */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import { indexText } from '../../core/events.js';
import { analyse } from '../../core/lexical.js';
import type { Memory } from '../../interfaces/memory.js';
import { nsToken } from './sqlite-rows.js';

const K1 = 1.2;
const B = 0.75;
/** A posting's weight is below k1 + 1; its impact is the weight's fraction of it in units of 2^-20. */
const IMPACT_SCALE = 2 ** 20;
/** The reference length of a new, empty store (the mean token count of the latency benchmark's notes, 28.4). */
const DEFAULT_AVGDL = 28;
/** Bounds are compared with scores computed in floating point: they are widened by this much. */
const BOUND_MARGIN = 1 + 1e-9;

/** The tables and the counts row. */
const LEXICAL_TABLES_SQL = `
  CREATE TABLE lexical_docs (rowid INTEGER PRIMARY KEY, ns INTEGER NOT NULL, size INTEGER NOT NULL, distinct_terms INTEGER NOT NULL, terms TEXT NOT NULL);
  CREATE TABLE lexical_postings (
    term TEXT NOT NULL, ns INTEGER NOT NULL, impact INTEGER NOT NULL, doc INTEGER NOT NULL, tf INTEGER NOT NULL, size INTEGER NOT NULL,
    PRIMARY KEY (term, ns, impact DESC, doc)
  ) WITHOUT ROWID;
  CREATE TABLE lexical_counts (id INTEGER PRIMARY KEY CHECK (id = 1), docs INTEGER NOT NULL, postings INTEGER NOT NULL, expected INTEGER NOT NULL);
`;

/** The triggers keeping lexical_counts, created after a rebuild's bulk load (a trigger a row would double its time). */
const LEXICAL_TRIGGERS_SQL = `
  CREATE TRIGGER lexical_docs_insert AFTER INSERT ON lexical_docs BEGIN
    UPDATE lexical_counts SET docs = docs + 1, expected = expected + NEW.distinct_terms WHERE id = 1;
  END;
  CREATE TRIGGER lexical_docs_delete AFTER DELETE ON lexical_docs BEGIN
    UPDATE lexical_counts SET docs = docs - 1, expected = expected - OLD.distinct_terms WHERE id = 1;
  END;
  CREATE TRIGGER lexical_postings_insert AFTER INSERT ON lexical_postings BEGIN
    UPDATE lexical_counts SET postings = postings + 1 WHERE id = 1;
  END;
  CREATE TRIGGER lexical_postings_delete AFTER DELETE ON lexical_postings BEGIN
    UPDATE lexical_counts SET postings = postings - 1 WHERE id = 1;
  END;
`;

/** The namespace as a 48-bit integer (from the same hash as its full-text token). Rows are still checked against their namespace. */
export function namespaceKey(namespace: string): number {
  return parseInt(createHash('sha256').update(namespace).digest('hex').slice(0, 12), 16);
}

/** SQLite's variable-length integers, as FTS5 writes its averages and docsize records. */
export function readVarints(buf: Uint8Array): number[] {
  const out: number[] = [];
  let pos = 0;
  while (pos < buf.length) {
    let v = 0;
    let i = 0;
    for (; i < 8; i++) {
      const byte = buf[pos + i] as number;
      v = v * 128 + (byte & 0x7f);
      if (byte < 0x80) break;
    }
    if (i === 8) v = v * 256 + (buf[pos + 8] as number);
    pos += Math.min(i, 8) + 1;
    out.push(v);
  }
  return out;
}

/** The BM25 weight of a term held `tf` times by a row of `size` tokens, at mean length `avgdl` (fts5_aux.c's expression). */
function weight(tf: number, size: number, avgdl: number): number {
  return (tf * (K1 + 1.0)) / (tf + K1 * (1 - B + (B * size) / avgdl));
}

/** A posting's stored impact: its weight at the reference length, as an integer below IMPACT_SCALE. */
export function impactOf(tf: number, size: number, reference: number): number {
  return Math.min(IMPACT_SCALE - 1, Math.floor((weight(tf, size, reference) / (K1 + 1.0)) * IMPACT_SCALE));
}

/**
 * The most a posting of impact ≤ `impact` can weigh at mean length `avgdl` when impacts were made at
 * `reference`: its weight at the reference is below K = (impact + 1) / IMPACT_SCALE × (k1 + 1), which bounds its
 * length from below for each count, and the weight at `avgdl` is largest at the count (1, or unbounded) and the
 * length that bound allows.
 */
export function weightBound(impact: number, reference: number, avgdl: number): number {
  const c = K1 + 1.0;
  const k = (Math.min(IMPACT_SCALE, impact + 1) / IMPACT_SCALE) * c;
  const r = reference / avgdl;
  const above = c / k - 1; // ≥ 0
  let least: number;
  if (r <= 1) least = 1 + Math.max(0, r * above);
  else {
    const u0 = K1 * (1 - B);
    least = above >= u0 ? 1 + u0 + r * (above - u0) : 1 + above;
  }
  return Math.min(c, c / least) * BOUND_MARGIN;
}

/** A row's terms with how often it holds each. */
function termCounts(terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}

type Stmt = (sql: string) => Database.Statement;

/** The reference length impacts are made at (meta `lexical_avgdl`). */
function referenceLength(stmt: Stmt): number {
  const row = stmt(`SELECT value FROM meta WHERE key = 'lexical_avgdl'`).get() as { value: string } | undefined;
  return row ? Number(row.value) : DEFAULT_AVGDL;
}

/** Whether the database holds the index (its counts table). */
export function lexicalIndexExists(stmt: Stmt): boolean {
  return stmt(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'lexical_counts'`).get() !== undefined;
}

/** FTS5's row count and total token count (every column), or null for an empty index. */
export function averages(stmt: Stmt): { rows: number; tokens: number } | null {
  const block = stmt('SELECT block FROM memories_fts_data WHERE id = 1').pluck().get() as Buffer | undefined;
  if (!block || block.length === 0) return null;
  const [rows = 0, ...columns] = readVarints(block);
  if (rows <= 0) return null;
  return { rows, tokens: columns.reduce((a, b) => a + b, 0) };
}

/**
 * Writes a memory's full-text row, and its entries here when the database keeps this index (`kept`): every
 * write of memories_fts goes through this.
 */
export function insertFullText(stmt: Stmt, kept: boolean, rowid: bigint, namespace: string, terms: readonly string[]): void {
  stmt('INSERT INTO memories_fts (rowid, ns, terms) VALUES (?, ?, ?)').run(rowid, nsToken(namespace), terms.join(' '));
  if (kept) writeRow(stmt, rowid, namespace, terms);
}

/** Deletes a memory's full-text row and its entries here. */
export function deleteFullText(stmt: Stmt, kept: boolean, rowid: bigint): void {
  stmt('DELETE FROM memories_fts WHERE rowid = ?').run(rowid);
  if (kept) removeRow(stmt, rowid);
}

/**
 * Indexes a full-text row just written (the same rowid, namespace and terms as memories_fts): its size is read
 * back from FTS5's docsize record, so it is the D that bm25() uses.
 */
function writeRow(stmt: Stmt, rowid: bigint, namespace: string, terms: readonly string[]): void {
  const sz = stmt('SELECT sz FROM memories_fts_docsize WHERE id = ?').pluck().get(rowid) as Buffer | undefined;
  const size = sz ? readVarints(sz).reduce((a, b) => a + b, 0) : terms.length + 1;
  const counts = termCounts(terms);
  const ns = namespaceKey(namespace);
  const reference = referenceLength(stmt);
  stmt('INSERT INTO lexical_docs (rowid, ns, size, distinct_terms, terms) VALUES (?, ?, ?, ?, ?)').run(rowid, ns, size, counts.size, JSON.stringify(Object.fromEntries(counts)));
  const post = stmt('INSERT INTO lexical_postings (term, ns, impact, doc, tf, size) VALUES (?, ?, ?, ?, ?, ?)');
  for (const [term, tf] of counts) post.run(term, ns, impactOf(tf, size, reference), rowid, tf, size);
}

/** Removes a full-text row's entries (the caller deletes the memories_fts row in the same transaction). */
function removeRow(stmt: Stmt, rowid: bigint): void {
  const doc = stmt('SELECT ns, terms FROM lexical_docs WHERE rowid = ?').get(rowid) as { ns: number; terms: string } | undefined;
  if (!doc) return;
  const del = stmt('DELETE FROM lexical_postings WHERE term = ? AND ns = ? AND doc = ?');
  for (const term of Object.keys(JSON.parse(doc.terms) as Record<string, number>)) del.run(term, doc.ns, rowid);
  stmt('DELETE FROM lexical_docs WHERE rowid = ?').run(rowid);
}

/** Every memory's rowid, namespace and terms as the write path analyses them, in rowid order. */
export function eachAnalysedMemory(db: Database.Database, fn: (rowid: bigint, namespace: string, terms: string[]) => void): void {
  const page = db.prepare('SELECT rowid, namespace, text, route FROM memories WHERE rowid > ? ORDER BY rowid LIMIT 1000');
  // In pages: the connection cannot insert while a statement is still iterating.
  for (let after = 0; ; ) {
    const rows = page.all(after) as { rowid: number; namespace: string; text: string; route: string | null }[];
    if (rows.length === 0) return;
    for (const row of rows) {
      const route = row.route ? (JSON.parse(row.route) as Memory['route']) : null;
      fn(BigInt(row.rowid), row.namespace, analyse(indexText({ text: row.text, route })));
    }
    after = (rows[rows.length - 1] as { rowid: number }).rowid;
  }
}

/**
 * Rebuilds the whole index from the memories (their terms analysed by core, as rebuildFullText does), in the
 * caller's transaction (a maintenance one: it drops and creates the tables); impacts are made
 * at the current mean length. The postings are inserted in key order.
 */
export function rebuildLexicalIndex(db: Database.Database): void {
  db.exec('DROP TABLE IF EXISTS lexical_postings; DROP TABLE IF EXISTS lexical_docs; DROP TABLE IF EXISTS lexical_counts;');
  db.exec(LEXICAL_TABLES_SQL);
  const stmt: Stmt = (sql) => db.prepare(sql);
  const avg = averages(stmt);
  const reference = avg && avg.rows >= 100 ? avg.tokens / avg.rows : DEFAULT_AVGDL;
  db.prepare(`INSERT INTO meta (key, value) VALUES ('lexical_avgdl', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`).run(String(reference));
  const size = db.prepare('SELECT sz FROM memories_fts_docsize WHERE id = ?').pluck();
  const doc = db.prepare('INSERT INTO lexical_docs (rowid, ns, size, distinct_terms, terms) VALUES (?, ?, ?, ?, ?)');
  eachAnalysedMemory(db, (rowid, namespace, terms) => {
    const sz = size.get(rowid) as Buffer | undefined;
    const counts = termCounts(terms);
    doc.run(rowid, namespaceKey(namespace), sz ? readVarints(sz).reduce((a, b) => a + b, 0) : terms.length + 1, counts.size, JSON.stringify(Object.fromEntries(counts)));
  });
  // The postings in one sorted insert (SQLite's sorter, then appends in key order), the impact as impactOf computes it.
  db.prepare(
    `INSERT INTO lexical_postings (term, ns, impact, doc, tf, size)
     SELECT t.key, d.ns, MIN(${IMPACT_SCALE - 1}, CAST(floor(((t.value * (${K1} + 1.0)) / (t.value + ${K1} * (1 - ${B} + (${B} * d.size) / @reference))) / (${K1} + 1.0) * ${IMPACT_SCALE}) AS INTEGER)), d.rowid, t.value, d.size
     FROM lexical_docs d, json_each(d.terms) t ORDER BY 1, 2, 3 DESC, 4`,
  ).run({ reference });
  db.exec(`INSERT INTO lexical_counts (id, docs, postings, expected)
    SELECT 1, (SELECT COUNT(*) FROM lexical_docs), (SELECT COUNT(*) FROM lexical_postings), (SELECT COALESCE(SUM(distinct_terms), 0) FROM lexical_docs)`);
  db.exec(LEXICAL_TRIGGERS_SQL);
}

/**
 * Whether the index holds every full-text row and all their postings: `rows` is the count of memories (each has
 * exactly one full-text row; FTS5's own row count in its averages record keeps counting deleted rows of a
 * contentless-delete table).
 */
export function lexicalIndexComplete(stmt: Stmt, rows: number): boolean {
  const c = stmt('SELECT docs, postings, expected FROM lexical_counts WHERE id = 1').get() as { docs: number; postings: number; expected: number } | undefined;
  return c !== undefined && c.docs === rows && c.postings === c.expected;
}

export interface RankedRow {
  rowid: number;
  /** FTS5's rank: −1 × the BM25 score. */
  rank: number;
}

/**
 * The best `fetch` rows of the namespace for `terms: (t1 OR … OR tn)`, as FTS5's `ORDER BY rank LIMIT fetch`
 * ranks them (rows of other namespaces whose key collides may be among them: the caller checks the namespace),
 * or null when the index is not complete (the caller asks FTS5).
 *
 * The threshold algorithm: each term's list is read from its head in batches; every new row is scored
 * exactly from its term counts; a row not yet read in any list scores at most Σ idf × the bound of each list's
 * next posting. Once the `fetch`-th score found is above that, no unread row can enter, and the order of the
 * rows found is final.
 */
export function rankedRows(
  stmt: Stmt,
  terms: readonly string[],
  fetch: number,
  namespace: string,
  counts: { memories: number; rowCount: (term: string) => number },
): RankedRow[] | null {
  if (!lexicalIndexComplete(stmt, counts.memories)) return null;
  const avg = averages(stmt);
  if (!avg) return [];
  const avgdl = avg.tokens / avg.rows;
  const reference = referenceLength(stmt);
  const ln = stmt('SELECT ln(?) AS v').pluck();
  const idf = terms.map((t) => {
    const nHit = counts.rowCount(t);
    let v = ln.get((avg.rows - nHit + 0.5) / (nHit + 0.5)) as number;
    if (v <= 0.0) v = 1e-6;
    return nHit > 0 ? v : 0;
  });
  const ns = namespaceKey(namespace);
  const first = stmt('SELECT impact, doc, tf, size FROM lexical_postings WHERE term = ? AND ns = ? ORDER BY impact DESC, doc LIMIT ?');
  const tied = stmt('SELECT impact, doc, tf, size FROM lexical_postings WHERE term = ? AND ns = ? AND impact = ? AND doc > ? ORDER BY doc LIMIT ?');
  const below = stmt('SELECT impact, doc, tf, size FROM lexical_postings WHERE term = ? AND ns = ? AND impact < ? ORDER BY impact DESC, doc LIMIT ?');
  const docs = stmt('SELECT rowid, terms FROM lexical_docs WHERE rowid IN (SELECT value FROM json_each(?))');
  // One list per distinct term, weighing the idf of every phrase of it.
  const lists: { term: string; weight: number; bound: number; impact: number; doc: number; started: boolean; batch: number }[] = [];
  for (const term of new Set(terms)) {
    let w = 0;
    terms.forEach((t, i) => {
      if (t === term) w += idf[i] as number;
    });
    if (w > 0) lists.push({ term, weight: w, bound: K1 + 1.0, impact: 0, doc: 0, started: false, batch: fetch });
  }
  const listOf = new Map(lists.map((l, i) => [l.term, i]));
  /** A row read in some lists: its size, its count of each list's term (0: not read there yet), and the weight read so far. */
  interface Seen { rowid: number; size: number; tf: number[]; lower: number }
  const seen = new Map<number, Seen>();
  /** The exact score, FTS5's operations in its order: Σ over the phrases of idf × weight. */
  const exact = (size: number, tfOf: (term: string) => number): number => {
    let s = 0.0;
    for (let i = 0; i < terms.length; i++) {
      const f = tfOf(terms[i] as string);
      if (f) s += (idf[i] as number) * weight(f, size, avgdl);
    }
    return s;
  };
  for (;;) {
    for (const [li, l] of lists.entries()) {
      if (l.bound === 0) continue;
      type Posting = { impact: number; doc: number; tf: number; size: number };
      let rows: Posting[];
      if (!l.started) rows = first.all(l.term, ns, l.batch) as Posting[];
      else {
        rows = tied.all(l.term, ns, l.impact, l.doc, l.batch) as Posting[];
        if (rows.length < l.batch) rows = rows.concat(below.all(l.term, ns, l.impact, l.batch - rows.length) as Posting[]);
      }
      l.started = true;
      for (const r of rows) {
        let row = seen.get(r.doc);
        if (!row) seen.set(r.doc, (row = { rowid: r.doc, size: r.size, tf: new Array<number>(lists.length).fill(0), lower: 0 }));
        row.tf[li] = r.tf;
        row.lower += l.weight * weight(r.tf, r.size, avgdl);
      }
      const last = rows[rows.length - 1];
      if (rows.length < l.batch || !last) l.bound = 0;
      else {
        l.impact = last.impact;
        l.doc = last.doc;
        l.bound = weightBound(last.impact, reference, avgdl);
      }
      l.batch *= 2;
    }
    // A row's score is at least what was read of it, and at most that plus the bound of each list still open
    // where it was not read (complete: no such list, the sum read is its score); a row read nowhere scores at
    // most the sum of those bounds. Once the `fetch`-th best least score is above every incomplete row's most
    // and above that sum, the best rows are among the rows whose most reaches it. Sums taken in another order
    // differ in their last bits, so every comparison keeps a margin and the final order is by exact scores.
    const open = lists.map((l) => l.weight * l.bound);
    const unread = open.reduce((a, b) => a + b, 0);
    const rows = [...seen.values()].sort((a, b) => b.lower - a.lower || a.rowid - b.rowid);
    if (unread > 0 && rows.length < fetch) continue;
    const upper = (row: Seen): { most: number; complete: boolean } => {
      let most = row.lower;
      let complete = true;
      for (let j = 0; j < open.length; j++) {
        if (row.tf[j] === 0 && (open[j] as number) > 0) {
          most += open[j] as number;
          complete = false;
        }
      }
      return { most, complete };
    };
    const least = rows.length >= fetch ? (rows[fetch - 1] as Seen).lower / BOUND_MARGIN : 0;
    if (unread * BOUND_MARGIN >= least && unread > 0) continue;
    const candidates: Seen[] = [];
    let settled = true;
    for (const row of rows) {
      const { most, complete } = upper(row);
      if (most * BOUND_MARGIN < least) continue;
      if (!complete && row.lower < least && candidates.length >= fetch) {
        settled = false;
        break;
      }
      candidates.push(row);
    }
    if (!settled) continue;
    // Each candidate scored exactly: from its counts read when it is complete (every list it is missing from is
    // exhausted, so it does not hold that term), else from its row's term counts.
    const missing = candidates.filter((row) => !upper(row).complete).map((row) => row.rowid);
    const termsOf = new Map<number, Record<string, number>>();
    for (let i = 0; i < missing.length; i += 5000) {
      for (const d of docs.all(JSON.stringify(missing.slice(i, i + 5000))) as { rowid: number; terms: string }[]) termsOf.set(d.rowid, JSON.parse(d.terms) as Record<string, number>);
    }
    const ranked = candidates.map((row) => {
      const all = termsOf.get(row.rowid);
      const score = exact(row.size, all ? (t) => all[t] ?? 0 : (t) => row.tf[listOf.get(t) ?? -1] ?? 0);
      return { rowid: row.rowid, rank: -1.0 * score };
    });
    return ranked.sort((a, b) => a.rank - b.rank || a.rowid - b.rowid).slice(0, fetch);
  }
}

/** FNV-1a of a string, as an unsigned 32-bit integer (the check's order-free sums add these). */
function fnv(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** An order-free digest of a multiset of entries: their count and the sum of their hashes (mod 2^32). */
class Digest {
  count = 0;
  sum = 0;
  add(entry: string): void {
    this.count++;
    this.sum = (this.sum + fnv(entry)) >>> 0;
  }
  equals(o: Digest): boolean {
    return this.count === o.count && this.sum === o.sum;
  }
}

/**
 * For `cairn verify`: the index against FTS5 itself, entry by entry. Every (term, row, count) of the full-text
 * table (its vocabulary's instances) against the docs' term counts, every row's size against its docsize
 * record, and every posting against the one its doc implies (namespace key, impact). Returns what differs, or
 * null when nothing does. Reads the whole index: about a minute at a million memories.
 */
export function lexicalIndexProblem(db: Database.Database): string | null {
  const stmt: Stmt = (sql) => db.prepare(sql);
  if (!lexicalIndexComplete(stmt, memoryCount(stmt))) return 'its counts do not cover every full-text row and posting';
  db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.lexical_check_instances USING fts5vocab(main, memories_fts, instance)');
  try {
    const fts = new Digest();
    let term = '';
    let doc = -1;
    let tf = 0;
    for (const r of stmt(`SELECT term, doc FROM temp.lexical_check_instances WHERE col = 'terms'`).iterate() as Iterable<{ term: string; doc: number }>) {
      if (r.term !== term || r.doc !== doc) {
        if (tf > 0) fts.add(`${term}\u0000${doc}\u0000${tf}`);
        term = r.term;
        doc = r.doc;
        tf = 0;
      }
      tf++;
    }
    if (tf > 0) fts.add(`${term}\u0000${doc}\u0000${tf}`);
    const reference = referenceLength(stmt);
    const docs = new Digest();
    const implied = new Digest();
    let sizes = 0;
    for (const d of stmt('SELECT d.rowid AS rowid, d.ns AS ns, d.size AS size, d.terms AS terms, s.sz AS sz FROM lexical_docs d LEFT JOIN memories_fts_docsize s ON s.id = d.rowid').iterate() as Iterable<{ rowid: number; ns: number; size: number; terms: string; sz: Buffer | null }>) {
      if (!d.sz || readVarints(d.sz).reduce((a, b) => a + b, 0) !== d.size) sizes++;
      for (const [t, f] of Object.entries(JSON.parse(d.terms) as Record<string, number>)) {
        docs.add(`${t}\u0000${d.rowid}\u0000${f}`);
        implied.add(`${t}\u0000${d.ns}\u0000${impactOf(f, d.size, reference)}\u0000${d.rowid}\u0000${f}\u0000${d.size}`);
      }
    }
    const postings = new Digest();
    for (const p of stmt('SELECT term, ns, impact, doc, tf, size FROM lexical_postings').iterate() as Iterable<{ term: string; ns: number; impact: number; doc: number; tf: number; size: number }>) {
      postings.add(`${p.term}\u0000${p.ns}\u0000${p.impact}\u0000${p.doc}\u0000${p.tf}\u0000${p.size}`);
    }
    const problems: string[] = [];
    if (!docs.equals(fts)) problems.push(`its rows' terms differ from the full-text table's (${docs.count} against ${fts.count} term counts)`);
    if (sizes > 0) problems.push(`${sizes} rows' sizes differ from their docsize records`);
    if (!postings.equals(implied)) problems.push(`its postings differ from its rows' (${postings.count} against ${implied.count})`);
    return problems.length ? problems.join('; ') : null;
  } finally {
    db.exec('DROP TABLE IF EXISTS temp.lexical_check_instances');
  }
}

/** Erased terms (no remaining memory holds them) still found in the index's postings or rows. */
export function erasedTermsLeft(stmt: Stmt, terms: readonly string[]): number {
  if (terms.length === 0 || !lexicalIndexExists(stmt)) return 0;
  const json = JSON.stringify(terms);
  const postings = stmt('SELECT COUNT(DISTINCT term) AS n FROM lexical_postings WHERE term IN (SELECT value FROM json_each(?))').get(json) as { n: number };
  const docs = stmt('SELECT COUNT(DISTINCT t.key) AS n FROM lexical_docs d, json_each(d.terms) t WHERE t.key IN (SELECT value FROM json_each(?))').get(json) as { n: number };
  return Math.max(postings.n, docs.n);
}

/** Rebuilds the index in a maintenance transaction of its own (under the write lock) when `needed` still holds there. */
function rebuildUnderLock(db: Database.Database, needed: () => boolean): boolean {
  db.exec('BEGIN IMMEDIATE');
  try {
    const rebuild = needed();
    if (rebuild) rebuildLexicalIndex(db);
    db.exec('COMMIT');
    return rebuild;
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/** Whether the index misses rows or postings of the full-text table (its counts say so; cheap). */
function incomplete(db: Database.Database): boolean {
  const stmt: Stmt = (sql) => db.prepare(sql);
  const tables = stmt(`SELECT COUNT(*) AS n FROM sqlite_master WHERE name IN ('lexical_docs', 'lexical_postings', 'lexical_counts')`).get() as { n: number };
  return tables.n !== 3 || !lexicalIndexComplete(stmt, memoryCount(stmt));
}

function memoryCount(stmt: Stmt): number {
  return (stmt('SELECT COUNT(*) AS n FROM memories').get() as { n: number }).n;
}

/**
 * On open (writable stores): an index that does not cover the full-text table (emptied, a table dropped, left
 * behind by a write that bypassed it) is rebuilt before anything reads it. Returns whether it was.
 */
export function repairLexicalIndex(db: Database.Database): boolean {
  return incomplete(db) && rebuildUnderLock(db, () => incomplete(db));
}

/** Inside a maintenance transaction (erasure's compaction): an index that exists but does not cover the rows is rebuilt. */
export function rebuildIfIncomplete(db: Database.Database): boolean {
  if (!lexicalIndexExists((sql) => db.prepare(sql)) || !incomplete(db)) return false;
  rebuildLexicalIndex(db);
  return true;
}

/** For `cairn verify`: the full check (lexicalIndexProblem); an index that fails it is rebuilt. */
export function checkLexicalIndex(db: Database.Database): { status: 'consistent' | 'rebuilt' | 'unchecked'; detail: string } {
  if (!lexicalIndexExists((sql) => db.prepare(sql))) return { status: 'unchecked', detail: 'this store keeps no lexical side index (off)' };
  const problem = lexicalIndexProblem(db);
  if (problem === null) {
    const c = db.prepare('SELECT docs, postings FROM lexical_counts WHERE id = 1').get() as { docs: number; postings: number };
    return { status: 'consistent', detail: `${c.docs} rows and ${c.postings} postings, equal to the full-text table's` };
  }
  rebuildUnderLock(db, () => true);
  return { status: 'rebuilt', detail: `rebuilt from the memories: ${problem}` };
}
