import { BM25_B as B, BM25_K1 as K1, fts5Idf } from '../../core/fusion.js';
import type { CandidateFilter } from '../../interfaces/store.js';
import { CoarseLists, type CoarseBuild } from '../vector-codes/coarse-lists.js';
import { QuantizedVectors } from '../vector-codes/quantized-vectors.js';
import { widening } from '../vector-codes/scan-fetch.js';
import type { Usearch } from '../vector-codes/usearch.js';

/**
 * One namespace's search data held by a long-lived process (postgres-recall-copies.ts keeps it in step with the
 * log): each memory's int8 vector codes, its postings and what the candidate filter reads. It proposes
 * candidates only, each passing the filter as the statement reads it (`passes`): the fused statement rescores
 * every proposed memory exactly, checks every memory it would return against the filter again (one that fails
 * makes the proposal not stand, and the search runs in full) and ranks as it always does (postgres-search.ts),
 * so a proposal can cost recall, never return a memory the statement would not.
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

/**
 * Postings as parallel arrays: memory key, term, term frequency, and the memory's BM25 length (`doc_length`, fixed
 * when the memory is written), so the statement scores them without reading the memories.
 */
export interface ProposedPostings {
  pks: number[];
  terms: string[];
  tfs: number[];
  lengths: number[];
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


/** Numbers per posting: slot, generation written in, term frequency. */
const ENTRY = 3;

/** Flag bits of a slot. */
const CURRENT = 1;

type Grown = Int32Array | Uint32Array | Uint16Array | Uint8Array | Float64Array;

/** `a`, or a copy twice as long (or `need` long) when it is shorter than `need`. */
function atLeast<T extends Grown>(a: T, need: number): T {
  if (a.length >= need) return a;
  const out = new (a.constructor as new (n: number) => T)(Math.max(need, a.length * 2, 64));
  out.set(a);
  return out;
}

/** Values numbered in the order their keys are first met, each kept once (kinds, tag lists). */
class Interned<T> {
  private readonly ids = new Map<string, number>();
  readonly values: T[] = [];

  idOf(key: string, value: T): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.values.length;
      this.ids.set(key, id);
      this.values.push(value);
    }
    return id;
  }
}

/**
 * Storage. Held in typed arrays, not objects, so a copy of a million memories stays near a kilobyte each (the
 * codes aside) and off the JavaScript heap: objects a memory and an array of postings a term took 2.6 KB of heap
 * a memory at 100k (pg-scale's store), which bounded a copy to 400,000 memories.
 * - A memory lives in a slot (reused after a removal, its generation then moved on): its key, generation,
 *   document length, currency, kind and tag list (numbers into interned lists), expiry (a map, as few expire), and
 *   its terms and frequencies as a range of one arena (compacted when half of it is stale).
 * - A term has a number; its postings are (slot, generation, frequency) triples, an entry stale once its slot's
 *   generation moved on, `dead` of them. Most terms of a namespace occur once (ticket numbers, names): such a
 *   term's one triple is kept in one shared array (`termSingle`), and an array of its own is made at its second posting.
 */
export class NamespaceCopy {
  /** Slot of each memory held, by key. */
  private readonly rows = new Map<number, number>();
  private readonly byId = new Map<string, number>();
  private slotIds: (string | undefined)[] = [];
  private slotPk = new Float64Array(0);
  /** Int32, as the postings hold it, so the two wrap alike. */
  private slotGen = new Int32Array(0);
  /** Each slot's document length, read per posting when scoring. */
  private slotLength = new Float64Array(0);
  private slotFlags = new Uint8Array(0);
  private slotKind = new Uint16Array(0);
  private slotTags = new Uint32Array(0);
  private slotTermStart = new Uint32Array(0);
  private slotTermCount = new Uint32Array(0);
  private readonly expires = new Map<number, string>();
  private readonly freeSlots: number[] = [];
  private slotsUsed = 0;
  private readonly kinds = new Interned<string>();
  private readonly tagLists = new Interned<string[]>();
  /** Each slot's term numbers and frequencies, in the row's term order. */
  private arenaTerms = new Int32Array(0);
  private arenaTfs = new Int32Array(0);
  private arenaUsed = 0;
  private arenaStale = 0;
  private readonly termIds = new Map<string, number>();
  private termText: string[] = [];
  private termLists: (Int32Array | undefined)[] = [];
  /** Numbers of a term's entries in use (ENTRY a posting), and of them stale. */
  private termLength = new Uint32Array(0);
  private termDead = new Uint32Array(0);
  /** The one posting of a term without a list. */
  private termSingle = new Int32Array(0);
  private readonly freeTerms: number[] = [];
  private termsUsed = 0;
  private totalLength = 0;
  private scores = new Float64Array(0);
  /**
   * The slots a lexical proposal scored, in the order first scored; kept from one to the next, as `scores`. An
   * array grown by push took twice the time of the sums (about 20,000 slots a search at 100k: 0.51 against 0.26 ms).
   */
  private touched = new Int32Array(0);
  readonly codes: QuantizedVectors;
  /** The codes split into coarse lists (a large namespace's, once built: postgres-recall-copies.ts), kept in step. */
  private lists: CoarseLists | null = null;
  /** Keys whose codes changed since the snapshot a running build of lists was given: placed again at its install. */
  private changedSinceSnapshot: Set<number> | null = null;

  constructor(readonly dimensions: number) {
    this.codes = new QuantizedVectors(dimensions);
    this.tagLists.idOf('[]', []);
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
    const slot = this.freeSlots.pop() ?? this.newSlot();
    this.slotIds[slot] = row.id;
    this.slotPk[slot] = row.pk;
    this.slotLength[slot] = row.docLength;
    this.slotFlags[slot] = row.current ? CURRENT : 0;
    this.slotKind[slot] = this.kinds.idOf(row.kind, row.kind);
    this.slotTags[slot] = this.tagLists.idOf(JSON.stringify(row.tags), row.tags);
    if (row.expiresAt !== null) this.expires.set(slot, row.expiresAt);
    const gen = this.slotGen[slot] as number;
    const count = row.terms.length;
    this.reserveArena(count);
    this.slotTermStart[slot] = this.arenaUsed;
    this.slotTermCount[slot] = count;
    for (let i = 0; i < count; i++) {
      const tf = row.tfs[i] as number;
      const term = this.termOf(row.terms[i] as string);
      this.addPosting(term, slot, gen, tf);
      this.arenaTerms[this.arenaUsed] = term;
      this.arenaTfs[this.arenaUsed] = tf;
      this.arenaUsed++;
    }
    this.rows.set(row.pk, slot);
    this.byId.set(row.id, row.pk);
    this.totalLength += row.docLength;
    if (row.vector && row.vector.length === this.dimensions) {
      this.codes.set(row.pk, row.vector);
      const codes = this.codes.codes(row.pk);
      if (this.lists && codes) this.lists.set(row.pk, codes);
    }
    this.changedSinceSnapshot?.add(row.pk);
  }

  /** Drops a memory (gone from the namespace, or about to be replaced). */
  remove(pk: number): void {
    const slot = this.rows.get(pk);
    if (slot === undefined) return;
    this.rows.delete(pk);
    const id = this.slotIds[slot] as string;
    if (this.byId.get(id) === pk) this.byId.delete(id);
    this.slotIds[slot] = undefined;
    this.expires.delete(slot);
    this.totalLength -= this.slotLength[slot] as number;
    this.slotGen[slot] = (this.slotGen[slot] as number) + 1;
    this.freeSlots.push(slot);
    const start = this.slotTermStart[slot] as number;
    const end = start + (this.slotTermCount[slot] as number);
    for (let i = start; i < end; i++) {
      const term = this.arenaTerms[i] as number;
      const dead = (this.termDead[term] as number) + 1;
      const length = this.termLength[term] as number;
      this.termDead[term] = dead;
      if (dead * ENTRY === length) this.dropTerm(term);
      else if (dead * 2 * ENTRY > length) this.compact(term);
    }
    this.arenaStale += end - start;
    this.slotTermCount[slot] = 0;
    this.codes.remove(pk);
    this.lists?.remove(pk);
    this.changedSinceSnapshot?.add(pk);
  }

  /** The coarse lists over the codes, when installed. */
  coarseLists(): CoarseLists | null {
    return this.lists;
  }

  /** A copy of the codes as they are now, for a build of coarse lists; from now on changes are noted for its install. */
  snapshotForLists(): { keys: Float64Array; data: Int8Array } {
    const { keys, data } = this.codes.rows();
    this.changedSinceSnapshot = new Set();
    return { keys: keys.slice(), data: data.slice() };
  }

  /**
   * Installs lists built from the last snapshot: each snapshot row not changed since goes to the list it was
   * assigned, each row changed since (and still held) to the list nearest its codes now. A build another process
   * saved (postgres-saved-lists.ts) comes with `changed`, the memories its log names since the build's snapshot;
   * every row held that the build does not list counts as changed too.
   */
  installLists(usearch: Usearch, build: CoarseBuild, savedChanged?: ReadonlySet<number>): void {
    let changed = this.changedSinceSnapshot ?? new Set<number>();
    if (savedChanged) {
      const listed = new Set(build.keys);
      changed = new Set(savedChanged);
      for (const pk of this.codes.rows().keys) if (!listed.has(pk)) changed.add(pk);
    }
    const lists = new CoarseLists(usearch, this.dimensions, build.centroids, build.farBelow);
    for (let i = 0; i < build.keys.length; i++) {
      const pk = build.keys[i] as number;
      const codes = changed.has(pk) ? null : this.codes.codes(pk);
      if (codes) lists.set(pk, codes, build.assignment[i] as number);
    }
    for (const pk of changed) {
      const codes = this.codes.codes(pk);
      if (codes) lists.set(pk, codes);
    }
    this.lists = lists;
    this.changedSinceSnapshot = null;
  }

  private newSlot(): number {
    const slot = this.slotsUsed++;
    const need = this.slotsUsed;
    if (this.slotPk.length < need) {
      this.slotPk = atLeast(this.slotPk, need);
      this.slotGen = atLeast(this.slotGen, need);
      this.slotLength = atLeast(this.slotLength, need);
      this.slotFlags = atLeast(this.slotFlags, need);
      this.slotKind = atLeast(this.slotKind, need);
      this.slotTags = atLeast(this.slotTags, need);
      this.slotTermStart = atLeast(this.slotTermStart, need);
      this.slotTermCount = atLeast(this.slotTermCount, need);
    }
    this.slotIds.push(undefined);
    return slot;
  }

  /** Room for `count` more arena entries: the live ranges packed first when half the arena is stale. */
  private reserveArena(count: number): void {
    if (this.arenaUsed + count <= this.arenaTerms.length) return;
    if (this.arenaStale * 2 > this.arenaUsed) {
      const live = this.arenaUsed - this.arenaStale;
      const terms = new Int32Array(Math.max(64, (live + count) * 2));
      const tfs = new Int32Array(terms.length);
      let w = 0;
      for (const slot of this.rows.values()) {
        const start = this.slotTermStart[slot] as number;
        const n = this.slotTermCount[slot] as number;
        terms.set(this.arenaTerms.subarray(start, start + n), w);
        tfs.set(this.arenaTfs.subarray(start, start + n), w);
        this.slotTermStart[slot] = w;
        w += n;
      }
      this.arenaTerms = terms;
      this.arenaTfs = tfs;
      this.arenaUsed = w;
      this.arenaStale = 0;
      return;
    }
    this.arenaTerms = atLeast(this.arenaTerms, this.arenaUsed + count);
    this.arenaTfs = atLeast(this.arenaTfs, this.arenaTerms.length);
  }

  /** The term's number, a new one when no memory held it. */
  private termOf(text: string): number {
    const known = this.termIds.get(text);
    if (known !== undefined) return known;
    const term = this.freeTerms.pop() ?? this.termsUsed++;
    if (term >= this.termLength.length) {
      this.termLength = atLeast(this.termLength, term + 1);
      this.termDead = atLeast(this.termDead, term + 1);
      this.termSingle = atLeast(this.termSingle, this.termLength.length * ENTRY);
    }
    this.termIds.set(text, term);
    this.termText[term] = text;
    this.termLength[term] = 0;
    this.termDead[term] = 0;
    return term;
  }

  private addPosting(term: number, slot: number, gen: number, tf: number): void {
    const length = this.termLength[term] as number;
    let list = this.termLists[term];
    if (length === 0) {
      this.termLists[term] = undefined;
      const at = term * ENTRY;
      this.termSingle[at] = slot;
      this.termSingle[at + 1] = gen;
      this.termSingle[at + 2] = tf;
      this.termLength[term] = ENTRY;
      return;
    }
    if (!list) {
      list = new Int32Array(4 * ENTRY);
      list.set(this.termSingle.subarray(term * ENTRY, term * ENTRY + ENTRY));
    } else if (list.length < length + ENTRY) {
      list = atLeast(list, length + ENTRY);
    }
    list[length] = slot;
    list[length + 1] = gen;
    list[length + 2] = tf;
    this.termLists[term] = list;
    this.termLength[term] = length + ENTRY;
  }

  /** Forgets a term no memory holds any more (its number is reused). */
  private dropTerm(term: number): void {
    this.termIds.delete(this.termText[term] as string);
    this.termText[term] = '';
    this.termLists[term] = undefined;
    this.termLength[term] = 0;
    this.termDead[term] = 0;
    this.freeTerms.push(term);
  }

  /** Keeps only a term's current postings, in their order. */
  private compact(term: number): void {
    const list = this.termLists[term];
    if (!list) return;
    const length = this.termLength[term] as number;
    let w = 0;
    for (let r = 0; r < length; r += ENTRY) {
      if (this.slotGen[list[r] as number] !== list[r + 1]) continue;
      list[w] = list[r] as number;
      list[w + 1] = list[r + 1] as number;
      list[w + 2] = list[r + 2] as number;
      w += ENTRY;
    }
    this.termLength[term] = w;
    this.termDead[term] = 0;
  }

  /** Whether the statement's filter (postgres-search.ts `filterSql` and the namespace) would keep the memory. */
  private passes(slot: number, filter: CandidateFilter): boolean {
    if (!filter.includeInactive) {
      if (((this.slotFlags[slot] as number) & CURRENT) === 0) return false;
      const expiresAt = this.expires.get(slot);
      if (expiresAt !== undefined && !(expiresAt > filter.now)) return false;
    }
    if (filter.kinds && filter.kinds.length > 0 && !(filter.kinds as string[]).includes(this.kinds.values[this.slotKind[slot] as number] as string)) return false;
    if (filter.tags && filter.tags.length > 0) {
      const tags = this.tagLists.values[this.slotTags[slot] as number] as string[];
      if (!tags.some((t) => (filter.tags as string[]).includes(t))) return false;
    }
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
        const slot = this.rows.get(pk);
        return slot !== undefined && this.passes(slot, filter);
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
    if (n === 0 || terms.length === 0) return { pks: [], need: 0, postings: { pks: [], terms: [], tfs: [], lengths: [] } };
    const avgdl = this.totalLength / n;
    if (this.scores.length < this.slotsUsed) {
      this.scores = new Float64Array(Math.max(this.slotsUsed, this.scores.length * 2, 1024));
      this.touched = new Int32Array(this.scores.length);
    }
    const scores = this.scores;
    const touched = this.touched;
    let scored = 0;
    const lengths = this.slotLength;
    const gens = this.slotGen;
    const wanted = new Set<number>();
    for (const text of new Set(terms)) {
      const term = this.termIds.get(text);
      if (term === undefined) continue;
      wanted.add(term);
      const length = this.termLength[term] as number;
      const idf = fts5Idf(n, length / ENTRY - (this.termDead[term] as number));
      const list = this.termLists[term];
      const e = list ?? this.termSingle;
      const from = list ? 0 : term * ENTRY;
      for (let i = from; i < from + length; i += ENTRY) {
        const slot = e[i] as number;
        if (gens[slot] !== e[i + 1]) continue;
        const tf = e[i + 2] as number;
        if (scores[slot] === 0) touched[scored++] = slot;
        scores[slot] = (scores[slot] as number) + (idf * (tf * (K1 + 1))) / (tf + K1 * (1 - B + (B * (lengths[slot] as number)) / avgdl));
      }
    }
    // The best `count` passing memories (score, then key): the filter is read only for those that would enter.
    const best = new TopScores(count);
    for (let t = 0; t < scored; t++) {
      const slot = touched[t] as number;
      const score = scores[slot] as number;
      scores[slot] = 0;
      const pk = this.slotPk[slot] as number;
      if (!best.admits(score, pk)) continue;
      if (this.passes(slot, filter)) best.add(score, pk);
    }
    const pks = best.sorted();
    // By term number: the proposed memories' terms are about 10,000 a search at 100k, their texts' lookups 0.5 ms.
    const postings: ProposedPostings = { pks: [], terms: [], tfs: [], lengths: [] };
    for (const pk of pks) {
      const slot = this.rows.get(pk) as number;
      const start = this.slotTermStart[slot] as number;
      const end = start + (this.slotTermCount[slot] as number);
      for (let i = start; i < end; i++) {
        const term = this.arenaTerms[i] as number;
        if (!wanted.has(term)) continue;
        postings.pks.push(pk);
        postings.terms.push(this.termText[term] as string);
        postings.tfs.push(this.arenaTfs[i] as number);
        postings.lengths.push(lengths[slot] as number);
      }
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
