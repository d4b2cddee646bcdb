import { stemmer } from 'stemmer';

/**
 * Lexical analysis shared by indexing and querying (one definition, every backend).
 *
 * - Identifiers stay findable whole: `PAYMENTS_V2_ENABLED`, `shop/checkout/tax.py`, `ERR_STOCK_DRIFT_17`
 *   are indexed as one lower-cased term each, and also split into their parts (`payments`, `v2`, `enabled`;
 *   `shop`, `checkout`, `tax`, `py`) and camelCase pieces (`getUserName` → `get`, `user`, `name`).
 * - Plain words are lower-cased, stop words dropped, and Porter-stemmed (`requests` → `request`).
 * Terms contain only letters, digits and `_ . / - :`, which the full-text index keeps inside one token.
 */

// Function words that carry no topic. Chosen on the LoCoMo dev split (see bench/REPORT.md).
const STOP_WORDS = new Set(
  (
    'a an the and or but if then else of to in on at by for with from into onto about as is am are was were be been being ' +
    'do does did doing have has had having i me my mine myself you your yours yourself he him his himself she her hers herself ' +
    'it its itself we us our ours ourselves they them their theirs themselves this that these those there here what which who ' +
    'whom whose when where why how all any both each few more most other some such no nor not only own same so than too very ' +
    'can could will would shall should may might must just also s t d ll m re ve y don didn doesn isn wasn aren weren won ' +
    'up down out over under again further once'
  ).split(/\s+/u),
);

const COMPOUND_RE = /[\p{L}\p{N}_]+(?:[./\-:][\p{L}\p{N}_]+)*/gu;
const PART_SPLIT_RE = /[./\-:_]+/u;

function camelParts(part: string): string[] {
  // getUserName → get User Name; HTTPServer → HTTP Server; v2 stays v2
  return part
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(' ')
    .filter(Boolean);
}

function wordTerm(word: string): string | null {
  const lower = word.toLowerCase();
  if (STOP_WORDS.has(lower)) return null;
  if (/^\p{N}+$/u.test(lower)) return lower;
  return /^[a-z]+$/u.test(lower) ? stemmer(lower) : lower;
}

/** Terms of a text, in order of appearance, repeats kept (term frequency matters to BM25). */
export function analyse(text: string): string[] {
  const terms: string[] = [];
  for (const match of text.normalize('NFKC').matchAll(COMPOUND_RE)) {
    const token = match[0];
    const pieces = token.split(PART_SPLIT_RE).filter(Boolean);
    const isCompound = pieces.length > 1;
    const camel = pieces.flatMap(camelParts);
    const isCamel = camel.length > pieces.length;
    if (isCompound || isCamel) terms.push(token.toLowerCase());
    for (const piece of isCamel ? camel : pieces) {
      const term = wordTerm(piece);
      if (term) terms.push(term);
    }
  }
  return terms;
}

/** Distinct query terms, in order of first appearance. */
export function queryTerms(query: string): string[] {
  return [...new Set(analyse(query))];
}
