import { BM25_B as B, BM25_K1 as K1, fts5Idf } from '../../core/fusion.js';
import type { CandidateFilter } from '../../interfaces/store.js';
import { QuantizedVectors } from '../vector-codes/quantized-vectors.js';
import { widening } from '../vector-codes/scan-fetch.js';
import type { Usearch } from '../vector-codes/usearch.js';

/**
 * One namespace's search data held by a long-lived process (postgres-recall-copies.ts keeps it in step with the
 * log): each memory's int8 vector codes, its postings and what the candidate filter reads. It proposes
 * candidates only: the fused statement rescores every proposed memory exactly, applies the filter again and
 * ranks as it always does (postgres-search.ts), so a proposal can cost recall, never return a memory the
 * statement would not.
 *
 * Pure data: no SQL, no I/O.
 */

/** One memory as read from the database for a copy. */
export interface CopyRow {
  pk: number;
  id: string;
  kind: string;
  /** The memory's tags (the `tags` column's JSON array). */
  tags: string[];
  /** Neither forgotten nor superseded (isCurrent). */
  current: boolean;
  expiresAt: string | null;
  /** BM25 document length, as the `doc_length` column holds it. */
  docLength: number;
  /** Its postings: distinct terms and their frequencies, as `memory_terms` holds them. */
  terms: string[];
  tfs: number[];
  /** Its vector in the store's space, or null when it has none there. */
  vector: Float32Array | null;
}

/** Memories proposed to the statement for one signal, and how many of them at least must pass its filter for the proposal to stand. */
export interface Proposal {
  pks: number[];
  /** min(k, memories this copy counts as passing the filter): fewer rescored rows mean the copy was stale. */
  need: number;
}

/** A lexical proposal carries its postings: each proposed memory's query terms and their frequencies, as the copy holds them. */
export interface LexicalProposal extends Proposal {
  postings: ProposedPostings;
}

/** Postings as parallel arrays: memory key, term, term frequency. */
export interface ProposedPostings {
  pks: number[];
  terms: string[];
  tfs: number[];
}

/**
 * The proposals of one search, made at log position `position` and schema version `schema` (the statement checks
 * both still hold and no re-analysis is under way: postgres-search.ts `freshCte`); a signal without one searches in
 * full.
 */
export interface Proposals {
  position: number;
  /** The schema version the copy was read under (a migration may change what rows mean). */
  schema: number;
  vector?: Proposal | undefined;
  lexical?: LexicalProposal | undefined;
  related?: LexicalProposal | undefined;
}


/** What is held of a memory: the row without its key and vector (the codes hold it), and its slot in the postings. */
type Held = Omit<CopyRow, 'pk' | 'vector'> & { slot: number };

/**
 * A term's postings: (slot, generation written in, term frequency) triples in one array (an entry is stale once
 * its slot's generation moved on), `dead` of them stale. One array a term, created at its exact size: most terms
 * of a namespace occur once (ticket numbers, names), and three arrays grown by push took about 550 bytes each.
 */
interface Postings {
  /** The term, one string shared by every memory holding it. */
  term: string;
  entries: number[];
  dead: number;
}

/** Numbers per entry of Postings.entries. */
const ENTRY = 3;

export class NamespaceCopy {
  private readonly rows = new Map<number, Held>();
  private readonly byId = new Map<string, number>();
  private readonly postings = new Map<string, Postings>();
  private slotPk: number[] = [];
  private slotGen: number[] = [];
  /** Each slot's document length, read per posting when scoring. */
  private slotLength = new Float64Array(1024);
  private readonly freeSlots: number[] = [];
  private totalLength = 0;
  private scores = new Float64Array(0);
  readonly codes: QuantizedVectors;

  constructor(readonly dimensions: number) {
    this.codes = new QuantizedVectors(dimensions);
  }

  /** Memories held (every one of the namespace, active or not: BM25's document count). */
  size(): number {
    return this.rows.size;
  }

  /** The memory's key, when this copy holds it. */
  pkOf(id: string): number | undefined {
    return this.byId.get(id);
  }

  /** Adds a memory, or replaces what is held of it. */
  put(row: CopyRow): void {
    this.remove(row.pk);
    const slot = this.freeSlots.pop() ?? this.slotPk.length;
    if (slot === this.slotPk.length) {
      this.slotPk.push(row.pk);
      this.slotGen.push(0);
    } else {
      this.slotPk[slot] = row.pk;
    }
    if (slot >= this.slotLength.length) {
      const grown = new Float64Array(this.slotLength.length * 2);
      grown.set(this.slotLength);
      this.slotLength = grown;
    }
    this.slotLength[slot] = row.docLength;
    const gen = this.slotGen[slot] as number;
    const { pk: _pk, vector: _vector, ...kept } = row;
    const held: Held = {
      ...kept,
      slot,
      terms: row.terms.map((term, i) => {
        const tf = row.tfs[i] as number;
        const list = this.postings.get(term);
        if (!list) {
          this.postings.set(term, { term, entries: [slot, gen, tf], dead: 0 });
          return term;
        }
        list.entries.push(slot, gen, tf);
        return list.term;
      }),
    };
    this.rows.set(row.pk, held);
    this.byId.set(row.id, row.pk);
    this.totalLength += row.docLength;
    if (row.vector && row.vector.length === this.dimensions) this.codes.set(row.pk, row.vector);
  }

  /** Drops a memory (gone from the namespace, or about to be replaced). */
  remove(pk: number): void {
    const held = this.rows.get(pk);
    if (!held) return;
    this.rows.delete(pk);
    if (this.byId.get(held.id) === pk) this.byId.delete(held.id);
    this.totalLength -= held.docLength;
    this.slotGen[held.slot] = (this.slotGen[held.slot] as number) + 1;
    this.freeSlots.push(held.slot);
    for (const term of held.terms) {
      const list = this.postings.get(term);
      if (!list) continue;
      if (++list.dead * ENTRY === list.entries.length) this.postings.delete(term);
      else if (list.dead * 2 * ENTRY > list.entries.length) this.compact(list);
    }
    this.codes.remove(pk);
  }

  private compact(list: Postings): void {
    const e = list.entries;
    let w = 0;
    for (let r = 0; r < e.length; r += ENTRY) {
      if (this.slotGen[e[r] as number] !== e[r + 1]) continue;
      e[w] = e[r] as number;
      e[w + 1] = e[r + 1] as number;
      e[w + 2] = e[r + 2] as number;
      w += ENTRY;
    }
    e.length = w;
    list.dead = 0;
  }

  /** Live memories holding the term (term_stats' count for this namespace). */
  private documentsWith(list: Postings): number {
    return list.entries.length / ENTRY - list.dead;
  }

  /** Whether the statement's filter (postgres-search.ts `filterSql` and the namespace) would keep the memory. */
  private passes(held: Held, filter: CandidateFilter): boolean {
    if (!filter.includeInactive && (!held.current || (held.expiresAt !== null && !(held.expiresAt > filter.now)))) return false;
    if (filter.kinds && filter.kinds.length > 0 && !(filter.kinds as string[]).includes(held.kind)) return false;
    if (filter.tags && filter.tags.length > 0 && !held.tags.some((t) => (filter.tags as string[]).includes(t))) return false;
    return true;
  }

  /**
   * The `count` memories passing the filter nearest `query` by the int8 cosine, nearest first (as the SQLite
   * store's scan, rows failing the filter widen the scan fourfold until enough pass or every row was read).
   */
  proposeVector(usearch: Usearch, query: Float32Array, k: number, count: number, filter: CandidateFilter, scanned?: number[]): Proposal {
    const total = this.codes.size();
    let proposal: Proposal = { pks: [], need: 0 };
    // The last fetch reads every row.
    for (const fetch of widening(count, total)) {
      // The first `count` nearest may come scanned already (by the scan worker, from a copy of these codes).
      const nearest = fetch === count && scanned ? scanned : this.codes.nearest(usearch, query, Math.min(fetch, total));
      const passing = nearest.filter((pk) => {
        const held = this.rows.get(pk);
        return held !== undefined && this.passes(held, filter);
      });
      proposal = { pks: passing.slice(0, count), need: Math.min(k, passing.length) };
      if (passing.length >= count) break;
    }
    return proposal;
  }

  /**
   * The `count` memories passing the filter with the best BM25 over `terms` (the statement's formula and
   * statistics: this namespace's document count, mean length and document frequencies), best first, ties by key.
   * Sums in another order than the statement's may differ in the last bits; the margin of `count` over `k`
   * covers that, and the statement computes the scores it ranks by.
   */
  proposeLexical(terms: readonly string[], k: number, count: number, filter: CandidateFilter): LexicalProposal {
    const n = this.rows.size;
    if (n === 0 || terms.length === 0) return { pks: [], need: 0, postings: { pks: [], terms: [], tfs: [] } };
    const avgdl = this.totalLength / n;
    if (this.scores.length < this.slotPk.length) this.scores = new Float64Array(Math.max(this.slotPk.length, this.scores.length * 2, 1024));
    const scores = this.scores;
    const lengths = this.slotLength;
    const touched: number[] = [];
    for (const term of new Set(terms)) {
      const list = this.postings.get(term);
      if (!list) continue;
      const idf = fts5Idf(n, this.documentsWith(list));
      const e = list.entries;
      for (let i = 0; i < e.length; i += ENTRY) {
        const slot = e[i] as number;
        if (this.slotGen[slot] !== e[i + 1]) continue;
        const tf = e[i + 2] as number;
        if (scores[slot] === 0) touched.push(slot);
        scores[slot] = (scores[slot] as number) + (idf * (tf * (K1 + 1))) / (tf + K1 * (1 - B + (B * (lengths[slot] as number)) / avgdl));
      }
    }
    // The best `count` passing memories (score, then key): the filter is read only for those that would enter.
    const best = new TopScores(count);
    for (const slot of touched) {
      const score = scores[slot] as number;
      scores[slot] = 0;
      const pk = this.slotPk[slot] as number;
      if (!best.admits(score, pk)) continue;
      if (this.passes(this.rows.get(pk) as Held, filter)) best.add(score, pk);
    }
    const pks = best.sorted();
    const wanted = new Set(terms);
    const postings: ProposedPostings = { pks: [], terms: [], tfs: [] };
    for (const pk of pks) {
      const held = this.rows.get(pk) as Held;
      held.terms.forEach((term, i) => {
        if (!wanted.has(term)) return;
        postings.pks.push(pk);
        postings.terms.push(term);
        postings.tfs.push(held.tfs[i] as number);
      });
    }
    // Fewer than `count` kept: they are every passing match.
    return { pks, need: Math.min(k, pks.length), postings };
  }
}

/** The `size` best (score, key) pairs seen, higher score first and then lower key: a binary heap of the worst kept on top. */
class TopScores {
  private readonly scores: Float64Array;
  private readonly keys: Float64Array;
  private count = 0;

  constructor(private readonly size: number) {
    this.scores = new Float64Array(Math.max(1, size));
    this.keys = new Float64Array(Math.max(1, size));
  }

  /** Whether (score, key) ranks below a and b: lower score, or equal score and higher key. */
  private static worse(sa: number, ka: number, sb: number, kb: number): boolean {
    return sa < sb || (sa === sb && ka > kb);
  }

  admits(score: number, key: number): boolean {
    return this.size > 0 && (this.count < this.size || TopScores.worse(this.scores[0] as number, this.keys[0] as number, score, key));
  }

  add(score: number, key: number): void {
    if (this.count < this.size) {
      let i = this.count++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!TopScores.worse(score, key, this.scores[parent] as number, this.keys[parent] as number)) break;
        this.scores[i] = this.scores[parent] as number;
        this.keys[i] = this.keys[parent] as number;
        i = parent;
      }
      this.scores[i] = score;
      this.keys[i] = key;
      return;
    }
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.count) break;
      const r = l + 1;
      const c = r < this.count && TopScores.worse(this.scores[r] as number, this.keys[r] as number, this.scores[l] as number, this.keys[l] as number) ? r : l;
      if (!TopScores.worse(this.scores[c] as number, this.keys[c] as number, score, key)) break;
      this.scores[i] = this.scores[c] as number;
      this.keys[i] = this.keys[c] as number;
      i = c;
    }
    this.scores[i] = score;
    this.keys[i] = key;
  }

  /** The keys kept, best first. */
  sorted(): number[] {
    const order = Array.from({ length: this.count }, (_, i) => i);
    order.sort((a, b) => (this.scores[b] as number) - (this.scores[a] as number) || (this.keys[a] as number) - (this.keys[b] as number));
    return order.map((i) => this.keys[i] as number);
  }
}
