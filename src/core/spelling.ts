/**
 * British spellings folded to American ones before stemming (lexical.ts), so a query in one spelling finds a
 * note written in the other: Porter stems `serialize` to `serial` and `serialise` to `serialis`, `finalized`
 * to `final` and `finalised` to `finalis`, `behaviour` and `behavior` stay apart. Developers write both, often
 * in one repository (an OpenSearch `normalizer`, "normalise the keyword field").
 *
 * Applied to a lower-case word of letters a–z, index and query alike. The families:
 * - `-ise`, `-ised`, `-ising`, `-isation`, `-iser`, … → `-ize…`, except for words that are never spelt with z
 *   (advise, promise, exercise, surprise, raise, noise, otherwise, …);
 * - `-lyse…` → `-lyze…` (analyse, paralyse, catalyse; not geyser);
 * - `-our` → `-or` in the words that have both spellings (behaviour, colour, favourite, neighbour, …);
 * - `-re` → `-er` (centre, metre, litre, fibre, theatre), `-ence` → `-ense` (licence, defence, offence),
 *   `-ogue` → `-og` (catalogue, dialogue, analogue; not prologue, which would become Prolog, the language), `programme` → `program`, `judgement` → `judgment`.
 *
 * A word with a prefix (un-, dis-, en-, im-, …) follows the rule of the word without it: unfavourable folds
 * like favourable, and unpromising, imprecise, disenfranchised keep their s like promise, precise, franchise.
 *
 * Changing these rules changes the terms stored in the lexical index: both backends re-analyse every memory
 * in a schema migration (SQLite `sqlite-schema.ts` step 13, PostgreSQL `postgres-schema.ts` step 7).
 */

const ISE_SUFFIX = /^([a-z]{3,})is(e|ed|es|ing|er|ers|ation|ations|able)$/u;
/** Endings before `-ise` that no `-ize` word has: advise, devise; surprise, enterprise; raise; noise; cruise; otherwise. */
const ISE_NEVER_Z_ENDING = /(?:v|pr|a|o|u|w)$/u;
/** Words spelt `-ise` in American English too, whose stem the ending rule above does not catch. */
const ISE_NEVER_Z = new Set([
  'promise', 'compromise', 'premise', 'demise', 'surmise', 'chemise',
  'concise', 'precise', 'excise', 'incise', 'exercise', 'circumcise',
  'expertise', 'advertise', 'chastise', 'treatise', 'mortise',
  'merchandise', 'paradise', 'valise', 'sunrise', 'moonrise', 'uprise', 'franchise', 'despise', 'cerise',
]);
/** Prefixes a word is tried without, one or two deep (dis-en-franchise). */
const PREFIX = /^(un|dis|in|im|en|re|pre|mis|non|over|under)(?=[a-z]{4,})/u;
const YSE_SUFFIX = /^([a-z]*ly)s(e|ed|es|ing|er|ers)$/u;
const OUR_WORD = /^(behavi|col|fav|flav|hon|hum|lab|neighb|rum|harb|arm|vap|endeav|sav|parl|rig|vig|od|tum|val|clam|splend|cand|ferv|ard|demean)our(.*)$/u;
const RE_WORD = /^(cent|met|lit|fib|theat|calib|sab|spect|lust|meag|somb)re(s|d)?$/u;
const ENCE_WORD = /^(licen|defen|offen|preten)c(e|es|ed)$/u;
const OGUE_WORD = /^(catal|dial|anal|epil|monol)ogue(s|d)?$/u;
const WORDS: ReadonlyMap<string, string> = new Map([
  ['programme', 'program'],
  ['programmes', 'programs'],
  ['judgement', 'judgment'],
  ['judgements', 'judgments'],
  ['acknowledgement', 'acknowledgment'],
  ['acknowledgements', 'acknowledgments'],
]);

/** The word without its prefixes, longest stripping last: `disenfranchise` → disenfranchise, enfranchise, franchise. */
function withoutPrefixes(word: string): string[] {
  const forms = [word];
  for (let m = PREFIX.exec(word), depth = 0; m && depth < 2; m = PREFIX.exec(word), depth += 1) {
    word = word.slice((m[1] as string).length);
    forms.push(word);
  }
  return forms;
}

/** A rule tried on the word, then on the word without its prefixes (which are kept in the result). */
function folded(word: string, rule: (root: string) => string | null): string | null {
  for (const root of withoutPrefixes(word)) {
    const result = rule(root);
    if (result !== null) return word.slice(0, word.length - root.length) + result;
  }
  return null;
}

function matched(re: RegExp, build: (m: RegExpExecArray) => string): (root: string) => string | null {
  return (root) => {
    const m = re.exec(root);
    return m ? build(m) : null;
  };
}

const OUR_RULE = matched(OUR_WORD, (m) => `${m[1]}or${m[2]}`);
const RE_RULE = matched(RE_WORD, (m) => `${m[1]}${m[2] === 'd' ? 'ered' : `er${m[2] ?? ''}`}`);
const ENCE_RULE = matched(ENCE_WORD, (m) => `${m[1]}s${m[2]}`);
const OGUE_RULE = matched(OGUE_WORD, (m) => `${m[1]}og${m[2] === 'd' ? 'ed' : (m[2] ?? '')}`);

/** The American spelling of a lower-case word (a–z), or the word itself. */
export function americanSpelling(word: string): string {
  const whole = WORDS.get(word);
  if (whole !== undefined) return whole;
  let m = ISE_SUFFIX.exec(word);
  if (m) {
    const base = m[1] as string;
    const neverZ = ISE_NEVER_Z_ENDING.test(base) || withoutPrefixes(`${base}ise`).some((root) => ISE_NEVER_Z.has(root));
    return neverZ ? word : `${base}iz${m[2]}`;
  }
  if ((m = YSE_SUFFIX.exec(word))) return `${m[1]}z${m[2]}`;
  return folded(word, OUR_RULE) ?? folded(word, RE_RULE) ?? folded(word, ENCE_RULE) ?? folded(word, OGUE_RULE) ?? word;
}
