import { stemmer } from 'stemmer';
import { americanSpelling } from './spelling.js';

/**
 * Lexical analysis shared by indexing and querying (one definition, every backend).
 *
 * - Identifiers stay findable whole: `PAYMENTS_V2_ENABLED`, `shop/checkout/tax.py`, `ERR_STOCK_DRIFT_17`
 *   are indexed as one lower-cased term each, and also split into their parts (`payments`, `v2`, `enabled`;
 *   `shop`, `checkout`, `tax`, `py`) and camelCase pieces (`getUserName` → `get`, `user`, `name`). A folder
 *   written with its trailing slash (`deploy/`, `src/tax/`) is a term of its own too, so a query naming the
 *   folder finds the notes that name it, not every note that says "deploy"; its last part still counts as a
 *   plain word (plainTerms). After `//` (a URL: `https://example.com/docs/`) a trailing slash makes no folder.
 * - Plain words are lower-cased, stop words dropped, British spellings folded to American ones (spelling.ts:
 *   `serialise` → `serialize`) and Porter-stemmed (`requests` → `request`).
 * Terms contain only letters, digits and `_ . / - :`, and are separated by spaces when handed to a backend,
 * which matches them exactly as given (it neither splits, folds nor stems them again).
 */

// Function words that carry no topic. Compared on the LoCoMo dev split (bench/results/locomo-sweep.json, BM25
// alone, recall@5): this list 56.6%, no stop words 52.7%, this list plus conversational fillers (yeah, really,
// like, thing…) 56.1%. Porter stemming beat no stemming (53.6%) and a plural-only stemmer (53.2%).
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an the and or but if then else of to in on at by for with from into onto about as is am are was were be been being ' +
    'do does did doing have has had having i me my mine myself you your yours yourself he him his himself she her hers herself ' +
    'it its itself we us our ours ourselves they them their theirs themselves this that these those there here what which who ' +
    'whom whose when where why how all any both each few more most other some such no nor not only own same so than too very ' +
    'can could will would shall should may might must just also s t d ll m re ve y don didn doesn isn wasn aren weren won ' +
    'up down out over under again further once'
  ).split(/\s+/u),
);

/**
 * Latin diacritics are folded (`café` → `cafe`, `naïve` → `naive`), so a query typed without accents finds
 * the accented text and the other way round, on every backend alike: the backend stores and matches the
 * terms exactly as given.
 */
function foldDiacritics(text: string): string {
  // ASCII has no decompositions: both normalisations leave it as it is.
  if (ASCII_RE.test(text)) return text;
  return text.normalize('NFKD').replace(/[\u0300-\u036f]/gu, '').normalize('NFKC');
}

const ASCII_RE = /^[\x00-\x7f]*$/u;

// A token may end in one `/`: a folder (`deploy/`, `modules/`), a term of its own besides its parts.
const COMPOUND_RE = /[\p{L}\p{N}_]+(?:[./\-:][\p{L}\p{N}_]+)*\/?/gu;
const PART_SPLIT_RE = /[./\-:_]+/u;

const UPPER_RE = /\p{Lu}/u;

function camelParts(part: string): string[] {
  // Both splits need an upper-case letter.
  if (!UPPER_RE.test(part)) return [part];
  // getUserName → get User Name; HTTPServer → HTTP Server; v2 stays v2
  return part
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(' ')
    .filter(Boolean);
}

export interface AnalyserOptions {
  /** Lower-case words dropped from text and queries. */
  stopWords: ReadonlySet<string>;
  /** Maps a lower-case word of letters a–z to its index term (identity = no stemming). */
  stem: (word: string) => string;
}

export interface Analyser {
  /** Terms of a text, in order of appearance, repeats kept (term frequency matters to BM25). */
  analyse(text: string): string[];
  /** Distinct query terms, in order of first appearance. */
  queryTerms(query: string): string[];
  /**
   * Distinct terms of the text's plain words only, in order of first appearance: a token that is an
   * identifier (a compound such as `payments_v2_enabled` or `shop/checkout`, or camelCase) gives none.
   */
  plainTerms(text: string): string[];
}

/** Tokens whose terms an analyser remembers (see createAnalyser). */
const TOKEN_MEMO_MAX = 50_000;
/** Longer tokens (long paths, hashes, runs of digits) are rarely seen twice: analysed every time, never remembered. */
const TOKEN_MEMO_LONGEST = 64;

/**
 * A copy of `s` that shares no memory with the string it was cut from. A substring (a regular expression's
 * match, a piece of `split`, an unchanged `toLowerCase`) can point into the whole text it came from; kept in
 * a memo it would keep that text (a whole note, erased or not) alive. Joining its code units builds a new
 * string, lone surrogates included.
 */
function detached(s: string): string {
  return s.length < 2 ? s : s.split('').join('');
}

/**
 * A token's terms, and those of them that are plain words (plainTerms): none for an identifier (a compound or
 * camelCase); for a folder (`deploy/`, `src/tax/`) the stem of its last part, so "pushed to deploy/" still
 * says "deploy" to the shared-wording step and query-term coverage.
 */
interface TokenTerms {
  readonly terms: readonly string[];
  readonly plain: readonly string[];
}

/** An analyser with other stop words or stemming (the benchmark sweep compares them); identifiers behave the same. */
export function createAnalyser(options: AnalyserOptions): Analyser {
  const { stopWords, stem } = options;
  const wordTerm = (word: string): string | null => {
    const lower = word.toLowerCase();
    if (stopWords.has(lower)) return null;
    if (/^\p{N}+$/u.test(lower)) return lower;
    return /^[a-z]+$/u.test(lower) ? stem(lower) : lower;
  };
  const tokenTerms = (whole: string): TokenTerms => {
    const terms: string[] = [];
    // A folder is found whole, slash and all: "deploy/" asks for the folder, not for every "deploy".
    const folder = whole.endsWith('/');
    if (folder) terms.push(whole.toLowerCase());
    const token = folder ? whole.slice(0, -1) : whole;
    const pieces = token.split(PART_SPLIT_RE).filter(Boolean);
    const isCompound = pieces.length > 1;
    const camel = pieces.flatMap(camelParts);
    const isCamel = camel.length > pieces.length;
    if (isCompound || isCamel) terms.push(token.toLowerCase());
    for (const piece of isCamel ? camel : pieces) {
      const term = wordTerm(piece);
      if (term) terms.push(term);
    }
    if (!folder) return { terms, plain: isCompound || isCamel ? [] : terms };
    const last = wordTerm(pieces[pieces.length - 1] ?? '');
    return { terms, plain: last && !isCamel ? [last] : [] };
  };
  // A token's terms depend on the token alone, and a store's vocabulary repeats: recall analyses the text of
  // its first results on every search (query-term coverage, the same-topic step), a save the texts of its
  // nearest notes. Remembered per token (140 → 20 µs a note at 10k generated notes); the memo starts over past
  // TOKEN_MEMO_MAX tokens. What it keeps is detached from the text (the key, and the terms cut from it), so
  // no note's text stays in memory through it.
  const memo = new Map<string, TokenTerms>();
  const analyseTokens = (text: string, plainOnly: boolean): string[] => {
    const terms: string[] = [];
    const folded = foldDiacritics(text);
    for (const match of folded.matchAll(COMPOUND_RE)) {
      // After `//` a token is a URL's host and path (http://host/, https://example.com/docs/): no folder.
      const token = match[0].endsWith('/') && folded.startsWith('//', match.index - 2) ? match[0].slice(0, -1) : match[0];
      let found = memo.get(token);
      if (found === undefined) {
        if (token.length > TOKEN_MEMO_LONGEST) {
          found = tokenTerms(token);
        } else {
          if (memo.size >= TOKEN_MEMO_MAX) memo.clear();
          const key = detached(token);
          found = tokenTerms(key);
          memo.set(key, found);
        }
      }
      for (const term of plainOnly ? found.plain : found.terms) terms.push(term);
    }
    return terms;
  };
  const analyse = (text: string): string[] => analyseTokens(text, false);
  return { analyse, queryTerms: (query) => [...new Set(analyse(query))], plainTerms: (text) => [...new Set(analyseTokens(text, true))] };
}

/**
 * Porter stems of the American spelling (spelling.ts), remembered: a store's vocabulary repeats, and recall analyses the text of its first results
 * on every search (query-term coverage, the same-topic step). A third of analysis time was stemming
 * (600 notes: 52 ms plain, 33 ms remembered). Bounded: the memo starts over past STEM_MEMO_MAX words.
 */
const STEM_MEMO_MAX = 50_000;
const stemMemo = new Map<string, string>();
function rememberedStem(word: string): string {
  let stem = stemMemo.get(word);
  if (stem === undefined) {
    if (stemMemo.size >= STEM_MEMO_MAX) stemMemo.clear();
    // Detached like the token memo's keys: the word may be cut from a token too long to remember.
    const key = detached(word);
    stem = stemmer(americanSpelling(key));
    stemMemo.set(key, stem);
  }
  return stem;
}

const DEFAULT_ANALYSER = createAnalyser({ stopWords: STOP_WORDS, stem: rememberedStem });

const ANALYSER_BEFORE = createAnalyser({ stopWords: STOP_WORDS, stem: stemmer });

/**
 * The terms the analyser before British spellings were folded and folders kept their slash gave (Porter stems
 * of the words as written, no folder terms): what a store written then holds for the text. Stores that
 * cannot read their index back (SQLite's full-text table keeps no content) re-index a memory only when these
 * differ from analyse's.
 */
export function analysedBefore(text: string): string[] {
  return ANALYSER_BEFORE.analyse(text).filter((term) => !term.endsWith('/'));
}

/** Terms of a text, in order of appearance, repeats kept (term frequency matters to BM25). */
export function analyse(text: string): string[] {
  return DEFAULT_ANALYSER.analyse(text);
}

/** Distinct query terms, in order of first appearance. */
export function queryTerms(query: string): string[] {
  return DEFAULT_ANALYSER.queryTerms(query);
}

/** Distinct terms of the text's plain words (identifiers give none), in order of first appearance. */
export function plainTerms(text: string): string[] {
  return DEFAULT_ANALYSER.plainTerms(text);
}
