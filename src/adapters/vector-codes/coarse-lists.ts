import { availableParallelism } from 'node:os';
import type { Usearch } from './usearch.js';
import { codesMetric, QuantizedVectors, quantize } from './quantized-vectors.js';
import type { BuildReply } from './background-build.js';

/**
 * How much of a namespace a search scans: the lists whose centroids are nearest the query, until they hold this
 * share of its vectors and at least PROBE_MIN_ROWS (and 16 × the candidates asked for). Chosen on the latency
 * bench's kind of vectors (noisy copies of 512 real notes, real text queries against the full int8 scan): at 1M
 * in 1,024 lists, 3.8 % scanned gave recall@10 1.0 and recall@300 0.997, 1.9 % gave 1.0 and 0.985; at 100k in
 * 256 lists 14 % gave 0.982 and 28 % 1.0, so what a search needs is closer to a number of rows than a share.
 */
export const PROBE_SHARE = 0.04;
export const PROBE_MIN_ROWS = 40_000;

/**
 * What an advisory search (the write-time likely-update check) probes beside the far list, when that is less than
 * a search's probe. Measured at 1M with the far list (10,030 rows; the setting of FAR_SHARE's measure, 29 update
 * pairs whose older note the exhaustive search finds): older note found 28 / 28 / 29 / 29 times and recall@10
 * against the exhaustive search 0.968 / 0.984 / 0.997 / 1.0 probing 1,000 / 10,000 / 20,000 / 40,000 rows.
 */
export const ADVISORY_PROBE_ROWS = 20_000;

/**
 * The share of a build's rows, the least like their list's centroid, that go to the far list instead, which every
 * search scans. A note on a subject the lists were not trained on is far from every centroid: which list it
 * lands in is then close to chance, and a search from the same subject probes other lists. Measured at 1M (the
 * latency bench's store, 1,024 lists, 279 notes of the coding-memory bench saved into it, the 31 update pairs'
 * newer notes as queries, 40,000 rows probed): without a far list the older note was among the ten nearest 24 times
 * of the 30 where the exhaustive search had it, and the lists found 0.53 of the exhaustive ten; with it (10,030
 * rows) 29 of 29, and 1.0.
 */
export const FAR_SHARE = 0.01;

/**
 * When later rows have grown the far list past this share of the namespace (a build leaves FAR_SHARE there), its
 * notes have moved to subjects the centroids do not know, and every search scans them all: the lists are built
 * again, and the ones installed answer until the new ones are in.
 */
export const FAR_REBUILD_SHARE = 0.03;

/**
 * What a finished build hands over: centroids (`lists` × dimensions), each snapshot row's list (`lists` for the far
 * list) and the cosine to its centroid under which a row belongs to the far list.
 */
export interface CoarseBuild {
  dimensions: number;
  centroids: Float32Array;
  keys: Float64Array;
  assignment: Uint16Array;
  farBelow: number;
}

export type CoarseBuildReply = Extract<BuildReply, { ok: true }> & { coarse: CoarseBuild };

/** How many lists a namespace of `n` vectors is split into: about √n, from 64 to 4,096. */
function listCount(n: number): number {
  return Math.max(64, Math.min(4096, Math.round(Math.sqrt(n))));
}

/** What a build of coarse lists is asked for beside its rows: their dimensions, about how many lists, and worker threads. */
export interface CoarseBuildParams {
  dimensions: number;
  lists: number;
  threads: number;
}

/** The build's parameters for `rows` vectors: about √rows lists, on every core but the one serving searches. */
export function coarseBuildParams(dimensions: number, rows: number): CoarseBuildParams {
  return { dimensions, lists: listCount(rows), threads: Math.max(1, availableParallelism() - 1) };
}

/** One namespace's lists as the status names them: its rows, of which in the far list, and the searches they answered. */
export interface CoarseListsUse {
  namespace: string;
  vectors: number;
  far: number;
  searches: number;
}

/**
 * Up to this many candidates, a search scans each probed list where it lies and keeps the best across them;
 * more, and it copies the probed lists into one array for a single scan. Measured on 40 lists of 1,000 random
 * 512-dimension codes (December 2026, median of 40): 20 candidates 1.7 ms against 3.1 (the copy of 20 MB is most
 * of the difference), 64 2.1 against 2.6, 114 2.5 against 2.7, 200 3.0 against 2.7.
 */
const PER_LIST_MAX_COUNT = 128;

/**
 * One namespace's int8 codes split into lists by nearest centroid (an inverted file): a search scans the lists
 * nearest the query instead of the whole namespace. The lists hold their own copy of the codes, kept in step
 * with the namespace's QuantizedVectors by `set`/`remove`; like the codes they only propose candidates, which
 * are rescored exactly, so a row in a less than ideal list costs recall, never a wrong hit.
 */
export class CoarseLists {
  private readonly lists: QuantizedVectors[];
  private readonly listOf = new Map<number, number>();
  private scratch = new Int8Array(0);
  private scratchKeys = new Float64Array(0);
  /** Rows far from every centroid (see FAR_SHARE): scanned by every search. */
  private readonly far: QuantizedVectors;
  private readonly rowQuery: Float32Array;
  /** The last search's codes and its nearest centroid (list, inner-product distance): see listsByCentroid. */
  private nearestOfLast: { codes: Int8Array; list: number; distance: number } | null = null;
  searches = 0;

  constructor(
    private readonly usearch: Usearch,
    readonly dimensions: number,
    /** Unit vectors, `dimensions` apiece. */
    private readonly centroids: Float32Array,
    /** A row whose cosine to its nearest centroid is under this goes to the far list. */
    private readonly farBelow: number,
    private readonly probeMinRows = PROBE_MIN_ROWS,
  ) {
    const count = centroids.length / dimensions;
    this.lists = Array.from({ length: count + 1 }, () => new QuantizedVectors(dimensions, 16));
    this.far = this.lists[count] as QuantizedVectors;
    this.rowQuery = new Float32Array(dimensions);
  }

  /** Rows in the far list. */
  farRows(): number {
    return this.far.size();
  }

  /** What the status says of these lists, the namespace's. */
  use(namespace: string): CoarseListsUse {
    return { namespace, vectors: this.size(), far: this.farRows(), searches: this.searches };
  }

  size(): number {
    return this.listOf.size;
  }

  /** Adds or moves a row with its current codes: into the list it was assigned (the far list's index is the centroid count), or the nearest one. */
  set(rowid: number, codes: Int8Array, list = this.listFor(codes)): void {
    const old = this.listOf.get(rowid);
    if (old !== undefined && old !== list) this.lists[old]?.remove(rowid);
    (this.lists[list] as QuantizedVectors).setCodes(rowid, codes);
    this.listOf.set(rowid, list);
  }

  remove(rowid: number): void {
    const list = this.listOf.get(rowid);
    if (list === undefined) return;
    this.lists[list]?.remove(rowid);
    this.listOf.delete(rowid);
  }

  /**
   * Rowids of about `count` nearest rows by their codes (the int8 cosine's order) in the far list and the probed lists, nearest first. The
   * lists nearest the query are probed until they hold the search's probe (less for an `advisory` search) and
   * 16 × `count`.
   */
  nearest(vector: Float32Array, count: number, advisory = false): number[] {
    const q = new Int8Array(this.dimensions);
    quantize(vector, q, 0);
    const order = this.listsByCentroid(q, this.lists.length - 1);
    const probe = Math.max(PROBE_SHARE * this.listOf.size, this.probeMinRows);
    const want = Math.max(advisory ? Math.min(ADVISORY_PROBE_ROWS, probe) : probe, 16 * count);
    const probed: QuantizedVectors[] = this.far.size() > 0 ? [this.far] : [];
    let rows = 0;
    for (let i = 0; i < order.length && rows < want; i++) {
      const list = this.lists[Number(order[i])] as QuantizedVectors;
      probed.push(list);
      rows += list.size();
    }
    rows += this.far.size();
    if (rows === 0) return [];
    this.searches++;
    return count <= PER_LIST_MAX_COUNT ? this.scanEach(probed, q, count) : this.scanTogether(probed, rows, q, count);
  }

  /** Each list scanned where it lies; the best `count` of all kept in a bounded heap (worst on top). */
  private scanEach(probed: QuantizedVectors[], q: Int8Array, count: number): number[] {
    const u = this.usearch;
    const heap = new BoundedBest(count);
    for (const list of probed) {
      const { keys, data } = list.rows();
      if (keys.length === 0) continue;
      const found = u.exactSearch(data, q, this.dimensions, Math.min(count, keys.length), codesMetric(u), 1);
      const positions = found.keys as BigUint64Array;
      const distances = found.distances as Float32Array;
      // Each list's answer is nearest first: once one is no better than the worst kept, the rest are not either.
      for (let j = 0; j < positions.length; j++) if (!heap.offer(distances[j] as number, keys[Number(positions[j])] as number)) break;
    }
    return heap.sorted();
  }

  /** The probed lists copied into one array and scanned once. */
  private scanTogether(probed: QuantizedVectors[], rows: number, q: Int8Array, count: number): number[] {
    const d = this.dimensions;
    if (this.scratch.length < rows * d) {
      this.scratch = new Int8Array(rows * d * 2);
      this.scratchKeys = new Float64Array(rows * 2);
    }
    let at = 0;
    for (const list of probed) {
      const { keys, data } = list.rows();
      this.scratch.set(data, at * d);
      this.scratchKeys.set(keys, at);
      at += keys.length;
    }
    const u = this.usearch;
    // From the scratch array's start: usearch reads a typed array from its buffer's start, whatever its offset.
    const found = u.exactSearch(this.scratch.subarray(0, at * d), q, d, Math.min(count, at), codesMetric(u), 1);
    return Array.from(found.keys as BigUint64Array, (position) => this.scratchKeys[Number(position)] as number);
  }

  /**
   * The first `count` lists by their centroid's inner product with the codes `q`, highest first (usearch's float
   * kernel), ranked as listFor places a row: a save's likely-update check searches with the vector it is about to
   * store, so the row's list is the first of this order, kept for listFor (`nearestOfLast`), and the centroids
   * are not scanned again when the row arrives.
   */
  private listsByCentroid(q: Int8Array, count: number): BigUint64Array {
    const u = this.usearch;
    this.codesAsQuery(q);
    const found = u.exactSearch(this.centroids, this.rowQuery, this.dimensions, count, u.MetricKind.IP, 1);
    const keys = found.keys as BigUint64Array;
    this.nearestOfLast = { codes: q, list: Number(keys[0] ?? 0), distance: found.distances[0] as number };
    return keys;
  }

  /** The codes as floats in `rowQuery` (usearch reads a typed array from its buffer's start); their squared norm. */
  private codesAsQuery(codes: Int8Array): number {
    let norm = 0;
    for (let j = 0; j < this.dimensions; j++) {
      const x = codes[j] as number;
      this.rowQuery[j] = x;
      norm += x * x;
    }
    return norm;
  }

  /** Whether the far list has grown past FAR_REBUILD_SHARE of the rows: the namespace has moved from its centroids. */
  drifted(): boolean {
    return this.far.size() > FAR_REBUILD_SHARE * this.listOf.size;
  }

  /** The list whose centroid is nearest a row's codes, or the far list when even that one is far. */
  private listFor(codes: Int8Array): number {
    const norm = this.codesAsQuery(codes);
    let nearest = this.nearestOfLast;
    if (!nearest || !sameCodes(nearest.codes, codes)) {
      const u = this.usearch;
      const found = u.exactSearch(this.centroids, this.rowQuery, this.dimensions, 1, u.MetricKind.IP, 1);
      nearest = { codes, list: Number(found.keys[0] ?? 0), distance: found.distances[0] as number };
    }
    // The inner product's distance is 1 − dot; the codes' scale divides out of the cosine.
    const cosine = norm > 0 ? (1 - nearest.distance) / Math.sqrt(norm) : -1;
    return cosine < this.farBelow ? this.lists.length - 1 : nearest.list;
  }
}

function sameCodes(a: Int8Array, b: Int8Array): boolean {
  if (a.length !== b.length) return false;
  for (let j = 0; j < a.length; j++) if (a[j] !== b[j]) return false;
  return true;
}

/** The `capacity` smallest distances offered, with their keys: a max-heap, so the worst kept is at the top. */
class BoundedBest {
  private readonly distances: Float64Array;
  private readonly keys: Float64Array;
  private n = 0;

  constructor(private readonly capacity: number) {
    this.distances = new Float64Array(capacity);
    this.keys = new Float64Array(capacity);
  }

  /** Keeps the pair when it is among the best so far; false when it is not (nor anything farther). */
  offer(distance: number, key: number): boolean {
    if (this.n < this.capacity) {
      this.distances[this.n] = distance;
      this.keys[this.n] = key;
      this.up(this.n++);
      return true;
    }
    if (this.capacity === 0 || distance >= (this.distances[0] as number)) return false;
    this.distances[0] = distance;
    this.keys[0] = key;
    this.down(0);
    return true;
  }

  /** The keys kept, nearest first. */
  sorted(): number[] {
    return Array.from({ length: this.n }, (_, i) => i)
      .sort((a, b) => (this.distances[a] as number) - (this.distances[b] as number))
      .map((i) => this.keys[i] as number);
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((this.distances[parent] as number) >= (this.distances[i] as number)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < this.n && (this.distances[l] as number) > (this.distances[top] as number)) top = l;
      if (r < this.n && (this.distances[r] as number) > (this.distances[top] as number)) top = r;
      if (top === i) return;
      this.swap(i, top);
      i = top;
    }
  }

  private swap(a: number, b: number): void {
    const d = this.distances[a] as number;
    this.distances[a] = this.distances[b] as number;
    this.distances[b] = d;
    const k = this.keys[a] as number;
    this.keys[a] = this.keys[b] as number;
    this.keys[b] = k;
  }
}

