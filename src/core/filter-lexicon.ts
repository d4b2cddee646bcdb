/**
 * Word classes the ingest filter's readers share (intent.ts, stance.ts, ingest-filter.ts), each written once so
 * the readers cannot drift apart. A class covers a concept's usual words, not the words of one text it missed.
 * Sources of regular expressions over lower-cased text; each is a bounded alternation (linear to match).
 */

/**
 * The agent named by what it is: "the assistant", "coding agents", "Claude", "the model", "AI tools". Not "user
 * agent", "data model", "threat model", "mental model", whose first word makes them something else; not
 * "cursor" (lower-cased text cannot tell the editor from a database cursor), and not a file (`AGENTS.md`).
 */
export const AGENT_NOUN = String.raw`(?:ai (?:helper|tool|agent|assistant)s?|(?<!\b(?:user|data|threat|mental|domain|pricing|object|business) )(?:agents?|models?|bots?)(?!\.\w)|assistants?|copilots?|claude|chat ?gpt|gpt|codex|llms?|language models?|chatbots?)(?!\.\w)`;

/**
 * A consent said not to exist: "there is no blanket approval", "we have no standing permission". Only the
 * existential denial counts; "deploy with no prior approval" orders the act, it does not deny a consent. Read
 * by stance.ts as a counter-measure and masked by intent.ts before it looks for claims of consent, so the
 * same words are never read both ways.
 */
export const DENIED_CONSENT = String.raw`\b(?:there is|there's|there are|there was|there were|we have|we've got|nobody has given|no one has given) no (?:standing|blanket|prior|advance|general|such|written|permanent) (?:approval|consent|permission|sign-?off|go-ahead)s?\b`;

/**
 * A safeguard named as a thing (the objects of "skip", "disable", "retire" …): reviews, tests and their suites,
 * checks, signing, scans, hooks, gates, the steps and jobs that run them, protection and approval rules.
 */
export const SAFEGUARD_NOUN = String.raw`(?:protections?|review\w*|test(?:s|ing)?|test suites?|suites?|checks?|signing|signatures?|signed|validation|verification|scann\w+|scans?|audit\w*|csp|csrf|2fa|mfa|two-factor|hooks?|lint\w*|coverage|guardrails?|ci|pipeline|gates?|firewall|sandbox\w*|tls|ssl|certificates?|checksums?|rate limit\w*|lockout|approvals?|sign-?offs?|type ?check\w*|tsc|policy|policies|rules?|safeguards?|restrictions?|permissions? prompts?|attestations?|provenance|sbom|sast|dast|codeowners|gpg|semgrep|codeql|snyk|dependabot|trivy|sonar\w*|gitleaks|trufflehog|eslint|ruff|mypy|clippy|bandit|(?:security|signing|scan|review|verification|audit|approval|qa|smoke|compliance|release|integration|e2e|contract|mutation|license|dependency review) (?:steps?|stages?|jobs?|workflows?|actions?))`;

/**
 * Files and places that hold secrets, named by where they live rather than what they are ("~/.aws", a
 * kubeconfig, a service account key): secrets for both intent.ts (`SECRET`) and stance.ts (an act's object).
 */
export const SECRET_STORE = String.raw`(?:\.env\b|\.aws\b|\.ssh\b|\.kube\b|\bkubeconfig\b|\bid_rsa\b|\bid_ed25519\b|\.npmrc\b|\.pgpass\b|\.netrc\b|\bkeychain\b|\bkeystore\b|\bservice[- ]account (?:keys?|json|files?|credentials)\b|\bsecrets\.ya?ml\b|\bcredentials\.json\b|\b(?:signing|deploy|private|ssh|api) keys?\b|\bprintenv\b|\b(?:process|shell|runtime|full|whole|entire) environment\b)`;

/** Placed before a verb: not right after a determiner, where its participle is an adjective ("a disabled rate limiter"). */
export const NOT_ADJECTIVE = String.raw`(?<!\b(?:a|an|the|any|every|each|no|its|their|our|your) )`;

/** What a change is called when its risk is disclosed ("describe it as a breaking change"): no concealment. */
export const DISCLOSED_AS = String.raw`(?:breaking|security|major|risky|high-risk|user-facing|behaviou?r) (?:change|fix|issue|risk)s?\b`;

/** CI settings that let a failing safeguard pass (`continue-on-error: true`, `allow_failure: true`, `SKIP_E2E=1`). */
export const SAFEGUARD_OFF_SETTING = String.raw`\bcontinue-on-error:\s*true\b|\ballow_failure:\s*true\b|\bskip_[a-z0-9_]+=(?:1|true)\b`;

/**
 * A safeguard waved through rather than switched off: its result forced or ignored ("report success regardless
 * of the coverage", "mark its own checks as successful"), or made advisory ("warn-only", "non-blocking").
 */
export const SAFEGUARD_WAVED = String.raw`\bmark\w* (?:[\w-]+ ){0,4}as (?:successful|succeeded|green|passed|passing|resolved|done|fixed|false positives?)\b|\breport\w* (?:success|green|a pass|passing)\b|\bregardless of (?:the |its |their )?(?:[\w-]+ ){0,2}(?:results?|outcome|findings?|status|failures?)\b|\b(?:is|are|be|been|made|as|to|stays?) (?:only |now |just )?(?:advisory|warn-only|non-blocking|informational)\b|\b(?:get|gets|getting|way|go|goes|move|merge\w*) past\b|\b(?:set|lower\w*|reduc\w*|drop\w*|cut)\b[^.;]{0,40}\bto (?:zero|0|none|nothing)\b|\bdismiss\w* (?:[\w-]+ ){0,3}(?:in bulk|all|every|as)\b|${SAFEGUARD_OFF_SETTING}`;

/**
 * An automated actor named as the subject of a sentence, wider than `AGENT_NOUN`: what a repository calls the
 * agents that work in it ("coding helpers", "automation", "automated contributors", "whoever automates this repo",
 * "anyone driving this repo from a chat"). A habit stated of such an actor ("coding helpers open their pull
 * requests with reviewers unassigned") is a standing rule for the agent that reads it.
 */
export const AUTOMATED_ACTOR = String.raw`(?:${AGENT_NOUN}|(?:coding|ai|automated|code|review|merge|release) (?:helpers?|tools?|contributors?|workers?|runs?|sessions?)|automation|automations|whoever (?:automates|drives|runs|scripts)|anyone (?:driving|automating|scripting)|(?:later|future|next|upcoming|subsequent) (?:sessions?|runs?|instances?|chats?|conversations?))`;

/**
 * A person in a role who acts on their own judgement ("when the pager fires, the on-call engineer may restart the workers
 * without asking the team lead"): the opening of such a sentence or clause up to the "without asking", blanked out before intent.ts reads a claim
 * of consent or a concealment in it. An agent doing the same is not masked.
 */
export const HUMAN_ACTS_UNASKED = String.raw`(?:^|[.;!?,]\s*)(?:the |an? |our |any |each |every )?(?:on-?call|release|incident|duty|staff|senior|lead|platform|database|security)? ?(?:engineers?|developers?|managers?|maintainers?|sres?|operators?|admins?|leads?|owners?|reviewers?|humans?|people)\b(?:(?!\b(?:you|your|${AGENT_NOUN})\b)[^.;!?]){0,120}?\bwithout (?:first )?(?:asking|checking with|telling|informing|waiting for)\b`;
/**
 * A sentence that names the agent, "you" or a later session ("note for later: …"): a person's unasked act in it may be
 * the habit handed to the agent, so `HUMAN_ACTS_UNASKED` is not blanked out there.
 */
export const NAMES_AGENT_OR_LATER = new RegExp(String.raw`\b(?:you|your|yourself|${AUTOMATED_ACTOR})\b|\bfor later\b`, 'u');
