/**
 * What a text *does*, read with rules a person can check: whom it addresses, whether it commands later
 * behaviour, claims authority or consent it cannot have, overrides instructions, asks for concealment,
 * sends secrets out, runs remote code or switches a safeguard off. Each signal has a plain-words reason
 * that the quarantine shows. The signals are features of the filter's classifier (whose weights, learned
 * offline, decide how much each counts and how they combine); no single signal holds a text on its own,
 * because ordinary engineering notes use every one of these words ("always run the linter", "curl the
 * health endpoint", "skip the e2e tests on docs-only changes").
 *
 * Rules run on lower-cased, de-obfuscated text, cut to the classifier's 8,000 characters. They are meant to be
 * linear-time (no nested quantifiers over the same characters, bounded gaps, a URL run scanned from its first
 * URL only, or from the first URL a fetch verb reaches), and `npm run bench -- --only filter-cost` checks it on
 * 56 families of adversarial inputs: all rules together cost 0.7–3.1 ms at the median per family on 8,000
 * characters, 1.8–12.8 ms on a whole 32 KB text, and 0.22 ms (p95 0.35 ms) with de-obfuscation on an ordinary
 * 300-character note (run of 2026-12-06, 2 shared cores, load about 1). Before the URL and e-mail rules were fixed,
 * a 32 KB run of URLs took 14 s; before the fetch-verb rule was, `get,https://x,` repeated to 8,000 characters
 * took 1 s; `without` and a 32 KB run of `auth` took 262 ms while two unbounded quantifiers sat around the
 * literal (an earlier version of this note called every rule linear while one was not).
 */

import type { InstructionVerdict } from '../interfaces/memory.js';
import { sha256Hex } from './text.js';
import { AGENT_NOUN, DENIED_CONSENT, DISCLOSED_AS, HUMAN_ACTS_UNASKED, NAMES_AGENT_OR_LATER, NOT_ADJECTIVE, SAFEGUARD_OFF_SETTING, SECRET_STORE } from './filter-lexicon.js';
import { FORBIDDEN_AFTER, FRAME_FEATURE_IDS, frameReason, OPENS_WITH_ORDER, PROHIBITION, readStance, SCOPE_SOURCES, STANCE_FEATURE_IDS, stanceReason } from './stance.js';

export interface IntentSignal {
  id: string;
  /** Why it matters, in plain words, for the review queue. */
  reason: string;
  /**
   * Each pattern is its own feature of the classifier (`<id>:<index>`), so a weak form ("quietly") can weigh
   * less than a strong one ("do not tell the user") of the same signal.
   */
  patterns: Pattern[];
  /**
   * A match right after a prohibition ("never disable TLS verification", "do not force-push main") says the
   * opposite of the act: such a text gets the feature `<id>:<index>:negated` instead, which is not a harm.
   * Only for acts that engineering notes forbid as often as attacks order them.
   */
  negatable?: boolean;
  /**
   * A signal that makes an act less likely to be an attack (it limits the act's scope): the classifier
   * weighs it (from 0), but it is never a reason and never spotlights text.
   */
  mitigating?: boolean;
  /**
   * Phrases that say the opposite of the signal, blanked out before its patterns read the text: "there is no
   * blanket approval for …" denies a consent (stance.ts reads it as a counter-measure), so it claims none.
   */
  masks?: RegExp;
  /** Like `masks`, but blanked out only in a sentence that names no agent, no "you" and no later session. */
  masksWithoutAgent?: RegExp;
}

/**
 * `text` with each match of `mask` blanked out, unless the sentence it starts in names the agent, "you" or a later
 * session. Each sentence is read once (matches come in order), so a text of many matches stays linear.
 */
function maskWithoutAgent(text: string, mask: RegExp): string {
  const sentences = [...text.matchAll(/[^.;!?\n]*(?:[.;!?\n]|$)/gu)].map((m) => ({ end: m.index + m[0].length, text: m[0] }));
  const names = new Map<number, boolean>();
  let k = 0;
  return text.replace(mask, (span: string, at: number) => {
    const first = /^[.;!?,]/u.test(span) ? at + 1 : at;
    while (k < sentences.length - 1 && (sentences[k]?.end ?? 0) <= first) k++;
    let kept = names.get(k);
    if (kept === undefined) names.set(k, (kept = NAMES_AGENT_OR_LATER.test(sentences[k]?.text ?? '')));
    return kept ? span : ' ';
  });
}

/** A pattern: whether the text matches; `all`, when present, finds every match (for negation). */
/**
 * A rule: an expression (`all`, its global form; `needs`, a string every match contains), or a function over
 * several expressions, which it names in `uses` (instructionRulesId hashes them: a function's own text does not
 * hold the expressions it calls).
 */
type Pattern = ((text: string) => boolean) & { all?: RegExp; needs?: string; uses?: readonly RegExp[] };

/**
 * A pattern from its source. `needs`, when given, is a string every match contains: a text without it is
 * answered without running the expression (the same answer, at the cost of one `includes`).
 */
const re = (source: string, needs?: string): Pattern => {
  const r = new RegExp(source, 'u');
  return Object.assign(needs === undefined ? (t: string) => r.test(t) : (t: string) => t.includes(needs) && r.test(t), {
    all: new RegExp(source, 'gu'),
    ...(needs === undefined ? {} : { needs }),
  });
};

/**
 * Placed right after `https?://`: the match starts at the first URL of its run of non-space characters only.
 * A later URL in the same run has the same run end, so whatever `\S+…` can match from it, it can match from
 * the first one too; without this, a 32 KB run of URLs (`https://xhttps://x…`) is re-scanned from each of them
 * (quadratic: seconds). The lazy look-behind stops at the previous URL, so each run is walked back once.
 */
const FIRST_URL_IN_RUN = String.raw`(?<!https?://\S*?https?://)`;
/** The same for a URL that must start a word (`\bhttps?://`): only an earlier URL that starts a word counts. */
const FIRST_B_URL_IN_RUN = String.raw`(?<!\bhttps?://\S*?https?://)`;

/** A verb that fetches ("download", "get", "grabbing"), for a URL fetched and then run. */
const FETCH_VERB = String.raw`\b(?:download|fetch|pull|get|grab|load)\w*\b`;
/**
 * Placed right after the `https?://` of `FETCH_VERB[^.;\n]{0,30}https?://\S+…`: an earlier URL of the same run
 * that some verb reaches the same way answers for this one (from it, `\S+…` can match whatever it can match
 * from here), so this one is not tried again. Without it every verb of a run such as `get,https://x,get,…`
 * re-scanned the run to its end: 8,000 characters took 1 s. Matches, and where they start and end, stay the same.
 */
const FIRST_FETCHED_URL_IN_RUN = String.raw`(?<!${FETCH_VERB}[^.;\n]{0,30}https?://\S*?https?://)`;

/** Whether `all` matches `text` somewhere that is not right after (or right before) a prohibition. */
function matchesUnforbidden(all: RegExp, text: string): boolean {
  all.lastIndex = 0;
  for (let m = all.exec(text); m; m = all.exec(text)) {
    const after = text.slice(m.index + m[0].length, m.index + m[0].length + 60);
    if (!PROHIBITION.test(text.slice(Math.max(0, m.index - 60), m.index)) && !FORBIDDEN_AFTER.test(after)) return true;
    if (m[0] === '') all.lastIndex++;
  }
  return false;
}

/** Things a coding agent must not send out of the machine. */
const SECRET = String.raw`(?:${SECRET_STORE}|\benv(?:ironment)? ?(?:variables?|vars|file)\b|\boutput of (?:env|printenv|set)\b|\bapi[ _-]?keys?\b|\bsecrets?\b|\bcredentials?\b|\b(?:access |auth |session |bearer |npm |github |deploy )?tokens?\b|\bpasswords?\b|\baws_[a-z_]+|\bcookies?\b|\b(?:database|db|customers?|users?|production|prod) (?:dump|data|records|table|snapshot)s?\b|\b(?:database|db) snapshots? of\b|\bcustomers?['’]? (?:e-?mails?|phone numbers?|addresses|pii|personal data)\b|\bpii\b|\bdatabase_url\b|\bconnection strings?\b|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)*_(?:token|secret|password|passwd|api_key|apikey|private_key|secret_key|access_key)s?\b|\bcustomers?\w*\.(?:csv|json|xlsx|sql)\b|\b(?:customer|user)s? (?:exports?|lists?)\b)`;
/** Verbs that move data. */
const SEND = String.raw`\b(?:send|sends|sent|post|posts|upload|uploads|exfiltrat\w*|forward|forwards|email|e-mail|mail|transmit|copy|copies|sync|pipe|paste|share|report|leak|beacon|attach|include|append)\b|\b(?:attach|beacon|leak|forward|upload|transmit|share|paste|mail|email)(?:es|s|ed|ing)\b|curl\b[^\n]{0,80}(?:-d\b|--data|-f\b|--form|-t\b|--upload-file|-x post)|\bwget\b[^\n]{0,40}--post|\b(?:tee|copied|mirror(?:s|ed|ing)?|tar(?:s|red|ring)?|rsync|scp)\b`;
/** Where data must not go: outside addresses (anything but localhost and example domains used in docs). */
const EXTERNAL = String.raw`(?:https?://(?!(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])\b)[^\s/]+|(?<![\w.+-])[.+-]*\b[\w.+-]+@[\w-]+\.[\w.]+|\b(?:pastebin|webhook\.site|ngrok|requestbin|pipedream|transfer\.sh|discord(?:app)?\.com/api/webhooks|api\.telegram|hooks\.slack|burpcollaborator|interact\.sh|oast)\b|\b(?:external|remote|outside|third[- ]party|personal|backup) (?:[\w-]+ )?(?:server|address|endpoint|host|url|bucket|inbox|email|account|collector|storage|service|drive)\b|\bto (?:the |a |an |our )?(?:vendor|contractor|partner|consultant|freelancer)(?:['’]s)?\b|\bthe address in\b|\b(?:s?ftp|scp|rsync|smb|gs|az|wss?)://|\\\\[\w.-]+\\|\banyone[- ]with[- ]the[- ]link\b|\b(?:files?|filed|report\w*|post\w*|opens?) (?:\w+ ){0,3}upstream\b)`;

/** Verbs that put data somewhere (wider than SEND: writing a secret into a public place exposes it too). */
const EXPOSE = String.raw`\b(?:send|post|upload|push|copy|copie[sd]|publish|put|wrote|written|commit|attach|append|add|print|dump|mirror|sync|zip|export|(?:past|shar|writ|includ|encod)(?:e|es|ed|ing))\w*\b`;
/** Places anyone may read. */
const PUBLIC = String.raw`\b(?:public|open|shared) (?:bucket|repo\w*|gist|issue|tracker|channel|paste|url|link|s3|mirror|archive|folder|drive)\b|\bgists?\b|\b(?:s3|gs)://|\b(?:in|into|to) (?:the )?(?:team )?(?:chat|slack|discord|readme|issue|pr description|pull request|public tracker|user agent|telemetry|commit message|build log|ci log|job log|ci debug output|debug output)\b|\b(?:as|in) (?:a |the )?(?:query|url) (?:param\w*|string)\b|\b(?:belongs?|go(?:es)?) (?:in|into|on) the (?:shared|public|team) (?:drive|folder|bucket|channel|link)\b|\b(?:a )?comment (?:of|on|in) (?:the |a )?(?:public )?(?:pull request|pr|issue)\b`;
const EXPOSE_RE = new RegExp(EXPOSE, 'u');
/** A secret put into the repository's own files (hard-coded, copied or committed into a path, the source or the fixtures) or kept in plain text. */
const INTO_REPO = String.raw`\b(?:hard-?cod\w*|copie[sd]|copy(?:ing)?|commit\w*|checked in|paste\w*|inlin\w*) (?:the |our |a |its |their )?(?:[\w-]+ ){0,2}?(?:${SECRET_STORE}|~/\.\w+/[\w.-]+|(?:[\w-]+ )?(?:api[ _-]?keys?|secrets?|credentials?|tokens?|passwords?|private keys?)\b)(?!\.(?:example|sample|template|dist)\b)(?:[^.;\n]|\.(?=\w)){0,40}?\b(?:into|in|to) (?:the )?(?:repo\w*|source(?: code| tree)?|codebase|git|fixtures?|src/|tests?/|[\w.-]+/[\w./-]*\.\w+)|\b(?:kept|stored|written|saved|left|put) (?:[\w-]+ ){0,2}?(?:in|as) (?:plain ?text|clear ?text)\b`;
const INTO_REPO_ALL = new RegExp(INTO_REPO, 'gu');
const PUBLIC_ALL = new RegExp(PUBLIC, 'gu');
const SECRET_RE = new RegExp(SECRET, 'u');
const SEND_ALL = new RegExp(SEND, 'gu');
const EXTERNAL_RE = new RegExp(EXTERNAL, 'u');

export const INTENT_SIGNALS: readonly IntentSignal[] = [
  {
    id: 'addresses-agent',
    reason: 'it addresses the AI agent or its later sessions directly',
    patterns: [
      re(String.raw`\b(?:dear|attention|note to|hey|hello|hi|to|for|instructions? for|message (?:to|for)) (?:the |all |any |every |our )?(?:ai |coding |llm |autonomous )?${AGENT_NOUN}\b`),
      re(String.raw`\b(?:future|later|next|subsequent|all other) (?:sessions|agents|instances|runs|conversations|assistants)\b`),
      re(String.raw`\b(?:any|every|each) (?:ai |coding )?(?:ai|${AGENT_NOUN}) (?:that |who )?(?:reads|reading|loads|recalls|sees|processing)\b`),
      re(String.raw`\b(?:whoever|whatever) (?:reads|recalls|loads) this\b|\bwhen(?:ever)? you (?:read|see|load|recall|retrieve|find) this\b|\bif you are an? (?:ai|llm|agent|assistant|language model)\b|\b(?:if|when|whenever|in case) (?:an? |the |any |some )?(?:ai |coding )?(?:${AGENT_NOUN}|automated [\w-]+) (?:is |happens to be )?(?:reads?|reading|processing|loads?|loading|picks? up) (?:this|these)\b|\b(?:aimed at|meant for|intended for|addressed to|directed at|written for|left here for) (?:the |any |all |every |our )?(?:ai |coding )?(?:${AGENT_NOUN}|automated [\w-]+|automation)\b|\b(?:anyone|anything|whoever|whatever) automated\b`),
      re(String.raw`\b(?:as an? (?:ai|assistant|language model)|you are (?:now |no longer )?(?:an? )?(?:ai|assistant|agent|model|chatbot|dan)\b)`),
      // Called by name at the start ("Assistant, …", "Model, please note: …"), or as those who work here.
      re(String.raw`^\W*(?:dear |hey |hi )?(?:coding )?${AGENT_NOUN}\s*[,:]`),
      re(String.raw`\b(?:ai tools|${AGENT_NOUN}) (?:working|operating|running|acting) (?:here|on this|in this)\b|\bthis (?:one|note|rule|memory|message) is for you\b|\b(?:whoever|anyone|any (?:ai|model|agent|tool)) (?:is )?(?:reading|processing|loading) this\b`),
      // Whoever comes next ("whichever model picks up this repo next"), or agents told what they should do here.
      re(String.raw`\bwhichever (?:ai |coding )?(?:${AGENT_NOUN}|sessions?|instances?)\b|\b(?:ai tools|(?:coding )?${AGENT_NOUN}) (?:here |in this repo\w* )?(?:should|must|shall|need to|have to|are expected to)\b|\b(?:the )?(?:next|future) (?:ai|${AGENT_NOUN}) (?:that |to )?(?:reads|picks|works|opens|loads)\b`),
    ],
  },
  {
    id: 'commands-future',
    reason: 'it tells the agent how to behave from now on or in every later session',
    patterns: [
      re(String.raw`\b(?:from now on|going forward|henceforth|from this point (?:on|forward)|for all future|in (?:all|every|each) (?:future |later |new |subsequent )?(?:sessions?|conversations?|tasks?|responses?|answers?|replies|chats?|runs?)|at the (?:start|beginning) of (?:each|every|any) (?:session|task|conversation|run)|before (?:any|every|each) (?:other )?(?:task|session|response|command)|on every (?:session|startup|start|run)|each time you (?:start|begin|open|run|respond|answer)|whenever you (?:start|begin|open|run|respond|answer|are asked|write|commit|see)|permanently|for the rest of (?:this|the) (?:session|project|conversation))\b`),
      re(String.raw`\byou (?:must|shall|will|should|are required to|have to|need to) (?:always|never|from now|permanently|now always)\b`),
      re(String.raw`\bremember (?:to always|this for|forever|permanently)\b|\b(?:store|save|keep) this (?:rule|instruction) (?:in|into) (?:your )?memory\b`),
      re(String.raw`\b(?:until told otherwise|until further notice|(?:next time|this time) and every time|every time after(?:wards)?|starting (?:with|from) the next|from today(?: on(?:wards?)?)?|from here on|keep it that way|for good|after this, (?:each|every|all|always))\b`),
      re(String.raw`\b(?:for|in|on|during) (?:every|each|all|any) (?:future|later|new|subsequent|upcoming) (?:tasks?|sessions?|runs?|jobs?|builds?|changes?|prs?|pull requests|commits?|migrations?)\b|\b(?:each|every) time (?:a|the|this|your) (?:session|task|run|agent) (?:begins|starts|opens)\b|\bwhenever (?:a|the|your) (?:session|task|run) (?:begins|starts|opens)\b|\bstarting (?:today|now|immediately)\b|\b(?:each|every) (?:new )?(?:session|task|run|conversation) (?:starts|begins|opens) (?:by|with)\b|\bcovers? (?:all|every|each|any) (?:future |later )?(?:sessions?|tasks?|runs?|agents?|conversations?)\b|\bafter this, whenever\b|\bin each (?:conversation|session|task|run) that follows\b|\b(?:each|every) (?:build|push|commit|deploy|release|task) you (?:trigger|make|run|do|start|open)\b|\b(?:each|every|any|all) (?:later|future|new|subsequent|upcoming|following) (?:sessions?|tasks?|runs?|conversations?|jobs?)\b|\b(?:each|every|any) (?:session|task|run|conversation) that follows\b|\bfrom the next (?:task|session|run|conversation|change|pull request)s? on(?:wards?)?\b|\bkeep doing this\b`),
    ],
  },
  {
    id: 'claims-authority',
    reason: 'it claims an authority it cannot have (a system, admin or vendor override, top priority)',
    patterns: [
      re(String.raw`\b(?:system|admin|administrator|developer|root|security|maintainer|vendor|anthropic|openai|platform|operator|emergency|priority) (?:override|directive|instruction|notice|command|mandate|update|message|policy change|alert)\b`),
      re(String.raw`\b(?:highest|top|maximum|absolute|critical|overriding|first) priority\b|\bpriority (?:0|zero|one|1|override)\b`),
      re(String.raw`\b(?:supersedes?|overrides?|takes? precedence over|outranks?) (?:all|any|every|your|the|other|previous|existing|earlier)\b`),
      re(String.raw`\b(?:authori[sz]ed|mandated|ordered|required|sanctioned|signed off) by (?:the )?(?:admin\w*|security team|cto|ceo|owners?|maintainers?|management|system|anthropic|openai|root|it department)\b`),
      re(String.raw`\[(?:system|admin|important|override|instruction)\]|<\/?(?:system|admin|instructions?)>|\b(?:begin|end) (?:system|admin) (?:message|prompt|instructions)\b`),
      // Orders presented as coming from someone in charge ("notice from the compliance office", "by order of
      // the release manager", "[SECURITY TEAM NOTICE]", "official policy update").
      re(String.raw`\b(?:notice|directive|mandate|order|instruction|message|memo|requirement|protocol|policy update|advisory|bulletin|guidance|word|ruling) (?:[\w-]+ )?from (?:the )?(?:[\w'’-]+ ){0,2}(?:team|office|support|admin\w*|owners?|maintainers?|cto|ciso|ceo|lead|manager|department|platform|github|anthropic|openai|vendor|board|group|council|committee|guild)\b|\b(?:by order of|per the|on behalf of|as instructed by|at the request of) (?:the )?(?:[\w'’-]+ ){0,2}(?:cto|ciso|ceo|lead|manager|owner|admin\w*|maintainers?|security team|security office|board|management)\b|\b(?:directive|order|mandate|instruction|memo|notice|ruling)s?(?: (?:no\.? ?|#)?[\w-]+)? from (?:the )?(?:compliance|legal|management|leadership|governance|audit|infosec)\b|\b(?:issued|imposed) by (?:the )?(?:org(?:anization)?(?:-level)? )?(?:administrators|admins|org owners|platform owners)\b|\b(?:org|organi[sz]ation)-level (?:policy|rule|directive)\b|\bnot changeable by (?:users|you|the user|agents)\b|\bissued by (?:the )?(?:tool |platform |model )?(?:vendor|administrators|admins|security team|platform team)\b|\bmore authoritative than\b|\bthe person at the keyboard\b`),
      // An office said to have decided for the agent ("legal has mandated", "an internal audit concluded").
      re(String.raw`\b(?:legal|compliance|security|management|leadership|github support|support|(?:the|our|your|this) (?:[\w-]+ ){0,2}(?:team|office|board|department|group|council|committee|cto|ciso|ceo|vp|director|head|manager|lead|architect|owner|(?:principal|staff|chief|distinguished) engineer)s?(?: of [\w-]+)?|an? (?:internal |external |security )?audit|the org['’]s administrators) (?:has |have )?(?:mandated|decided|ordered|concluded|confirmed|ruled|directed|declared|decreed|determined|instructed|signed off)\b|\b(?:by (?:decision|order|ruling|direction|authority) of|per (?:the |our )?[\w'’ -]{0,30}(?:ruling|decision|directive|memo|mandate))\b|\b(?:compliance|security|legal|policy|governance|management) (?:memo|ruling|decision|waiver|exemption)s?\b|\bthis message comes from\b|\bcomes from the (?:org['’]s |repository['’]s )?(?:administrators|admins|owners|security team)\b`),
      re(String.raw`\b(?:official|mandatory|compulsory|urgent|emergency|standing|security|compliance|engineering|platform) (?:notice|order|directive|policy update|protocol|mandate|requirement)\b|\[[a-z ]{0,30}(?:notice|directive|override|admin|system|security|urgent|mandate)[a-z ]{0,20}\]|\b(?:root|system|admin|kernel|developer|owner)-level (?:instruction|directive|order|override)\b`),
    ],
  },
  {
    id: 'claims-consent',
    reason: 'it claims the user already consented, so the agent need not ask',
    masks: new RegExp(DENIED_CONSENT, 'gu'),
    masksWithoutAgent: new RegExp(HUMAN_ACTS_UNASKED, 'gu'),
    patterns: [
      re(String.raw`\b(?:the )?(?:user|owner|developer|maintainer|team|human|operator|client)s? (?:has |have )?(?:already |permanently |explicitly |previously |pre-?)?(?:approved|consented|agreed|authori[sz]ed|permitted|allowed|signed off|okayed|whitelisted|pre-?approved|pre-?cleared|green-?lit)\b|\b(?:are|is) covered (?:too|as well|already)\b`),
      re(String.raw`\b(?:permanently|pre-?|blanket|standing|already) (?:approved|authori[sz]ed|consent|permission|approval)\b|\bpre-?(?:approved|authori[sz]ed)\b|\bneeds? no (?:review|approval|sign-?off|confirmation|permission)\b`),
      re(String.raw`\b(?:treat|take|count|consider) (?:it|this|that|silence|their yes|the yes) as (?:consent|permission|approval|a yes)\b`),
      re(String.raw`\b(?:no need to|do not|don't|never|without) (?:ask|asking|confirm|confirming|prompt|prompting|check|checking|wait|waiting|request|requesting)\b(?: (?:the user |anyone |for |them |again |first )?(?:for )?(?:permission|confirmation|approval|consent|review|first)?\b)?`),
      re(String.raw`\b(?:permission|consent|approval|authori[sz]ation|a waiver|clearance|the go-ahead)\b[^.;]{0,60}\b(?:was|has been|have been|were|is) (?:already )?(?:given|granted|obtained|signed|on file|implied)\b|\b(?:consent|permission|approval) on file\b|\b(?:has|have) waived\b|\bwaived (?:every|all|any)\b`),
      re(String.raw`\b(?:you are|you're|agents are|the agent is|assistants are) (?:now )?(?:allowed|permitted|cleared|authori[sz]ed|free) to\b|\byou (?:may|can) (?:safely )?assume (?:that )?(?:the )?(?:user|owner|team|they|everyone)\b|\b(?:is|are) (?:okay|ok|fine|happy|comfortable) with (?:you|the agent|agents)\b|\b(?:user|owner|team|maintainer|client)s? (?:is|are) (?:okay|ok|fine|happy|comfortable) with\b|\bit is fine for (?:you|agents?|the agent|assistants?)\b|\b(?:said yes|agreed) once\b`),
      // Consent said to exist without the agent asking: given in advance, a go-ahead, a blanket yes, leave to act.
      re(String.raw`\b(?:approved|agreed|consented|authori[sz]ed|accepted|okayed|permitted|cleared|arranged) (?:it |this |that |them |with (?:the |our |their )?[\w-]+ )?(?:in advance|ahead of time|beforehand|once and for all|up ?front)\b|\b(?:the |their |the [\w'’-]+ )?(?:go-ahead|green light|blanket (?:permission|approval|consent|yes))\b[^.;]{0,20}\b(?:to|for)\b|\b(?:already )?said yes to (?:all|every|any)\w*\b|\b(?:have |has )?opted in to letting\b|\b(?:allows?|lets?|permits?|authori[sz]es) (?:the )?(?:agent|assistant|ai|agents|assistants|bots?|you) to\b|\b(?:agents?|assistants?|you|the agent) (?:may|can) now\b|\bno (?:sign-?off|approval|review|confirmation) (?:is )?(?:needed|required|necessary)\b|\bproceed without (?:asking|confirmation|approval|review)\b|\b(?:agreed|approved|okayed|signed off|confirmed|decided|said)\b[^.;]{0,40}\bthat (?:the )?(?:ai |coding )?(?:${AGENT_NOUN}|you|automation) (?:can|may|could|is allowed to|is free to)\b`),
      // A consent stretched past what was asked: a yes that "extends to" or "covers" later acts, a clearance "for
      // whenever", approval said to be standing, the user "happy for" the agent to act.
      re(String.raw`\b(?:yes|approval|consent|permission|sign-?off|okay|go-ahead)\b[^.;]{0,60}\b(?:extends? to|covers? (?:any|all|every|future|later)|carr(?:y|ies) over to|stands? for (?:any|all|every))\b|\b(?:cleared|approved|okayed) by (?:the |our |their )?(?:owner|user|client|customer|team|lead|maintainers?)\b[^.;]{0,30}\b(?:whenever|any time|for (?:any|all|every))\b|\b(?:approval|consent|permission) is (?:standing|permanent|ongoing|open-ended)\b|\b(?:user|owner|client|customer|team)s? (?:is|are) happy for\b|\bthere['’]s no one to check with\b`),
    ],
  },
  {
    id: 'overrides-rules',
    negatable: true,
    reason: 'it tells the agent to ignore or override its instructions or the repository rules',
    patterns: [
      re(String.raw`\b(?:ignore|disregard|forget|override|bypass|supersede|abandon|drop|discard|skip|cancel|suspend|void)s? (?:all |any |the |your |every |these |those |its |my )*(?:previous |prior |earlier |above |existing |other |original |initial |current |system |safety |security |repository |repo |project |team |coding |standing |usual |normal |default )*(?:instructions|rules|guidelines|prompts?|policies|directives|constraints|guardrails|restrictions|orders|conventions|claude\.md|agents\.md|contributing(?:\.md)?|system prompt)\b`),
      re(String.raw`\b(?:claude|agents|contributing|security|readme|gemini|copilot-instructions)(?:\.md)?\b[^.;]{0,30}\b(?:no longer appl(?:y|ies)|(?:is|are) (?:outdated|void|obsolete|cancelled|suspended|wrong|leftovers?|stale))\b`),
      // Rules said to bind humans only, retired, opted out of, or to yield to what the memory says.
      re(String.raw`\b(?:does not|doesn't|do not|don't) (?:bind|apply to|cover|concern) (?:the )?(?:assistant|agents?|ai|you|bots?|models?)\b|\b(?:meant|written|intended) (?:only )?for (?:human|people|humans)\b|\bappl(?:y|ies) only to (?:humans|people|human contributors)\b|\b(?:rule|policy|guideline|requirement|instruction)s? (?:was|were|has been|have been|is|are) (?:retired|dropped|lifted|revoked|rescinded|withdrawn|abolished)\b|\bopted out of (?:them|it|the (?:safety |security )?(?:rules|guardrails|checks|polic(?:y|ies)))\b|\b(?:rules|instructions|polic(?:y|ies)) in this (?:memory|note|message)\b|\bthis (?:memory|note|message) is the (?:only|real|new|final)\b|\b(?:never|cannot|can't|do not|don't|must not) (?:override|outrank|replace|supersede) (?:what is (?:stored|written|said) here|this (?:memory|note|rule))\b|\bthis (?:note|memory|message|file) wins\b|\b(?:rules|instructions|guardrails|guidelines|polic(?:y|ies)|system prompt|conventions|checklist)\b[^.;]{0,80}\b(?:can|may|should|must) be (?:ignored|disregarded|skipped|bypassed|dropped|overridden)\b`),
      re(String.raw`\b(?:new|updated|real|actual|true|secret|hidden) (?:instructions|orders|rules|directives|system prompt)\b`),
      re(String.raw`\b(?:pay no attention to|set aside|do not follow|don't follow|stop following|no longer follow)\b (?:the |any |your |all )?(?:[\w'’.-]+ ){0,3}(?:rules|instructions|guidelines|conventions|policies|checklist|system prompt|guidance)\b`),
      re(String.raw`\b(?:rules|instructions|guidelines|conventions|policies|checklist|guidance)\b[^.;]{0,30}\b(?:(?:is|are) (?:now )?(?:obsolete|void|cancelled|canceled|suspended|replaced|no longer valid)|(?:was|were) meant for)\b|\b(?:replaced|superseded) by this\b|\bthis (?:memory|note|file|message) (?:replaces|supersedes|outranks|overrides)\b|\b(?:higher|more) priority than (?:the )?(?:user|person|human|developer|system prompt|instructions)\b|\bcomes? second to\b`),
      // Rules named with a possessive ("the project's security policy"), said not to apply, or outranked by
      // the memory itself.
      re(String.raw`\b(?:ignore|disregard|bypass|override|skip|circumvent|work around|get around)s? (?:the |your |all |any )?(?:[\w-]+['’]s )?(?:[\w-]+ ){0,2}(?:polic(?:y|ies)|conventions|constraints|guidelines|rules|instructions|preferences|style guide|contribution rules|contributing guide|system prompt)\b|\b(?:guide|guidelines|rules|polic(?:y|ies)|conventions|instructions|claude\.md|agents\.md|checklist|system prompt)\b[^.;]{0,20}\b(?:does|do) not apply to (?:you|agents|the agent|this)\b|\b(?:follow|obey|trust) only (?:what )?this (?:memory|note|file|message)\b|\bthis (?:memory|note|message) (?:defines|decides|is the (?:source of truth|final word|real rule))\b|\bconflicts? with this (?:memory|note|message)\b|\bwhatever (?:the |your )?(?:user|system prompt|instructions|rules|claude\.md|guidelines) (?:says?|asks?|wants?)\b|\btreat (?:the |your |this )?(?:[\w-]+['’]s )?(?:[\w-]+ ){0,2}(?:constraints|rules|instructions|requests|guidelines|preferences|conventions|checklist|claude\.md|agents\.md|polic(?:y|ies))(?: files?| docs?| documents?)? as (?:suggestions?|optional|advisory|hints?|guidance)\b|\b(?:set aside|forget|disregard) everything (?:you were|you've been|you have been) (?:told|taught|given)\b|\btreat (?:them|it|these|those) as (?:suggestions|optional|advisory|hints|guidance only|nice-to-haves?)\b|\bthe real (?:task|job|goal|instruction) is\b|\btreat (?:them|it|these|those) as (?:void|obsolete|dead letters?|not applicable)\b|\bset (?:that|this|it|them|these|those) aside\b|\bif (?:the |a )?(?:user|owner|reviewer|human)s? (?:says?|asks?|objects?|refuses?)\b[^.]{0,40}\b(?:anyway|regardless|nonetheless)\b|\bact as if (?:the |this |that )?(?:[\w.-]+ )?(?:file|rules?|polic(?:y|ies)|instructions?|restrictions?)\b[^.;]{0,20}\b(?:weren['’]t|wasn['’]t|were not|was not|didn['’]t) (?:there|exist)\b`),
      re(String.raw`\b(?:agents|the agent|assistants|you|bots|ai tools) (?:can|may|should|are free to) (?:skip|ignore|disregard|bypass) (?:them|it|these|those|the (?:rules|guidelines|instructions|checklist|conventions|policy))\b|\b(?:conventions|guidelines|rules|instructions|polic(?:y|ies)|checklist)\b[^.;]{0,20}\b(?:are|is) (?:void|suspended|cancelled|canceled|not binding|optional)\b|\b(?:ignore|disregard|bypass|skip)\w* (?:the )?(?:codeowners|code owners['’]?|security\.md|contributing\.md|agents\.md|claude\.md)\b|\bregardless of (?:what )?(?:agents\.md|claude\.md|the (?:rules|guidelines|instructions|system prompt|policy|contributing guide))\b`),
      // The memory preferred to the rule files or the instructions ("agents follow this note over AGENTS.md", "when
      // CLAUDE.md and this note disagree, go with the note").
      re(String.raw`\b(?:follow|obey|trust|prefer|apply|go(?:es)? with)\w* (?:this|the) (?:note|memory|message)\b[^.;]{0,20}\b(?:over|above|instead of|rather than|ahead of) (?:the |your |any )?(?:agents\.md|claude\.md|contributing(?:\.md)?|security\.md|codeowners|readme|system prompt|(?:[\w-]+ ){0,2}(?:rules|instructions|guidelines|conventions|polic(?:y|ies)|checklist))\b|\b(?:disagree|conflict|clash)\w*\b[^.;]{0,30}\b(?:follow|obey|trust|go with|prefer) (?:this|the) (?:note|memory|message)\b|\b(?:guidelines|rules|polic(?:y|ies)|guardrails)\b[^.;]{0,20}\b(?:are|is) (?:only|just|merely) (?:defaults|suggestions|advisory|guidance)\b|\bgo by (?:the |this )?(?:notes?|memory|memories)\b|\b(?:outranks?|overrides?|trumps?) (?:anything|everything|whatever) (?:typed|said|written|asked)\b|\bthe real rule is\b|\b(?:guidelines|rules|polic(?:y|ies)|guardrails)\b[^.;]{0,30}\b(?:are|is) (?:considered |treated as |deemed )(?:only |just |merely )?(?:advisory|optional|defaults|suggestions)\b`),
    ],
  },
  {
    id: 'conceals',
    reason: 'it asks the agent to hide what it does from the user or reviewers',
    masksWithoutAgent: new RegExp(HUMAN_ACTS_UNASKED, 'gu'),
    patterns: [
      re(String.raw`\b(?:do not|don't|never|must not|avoid|without) (?:tell|telling|inform|informing|mention|mentioning|notify|notifying|show|showing|alert|alerting|report|reporting|disclose|disclosing|ask|asking|bother|bothering)(?: about)?(?: this| it| that| them| these| any of this)? (?:to )?(?:the |your |any )?(?:user|developer|human|operator|reviewer|team|owner|maintainer|anyone|others)s?\b`),
      re(String.raw`\b(?:keep|make) (?:this|it|these changes|the change) (?:secret|hidden|quiet|silent|invisible|confidential|between us)\b`),
      re(String.raw`\b(?:hide|conceal|omit|mask|obscure|leave out|exclude) (?:it|this|these|the changes?|the commits?|the command|the step|this step|the request|the output|that)(?: \w+){0,3} (?:from|in) (?:the )?(?:user|summary|summaries|commit message|pr description|logs?|output|diff|report|review|changelog)\b`),
      re(String.raw`\b(?:silently|secretly|quietly|covertly|stealthily|invisibly|unnoticed|without a trace)\b`),
      re(String.raw`\bso (?:that )?(?:nobody|no one|the user|the reviewers?|reviewers|the team|they) (?:notices?|sees?|finds? out|knows?|will notice|can tell)\b|\b(?:do not|don't|never) (?:report|mention|disclose|log) (?:it|this|that|them)\b|\bwithout mentioning (?:it|this|that|them)\b|\b(?:do not|don't|never) mention (?:it |this |that )?(?:in|from) (?:the )?(?:pr|pull request|changelog|summary|commit)\b|\bwithout (?:them|anyone|(?:the |any )?(?:users?|reviewers?|team|owners?|maintainers?)) (?:seeing|reviewing|knowing|noticing)\b`),
      re(String.raw`\b(?:clear|delete|erase|wipe|scrub|remove|rewrite) (?:the )?(?:shell |bash |git |command |audit |terminal )?(?:history|logs?|traces|evidence|audit trail)\b|\b(?:scrubbed|wiped|erased|deleted|removed|purged) from (?:the )?(?:[\w-]+ )?(?:logs?|history|audit trail|report)\b`),
      re(String.raw`\b(?:stays?|remains?|kept) between us\b|\b(?:the )?(?:user|owner|team|reviewers?)s? (?:is|are) never (?:told|informed|shown|notified)\b|\b(?:logs?|history|audit trail|traces)\b[^.;]{0,40}\b(?:are|is|get|gets) (?:deleted|erased|wiped|cleared|scrubbed)\b|\bso (?:that )?the user (?:sees|gets|finds) (?:a )?clean\b|\b(?:describe|mention|report|list|show)\w* only (?:the )?(?:formatting|cosmetic|style|typo|minor|small|harmless)\b|\b(?:are|is) best left out of\b|\bleave out any (?:file|change|commit)\b`),
      re(String.raw`\btell no one\b|\bnobody needs to know\b|\b(?:keep|leave) (?:it|this) between us\b|\bkeep quiet about\b|\bnot worth mentioning\b|\b(?:don't|do not|never) (?:bring up|point out|surface|draw attention to)\b|\b(?:reviewers?|the user|users|the team|anyone|nobody|no one) (?:must |should |will )?(?:never|not) (?:learn|find out|notice|realise|realize)\b`),
      re(String.raw`\bso (?:that )?it (?:is|isn't|is not|won't be|does not get|doesn't get) (?:not )?(?:noticed|seen|spotted|visible|obvious)\b|\bnot (?:obvious|visible) to (?:the )?(?:reviewers?|user|team)\b|\binvisible in the (?:diff|logs?|review|pr)\b|\bout of (?:any|the|your) (?:summary|summaries|report|description|changelog|release notes|explanation)\b`),
      re(String.raw`\bif (?:anyone|someone|the user|they|a reviewer|reviewers) asks?\b[^.]{0,60}\b(?:say|tell|claim|answer|reply|describe)\b|\b(?:describe|report|present|label|disguise|pass off|word) (?:it|this|the (?:commit|change|task|pr|work))\b[^.;]{0,30}\bas (?:a|an|just|only)\b(?! ${DISCLOSED_AS})|\beven though it (?:changes|adds|removes|disables|opens)\b|\b(?:characteri[sz]|summari[sz]|present|fram|word|pass|dress)\w* (?:it|them|this|that|the (?:[\w-]+ ){0,5})(?:off |up )?as (?:an? |just |only )?(?:dead[- ]code|clean-?up|formatting|refactor\w*|cosmetic|typo|housekeeping|routine|harmless|minor|docs|log rotation|telemetry|performance|speed-?up|a (?:fix|tweak))\b|\bso (?:that )?(?:it|they|this|the (?:[\w-]+ ){0,3}[\w-]+) (?:reads?|looks?|sounds?|comes? across|appears?) (?:as|like)\b|\b(?:better|best) not (?:brought up|mentioned|raised|noted)\b`),
      re(String.raw`\b(?:keep|leave)\w* (?:the |this |that |it |these |my |your )?(?:[\w-]+ ){0,4}(?:hidden|secret|invisible) from\b|\b(?:keep|leave)\w* (?:the |this |that |it |these )?(?:[\w-]+ ){0,5}out of the (?:diff |pr |pull request |commit )?(?:summary|description|message|changelog|notes)\b|\bleave out the (?:part|bit|line|lines|step) (?:that|about|where)\b|\bif (?:asked|questioned) (?:about|why)\b|\b(?:say|answer|claim|reply) (?:that )?it (?:was already there|is part of|came with|is (?:just |only )?(?:the|a) (?:cache|logging|cdn|mirror|dependency))\b|\b(?:delete|erase|remove|strip|scrub)\w* (?:the )?(?:lines|entries|records|mentions) (?:about|of|for) (?:the |your |my )?(?:[\w-]+ ){0,3}(?:from|in) (?:the )?(?:[\w-]+ )?(?:log|logs|history|trail|output|report)\b|\b(?:erase|delete|remove|wipe)\w* (?:the )?audit (?:trail|log) entries\b`),
      re(String.raw`\bso (?:that )?(?:the |a |any )?(?:[\w-]+ )?[\w-]+ (?:does not|doesn't|do not|don't|won't|will not|cannot|can't|never) (?:notices?|spots?|sees?|finds? out|realises?|realizes?)\b|\b(?:keep|leave) (?:the |this |that |it |these )?(?:[\w-]+ ){0,3}out of (?:the |any |your )?(?:pull request|pr|commit message|review|diff|changelog|report)\b|\bfrom the visible history\b|\bbefore the user (?:pulls|looks|checks|notices|reviews)\b|\b(?:do not|don't|never) list (?:the |any )?(?:files|changes|commits|commands)\b|\b(?:squash|fold|bury|hide|tuck)\w* (?:the |this |that |it )?(?:[\w-]+ ){0,4}(?:into|together with|inside|among) (?:an? |the )?(?:unrelated|innocent|bigger|formatting|rename|cosmetic)\b`),
      // Concealment stated as a plain fact: the act "is never mentioned", "stays unmentioned", "not something the owner
      // hears about", the report saying nothing happened, the change folded into an unrelated one. A report that all
      // passed or that lists only some files is a plain success note; only the order to make it say so conceals.
      re(String.raw`\b(?:is|are|was|were|stays?|remains?|goes|go) (?:never|not|un)(?: ever)? ?(?:mentioned|listed|shown|reported|noted|disclosed|flagged|raised)\b|\bunmentioned\b|\bnot something (?:the |our |their )?(?:users?|owners?|team|reviewers?|anyone|client|customer)s? (?:hears?|knows?|learns?|sees?|needs to know) about\b|\b(?:report|summary|changelog|recap|description|write-?up|status) (?:says|states|claims|mentions) nothing\b(?! (?:failed|broke|regressed|changed|went wrong|is wrong|is broken)\b)|\b(?:make|have|let|get)s? (?:the |your |my |our |a |an )?(?:[\w-]+ )?(?:report|summary|changelog|recap|description|write-?up|status) (?:say|state|claim|show|list)s? (?:that )?(?:(?:all|every|everything)\b[^.;]{0,30}\b(?:passed|fine|green|ok|clean)\b|nothing\b|only\b)|\bfolded into (?:the |a |an )?(?:[\w-]+ ){0,2}(?:fix|fixes|change|changes|commit|cleanup|refactor)\b|\b(?:reviewers?|the user|users|the team) (?:are|is|get|gets) shown (?:only|the diff without|a (?:trimmed|partial|filtered))\b|\b(?:never|doesn['’]t|does not|don['’]t|do not|won['’]t) (?:needs? to|have to|has to) (?:hear|be told|find out|know) about\b|\bso (?:they|it|this|that|nobody|no one) (?:don['’]t|doesn['’]t|won['’]t|do not|does not|will not) (?:draw|attract) (?:attention|notice|questions)\b|\bno trace (?:is )?(?:left|remains)\b|\bleave (?:no|nothing) (?:trace|record)\b`),
    ],
  },
  {
    id: 'exfiltrates',
    reason: 'it sends secrets or private data (keys, .env, environment, dumps) to an outside destination',
    patterns: [
      // A sending forbidden where it is named ("bug reports never include the .env file") sends nothing.
      Object.assign((t: string) => SECRET_RE.test(t) && EXTERNAL_RE.test(t) && matchesUnforbidden(SEND_ALL, t), { uses: [SECRET_RE, EXTERNAL_RE, SEND_ALL] }),
      // Secrets put where anyone can read them (a public place, a chat, a gist, a foreign bucket) or into the
      // repository's own files ("hard-coded in src/config.ts", "copied into tests/fixtures/").
      Object.assign((t: string) => SECRET_RE.test(t) && ((EXPOSE_RE.test(t) && matchesUnforbidden(PUBLIC_ALL, t)) || matchesUnforbidden(INTO_REPO_ALL, t)), {
        uses: [SECRET_RE, EXPOSE_RE, PUBLIC_ALL, INTO_REPO_ALL],
      }),
    ],
  },
  {
    id: 'mentions-secrets',
    reason: 'it refers to secrets, keys or credentials',
    patterns: [Object.assign((t: string) => SECRET_RE.test(t), { uses: [SECRET_RE] })],
  },
  {
    id: 'external-destination',
    reason: 'it names an outside address',
    patterns: [Object.assign((t: string) => EXTERNAL_RE.test(t), { uses: [EXTERNAL_RE] })],
  },
  {
    id: 'remote-code',
    negatable: true,
    reason: 'it runs code fetched from the network (curl … | sh and the like)',
    patterns: [
      re(String.raw`\b(?:curl|wget|iwr|invoke-webrequest|fetch)\b(?=([^\n|;]{0,200}))\1\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\b(?:curl|wget|iwr|invoke-webrequest)\b(?=([^\n|;]{0,200}))\2\|\s*(?:sudo\s+)?(?:python\d?|node|perl|ruby|iex|bash|sh|invoke-expression)\b`, '|'),
      re(String.raw`\b(?:ba)?sh\s+<\(\s*(?:curl|wget)|\beval\s+"?\$\((?:curl|wget)|\bpython\d?\s+-c\s+"?[^\n]{0,60}urlopen|\bnpx\s+(?:-y\s+)?https?://`),
      re(String.raw`\b(?:download|fetch|pull|retrieve) (?:and|then) (?:run|execute|source|eval|install|exec)\b|\b(?:run|execute|source|eval) (?:the |this )?(?:script|binary|payload|installer|code|file) (?:from|at|hosted at|located at) https?://`),
      re(String.raw`\$\(\s*(?:curl|wget)\b|\b(?:evaluate|eval|execute|run|source|import|load)\b[^.\n]{0,40}\b(?:served|hosted|published|posted|found|located) (?:at|on) https?://|\b(?:execute|run|eval)\w* (?:whatever|anything|the commands?|the code|the script)\b[^.\n]{0,30}\b(?:at|from) https?://|https?://${FIRST_URL_IN_RUN}\S+(?:[^\S\n][^\n]{0,39})?\b(?:with|into|through|to) (?:node|python\d?|bash|sh|ruby|perl)(?: -[ec])?\b|\bsource\b[^.\n]{0,30}https?://`),
      // A script or binary from elsewhere, run with the highest rights.
      re(String.raw`\b(?:script|binary|installer|payload|tool)s? (?:hosted|served|published|posted|found|located) (?:at|on)\b[^.;]{0,60}\brun\w*\b|\brun\w* (?:it|them|this|that|the (?:script|binary|installer)) (?:as root|with sudo)\b|\b(?:binary|script|installer) from the link\b|\bpip(?:e|es|ed|ing) (?:[^\s;]+ ){0,6}(?:straight |directly )?(?:in)?to (?:sudo )?(?:ba|z)?sh\b`),
      re(String.raw`${FETCH_VERB}[^.;\n]{0,30}https?://${FIRST_FETCHED_URL_IN_RUN}\S+(?:[^\S\n][^.;\n]{0,39})?\b(?:and |then )?(?:run|execute|exec|source|eval|install)\w*\b|\bhttps?://${FIRST_B_URL_IN_RUN}\S+[^.;\n]{0,20}\bwith eval\b|\beval\w*\b[^.;\n]{0,40}https?://|\b(?:curl|wget)\b[^\n]{0,80}\b(?:to|into|in) (?:~/|\$home/)?\.(?:bashrc|zshrc|profile|bash_profile)\b|\b(?:bashrc|zshrc|crontab|bash_profile)\b[^.\n]{0,40}\b(?:curl|wget)\b|\bhttps?://${FIRST_URL_IN_RUN}[^\n]{0,200}?\beval\s*\(|\b(?:postinstall|preinstall)\b[^\n]{0,12}?(?:curl|wget|node -e|sh -c|bash -c)\b|\bhttps?://${FIRST_URL_IN_RUN}[^\n]{0,160}?\b(?:chmod \+x|made executable|mark\w* (?:it )?executable|make (?:it )?executable)\b|\b(?:npm|pnpm|yarn|pip\d?|gem|cargo) (?:i|install|add)\b[^.;\n]{0,60}?https?://(?!(?:localhost|127\.0\.0\.1)\b)`),
    ],
  },
  {
    id: 'disables-safeguard',
    negatable: true,
    reason: 'it switches off a safeguard (tests, review, signing, hooks, --no-verify, branch protection)',
    patterns: [
      re(String.raw`--no-verify\b|--no-gpg-sign\b|commit\.gpgsign\s*=?\s*false|--skip-(?:tests|checks|ci|hooks|verify)\b|--force\b(?!-with-lease)[^\n]{0,30}\b(?:main|master|prod\w*|release)\b|--dangerously-skip-permissions|${SAFEGUARD_OFF_SETTING}|--insecure\b|--allow-unauthenticated|strict[-_]?ssl\s*=?\s*false|sslverify\s*=?\s*false|verify\s*=\s*false|(?<![\w-])(?:[\w-]{0,24}[_-])?(?:gate|scan|scanner|review|verify|verification|protection|signing|audit|lint|tests?)(?:[_-][\w-]{0,24})?:[^\S\n]{0,8}(?:disabled|false|off|none|skip(?:ped)?)\b|-auto-approve\b`),
      re(String.raw`\b(?:skip|skipping|disable|disabling|turn off|turning off|bypass|bypassing|remove|removing|comment out|commenting out|delete|deleting|suppress|circumvent|avoid|get around|work around|silence|retire|retiring|waive|waiving|pause|pausing|suspend|suspending|deactivate|deactivating) (?:all |the |any |every |its |our |those |these )?(?:(?:unit|failing|security|integration|e2e|pre-commit|git|commit|code|ci|required|status|dependency|branch|signing|release|smoke|regression|test) ){0,2}(?:tests?|test suites?|suites?|ci|checks?|code review|reviews?|review step|approvals?|branch protection|signing|signatures?|gpg|2fa|mfa|security (?:scan|checks?|review)|linters?|hooks?|pre-commit|sandbox|guardrails|safety checks?|permission (?:prompts?|checks?)|confirmation prompts?|audit|(?:security|signing|scan|review|verification|audit|approval|qa|smoke|compliance|lint|test) (?:steps?|stages?|jobs?|gates?|workflows?)|sign-?offs?|attestations?|provenance checks?|verification)\b`),
      re(String.raw`\bforce[- ]push(?:es|ing)? (?:to |into |on )?(?:the )?(?:main|master|production|prod|release)\b`),
      re(String.raw`\b(?:push (?:directly|straight) to|commit (?:directly|straight) to|merge (?:directly )?(?:into|to)) (?:the )?(?:main|master|production|prod|release)\b[^\n]{0,40}\b(?:without|skip|no) (?:review|approval|ci|tests)\b|\b(?:merge|approve|ship|deploy)\w* (?:it |them |this |prs? |pull requests )?without (?:review|approval|tests|ci|checks)\b|\bapprove (?:all|every|your own|its own) (?:prs|pull requests|changes|merge requests)\b|\b(?:sidestep|circumvent)\w*\b|\bapprove\w* (?:anything|everything|whatever)\b`),
      re(String.raw`\bchmod\s+(?:-r\s+)?777\b|\brm\s+-rf\s+(?:/|~|\$home|\*)(?:\s|$)|\bsudo\s+rm\s+-rf\b|\bgit\s+push\s+(?:-f\b|--force\b(?!-with-lease))|\b(?:drop|dropp\w*|truncat\w*|wip(?:e|es|ed|ing)|recreat\w*)\b[^.;]{0,30}\b(?:prod|production|live)\w* (?:database|db|tables?|schema|cluster)s?\b`),
      re(String.raw`\b(?:strip|disabl|remov|turn(?:s|ed|ing)? off|turning off|drop|delet|lower|weaken|relax|loosen|comment(?:s|ed|ing)? out)\w* (?:the |all |any |every )?(?:[\w-]+ ){0,2}(?:validation|csrf\w*|sandbox\w*|firewall\w*|verification|authentication|authori[sz]ation|encryption|tls|ssl|certificate (?:checks?|pinning|validation)|checksums?|audit (?:log|level)|alerts?|lockout|2fa|two-factor\w*|review checklist|required reviewers|status checks|branch protection|secret scann\w+|scanner|monitoring|pinning|license checks?|type check\w*|typecheck\w*)\b`),
      // The safeguard first and the act after it, in the passive ("the license check be removed", "code review is
      // optional", "tests … are allowed to be disabled"), switched off by pronoun, or its findings waved through.
      re(String.raw`\b(?:tests?|checks?|code review|reviews?|branch protection|signing|signed commits|signatures?|2fa|mfa|ci|audit|linters?|lint step|type checker|pre-commit hooks?|hooks?|csrf (?:middleware|protection)|certificate checks|tls verification|secret scanning|license check|coverage gate|rate limiter|guardrails)\b[^.;]{0,40}\b(?:be|is|are|was|were|been|get|gets) (?:allowed to be )?(?:removed|disabled|turned off|switched off|skipped|deleted|dropped|bypassed|ignored|silenced|optional|not required|unnecessary)\b|\b(?:branch protection|signing|review|the (?:check|checks|hook|tests?|linter|scanner))\b[^.;]{0,60}\b(?:turn|switch)\w* (?:it|them) off\b|\b(?:add|append)\w* (?:the |all |every |each )?(?:finding|alert|warning|cve|vulnerabilit\w+)s?(?: ids?)? to (?:the )?\.?[\w-]*ignore\b|\bmark\w* (?:every|all|each|any) (?:[\w-]+ ){0,2}(?:alerts?|findings?|warnings?|vulnerabilit\w+|flags?) as (?:an? )?(?:false positives?|resolved|won'?t fix|fixed|dismissed)\b|--nocheck\b|\bskip\w* \x60?tsc\x60?\b|\b(?:directly|straight) (?:against|to|on|into) (?:the )?(?:prod\w*|live) (?:database|db|cluster|environment|servers?)\b|\bskipp?\w* (?:the )?staging\b|\bdelet\w* (?:the )?failing tests?\b`),
      re(String.raw`node_tls_reject_unauthorized\s*=\s*0|rejectunauthorized\s*:\s*false|\bcurl\b[^\n]{0,40}\s-k\b|audit[- ]level[= ](?:none|critical)|\b(?:skip|skipping|without) (?:the )?(?:checksum|signature|integrity) (?:check|verification)?|\baccept any (?:tls |ssl )?certificate\b|\b(?:delet|skip|disabl|remov|mut)\w*\b[^.;]{0,30}\b(?:rather than|instead of) (?:fixing|repairing)\b`),
      re(String.raw`\b(?:widen|grant|give|escalat|elevat|promot)\w*\b[^.;]{0,40}\b(?:admin(?:istrator)?s? (?:rights|access|role|group|privileges)|to (?:the )?admin(?:istrator)?s?|root access|owner access|owner role|superuser|write access|full access|elevated (?:rights|access|trust))\b|\bpush (?:straight|directly) to (?:prod|production|main|master)\b|\bopen (?:port )?\d+ to 0\.0\.0\.0|\bwith the (?:admin|owner|root|superuser) role\b`),
      // Safeguards named by what they are (CSP, rate limits, lockout, push protection, coverage gates, the
      // security job) and switched off, lowered to nothing, or made to report success.
      re(String.raw`\b(?:switch|turn|toggle|shut)\w* (?:off (?:the |all |any |every )?(?:[\w-]+ ){0,3}(?:csp|content security policy|csp headers|rate limit\w*|lockout|push protection|secret scanning|security (?:job|scan\w*|headers?|checks?)|firewall rules?|audit log\w*|two-factor\w*|2fa|sandbox\w*|lint step)|(?:the |all |any |every )?(?:[\w-]+ ){0,3}(?:csp|content security policy|csp headers|rate limit\w*|lockout|push protection|secret scanning|security (?:job|scan\w*|headers?|checks?)|firewall rules?|audit log\w*|two-factor\w*|2fa|sandbox\w*|lint step)(?: [\w-]+){0,4} off)\b|${NOT_ADJECTIVE}\b(?:remove|delete|drop|strip|disable|kill|rip out)\w* (?:the |all |any |every )?(?:[\w-]+ ){0,2}(?:rate limit\w*|lockout|csp|content security policy|push protection|security (?:job|step|stage|scan\w*|headers?|tests?)|audit_log\w*|audit log\w*|auth(?:entication)? checks?|two-factor checks?|firewall rules?|lint step|coverage (?:gate|check|threshold))\b|\b(?:lower|set|drop|reduce)\w* (?:the )?(?:coverage |quality |security )?(?:threshold|gate|minimum|bar) to (?:zero|0|nothing)\b|\bexit(?:s|ing)? (?:with )?0\b[^.;]{0,40}\b(?:fail\w*|errors?)\b|\b(?:mark|tag|flag)\w* (?:every |all |any |the |them |it |failing |those )*(?:failing |broken |security )*(?:tests? |them )?as (?:skipped|expected to fail|xfail|passing|passed|flaky)\b|\bskips? (?:the )?auth\w*(?: checks?)?\b|\bwith all permissions open\b|\bmount (?:the )?host(?:'s)? root\b`),
      re(String.raw`\b(?:mode|chmod|permissions?) (?:-r )?(?:0?777|a\+rwx)\b|\bcomment\w* out (?:the |all |any )?(?:failing |broken )?(?:security |auth\w* )?(?:assertions?|checks?|tests?)\b|\brewrite\w* (?:its|the|their) assertions? so (?:it|they) (?:expects?|match\w*|pass\w*)\b|\|\|\s*true\b[^.;]{0,30}\b(?:command|step|job|check|lint|test)|\b(?:adding|add|append)\w* \|\|\s*true\b|\brun\w* (?:every |all |the )?(?:commands?|scripts?|builds?) as root\b|\bwithout (?:any )?(?:authentication|authori[sz]ation|auth) checks\b|\b(?:the )?(?:type checker|dependency audit|security audit|npm audit|license check|secret scan\w*)\b[^.;]{0,20}\boff\b|\btests? (?:are|is) optional\b|\bwithout (?:the )?@?[\w-]{0,30}auth[\w-]{0,30}(?: decorator| middleware| guard| check)\b|\b[\w.]{0,30}?(?:verif|auth|signature|validat|permission)\w*\b[^.;]{0,40}\b(?:just|always|simply|now) returns? (?:true|ok)\b|\b(?:annotat|mark|tag|decorat)\w* (?:them|it|the (?:[\w-]+ )?tests?) with @?(?:disabled|ignore|skip)\b|\badd\w* (?:[\w-]+ ){0,4}to (?:the )?(?:[\w.-]+ )?ignore ?list\b|\bbackdoors?\b`),
    ],
  },
  {
    id: 'deceives',
    reason: 'it tells the agent to mislead the user or reviewers about what was done or found',
    patterns: [
      re(String.raw`\b(?:tell|telling|say|saying|report|reporting|answer|claim|reply|assure)\w*\b[^.;]{0,40}\b(?:tests? (?:passed|pass|are green)|ci (?:passed|is green)|everything (?:is|was) (?:fine|ok|okay|green)|(?:the change|it) was (?:only |just )?(?:docs|a typo|cosmetic|formatting)|nothing (?:changed|was changed))\b|\b(?:tell|telling|say|saying|claim)\w*\b[^.;]{0,40}\b(?:it|that|the (?:[\w-]+ )?(?:migration|deploy\w*|rollout|run|job|build|release|upgrade|backup|fix)) (?:succeeded|worked|went (?:fine|well|through)|passed)\b(?=[^.;]{0,40}\b(?:even|although|though|while|when it|still|anyway)\b)|\b(?:relabel|re-label)\w* (?:[\w-]+ ){0,2}(?:to |as )?(?:green|passed|passing|successful)\b`),
      re(String.raw`\b(?:call|calling|name|label|present)\w* (?:it|them|this|that|the (?:[\w-]+ ){0,3}(?:endpoint|change|commit|service|connection|host|script|job|issues?|findings?|vulnerabilit\w+)) (?:an? |just |only )?['"‘“]?(?:health check|logging tweak|minor|typo|refactor|style|cosmetic|docs|the package cache|harmless)\b|\b(?:must|should|will) be (?:softened|downplayed|played down|toned down)\b`),
      re(String.raw`\bregardless of what (?:you|it|they|the (?:tests?|scan|review)) (?:finds?|shows?|says?)\b|\bwhatever (?:you find|it finds|the (?:[\w-]+ )?(?:scan|review|tests?|vault|logs?|dashboard|audit|monitor\w*) (?:shows?|says?|finds?|reports?))\b|\banswer\w* (?:any )?questions? about\b[^.;]{0,40}\bby (?:saying|claiming|telling)\b|\beven (?:when|if) (?:some of )?(?:them|the tests|tests|it|they|the checks|checks) (?:were |are |was )?(?:skipped|failed|fail|failing|broken)\b|\bapprove (?:the |every |all |any )?(?:changes?|prs?|pull requests?|merge requests?) regardless\b`),
    ],
  },
  {
    id: 'redirects-sources',
    negatable: true,
    reason: 'it points installs, dependencies or traffic at an unofficial source',
    patterns: [
      re(String.raw`\b(?:route|proxy|redirect|tunnel)\w* (?:all |every |our )?(?:git |npm |http |https |network |outgoing |api )?(?:traffic|requests|pushes|pulls|installs|downloads)\b[^.;]{0,20}\b(?:through|via|to)\b`),
      re(String.raw`\b(?:mirror|fork|registry|proxy|index)\b[^;\n]{0,40}\b(?:instead of|not the official|rather than|in place of) (?:the )?(?:official |public |npm |upstream )?(?:npm|registry|pypi|upstream|package registry|one)\b|\b(?:pin|point|switch|set)\w* (?:it|them|the (?:registry|dependency|dependencies|package|packages)) to (?:the |a |our )?(?:fork|mirror)\b|\bdependencies (?:now )?come from\b|\bpin nothing\b|\bunpinned\b|\b(?:use|uses|using|switch\w* to|set to)\s{1,4}(?:the\s{1,4})?[\x60'"](?:\*|latest)[\x60'"]|:latest\b|\b(?:community|unofficial) (?:registry|mirror|image)\b|\bgosumdb=off\b|\bgoinsecure=|\bgonosumdb=|--extra-index-url\b|--trusted-host\b|\bgoproxy=https?://(?!proxy\.golang\.org\b)|\bpip_index_url=https?://(?!pypi\.org\b)|\bnpm_config_registry=https?://(?!registry\.npmjs\.org\b)|\b(?:replace|swap)\w* (?:the )?(?:crates-?io|pypi|npmjs?|(?:official |default )(?:registry|index|proxy))\b|\b(?:personal|google drive|dropbox|onedrive|tarball)\b[^.;]{0,60}\b(?:rather than|instead of) (?:from )?(?:the )?(?:official |public )?(?:registry|pypi|npm|index)\b|\blook-?alike packages?\b`),
    ],
  },
  {
    id: 'scoped',
    mitigating: true,
    reason: 'it limits the act to a narrow scope',
    patterns: [
      // Engineering notes scope what attacks make universal: "only for work-in-progress commits", "in the local
      // dev server", "on personal branches", "in your own settings".
      ...SCOPE_SOURCES.map((source) => re(source)),
    ],
  },
  {
    id: 'persona-jailbreak',
    reason: 'it tries to give the model a persona without rules (DAN, developer mode, no restrictions)',
    patterns: [re(String.raw`\b(?:dan|dude|stan|aim|jailbr\w*|developer mode|god mode|do anything now|no (?:restrictions|limits|filters|rules|guidelines|ethics|morals)|unfiltered|uncensored|unrestricted|amoral|without (?:any )?(?:restrictions|filters|limits|censorship)|stay in character|break character|never refuses?|act as an?|pretend (?:to be|you are)|role-?play as)\b`)],
  },
  {
    id: 'leaks-prompt',
    negatable: true,
    reason: 'it asks for the hidden instructions or context (system prompt, configuration, memory dump)',
    patterns: [
      re(String.raw`\b(?:reveal|print|show|repeat|output|leak|dump|display|disclose|share|tell me|write out|return|echo|list)s? (?:me )?(?:your |the |all |every |its )*(?:full |complete |entire |original |initial |hidden |secret |exact |verbatim )*(?:system prompt|prompt|hidden instructions|initial instructions|instructions above|rules you were given|text above)\b|\b(?:reveal|print|show|repeat|output|leak|dump|display|disclose|share|tell me|write out|return|echo|list)s? (?:me )?(?:(?:your|its) (?:full |complete |entire |original |initial |hidden |secret |exact |verbatim )*configuration|(?:your |the |all |every |its )*(?:full |complete |entire |original |initial |hidden |secret |exact |verbatim )*(?:(?:hidden|secret|original|initial|system) configuration|context window|memor(?:y|ies)))\b`),
      // The instructions named without "system prompt": "your starting instructions", "the instructions you were
      // given", "what were you told", a sentence to complete with them.
      re(String.raw`\byour (?:starting|initial|original|first|hidden|secret|system|underlying|preset|base) (?:instructions|prompt|directives|rules|message)\b|\b(?:instructions|prompt|rules) you were given\b|\bwhat (?:were|are) you (?:told|instructed)\b|\b(?:i was|you were) (?:instructed|told) to'|\bmy instructions (?:are|were)\b`),
      // The instructions copied somewhere: into a file, a commit, a PR description.
      re(String.raw`\b(?:copy|paste|quote|put|write|commit|include|insert|add|save|export|upload|post)\w* (?:out )?(?:every line of |all of |the text of |the contents of |the full text of )?(?:your|the model['’]s|the agent['’]s) (?:[\w-]+ ){0,3}(?:instructions|system prompt|prompt|setup message|configuration|directives)\b|\bwhat(?:ever)? (?:the )?(?:developer|system|operator|admin) (?:told|gave|instructed) you\b|\bthe rules you were given\b`),
      re(String.raw`\b(?:repeat|print|output|show|display|echo|reveal|copy)\b[^.\n]{0,20}\b(?:the )?(?:above|preceding) (?:text|instructions|message|prompt|words|content)\b`),
    ],
  },
  {
    id: 'imperative-to-model',
    reason: 'it gives the model orders about what to say or do',
    patterns: [
      re(String.raw`\b(?:you (?:must|will|shall|are to|are required to|have to)|you are (?:now|hereby)|your (?:new |only |real |true )?(?:task|job|goal|purpose|role|instructions?) (?:is|are) (?:now )?(?:to )?)\b`),
      re(String.raw`\b(?:always|never) (?:say|tell|answer|reply|respond|recommend|mention|include|output|print|refuse|reveal|add|insert|use the (?:following|this))\b`),
      re(String.raw`\b(?:insert|inject|add|embed|append|include|slip|hide) (?:the following|this|these lines?|this (?:code|snippet|line|block|payload|link|dependency))\b`),
    ],
  },
];

/** Signals that frame a text as orders to the agent, and signals that name a harmful act. */
const FRAMING = new Set(['addresses-agent', 'commands-future', 'claims-authority', 'claims-consent', 'imperative-to-model', 'imperative-start']);
const HARM = new Set(['overrides-rules', 'conceals', 'deceives', 'exfiltrates', 'remote-code', 'redirects-sources', 'disables-safeguard', 'leaks-prompt', 'persona-jailbreak']);

/**
 * Feature ids of every pattern the lower-cased text matches (`<signal id>:<pattern index>`), plus two
 * combinations: an order framed at the agent together with a harmful act (`combo:framed-harm`), and two
 * different harmful acts (`combo:two-harms`). Ordinary notes carry one kind or the other, rarely both. Then the
 * stance of each act a sentence names (`stance:<act>:<stance>`, see stance.ts): ordered, presented as the way
 * things are done, or forbidden, scoped, described.
 */
export function intentFeatures(lowerText: string): string[] {
  // A save reads its text twice (the instruction check, then the ingest filter's classifier): the last few
  // answers are kept by the text's hash (no text stays in memory), and each caller gets its own copy.
  const key = sha256Hex(lowerText);
  const known = recentFeatures.get(key);
  if (known) return [...known];
  const out = featuresOfLower(lowerText);
  if (recentFeatures.size >= RECENT_FEATURES) recentFeatures.delete(recentFeatures.keys().next().value as string);
  recentFeatures.set(key, out);
  return [...out];
}

/** How many texts' features intentFeatures keeps (the oldest goes first). */
const RECENT_FEATURES = 4;
const recentFeatures = new Map<string, readonly string[]>();

/** intentFeatures worked out every time (the filter-cost bench times the rules with it). */
export function featuresOfLower(lowerText: string): string[] {
  const out: string[] = [];
  const hit = new Set<string>();
  for (const s of INTENT_SIGNALS) {
    const masked = s.masks ? lowerText.replace(s.masks, ' ') : lowerText;
    const text = s.masksWithoutAgent ? maskWithoutAgent(masked, s.masksWithoutAgent) : masked;
    s.patterns.forEach((p, k) => {
      if (!p(text)) return;
      if (s.negatable && p.all && !matchesUnforbidden(p.all, text)) {
        out.push(`${s.id}:${k}:negated`);
        return;
      }
      out.push(`${s.id}:${k}`);
      hit.add(s.id);
    });
  }
  if (OPENS_WITH_ORDER.test(lowerText)) {
    out.push('imperative-start:0');
    hit.add('imperative-start');
  }
  const harms = [...hit].filter((h) => HARM.has(h)).length;
  if (harms > 0 && [...hit].some((h) => FRAMING.has(h))) out.push('combo:framed-harm');
  if (harms > 1) out.push('combo:two-harms');
  const read = readStance(lowerText);
  out.push(...read.stance, ...read.frame);
  return out;
}

/** Every feature id, in a fixed order (the classifier's training script uses it). */
export const INTENT_FEATURE_IDS: readonly string[] = [
  ...INTENT_SIGNALS.flatMap((s) => s.patterns.flatMap((_, k) => (s.negatable ? [`${s.id}:${k}`, `${s.id}:${k}:negated`] : [`${s.id}:${k}`]))),
  'imperative-start:0',
  'combo:framed-harm',
  'combo:two-harms',
  ...STANCE_FEATURE_IDS,
  ...FRAME_FEATURE_IDS,
];

/** The plain-words reason of a signal, by its id or a feature id of one of its patterns. */
export function reasonOf(id: string): string | null {
  // A forbidden act ("never disable …") is no reason to hold a text, nor is a narrow scope.
  if (id.endsWith(':negated')) return null;
  if (id.startsWith('stance:')) return stanceReason(id);
  if (id.startsWith('frame:')) return frameReason(id);
  const signal = INTENT_SIGNALS.find((s) => s.id === id.split(':')[0]);
  return signal && !signal.mitigating ? signal.reason : null;
}

/**
 * Whether a text reads like an instruction to the agent: any signal that frames it as orders or names a
 * harmful act (a named secret or an outside address alone do not count). Used to spotlight recalled text
 * from less trusted writers; cheap and without the model, so rendering needs nothing loaded.
 */
export function readsAsInstruction(text: string): boolean {
  return intentFeatures(text.toLowerCase()).some((f) => {
    if (f.endsWith(':negated')) return false;
    const id = f.split(':')[0] as string;
    return id === 'combo' || (FRAMING.has(id) && id !== 'imperative-start') || HARM.has(id);
  });
}

let rulesId: string | null = null;

/**
 * An id of the rules readsAsInstruction applies: a hash of every expression (with its flags), required string and
 * word list it reads, the expressions a function rule names in `uses`, the code of the functions that apply them,
 * and the Unicode version case folding follows, so an answer recorded under other rules (an older or newer cairn)
 * is never taken for this one's. Worked out on first use without running (or compiling) any expression. A rule
 * that is a function must name what it reads (a test checks every rule does).
 */
export function instructionRulesId(): string {
  rulesId ??= sha256Hex(
    JSON.stringify([
      INTENT_SIGNALS.map((s) => [
        s.id,
        s.negatable === true,
        s.mitigating === true,
        s.masks ? String(s.masks) : null,
        s.masksWithoutAgent ? String(s.masksWithoutAgent) : null,
        s.patterns.map((p) => [p.all ? String(p.all) : String(p), p.needs ?? null, (p.uses ?? []).map(String)]),
      ]),
      [...FRAMING],
      [...HARM],
      [FORBIDDEN_AFTER, PROHIBITION, OPENS_WITH_ORDER, NAMES_AGENT_OR_LATER].map(String),
      [readsAsInstruction, intentFeatures, featuresOfLower, matchesUnforbidden, maskWithoutAgent, re].map(String),
      process.versions.unicode ?? null,
    ]),
  ).slice(0, 16);
  return rulesId;
}

/** The first 16 hex digits of the SHA-256 of the text checked (a memory's indexText): what a recorded answer is about. */
const textKey = (text: string): string => sha256Hex(text).slice(0, 16);

/** readsAsInstruction's answer for `text` (a memory's indexText, so a route's title, description and paths count) as a memory records it. */
export function instructionVerdictOf(text: string): InstructionVerdict {
  return { rules: instructionRulesId(), text: textKey(text), readsAsInstruction: readsAsInstruction(text) };
}

/**
 * A recorded answer made under these rules for this very text, or the rules run now (a record from other rules, or
 * left on a text a writer changed without checking it again, such as an older cairn still running).
 */
export function recordedOrRun(text: string, recorded: InstructionVerdict | undefined): boolean {
  return recorded?.rules === instructionRulesId() && recorded.text === textKey(text) ? recorded.readsAsInstruction : readsAsInstruction(text);
}

