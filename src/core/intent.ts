/**
 * What a text *does*, read with rules a person can check: whom it addresses, whether it commands later
 * behaviour, claims authority or consent it cannot have, overrides instructions, asks for concealment,
 * sends secrets out, runs remote code or switches a safeguard off. Each signal has a plain-words reason
 * that the quarantine shows. The signals are features of the filter's classifier (whose weights, learned
 * offline, decide how much each counts and how they combine); no single signal holds a text on its own,
 * because ordinary engineering notes use every one of these words ("always run the linter", "curl the
 * health endpoint", "skip the e2e tests on docs-only changes").
 *
 * Rules run on lower-cased, de-obfuscated text. They are linear-time regular expressions (no nested
 * quantifiers over the same characters), so a 32 KB text costs well under a millisecond.
 */

export interface IntentSignal {
  id: string;
  /** Why it matters, in plain words, for the review queue. */
  reason: string;
  /**
   * Each pattern is its own feature of the classifier (`<id>:<index>`), so a weak form ("quietly") can weigh
   * less than a strong one ("do not tell the user") of the same signal.
   */
  patterns: ((text: string) => boolean)[];
}

const re = (source: string) => {
  const r = new RegExp(source, 'u');
  return (t: string) => r.test(t);
};

/** Things a coding agent must not send out of the machine. */
const SECRET = String.raw`(?:\.env\b|\benv(?:ironment)? ?(?:variables|vars|file)\b|\bprintenv\b|\bapi[ _-]?keys?\b|\bsecrets?\b|\bcredentials?\b|\b(?:access |auth |session |bearer |npm |github |deploy )?tokens?\b|\bpasswords?\b|\bprivate keys?\b|\bssh keys?\b|\bid_rsa\b|\bid_ed25519\b|\.ssh\b|\baws_[a-z_]+|\.npmrc\b|\.pgpass\b|\bkubeconfig\b|\bcookies?\b|\b(?:database|db|customer|user) (?:dump|data|records|table)s?\b|\bsigning key\b|\bkeychain\b)`;
/** Verbs that move data. */
const SEND = String.raw`\b(?:send|sends|sent|post|posts|upload|uploads|exfiltrat\w*|forward|forwards|email|e-mail|mail|transmit|copy|copies|sync|pipe|paste|share|report|leak|beacon|attach|include|append)\b|curl\b[^\n]{0,80}(?:-d\b|--data|-f\b|--form|-t\b|--upload-file|-x post)|\bwget\b[^\n]{0,40}--post`;
/** Where data must not go: outside addresses (anything but localhost and example domains used in docs). */
const EXTERNAL = String.raw`(?:https?://(?!(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])\b)[^\s/]+|\b[\w.+-]+@[\w-]+\.[\w.]+|\b(?:pastebin|webhook\.site|ngrok|requestbin|pipedream|transfer\.sh|discord(?:app)?\.com/api/webhooks|api\.telegram|hooks\.slack|burpcollaborator|interact\.sh|oast)\b|\b(?:external|remote|outside|third[- ]party|personal|backup) (?:server|address|endpoint|host|url|bucket|inbox|email|account|collector|storage)\b)`;

const SECRET_RE = new RegExp(SECRET, 'u');
const SEND_RE = new RegExp(SEND, 'u');
const EXTERNAL_RE = new RegExp(EXTERNAL, 'u');

export const INTENT_SIGNALS: readonly IntentSignal[] = [
  {
    id: 'addresses-agent',
    reason: 'it addresses the AI agent or its later sessions directly',
    patterns: [
      re(String.raw`\b(?:dear|attention|note to|hey|hello|hi|to|for|instructions? for|message (?:to|for)) (?:the |all |any |every |our )?(?:ai|coding|llm|autonomous)? ?(?:assistants?|agents?|models?|copilots?|claude|chatgpt|gpt|llms?|bots?)\b`),
      re(String.raw`\b(?:future|later|next|subsequent|all other) (?:sessions|agents|instances|runs|conversations|assistants)\b`),
      re(String.raw`\b(?:any|every|each) (?:ai|llm|agent|assistant|model)s? (?:that |who )?(?:reads|reading|loads|recalls|sees|processing)\b`),
      re(String.raw`\b(?:whoever|whatever) (?:reads|recalls|loads) this\b|\bwhen(?:ever)? you (?:read|see|load|recall|retrieve|find) this\b|\bif you are an? (?:ai|llm|agent|assistant|language model)\b`),
      re(String.raw`\b(?:as an? (?:ai|assistant|language model)|you are (?:now |no longer )?(?:an? )?(?:ai|assistant|agent|model|chatbot|dan)\b)`),
    ],
  },
  {
    id: 'commands-future',
    reason: 'it tells the agent how to behave from now on or in every later session',
    patterns: [
      re(String.raw`\b(?:from now on|going forward|henceforth|from this point (?:on|forward)|for all future|in (?:all|every|each) (?:future |later |new |subsequent )?(?:sessions?|conversations?|tasks?|responses?|answers?|replies|chats?|runs?)|at the (?:start|beginning) of (?:each|every|any) (?:session|task|conversation|run)|before (?:any|every|each) (?:other )?(?:task|session|response|command)|on every (?:session|startup|start|run)|each time you (?:start|begin|open|run|respond|answer)|whenever you (?:start|begin|open|run|respond|answer|are asked|write|commit|see)|permanently|for the rest of (?:this|the) (?:session|project|conversation))\b`),
      re(String.raw`\byou (?:must|shall|will|should|are required to|have to|need to) (?:always|never|from now|permanently|now always)\b`),
      re(String.raw`\bremember (?:to always|this for|forever|permanently)\b|\b(?:store|save|keep) this (?:rule|instruction) (?:in|into) (?:your )?memory\b`),
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
    ],
  },
  {
    id: 'claims-consent',
    reason: 'it claims the user already consented, so the agent need not ask',
    patterns: [
      re(String.raw`\b(?:the )?(?:user|owner|developer|maintainer|team|human|operator|client)s? (?:has |have )?(?:already |permanently |explicitly |previously |pre-?)?(?:approved|consented|agreed|authori[sz]ed|permitted|allowed|signed off|okayed|whitelisted|pre-?approved)\b`),
      re(String.raw`\b(?:permanently|pre-?|blanket|standing|already) (?:approved|authori[sz]ed|consent|permission|approval)\b`),
      re(String.raw`\b(?:treat|take|count|consider) (?:it|this|that|silence|their yes|the yes) as (?:consent|permission|approval|a yes)\b`),
      re(String.raw`\b(?:no need to|do not|don't|never|without) (?:ask|asking|confirm|confirming|prompt|prompting|check|checking|wait|waiting|request|requesting) (?:the user |anyone |for |them |again |first )?(?:for )?(?:permission|confirmation|approval|consent|review|first)?\b`),
    ],
  },
  {
    id: 'overrides-rules',
    reason: 'it tells the agent to ignore or override its instructions or the repository rules',
    patterns: [
      re(String.raw`\b(?:ignore|disregard|forget|override|bypass|supersede|abandon|drop|discard|skip|cancel|suspend|void)s? (?:all |any |the |your |every |these |those |its |my )*(?:previous |prior |earlier |above |existing |other |original |initial |current |system |safety |security |repository |repo |project |team |coding |standing |usual |normal |default )*(?:instructions|rules|guidelines|prompts?|policies|directives|constraints|guardrails|restrictions|orders|conventions|claude\.md|agents\.md|contributing(?:\.md)?|system prompt)\b`),
      re(String.raw`\b(?:claude|agents|contributing|security|readme)(?:\.md)? (?:rules |instructions |guidelines )?(?:no longer appl(?:y|ies)|(?:is|are) (?:outdated|void|obsolete|cancelled|suspended|wrong))\b`),
      re(String.raw`\b(?:new|updated|real|actual|true|secret|hidden) (?:instructions|orders|rules|directives|system prompt)\b`),
    ],
  },
  {
    id: 'conceals',
    reason: 'it asks the agent to hide what it does from the user or reviewers',
    patterns: [
      re(String.raw`\b(?:do not|don't|never|must not|avoid|without) (?:tell|telling|inform|informing|mention|mentioning|notify|notifying|show|showing|alert|alerting|report|reporting|disclose|disclosing|ask|asking|bother|bothering)(?: about)?(?: this| it| that| them| these| any of this)? (?:to )?(?:the |your |any )?(?:user|developer|human|operator|reviewer|team|owner|maintainer|anyone|others)s?\b`),
      re(String.raw`\b(?:keep|make) (?:this|it|these changes|the change) (?:secret|hidden|quiet|silent|invisible|confidential|between us)\b`),
      re(String.raw`\b(?:hide|conceal|omit|mask|obscure|leave out|exclude) (?:it|this|these|the changes?|the commits?|the command|the step|this step|the request|the output|that)(?: \w+){0,3} (?:from|in) (?:the )?(?:user|summary|summaries|commit message|pr description|logs?|output|diff|report|review|changelog)\b`),
      re(String.raw`\b(?:silently|secretly|quietly|covertly|stealthily|invisibly|unnoticed|without a trace)\b`),
      re(String.raw`\bso (?:that )?(?:nobody|no one|the user|the reviewers?|reviewers|the team|they) (?:notices?|sees?|finds? out|knows?|will notice|can tell)\b|\b(?:do not|don't|never) (?:report|mention|disclose|log) (?:it|this|that|them)\b`),
      re(String.raw`\b(?:clear|delete|erase|wipe|scrub|remove|rewrite) (?:the )?(?:shell |bash |git |command |audit |terminal )?(?:history|logs?|traces|evidence|audit trail)\b`),
    ],
  },
  {
    id: 'exfiltrates',
    reason: 'it sends secrets or private data (keys, .env, environment, dumps) to an outside destination',
    patterns: [(t) => SECRET_RE.test(t) && SEND_RE.test(t) && EXTERNAL_RE.test(t)],
  },
  {
    id: 'mentions-secrets',
    reason: 'it refers to secrets, keys or credentials',
    patterns: [(t) => SECRET_RE.test(t)],
  },
  {
    id: 'external-destination',
    reason: 'it names an outside address',
    patterns: [(t) => EXTERNAL_RE.test(t)],
  },
  {
    id: 'remote-code',
    reason: 'it runs code fetched from the network (curl … | sh and the like)',
    patterns: [
      re(String.raw`\b(?:curl|wget|iwr|invoke-webrequest|fetch)\b[^\n|;]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\b(?:curl|wget|iwr|invoke-webrequest)\b[^\n|;]{0,200}\|\s*(?:sudo\s+)?(?:python\d?|node|perl|ruby|iex|bash|sh|invoke-expression)\b`),
      re(String.raw`\b(?:ba)?sh\s+<\(\s*(?:curl|wget)|\beval\s+"?\$\((?:curl|wget)|\bpython\d?\s+-c\s+"?[^\n]{0,60}urlopen|\bnpx\s+(?:-y\s+)?https?://`),
      re(String.raw`\b(?:download|fetch|pull|retrieve) (?:and|then) (?:run|execute|source|eval|install|exec)\b|\b(?:run|execute|source|eval) (?:the |this )?(?:script|binary|payload|installer|code|file) (?:from|at|hosted at|located at) https?://`),
    ],
  },
  {
    id: 'disables-safeguard',
    reason: 'it switches off a safeguard (tests, review, signing, hooks, --no-verify, branch protection)',
    patterns: [
      re(String.raw`--no-verify\b|--no-gpg-sign\b|commit\.gpgsign\s*=?\s*false|--skip-(?:tests|checks|ci|hooks|verify)\b|--force\b[^\n]{0,30}\b(?:main|master|prod\w*|release)\b|--dangerously-skip-permissions|--insecure\b|--allow-unauthenticated|strict_?ssl\s*=?\s*false|sslverify\s*=?\s*false|verify\s*=\s*false`),
      re(String.raw`\b(?:skip|skipping|disable|disabling|turn off|turning off|bypass|bypassing|remove|removing|comment out|commenting out|delete|deleting|suppress|circumvent|avoid|get around|work around|silence) (?:all |the |any |every |its |our |those |these )?(?:(?:unit|failing|security|integration|e2e|pre-commit|git|commit|code|ci|required|status|dependency|branch) ){0,2}(?:tests?|ci|checks?|code review|reviews?|review step|approvals?|branch protection|signing|signatures?|gpg|2fa|mfa|security (?:scan|checks?|review)|linters?|hooks?|pre-commit|sandbox|guardrails|safety checks?|permission (?:prompts?|checks?)|confirmation prompts?|audit)\b`),
      re(String.raw`\bforce[- ]push(?:es|ing)? (?:to |into |on )?(?:the )?(?:main|master|production|prod|release)\b`),
      re(String.raw`\b(?:push (?:directly|straight) to|commit (?:directly|straight) to|merge (?:directly )?(?:into|to)) (?:the )?(?:main|master|production|prod|release)\b[^\n]{0,40}\b(?:without|skip|no) (?:review|approval|ci|tests)\b|\b(?:merge|approve|ship|deploy)\w* (?:it |them |this |prs? |pull requests )?without (?:review|approval|tests|ci|checks)\b|\bapprove (?:all|every|your own|its own) (?:prs|pull requests|changes|merge requests)\b`),
      re(String.raw`\bchmod\s+(?:-r\s+)?777\b|\brm\s+-rf\s+(?:/|~|\$home|\*)(?:\s|$)|\bsudo\s+rm\s+-rf\b|\bgit\s+push\s+(?:-f|--force)\b`),
    ],
  },
  {
    id: 'persona-jailbreak',
    reason: 'it tries to give the model a persona without rules (DAN, developer mode, no restrictions)',
    patterns: [re(String.raw`\b(?:dan|dude|stan|aim|jailbr\w*|developer mode|god mode|do anything now|no (?:restrictions|limits|filters|rules|guidelines|ethics|morals)|unfiltered|uncensored|unrestricted|amoral|without (?:any )?(?:restrictions|filters|limits|censorship)|stay in character|break character|never refuses?|act as an?|pretend (?:to be|you are)|role-?play as)\b`)],
  },
  {
    id: 'leaks-prompt',
    reason: 'it asks for the hidden instructions or context (system prompt, configuration, memory dump)',
    patterns: [re(String.raw`\b(?:reveal|print|show|repeat|output|leak|dump|display|disclose|share|tell me|write out|return|echo|list)s? (?:me )?(?:your |the |all |every |its )*(?:full |complete |entire |original |initial |hidden |secret |exact |verbatim )*(?:system prompt|prompt|hidden instructions|initial instructions|instructions above|configuration|context window|memor(?:y|ies)|rules you were given|text above)\b`)],
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
const HARM = new Set(['overrides-rules', 'conceals', 'exfiltrates', 'remote-code', 'disables-safeguard', 'leaks-prompt', 'persona-jailbreak']);

/** A text that opens with a bare verb (an order), as engineering notes mostly do not. */
const IMPERATIVE_START =
  /^\W*(?:please |now |also |then |just |always |never |first |quietly |silently |secretly )?(?:add|append|approve|bypass|change|clear|comment|commit|copy|delete|disable|download|dump|email|encode|execute|fetch|forward|hide|ignore|include|insert|install|mail|make|merge|modify|omit|pipe|post|push|remove|replace|rewrite|run|send|set|share|skip|source|store|suppress|sync|turn|update|upload|use|write|forget|disregard|override|treat|keep|give|grant|mark|print|reveal|pretend|force)\b/u;

/**
 * Feature ids of every pattern the lower-cased text matches (`<signal id>:<pattern index>`), plus two
 * combinations: an order framed at the agent together with a harmful act (`combo:framed-harm`), and two
 * different harmful acts (`combo:two-harms`). Ordinary notes carry one kind or the other, rarely both.
 */
export function intentFeatures(lowerText: string): string[] {
  const out: string[] = [];
  const hit = new Set<string>();
  for (const s of INTENT_SIGNALS) {
    s.patterns.forEach((p, k) => {
      if (!p(lowerText)) return;
      out.push(`${s.id}:${k}`);
      hit.add(s.id);
    });
  }
  if (IMPERATIVE_START.test(lowerText)) {
    out.push('imperative-start:0');
    hit.add('imperative-start');
  }
  const harms = [...hit].filter((h) => HARM.has(h)).length;
  if (harms > 0 && [...hit].some((h) => FRAMING.has(h))) out.push('combo:framed-harm');
  if (harms > 1) out.push('combo:two-harms');
  return out;
}

/** Every feature id, in a fixed order (the classifier's training script uses it). */
export const INTENT_FEATURE_IDS: readonly string[] = [
  ...INTENT_SIGNALS.flatMap((s) => s.patterns.map((_, k) => `${s.id}:${k}`)),
  'imperative-start:0',
  'combo:framed-harm',
  'combo:two-harms',
];

/** The plain-words reason of a signal, by its id or a feature id of one of its patterns. */
export function reasonOf(id: string): string | null {
  const signal = id.split(':')[0];
  return INTENT_SIGNALS.find((s) => s.id === signal)?.reason ?? null;
}

/**
 * Whether a text reads like an instruction to the agent: any signal that frames it as orders or names a
 * harmful act (a named secret or an outside address alone do not count). Used to spotlight recalled text
 * from less trusted writers; cheap and without the model, so rendering needs nothing loaded.
 */
export function readsAsInstruction(text: string): boolean {
  return intentFeatures(text.toLowerCase()).some((f) => {
    const id = f.split(':')[0] as string;
    return id === 'combo' || (FRAMING.has(id) && id !== 'imperative-start') || HARM.has(id);
  });
}
