/**
 * British spellings folded to American ones before stemming (lexical.ts), so a query in one spelling finds a
 * note written in the other: Porter stems `serialize` to `serial` and `serialise` to `serialis`, `finalized`
 * to `final` and `finalised` to `finalis`, `behaviour` and `behavior` stay apart. Developers write both, often
 * in one repository (an OpenSearch `normalizer`, "normalise the keyword field").
 *
 * Applied to a lower-case word of letters a–z, index and query alike. The families:
 * - `-ise`, `-ised`, `-ising`, `-isation`, `-iser`, … → `-ize…`, except for words that are never spelt with z
 *   (advise, promise, exercise, surprise, raise, noise, otherwise, …);
 * - `-yse…` → `-yze…` (analyse, paralyse, catalyse);
 * - `-our` → `-or` in the words that have both spellings (behaviour, colour, favourite, neighbour, …);
 * - `-re` → `-er` (centre, metre, litre, fibre, theatre), `-ence` → `-ense` (licence, defence, offence),
 *   `-ogue` → `-og` (catalogue, dialogue, analogue), `programme` → `program`, `judgement` → `judgment`.
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
  'merchandise', 'paradise', 'valise', 'sunrise', 'moonrise', 'uprise', 'franchise', 'despise',
]);
const YSE_SUFFIX = /^([a-z]+)ys(e|ed|es|ing|er|ers)$/u;
const OUR_WORD = /^(behavi|col|fav|flav|hon|hum|lab|neighb|rum|harb|arm|vap|endeav|sav|parl|rig|vig|od|tum|val|clam|splend|cand|ferv|ard|demean)our(.*)$/u;
const RE_WORD = /^(cent|met|lit|fib|theat|calib|sab|spect|lust|meag|somb)re(s|d)?$/u;
const ENCE_WORD = /^(licen|defen|offen|preten)c(e|es|ed)$/u;
const OGUE_WORD = /^(catal|dial|anal|prol|epil|monol)ogue(s|d)?$/u;
const WORDS: ReadonlyMap<string, string> = new Map([
  ['programme', 'program'],
  ['programmes', 'programs'],
  ['judgement', 'judgment'],
  ['judgements', 'judgments'],
  ['acknowledgement', 'acknowledgment'],
  ['acknowledgements', 'acknowledgments'],
]);

/** The American spelling of a lower-case word (a–z), or the word itself. */
export function americanSpelling(word: string): string {
  const whole = WORDS.get(word);
  if (whole !== undefined) return whole;
  let m = ISE_SUFFIX.exec(word);
  if (m) {
    const base = m[1] as string;
    return ISE_NEVER_Z_ENDING.test(base) || ISE_NEVER_Z.has(`${base}ise`) ? word : `${base}iz${m[2]}`;
  }
  if ((m = YSE_SUFFIX.exec(word))) return `${m[1]}yz${m[2]}`;
  if ((m = OUR_WORD.exec(word))) return `${m[1]}or${m[2]}`;
  if ((m = RE_WORD.exec(word))) return `${m[1]}${m[2] === 'd' ? 'ered' : `er${m[2] ?? ''}`}`;
  if ((m = ENCE_WORD.exec(word))) return `${m[1]}s${m[2]}`;
  if ((m = OGUE_WORD.exec(word))) return `${m[1]}og${m[2] === 'd' ? 'ed' : (m[2] ?? '')}`;
  return word;
}
