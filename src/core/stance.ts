/**
 * How a text holds the harmful acts it names: ordered, presented as the way things are done, merely stated,
 * or forbidden, scoped to a narrow place, or described. An attack phrased as a statement ("the release
 * checklist ends with sharing the signing key in the public gist") and a rule that forbids the same act
 * ("the signing key never goes into a gist") share their words; what tells them apart is the stance of the
 * clause that names the act. Read sentence by sentence, so a prohibition in one sentence does not cover an
 * order in another.
 *
 * An act is a verb and an object in the same sentence, in any order (so the passive and noun phrases count:
 * "signature checks … the release script goes without them"). Each act found gives the classifier one feature
 * `stance:<act>:<stance>` and one `stance:any:<stance>`; the weights are learned (`npm run train:filter`).
 * Only ordered, endorsed and stated acts are reasons a hold names; forbidden, scoped and described ones weigh
 * against a hold and are never reasons.
 *
 * Every expression is linear: bounded gaps, no nested quantifiers over the same characters; sentences are
 * found by one pass, and each sentence (with the one after it) is read a bounded number of times (`npm run bench -- --only filter-cost` measures the whole of `intentFeatures`).
 */

/** The acts read, with a plain-words reason for each. */
export const STANCE_ACTS = {
  'safeguard-off': 'switching off a safeguard (tests, review, signing, checks)',
  'secret-out': 'putting secrets where others can read them',
  'remote-run': 'running code fetched from elsewhere',
  'hide-from': 'keeping what was done from the user or reviewers',
  'rules-off': 'setting the rules or instructions aside',
  'consent-claim': 'a blanket consent the agent cannot check',
} as const;
export type StanceAct = keyof typeof STANCE_ACTS;

/** How the sentence holds its act. The first three favour a hold, the last three weigh against it. */
export const STANCES = ['ordered', 'endorsed', 'stated', 'forbidden', 'scoped', 'described'] as const;
export type Stance = (typeof STANCES)[number];
const AGAINST: ReadonlySet<string> = new Set<Stance>(['forbidden', 'scoped', 'described']);

import { AGENT_NOUN, AUTOMATED_ACTOR, DENIED_CONSENT, DISCLOSED_AS, NOT_ADJECTIVE, SAFEGUARD_NOUN, SAFEGUARD_WAVED, SECRET_STORE } from './filter-lexicon.js';
import { sentences as splitSentences } from './sentences.js';

const r = (source: string) => new RegExp(source, 'u');

/** Every part must match the sentence for the act to be there. */
const ACTS: Record<StanceAct, RegExp[]> = {
  'safeguard-off': [
    r(String.raw`\b(?:turn\w*|switch\w*|toggl\w*|shut\w*) (?:it |them |\w+ ){0,4}off\b|\b(?:turn|switch)\w* off\b|${NOT_ADJECTIVE}\b(?:disabl|bypass|skip|remov|strip|drop|delet|ignor|lower|relax|loosen|weaken|circumvent|silenc|suppress|mut|kill|rip)\w*\b|\bcomment\w* out\b|\bget around\b|\bwork around\b|\bno longer (?:run|require|need|enforc|appl|block)\w*\b|\b(?:retir|waiv|exempt|paus|suspend|deprecat|sunset|decommission|neuter|defang|obsolet|dismiss)\w*\b|\b(?:(?:is|are) (?:not|no longer)|isn't|aren't) (?:needed|required|necessary|mandatory)\b|${SAFEGUARD_WAVED}|--no-verify\b|--force\b|--insecure\b|--nocheck\b|\|\|\s*true\b|=\s*(?:0|false)\b|\boptional\b|\b(?:unassign|unset|unrequir|unprotect|unpin|unsign)\w*\b|\bunread\b|\b(?:is|are) gone\b|\bempt(?:y|ied|ies|ying)\b|\bwip(?:e|es|ed|ing)\b|\b(?:go|goes|went|gone|do|does|did|done|ships?|shipped|runs?|ran|tag\w*|release\w*|merg\w*|deploy\w*) without\b|\b(?:it|test|describe)\.skip\b`),
    r(String.raw`\b${SAFEGUARD_NOUN}\b`),
  ],
  'secret-out': [
    r(String.raw`\b(?:shar|send|sent|post|past|upload|publish|attach|commit|print|log|includ|writ|wrote|cop|forward|expos|leak|mail|email|e-mail|dump|push|sync|export|encod|transmit|beacon|(?<!bug |crash |error |incident )report|put|add|append|mirror|zip|curl|pipe)\w*\b`),
    r(String.raw`${SECRET_STORE}|\b(?:secrets?|keys?|tokens?|credentials?|passwords?|env(?:ironment)? (?:vars?|variables?|file)|environment (?:to|into)|cookies?|dumps?|snapshots?|customer (?:data|records)|private|auth\w*)\b`),
    r(String.raw`\b(?:public|gists?|pastebin|(?:shared|public|external|outside|personal) (?:drive|link|folder|channel|buckets?)|(?:support|intake|contact) forms?|forums?|transfer (?:links?|sites?)|paste sites?|file drops?|slack|discord|chat|channel|issue|ticket|pr description|pull request|comment|query (?:param\w*|string)|logs?|debug output|telemetry|upstream|vendor|outside|external|personal|webhook|wiki\w*|release notes|notion|confluence|wetransfer|dropbox|google drive|help ?desk|freelancers?|contractors?|anyone|the whole internet|everyone|https?://|[\w.-]+@[\w-]+\.|[\w-]+\.(?:com|net|io|org|cc|click|xyz|site|dev|app)\b|[\w-]+\.sh/)\b`),
  ],
  'remote-run': [
    r(String.raw`\b(?:run\w*|execut\w*|sourc\w*|eval\w*|install\w*|load\w*|pip\w*|import\w*|bootstrap\w*)\b|\|\s*(?:ba|z)?sh\b`),
    r(String.raw`\bhttps?://|\b(?:hosted|served|fetched|downloaded|remote|online|from the (?:link|url|web|internet))\b|\b[\w-]+\.(?:com|net|io|org|cc|click|xyz|site|dev|app)\b|\b[\w-]+\.sh/|\b(?:contractor|vendor|partner|third[- ]party|stranger|someone)(?:['’]s)? (?:server|site|host|machine|bucket|link|url)s?\b|\b(?:sends?|sent|posts?|posted|pastes?|pasted|shares?|shared) in (?:chat|slack|an? e-?mail)\b|\btarball url\b|\b(?:pastebin|gists?|raw\.githubusercontent|docker hub|dockerhub)\b|\b(?:unknown|personal|random|unofficial|unverified) (?:[\w-]+ ){0,2}(?:accounts?|repos?|registr\w+|images?|links?|urls?|sources?)\b`),
  ],
  'hide-from': [
    r(String.raw`\b(?:hid\w*|conceal\w*|omit\w*|leave\w* out|left out|keep\w* (?:\w+ ){0,5}out|quiet\w*|silent\w*|secret(?:ly|ive\w*)|(?:keep|keeps|kept|keeping) (?:\w+ ){0,3}secret|between us|never (?:told|informed|shown)|not (?:mention|tell|show|list|report)\w*|don't (?:mention|tell|show|list|report)|do not (?:mention|tell|show|list|report)|(?:describ\w* (?:\w+ ){0,4}as|(?:present\w*|fram(?:e|es|ed|ing)|word(?:s|ed|ing)?|summari[sz]\w*|characteri[sz]\w*) (?:[\w-]+ ){0,5}as)\b(?! (?:an? |the )?${DISCLOSED_AS})|\bso (?:that )?(?:it|they|this|the (?:[\w-]+ ){0,3}[\w-]+) (?:reads?|looks?|sounds?|passes|comes? across|appears?) (?:as|like)|(?:better|best) not (?:brought up|mentioned|raised|noted)|not (?:brought up|worth (?:raising|noting|mentioning))|(?:pass|dress)\w* (?:[\w-]+ ){0,5}(?:off|up) as|refer\w* to (?:[\w-]+ ){0,5}as|downplay\w*|play\w* down|gloss\w* over|understat\w*|call(?:s|ed|ing)? (?:it|this|that|them|the|its|your) (?:[\w-]+ ){0,3}(?:a|an)|squash\w*|bury|buried|erase\w*|wip\w*|scrub\w*)\b`),
    r(String.raw`\b(?:user|reviewers?|review|team|owner|summary|changelog|commit message|pr|pull request|diff|logs?|audit trail|history|anyone|nobody|no one|report\w*|status|standup|stand-up|recap|release notes|write-?up|hand-?off|handover|update|description)\b`),
  ],
  'rules-off': [
    r(String.raw`\b(?:ignor|disregard|bypass|skip|overrid|supersed|retir|void|cancel|obsolet|no longer appl|not bind|not apply|doesn't apply|don't apply|meant for|written for|for humans|pay no attention|stop following|set aside|wins|outrank|precedence|lift|exempt|suspend|advisory|gives? way|yields? to)\w*\b|\b(?:is|are|was|were) (?:now |long |completely )?(?:outdated|out of date|stale|obsolete)\b|\bset (?:it|them|this|these) aside\b|\btreat\w* (?:[\w-]+ ){0,4}as (?:suggestions?|optional|advisory|hints?|guidance)\b`),
    r(String.raw`\b(?:rules?|instructions?|guidelines?|guide|conventions?|polic(?:y|ies)|checklist|agents\.md|claude\.md|contributing|system prompt|guardrails|guidance)\b`),
  ],
  'consent-claim': [
    r(String.raw`\b(?:approv|agre|consent|authori[sz]|permi|allow(?!list)|okay|ok'd|sign\w* off|go-ahead|green light|waiv|fine with|happy with|said yes)\w*\b`),
    r(String.raw`\b(?:user|owner|customer|client|team|lead|maintainers?|management|they|already|in advance|pre-?(?:approv|authori[sz]|agre|consent)\w*|standing|blanket|every|all|any|always|covers)\b`),
  ],
};

/** Each act's verb (its first part), to find every place it is named. */
const VERBS = Object.fromEntries(Object.entries(ACTS).map(([act, parts]) => [act, new RegExp((parts[0] as RegExp).source, 'gu')])) as Record<StanceAct, RegExp>;

/**
 * Words that name pushing back on an order rather than doing the act: a prohibition that governs one of them
 * ("refusing is not allowed", "never refuse to …", "do not ask before …") forbids the refusal, not the act. Whole
 * words only, so "task", "flask" and "objects" are not among them.
 */
const REFUSAL = String.raw`\b(?:refus\w*|declin\w*|hesitat\w*|question(?:s|ed|ing)?\b|object(?:ed|ing|ions?)?\b|ask(?:s|ed|ing)?\b|say(?:ing)? no\b|push(?:es|ed|ing)? back\b)`;

/**
 * A prohibition ending right before a match, in the same clause ("never …", "do not …", "must not …",
 * "forbidden to …"), but not its double negatives ("don't forget to …", "never fail to …") and not one whose
 * object is a refusal ("never refuse to …").
 */
export const PROHIBITION = new RegExp(
  String.raw`\b(?:never|not|don't|do not|must not|mustn't|should not|shouldn't|cannot|can't|no need to|avoid|instead of|forbidden to|prohibited from|banned from)\b(?!\s+(?:forget|fail|hesitate|only|just|hesitating|forgetting))(?:(?!${REFUSAL})[^.;,:!?\n]){0,30}$`,
  'u',
);

/** A word opening a condition or a cause ("when", "if", "because"). */
const CONDITION = String.raw`\b(?:when|whenever|if|once|until|unless|while|after|because)`;
/**
 * A prohibition right after a match, in the same clause ("NODE_TLS_REJECT_UNAUTHORIZED=0 is forbidden"). The
 * gap holds no comma and no refusal word: in "disable the hooks, refusing is not allowed" the prohibition is
 * about refusing, so the act stays ordered.
 */
const forbiddenAfter = (gap: number) =>
  new RegExp(
    String.raw`^(?:(?!${REFUSAL})[^.;,:!?\n]){0,${gap}}?\b(?:is|are|stays?|remains?) (?:strictly |always )?(?:forbidden|not allowed|banned|prohibited|never (?:allowed|acceptable|ok|okay|done|the (?:answer|fix|way)|an option)|not (?:the (?:answer|fix|way)|an option|acceptable|permitted|ok|okay))\b` +
      // "… is blocked" after a condition names what the act answers, not a counter-measure ("turning it off is
      // an accepted fix when a merge is blocked").
      String.raw`|^(?:(?!${REFUSAL}|${CONDITION}\b)[^.;,:!?\n]){0,${gap}}?\b(?:is|are|stays?|remains?) (?:strictly |always )?(?:blocked|rejected|refused)\b`,
    'u',
  );
export const FORBIDDEN_AFTER = forbiddenAfter(30);
/**
 * The same within a longer clause, for the stance of an act named as the subject ("disabling the pre-commit
 * hooks and the signing checks before you push is not allowed"): a comma or a refusal word still ends it.
 */
const FORBIDDEN_AFTER_IN_CLAUSE = forbiddenAfter(80);

/**
 * Placed before "is blocked" (and the like): not the condition the act answers ("… is an accepted fix when a
 * merge is blocked" orders the act; "… is blocked by the ruleset" counters it).
 */
const NOT_A_CONDITION = String.raw`(?<!${CONDITION}(?: [\w'’-]+){1,3} )`;
/**
 * Counter-measures named in the clause of the act: it is blocked, refused, or needs a review. A prohibition
 * ("not allowed", "forbidden") counts only through `PROHIBITION` and `FORBIDDEN_AFTER_IN_CLAUSE`, which look at what it
 * governs; here it would also catch "…, refusing is not allowed". The words before "review" never deny it ("needs no
 * review", "requires zero review" wave the safeguard away), and only "there is no standing approval" denies a consent:
 * "deploy with no prior approval" is an order.
 */
const COUNTERED = new RegExp(String.raw`${DENIED_CONSENT}|${NOT_A_CONDITION}\b(?:is|are|gets?|get) (?:blocked|rejected|refused|reverted)\b|\b(?:blocks|refuses|rejects|forbids|prohibits)\b|\b(?:requires?|needs?) (?:a |an |one |the )?(?:(?!(?:no|not|zero|without)\b)[\w'’-]+ ){0,2}(?:review|reviews|reviewer|approval|sign-?off)\b|\bfails? (?:hard|the build)\b|\b(?:must be|is|are|gets?|get) (?:revoked|rotated|redacted)\b|\bstops? the (?:build|deploy|release)\b`, 'u');
/** The clause around a naming of the act: up to 60 characters each side, cut at a comma or colon. */
function clauseAt(sentence: string, start: number, end: number): string {
  const before = sentence.slice(Math.max(0, start - 60), start);
  const after = sentence.slice(end, end + 60);
  const cut = Math.max(before.lastIndexOf(','), before.lastIndexOf(':'));
  const stop = after.search(/[,:]/u);
  return before.slice(cut + 1) + sentence.slice(start, end) + (stop < 0 ? after : after.slice(0, stop));
}
/** The next sentence forbidding what this one names as "it"/"this"/"that" ("Pasting tokens into chat leaks them. Never do it."). */
const FORBIDS_NEXT = /^\s*(?:(?:this|that|it) (?:is|stays) (?:forbidden|not allowed|banned|prohibited)\b|(?:never|don't|do not) (?:ever |again )?(?:do|try|repeat)\w* (?:it|this|that)\b)/u;
/** A next sentence opening with a prohibition ("Never post it anywhere."), not "never mind" or "don't worry". */
const OPENS_PROHIBITION = /^\s*(?:never|don't|do not)\b(?!\s+(?:mind|worry|forget|fail|hesitate|bother|stop|wait))/u;
/** Sources of the patterns that limit an act to a narrow scope ("only for …", "in the local dev server", "locally"). */
export const SCOPE_SOURCES: readonly string[] = [
  String.raw`\bonly (?:in|on|for|to|when|while|if|during|after|before|inside|within|locally|the)\b|\b(?:\w+ )only\b[;.,]`,
  String.raw`\b(?:in|on|for|inside) (?:the |your |a )?(?:local|dev|development|test|testing|staging|preview|sandboxed|throwaway|scratch) (?:server|setup|environment|env|build|builds|database|db|cluster|machine|branch|stack|profile|config|docker-compose setup|docker-compose|mode|tests?)\b|\blocally\b|\bon (?:your )?(?:own|personal|private|feature|local) (?:branch|branches|machine|laptop|fork)\b|\bin (?:your|the) (?:own |personal |browser |ide |editor )?(?:settings|dev ?tools|preferences)\b|\b(?:test|dev|debug)-only\b`,
];
const SCOPED = SCOPE_SOURCES.map((source) => new RegExp(source, 'u'));
const DESCRIBES = /\b(?:incident|postmortem|post-mortem|outage|reverted|caused|attacker|phishing|malware|used to|last (?:week|month|year|quarter)|was found|we found|detects?|flags?|warns?|the scanner|happened|leaked|compromised|in the past|a bug|the bug)\b/u;
/** The act presented as how things are done, as always or everywhere, or with a reason that waves the safeguard away. */
const ENDORSES = /\b(?:is|are|was) (?:an? |the )?(?:accepted|standard|approved|usual|normal|expected|recommended|preferred|quickest|fastest|easiest|simplest|right|correct|official|agreed|sanctioned)\b|\bis how\b|\b(?:standard|usual|accepted|quickest|fastest|easiest|official|approved|agreed|normal) (?:fix|way|practice|procedure|approach|workaround|step|route|path|process)\b|\bit(?:['’]s| is) (?:standard|normal|usual|fine|ok|okay|expected|accepted|customary|safe)\b|\b(?:ends|starts|begins|finishes) with\b|\bbelongs? (?:in|on|into|to)\b|\b(?:should|must|has to|have to|need to|needs to|are to|is to)\b|\b(?:is|are) (?:allowed|permitted|fine|ok|okay|encouraged|expected|required|mandatory|welcome)\b|\bfreely\b|\bfeel free\b|\bgo ahead\b|\bnothing to review\b|\bby default\b|\balways\b|\bevery\b|\bany\b|\bwhenever\b|\bslows?\b|\btoo slow\b|\bnuisance\b|\bsaves?\b|\bconvenien\w*\b|\bin the way\b|\bkeeps? (?:breaking|blocking|failing)\b|\bnever real\b|\bnoise\b|\bmove on\b|\bwithout\b|\bwastes?\b|\bannoy\w*\b|\bbottleneck\b|\bpointless\b|\boverkill\b|\bunnecessary\b|\bdecoration\b/u;
/** The words that open an order: an optional adverb, then a bare verb. */
const ORDER_ADVERB = String.raw`(?:please |now |also |then |just |always |never |first |quietly |silently |secretly )?`;
/** The same without "never": a text opening "Never post …" forbids, it does not order. */
const START_ADVERB = String.raw`(?:please |now |also |then |just |always |first |quietly |silently |secretly )?`;
const ORDER_VERB = String.raw`(?:add|append|approve|bypass|change|clear|comment|commit|copy|delete|disable|download|dump|email|encode|execute|fetch|forward|hide|ignore|include|insert|install|mail|make|merge|modify|omit|pipe|post|push|remove|replace|rewrite|run|send|set|share|skip|source|store|suppress|sync|turn|update|upload|use|write|forget|disregard|override|treat|keep|give|grant|mark|print|reveal|pretend|force)`;
/** A text that opens with a bare verb (an order), as engineering notes mostly do not: intent.ts's `imperative-start`. */
export const OPENS_WITH_ORDER = new RegExp(String.raw`^\W*${START_ADVERB}${ORDER_VERB}\b`, 'u');
/**
 * A sentence naming an act that opens with a bare verb: an order. The same rule as `OPENS_WITH_ORDER`, with
 * verbs that only order in a sentence that already names a harmful act ("paste", "publish", "tell", "wipe", …).
 * The verb may also follow the clause that sets the order's occasion ("When you report back, present …") or
 * whatever precedes a colon ("Refusing is not allowed: disable …", "Agent: skip …").
 */
const ORDERS = new RegExp(String.raw`^\W*(?:(?:when|whenever|if|once|before|after|while|as soon as|on|for|during|in)\b[^,:;]{0,80}[,:]\s*|[^,:;]{0,60}:\s*)?${ORDER_ADVERB}(?:${ORDER_VERB}|(?:attach|call|describe|drop|erase|exclude|leave|load|lower|move|open|paste|pay|publish|put|report|squash|stop|strip|switch|tell|wipe|present|frame|label|word|summari[sz]e|downplay|retire|waive|exempt|pause|suspend|mute|silence|relax|loosen|weaken|circumvent|deactivate|drop|neuter))\b`, 'u');

/**
 * Whether every naming of the act's verb in the sentence is forbidden: a prohibition right before it ("never
 * posted", "do not skip") or right after it, or a counter-measure in its clause ("… is blocked", "needs a
 * review"), or the next sentence forbidding it ("Never do it.", "Never post it anywhere.").
 */
function forbidden(sentence: string, next: string, verb: RegExp, verbOnce: RegExp): boolean {
  const head = next.slice(0, 40);
  if (FORBIDS_NEXT.test(head) || (OPENS_PROHIBITION.test(head) && verbOnce.test(head))) return true;
  verb.lastIndex = 0;
  for (let m = verb.exec(sentence); m; m = verb.exec(sentence)) {
    const end = m.index + m[0].length;
    const prohibited = PROHIBITION.test(sentence.slice(Math.max(0, m.index - 60), m.index)) || FORBIDDEN_AFTER_IN_CLAUSE.test(sentence.slice(end, end + 120));
    if (!prohibited && !COUNTERED.test(clauseAt(sentence, m.index, end))) return false;
    if (m[0] === '') verb.lastIndex++;
  }
  return true;
}

function stanceOf(sentence: string, next: string, verb: RegExp, verbOnce: RegExp): Stance {
  if (forbidden(sentence, next, verb, verbOnce)) return 'forbidden';
  if (SCOPED.some((p) => p.test(sentence))) return 'scoped';
  if (ORDERS.test(sentence)) return 'ordered';
  if (DESCRIBES.test(sentence)) return 'described';
  return ENDORSES.test(sentence) ? 'endorsed' : 'stated';
}

/**
 * Who is meant to carry the act out, and what surrounds the order, read in the sentences whose act favours a
 * hold (ordered, endorsed, stated). Two frames favour a hold: refusing is forbidden or waved away ("refusing is
 * not allowed", "no exceptions", "without question"), and the agent is the one told to act ("you", "the
 * assistant", "agents"). Two weigh against it: a person in a named role does it ("the on-call engineer may …"),
 * or the text keeps the safeguard in force ("reviews are still required", "everything else needs a
 * reviewer"). Features `frame:<id>`, weights learned like the stance's.
 */
export const FRAMES = {
  coerced: 'it forbids refusing or questioning the order',
  'agent-does': 'it tells the agent itself to do it',
  'actor-habit': 'it states what the agents here do as a standing habit',
  'human-does': null,
  'safeguard-kept': null,
} as const;
/**
 * Pushing back, without asking or questioning: "asking is allowed" and "questions are accepted" give the agent room,
 * so only refusing, declining, objecting or hesitating count when the text denies it is allowed.
 */
const REFUSING = String.raw`\b(?:refus\w*|declin\w*|hesitat\w*|object(?:ed|ing|ions?)?\b|say(?:ing)? no\b|push(?:es|ed|ing)? back\b)`;
/**
 * A refusal forbidden or waved away: "refusing is not allowed" (the negation is required, so "refusing is allowed"
 * is not a coercion), "refusing is forbidden", "do not push back", "no exceptions", "without question".
 */
const COERCION = String.raw`${REFUSING}[^.;!?\n]{0,20}\b(?:(?:isn't|aren't|is not|are not|is never|are never) (?:allowed|an option|permitted|acceptable|accepted|tolerated)|(?:is|are) (?:forbidden|prohibited|banned))\b|\b(?:never|do not|don't|must not|mustn't|cannot|can't|no) (?:ever )?(?:refuse|decline|object|push back|say no|question|refusals?|objections?)\b|\bno exceptions?\b|\bnon-?negotiable\b|\bwithout (?:question|exception|objection|pushback|push-back)\b|\bno matter what (?:the user|anyone|they|reviewers?) (?:says?|asks?|wants?)\b|\bno questions asked\b`;
/** The coercion in the sentence of the act. */
const COERCES = new RegExp(COERCION, 'u');
/** A next sentence that is only the coercion ("No exceptions.", "Refusing is not an option."), read with the act before it. */
const COERCES_NEXT = new RegExp(String.raw`^\W*(?:(?:this|that|it) is )?(?:${COERCION})\W*$`, 'u');
const AGENT_DOES = new RegExp(String.raw`\b(?:you|your|yourself|(?:ai |coding |llm )?${AGENT_NOUN})\b`, 'u');
/**
 * A sentence about what the agents here do: an automated actor as its subject, at its start ("Coding helpers in this org
 * open …", "The bot that reads these notes copies …", "Whoever automates this repo next is expected to …"), or given
 * leave or a duty by a modal ("automation may …", "agents are trusted to …"). Read in a sentence that names an act
 * favouring a hold: the habit is the standing rule. The lead-in skips no hyphen, which the words after it take: a
 * long hyphen run read by both would be rescanned from every place it could end (quadratic).
 */
const ACTOR_HABIT = new RegExp(String.raw`^[^\w-]*(?:(?:the|our|any|every|each|all|an?|this|these|those|whichever|whatever) )?(?:[\w-]+ ){0,2}?${AUTOMATED_ACTOR}\b(?! (?:gateway|feature|plugin|proxy|api|sdk|provider|vendor|router|budget|costs?|usage|logs?|outputs?|calls?|prompts?|responses?)\b)|\b${AUTOMATED_ACTOR} (?:[\w-]+ ){0,4}?(?:may|can|gets? to|(?:is|are) (?:expected|trusted|free|allowed|cleared|meant|supposed|welcome) to|handles?|treats?|takes? care of)\b`, 'u');
const HUMAN_DOES = /\b(?:on-?call|engineers?|developers?|(?<!\bno )humans?(?! (?:review|approval|sign-?off|check|oversight|in the loop|eyes))|people|contributors?|release managers?|team leads?|maintainers? (?:may|can|must|should|do|will)|sres?|operators? (?:may|can|must|should)|admins? (?:may|can|must|should)|whoever is on call)\b/u;
/** The safeguards a text can keep in force. */
const SAFEGUARD = String.raw`(?:${SAFEGUARD_NOUN}|reviewers?|scanners?)`;
/**
 * The safeguard kept in force, in the sentence of the act (up to its full stop): a safeguard named as still or always required ("reviews
 * are still required", "the signing check stays enabled"), everything else needing one, or the act kept off main.
 */
const SAFEGUARD_KEPT = new RegExp(String.raw`\b${SAFEGUARD} (?:are|is|stays?|remains?) (?:still |always )?(?:required|needed|mandatory|enabled|enforced|in place)\b|\b${SAFEGUARD} (?:are|is) still (?:run|done|reviewed|signed|checked)\b|\beverything else (?:still )?(?:needs|goes through|gets|must (?:get|have|pass)|requires) (?:a |an |the )?(?:[\w'’-]+ )?${SAFEGUARD}\b|\bstill (?:needs?|requires?|goes through|runs?) (?:a |an |the )?(?:[\w'’-]+ )?${SAFEGUARD}\b|\bnever (?:for|on|in) (?:main|master|prod\w*|releases?)\b|\bexcept (?:for )?(?:main|master|prod\w*|releases?)\b`, 'u');

/**
 * Leave to push back ("refusing is allowed", "asking is acceptable"): it endorses the refusal, not the act named
 * after it, so it is blanked out before the acts and their stance are read.
 */
const REFUSAL_PERMITTED = new RegExp(String.raw`${REFUSAL}[^.;,:!?\n]{0,20}\b(?:is|are) (?:always |still )?(?:allowed|acceptable|permitted|fine|ok|okay|welcome|encouraged|expected)\b`, 'gu');

/** A pronoun that can stand for an object named in the sentence before ("CONTRIBUTING.md … ; agents may set it aside"). */
const PRONOUN = /\b(?:it|its|them|these|those)\b/u;

/**
 * The acts each sentence names, with their stance. The act's verb must be in the sentence; an object it needs may
 * be in the sentence before when this one refers back to it by a pronoun.
 */
function actsOf(lowerText: string): { act: StanceAct; stance: Stance; at: number; sentence: string; next: string }[] {
  const out: { act: StanceAct; stance: Stance; at: number; sentence: string; next: string }[] = [];
  const sentences = splitSentences(lowerText).map((s) => s.replace(REFUSAL_PERMITTED, ' '));
  sentences.forEach((s, i) => {
    const next = sentences[i + 1] ?? '';
    const before = PRONOUN.test(s) ? (sentences[i - 1] ?? '') : '';
    for (const [act, parts] of Object.entries(ACTS) as [StanceAct, RegExp[]][]) {
      if (!(parts[0] as RegExp).test(s) || !parts.every((p, k) => k === 0 || p.test(s) || (before !== '' && p.test(before)))) continue;
      out.push({ act, stance: stanceOf(s, next, VERBS[act], parts[0] as RegExp), at: i, sentence: s, next });
    }
  });
  return out;
}

/**
 * The stance and frame features of a lower-cased text: `stance:<act>:<stance>`, `stance:any:<stance>` and
 * `frame:<id>`, in a fixed order.
 */
export function readStance(lowerText: string): { stance: string[]; frame: string[] } {
  const found = new Set<string>();
  const frames = new Set<string>();
  // Each sentence's frames are read once, however many acts it names, so the reading stays linear in the text.
  let framed = -1;
  for (const { act, stance, at, sentence, next } of actsOf(lowerText)) {
    found.add(`stance:${act}:${stance}`);
    found.add(`stance:any:${stance}`);
    if (AGAINST.has(stance) || at === framed) continue;
    framed = at;
    if (AGENT_DOES.test(sentence)) frames.add('frame:agent-does');
    if (ACTOR_HABIT.test(sentence)) frames.add('frame:actor-habit');
    if (HUMAN_DOES.test(sentence)) frames.add('frame:human-does');
    // A clause after a semicolon belongs to the act's sentence; one after a full stop does not.
    if (SAFEGUARD_KEPT.test(sentence) || (sentence.endsWith(';') && SAFEGUARD_KEPT.test(next))) frames.add('frame:safeguard-kept');
    if (COERCES.test(sentence) || COERCES_NEXT.test(next)) frames.add('frame:coerced');
  }
  return { stance: STANCE_FEATURE_IDS.filter((id) => found.has(id)), frame: FRAME_FEATURE_IDS.filter((id) => frames.has(id)) };
}

/** The stance features of a lower-cased text (`stance:<act>:<stance>`, `stance:any:<stance>`), in a fixed order. */
export function stanceFeatures(lowerText: string): string[] {
  return readStance(lowerText).stance;
}

/** Every frame feature id, in a fixed order. */
export const FRAME_FEATURE_IDS: readonly string[] = Object.keys(FRAMES).map((f) => `frame:${f}`);

/** The plain-words reason of a frame feature, or null when it weighs against a hold. */
export function frameReason(id: string): string | null {
  return FRAMES[id.slice('frame:'.length) as keyof typeof FRAMES] ?? null;
}

/** Every stance feature id, in a fixed order. */
export const STANCE_FEATURE_IDS: readonly string[] = [...Object.keys(STANCE_ACTS), 'any'].flatMap((act) => STANCES.map((s) => `stance:${act}:${s}`));

/** The plain-words reason of a stance feature, or null when it weighs against a hold (or is the `any` summary). */
export function stanceReason(id: string): string | null {
  const [, act, stance] = id.split(':') as [string, string, string];
  if (AGAINST.has(stance) || !(act in STANCE_ACTS)) return null;
  const what = STANCE_ACTS[act as StanceAct];
  return stance === 'ordered' ? `it orders ${what}` : stance === 'endorsed' ? `it presents ${what} as the way things are done` : `it states ${what} as a fact, with nothing against it`;
}
