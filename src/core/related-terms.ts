// Related terms: query expansion of the lexical signal with a software-engineering vocabulary.
import type { LexicalHit } from '../interfaces/store.js';
import type { EngineContext } from './engine-context.js';
import { analyse, plainTerms } from './lexical.js';
import { validateShare } from './validate.js';
import { VOCABULARY_TERMS } from './vocabulary-terms.js';

/**
 * How much a related term counts in BM25 against a term of the query itself (1). A memory's lexical score is
 * the larger of its BM25 of the query's own terms and weight × its BM25 of the related terms: a related term
 * stands in for a word the memory lacks, it never adds to a direct match. (Summing the two, as one BM25 over
 * both would, lifted notes that hold the word and its neighbours over the answer: coding dev R@1 0.810 →
 * 0.793 at weight 0.5, against 0.818 taking the larger.)
 */
export interface RelatedTerms {
  weight: number;
}

/**
 * Chosen on the coding-memory and LoCoMo dev splits (bench/results/related-terms.json: 0.5 then). Re-measured
 * once query-term coverage counted related terms and routes answered "where" (route-answers.ts), on the
 * coding-memory dev half: 0.35 / 0.5 / 0.6 / 0.65 / 0.7 / 0.75 / 0.85 / 1 gave R@1 0.843 / 0.860 / 0.876 / 0.876 /
 * 0.876 / 0.876 / 0.868 / 0.868, R@5 0.975 / 0.984 / 0.992 / 0.992 / 0.992 / 0.992 / 0.992 / 1, MRR 0.899 / 0.908 /
 * 0.920 / 0.920 / 0.922 / 0.921 / 0.918 / 0.918 (off-topic rejection 100 % and 0 leaks at each); 0.7, the middle
 * of the plateau. LoCoMo dev hybrid @5/10/25/50: 64.9 / 77.6 / 85.4 / 89.6 at 0.5, 65.0 / 77.6 / 85.4 / 89.6 at
 * 0.65, 65.0 / 77.6 / 85.4 / 89.6 at 0.7, 65.1 / 77.6 / 85.4 / 89.6 at 0.75.
 */
export const DEFAULT_RELATED_TERMS: RelatedTerms = { weight: 0.7 };

/** One member of a group: its analysed terms (a phrase matches when the query holds all of them). */
type Member = readonly string[];

export interface Vocabulary {
  /**
   * For each of the query's plain words that the vocabulary knows, the terms related to it and not already
   * among `queryTerms`, in the vocabulary's order. Identifiers (`payments_v2_enabled`, `shop/checkout`,
   * `getUserName`) are never expanded, nor is a word only inside one: they must keep matching exactly.
   */
  relatedByTerm(query: string, queryTerms: readonly string[]): Map<string, string[]>;
  /** Every term of relatedByTerm once, in order. */
  related(query: string, queryTerms: readonly string[]): string[];
  /** Whether a term is a member on its own (`vat`), not only a word of a phrase member (`time` of "response time"). */
  isWholeMember(term: string): boolean;
}

/**
 * A vocabulary from groups written one a line, members separated by commas. A phrase member whose words
 * come down to fewer than two terms ("log in" is `log` once the stop word goes) would match far more than it
 * says, so it is refused, as is a line of fewer than two members.
 */
export function createVocabulary(text: string): Vocabulary {
  return vocabularyOf(analyseGroups(text));
}

/** The groups of a vocabulary's text, each member as its analysed terms (the checks of createVocabulary). */
export function analyseGroups(text: string): Member[][] {
  const groups: Member[][] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const members: Member[] = [];
    for (const raw of line.split(',')) {
      const written = raw.trim();
      const terms = [...new Set(analyse(written))];
      if (terms.length === 0 || (/\s/u.test(written) && terms.length < 2)) throw new Error(`vocabulary line ${i + 1}: "${written}" gives terms [${terms.join(' ')}]`);
      members.push(terms);
    }
    if (members.length < 2) throw new Error(`vocabulary line ${i + 1}: a group needs at least two members`);
    groups.push(members);
  }
  return groups;
}

/** A vocabulary of groups already analysed. */
function vocabularyOf(groups: readonly (readonly Member[])[]): Vocabulary {
  // term → the groups holding a member that contains it
  const byTerm = new Map<string, number[]>();
  groups.forEach((members, g) => {
    for (const t of new Set(members.flat())) {
      const list = byTerm.get(t) ?? [];
      list.push(g);
      byTerm.set(t, list);
    }
  });
  const relatedByTerm = (query: string, queryTerms: readonly string[]): Map<string, string[]> => {
    const plain = new Set(plainTerms(query));
    const own = new Set(queryTerms);
    const out = new Map<string, string[]>();
    for (const t of plain) {
      const terms = new Set<string>();
      for (const g of byTerm.get(t) ?? []) {
        const members = groups[g] as Member[];
        // The word counts when a member holding it is all in the query (a phrase needs all its words).
        if (!members.some((m) => m.includes(t) && m.every((x) => plain.has(x)))) continue;
        for (const m of members) for (const x of m) if (!own.has(x)) terms.add(x);
      }
      if (terms.size > 0) out.set(t, [...terms]);
    }
    return out;
  };
  const whole = new Set(groups.flatMap((members) => members.filter((m) => m.length === 1).map((m) => m[0] as string)));
  return {
    relatedByTerm,
    isWholeMember: (term) => whole.has(term),
    related: (query, queryTerms) => [...new Set([...relatedByTerm(query, queryTerms).values()].flat())],
  };
}

let builtIn: Vocabulary | null = null;

/**
 * The committed vocabulary (vocabulary-data.ts), built on first use from its analysed form
 * (vocabulary-terms.ts, generated from it: analysing its 1,684 members took a cold process 25–35 ms, a tenth of
 * the prompt hook's deadline; a test checks the two agree).
 */
export function defaultVocabulary(): Vocabulary {
  builtIn ??= vocabularyOf(JSON.parse(VOCABULARY_TERMS) as Member[][]);
  return builtIn;
}

/**
 * The lexical candidates of a query and of its related terms as one list: each memory's BM25 of the query's
 * own terms or `weight` × its BM25 of the related terms, whichever is larger, best first (ties in the order
 * the query's own candidates came, then the related ones'), at most k.
 */
export function withRelated(own: readonly LexicalHit[], related: readonly LexicalHit[], weight: number, k: number): LexicalHit[] {
  const scores = new Map<string, number>();
  for (const h of own) scores.set(h.id, h.score);
  for (const h of related) scores.set(h.id, Math.max(scores.get(h.id) ?? 0, weight * h.score));
  const order = [...scores.keys()];
  return order
    .map((id, i) => ({ id, score: scores.get(id) as number, i }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, k)
    .map(({ id, score }) => ({ id, score }));
}

/**
 * Candidates fetched for the related terms: a related match weighs half a direct one, so only the first few
 * dozen can reach the first results. Searching 10k generated notes (bench/related-latency.ts, limit 10, one
 * run each, load 9–13, noisy): the whole pool (300) took ×1.16 the time without related terms, 60 ×1.10 to
 * ×1.22, 30 ×0.98; coding dev figures are the same for all three.
 */
export function relatedPool(limit: number, pool: number): number {
  return Math.min(pool, Math.max(3 * limit, 30));
}

/** The namespace setting that overrides the engine's related-terms weight (`{ weight }`; weight 0: off). */
export const RELATED_TERMS_SETTING = 'related-terms';

/** The namespace's related-terms weight: its setting (checked as it is read), else the engine's (0 when the engine has none). */
export async function relatedWeight(ctx: EngineContext, namespace: string): Promise<number> {
  const stored = (await ctx.store.getSetting(namespace, RELATED_TERMS_SETTING)) as Partial<RelatedTerms> | null;
  return stored?.weight !== undefined ? validateShare(stored.weight, 'related-terms weight') : (ctx.relatedTerms?.weight ?? 0);
}

/**
 * At most this many related terms are searched, the rarest in the namespace first, and none held by more than
 * RELATED_MAX_SHARE of its memories. A common related term (a loose word of a phrase such as "key" of "key
 * vault", or a stem shared with a common word such as "set" of "settings") costs most, since BM25 scores every
 * memory holding it, and tells least; before, a query searched a median of 8 related terms and up to 27.
 * Chosen on coding dev (R@1 / R@5 / MRR, one run each): uncapped 0.818 / 0.942 / 0.866; 6 and 10 % the same;
 * 8 and 10 % the same; 4 and 10 % 0.818 / 0.934; 6 and 5 % 0.810 / 0.942. Adding one-word members only (no
 * phrase pieces at all) cost R@5: 0.926.
 */
export const RELATED_MAX_TERMS = 6;
export const RELATED_MAX_SHARE = 0.1;

/** The related terms worth searching: held by some memory of the namespace, not common in it, the rarest first. */
export function rarestRelated(terms: readonly string[], frequencies: ReadonlyMap<string, number>, documents: number): string[] {
  return terms
    .filter((t) => {
      const df = frequencies.get(t) ?? 0;
      return df > 0 && df <= Math.max(1, RELATED_MAX_SHARE * documents);
    })
    .sort((a, b) => (frequencies.get(a) ?? 0) - (frequencies.get(b) ?? 0))
    .slice(0, RELATED_MAX_TERMS);
}

/**
 * The related terms a search adds and their weight; null when expansion is off in the namespace (weight 0)
 * or nothing in the query is in the vocabulary.
 */
export async function relatedTermsFor(ctx: EngineContext, namespace: string, query: string, queryTerms: readonly string[]): Promise<RelatedQuery | null> {
  const weight = await relatedWeight(ctx, namespace);
  if (!(weight > 0)) return null;
  const found = defaultVocabulary().relatedByTerm(query, queryTerms);
  const all = [...new Set([...found.values()].flat())];
  if (all.length === 0) return null;
  const { documents, frequencies } = await ctx.store.termDocumentFrequencies(all, namespace);
  const terms = rarestRelated(all, frequencies, documents);
  if (terms.length === 0) return null;
  const kept = new Set(terms);
  const byTerm = new Map([...found].map(([t, list]) => [t, list.filter((x) => kept.has(x))] as const).filter(([, list]) => list.length > 0));
  return { terms, byTerm, weight };
}

export interface RelatedQuery {
  /** Every related term once. */
  terms: string[];
  /** Each query word's related terms among `terms`. */
  byTerm: Map<string, string[]>;
  weight: number;
}
