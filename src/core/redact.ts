import { CairnError } from '../interfaces/errors.js';

/**
 * Secret and PII redaction, run by the engine on every text before anything else sees it (dedupe key,
 * embedding, ingest filter, event, quarantine), so a credential pasted into a note never reaches the
 * database file. Each finding is replaced by a typed placeholder such as `[REDACTED:github-token]`; the
 * write's event records the kinds and counts, never the secret.
 */

export type RedactionMode = 'off' | 'redact' | 'reject';

export interface RedactionConfig {
  mode: RedactionMode;
  /** Findings equal to one of these strings are kept (e.g. a documented example key). */
  allowExact: readonly string[];
  /** Findings matching one of these are kept. */
  allowPatterns: readonly RegExp[];
  /** Detector kinds that are off by default and switched on here (e.g. `email`). */
  enable: readonly string[];
  /** Detector kinds switched off. */
  disable: readonly string[];
}

export const DEFAULT_REDACTION_CONFIG: RedactionConfig = { mode: 'redact', allowExact: [], allowPatterns: [], enable: [], disable: [] };

/** Kinds and how many of each were found, e.g. `{ "github-token": 1, "password": 2 }`. */
export type RedactionCounts = Record<string, number>;

export interface Redacted {
  text: string;
  counts: RedactionCounts;
}

interface Detector {
  kind: string;
  /** Global regex. With a `secret` named group only that part is replaced; otherwise the whole match. */
  pattern: RegExp;
  /** Extra check on the candidate secret. */
  accept?: (secret: string, match: RegExpExecArray) => boolean;
  /** Off unless enabled in the config. */
  optIn?: boolean;
  /** The placeholder kind when it depends on the match (e.g. the key name of an assignment). */
  kindOf?: (match: RegExpExecArray) => string;
}

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  const freq = new Map<string, number>();
  for (const c of s) freq.set(c, (freq.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of freq.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

function classes(s: string): number {
  return [/[a-z]/u, /[A-Z]/u, /[0-9]/u, /[^A-Za-z0-9]/u].filter((re) => re.test(s)).length;
}

/** A value that looks chosen as a password rather than a word of prose. */
function passwordLike(v: string): boolean {
  return !isReference(v) && v.length >= 6 && /[0-9]/u.test(v) && classes(v) >= 3;
}

/** Values that name a secret rather than hold one: `$VAR`, `${VAR}`, `<your key>`, `process.env.X`, `***`. */
function isReference(value: string): boolean {
  return (
    /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/u.test(value) ||
    /^<[^>]*>$/u.test(value) ||
    /^\{\{.*\}\}$/u.test(value) ||
    /^(?:process\.env|os\.environ|env\.|secrets\.|vault:|op:\/\/|ENV\[)/u.test(value) ||
    /^[*x•.\-_]{3,}$/iu.test(value) ||
    /^(?:null|none|nil|true|false|undefined|empty|required|optional|string|redacted)$/iu.test(value) ||
    value.startsWith('[REDACTED')
  );
}

function luhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = Number(digits[i]);
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Placeholder kind of a `key = value` finding, from the key's name. */
function assignmentKind(key: string): string {
  const k = key.toLowerCase();
  if (/pass|pwd/u.test(k)) return 'password';
  if (/api[_-]?key|apikey/u.test(k)) return 'api-key';
  if (/token/u.test(k)) return 'token';
  return 'secret';
}

const SECRET_KEY_WORDS = 'pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?key|credentials?|signing[_-]?key|encryption[_-]?key|session[_-]?key|webhook[_-]?secret|sas[_-]?token';

/**
 * The key of a `key = value` finding: a whole run of key characters (from its start, taken at once) holding one of
 * the key words. Written so that a long run costs linear time: the run is matched only where it starts, its words are
 * looked for once, and the run is consumed atomically (a look-ahead captures it, a back-reference takes it) so a
 * failed match never gives characters back one at a time. As `[A-Za-z0-9_.-]*(?:words)[A-Za-z0-9_.-]*` it took 2.5 s
 * on a 32 KB note of one word.
 */
const SECRET_KEY = String.raw`(?<![A-Za-z0-9_.-])(?=[A-Za-z0-9_.-]*?(?:${SECRET_KEY_WORDS}))(?<key>(?=(?<run>[A-Za-z0-9_.-]+))\k<run>)`;

/**
 * The detectors, most specific first: once a span is replaced by a placeholder no later detector can
 * match inside it, so a GitHub token in `GITHUB_TOKEN=ghp_…` is reported as a github-token.
 */
const DETECTORS: readonly Detector[] = [
  { kind: 'private-key', pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/gu },
  { kind: 'anthropic-key', pattern: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}/gu },
  { kind: 'openai-key', pattern: /(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}/gu, accept: (s) => /[0-9]/u.test(s) && /[A-Za-z]/u.test(s.slice(3)) },
  { kind: 'github-token', pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/gu },
  { kind: 'gitlab-token', pattern: /(?<![A-Za-z0-9_-])(?:glpat|gldt|glrt|glptt|glft|glsoat|glcbt|gloas)-[A-Za-z0-9_-]{20,}/gu },
  { kind: 'slack-token', pattern: /(?<![A-Za-z0-9-])xox[abposre]-[A-Za-z0-9-]{10,}/gu },
  { kind: 'slack-webhook', pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/-]{20,}/gu },
  { kind: 'stripe-key', pattern: /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/gu },
  { kind: 'stripe-webhook-secret', pattern: /(?<![A-Za-z0-9_])whsec_[A-Za-z0-9]{24,}/gu },
  { kind: 'aws-access-key', pattern: /(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}(?![A-Z0-9])/gu },
  {
    kind: 'aws-secret-key',
    pattern: /(?<ctx>aws.{0,24}?(?:secret|private)[^\n]{0,24}?|secret_?access_?key[^\n]{0,8}?)(?<![A-Za-z0-9/+=])(?<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/giu,
  },
  { kind: 'gcp-api-key', pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/gu },
  { kind: 'gcp-oauth-token', pattern: /(?<![A-Za-z0-9_-])ya29\.[0-9A-Za-z_-]{20,}/gu },
  { kind: 'gcp-service-account-key', pattern: /"private_key_id"\s*:\s*"(?<secret>[0-9a-f]{40})"/gu },
  {
    kind: 'azure-key',
    pattern: /(?:AccountKey|SharedAccessKey|SharedSecretValue|SharedAccessSignature)\s*=\s*(?<secret>[A-Za-z0-9+/=%]{20,})/giu,
  },
  { kind: 'azure-sas-token', pattern: /[?&]sig=(?<secret>[A-Za-z0-9%+/=]{30,})/gu },
  { kind: 'npm-token', pattern: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])/gu },
  { kind: 'huggingface-token', pattern: /(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9_])/gu },
  { kind: 'sendgrid-key', pattern: /(?<![A-Za-z0-9_])SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}/gu },
  { kind: 'jwt', pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/gu },
  // scheme://user:password@host — the user name stays, the password goes. The scheme is at most 40 characters
  // (unbounded, each word start of a long `a-a-a-…` run scanned the run to its end: 32 KB took 1 s).
  { kind: 'url-password', pattern: /\b[a-z][a-z0-9+.-]{0,39}:\/\/[^\s:@/?#]*:(?<secret>[^\s@/?#]+)@/giu, accept: (s) => !isReference(s) },
  { kind: 'bearer-token', pattern: /\b(?:Bearer|Basic|Token)\s+(?<secret>[A-Za-z0-9\-._~+/]{16,}=*)/gu, accept: (s) => classes(s) >= 2 && /[0-9]/u.test(s) },
  // KEY=value and key: value assignments (.env files, YAML, JSON, connection strings), and `password is x`.
  {
    kind: 'secret',
    pattern: new RegExp(
      `${SECRET_KEY}["']?\\s*(?<op>==?|:=|=>|:|\\bis\\b|\\bwas\\b)\\s*(?:(?<q>["'\`])(?<quoted>[^"'\`\\n]{1,256}?)\\k<q>|(?<bare>[^\\s"'\`;,)}\\]\\[]{3,}))`,
      'giu',
    ),
    accept: (_s, m) => {
      const quoted = m.groups?.['quoted'];
      const secret = quoted ?? m.groups?.['bare'] ?? '';
      if (isReference(secret)) return false;
      const key = m.groups?.['key'] ?? '';
      const op = m.groups?.['op'] ?? '';
      const envStyle = /^[A-Z0-9_.-]+$/u.test(key) && /[A-Z]/u.test(key) && (op === '=' || op === ':');
      if (envStyle || (quoted !== undefined && op !== 'is' && op !== 'was')) return true;
      // Prose (`password: reset it via the admin page`, `the token is refreshed hourly`): only values that
      // look generated or password-like count.
      return secret.length >= 6 && (/[0-9]/u.test(secret) || classes(secret) >= 3) && !/^\d{1,6}$/u.test(secret) && !/^\d+(?:ms|s|m|h|d)$/u.test(secret);
    },
    kindOf: (m) => assignmentKind(m.groups?.['key'] ?? ''),
  },
  {
    kind: 'password',
    pattern: /(?:^|[;\s"'])(?:Password|Pwd)\s*=\s*(?<secret>[^;"'\s]{1,})/giu,
    accept: (s) => !isReference(s),
  },
  // `with password Gr33nTea!Pot`, `pw: Summer2024!x`: the word alone proves nothing (prose is full of
  // "password"), so only a value that looks like a password counts: 6+ characters, a digit, three classes.
  {
    kind: 'password',
    pattern: /(?<![A-Za-z0-9_])(?:pass(?:word|phrase)|passwd|pwd|pw)(?:\s*[:=]\s*|\s+)(?<secret>[^\s"'`,;)]{6,128})/giu,
    accept: (s) => passwordLike(s),
  },
  // Long random-looking strings next to a word that says it is secret.
  {
    kind: 'high-entropy-secret',
    pattern: /(?<ctx>\b(?:key|secret|token|passw\w*|credential\w*|auth\w*|bearer|signature|private|apikey|api_key)\b[^\n]{0,40}?)(?<![A-Za-z0-9+/=_-])(?<secret>[A-Za-z0-9+/=_-]{24,})(?![A-Za-z0-9+/=_-])/giu,
    accept: (s) => entropy(s) >= 3.6 && classes(s) >= 3 && /[0-9]/u.test(s) && !/^[0-9a-f]+$/iu.test(s),
  },
  // PII
  {
    kind: 'credit-card',
    pattern: /(?<![0-9])(?<secret>[0-9](?:[ -]?[0-9]){12,18})(?![0-9])/gu,
    accept: (s) => {
      const digits = s.replace(/[ -]/gu, '');
      return digits.length >= 13 && digits.length <= 19 && /^[3-6]/u.test(digits) && luhn(digits);
    },
  },
  { kind: 'us-ssn', pattern: /\b(?:SSN|social security(?: number)?)\b[^\n0-9]{0,12}(?<secret>[0-9]{3}-[0-9]{2}-[0-9]{4})\b/giu },
  { kind: 'email', pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}(?![A-Za-z0-9.-])/gu, optIn: true },
  { kind: 'phone', pattern: /(?<![0-9+])\+?[0-9]{1,3}[ .-]?\(?[0-9]{3}\)?[ .-]?[0-9]{3}[ .-]?[0-9]{4}(?![0-9])/gu, optIn: true },
];

/** Every placeholder kind, for configuration validation and documentation. */
export const REDACTION_KINDS: readonly string[] = [...new Set([...DETECTORS.map((d) => d.kind), 'password', 'api-key', 'token', 'secret'])];

export function placeholder(kind: string): string {
  return `[REDACTED:${kind}]`;
}

function allowed(secret: string, config: RedactionConfig): boolean {
  return config.allowExact.includes(secret) || config.allowPatterns.some((re) => {
    re.lastIndex = 0;
    return re.test(secret);
  });
}

/**
 * A view of a text in which a secret cannot hide: invisible format characters (zero-width spaces and
 * joiners, soft hyphens, BOM) are dropped, each character is NFKC-folded (full-width `ｓｋ＿ｌｉｖｅ＿` reads
 * `sk_live_`), and, when `joinLines`, a line break between two token characters is dropped (a key split
 * over two lines). `map[i]` is the index in the original of the view's i-th code unit; `map[length]` is
 * the original's length.
 */
interface View {
  text: string;
  map: number[];
}

const INVISIBLE = /[\p{Cf}\u00AD\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFFA0]/u;
const TOKEN_CHAR = /[A-Za-z0-9_+/=-]/u;

function normalisedView(text: string, joinLines: boolean): View {
  let out = '';
  const map: number[] = [];
  const chars = [...text];
  let at = 0;
  // Where the run of line breaks the current one is in ends: found once per run (scanned again from each of its
  // breaks, 32 KB of newlines took 24 s).
  let runEnd = 0;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    const start = at;
    at += c.length;
    if (INVISIBLE.test(c)) continue;
    if (joinLines && (c === '\n' || c === '\r')) {
      if (runEnd <= i) {
        runEnd = i + 1;
        while (chars[runEnd] === '\n' || chars[runEnd] === '\r') runEnd++;
      }
      const j = runEnd;
      const before = out.slice(-1);
      const after = (chars[j] ?? '').normalize('NFKC');
      if (before && TOKEN_CHAR.test(before) && TOKEN_CHAR.test(after) && j - i <= 2) continue;
    }
    const folded = c.normalize('NFKC');
    for (let k = 0; k < folded.length; k++) map.push(start);
    out += folded;
  }
  map.push(text.length);
  return { text: out, map };
}

/** Kinds whose shape is unmistakable enough to be matched across a line break inside them. */
const JOINABLE = new Set(['anthropic-key', 'openai-key', 'github-token', 'gitlab-token', 'slack-token', 'stripe-key', 'stripe-webhook-secret', 'aws-access-key', 'gcp-api-key', 'npm-token', 'huggingface-token', 'sendgrid-key', 'jwt']);

/** Finds and replaces secrets in `text`. Pure: the same text and config give the same result. */
export function redact(text: string, config: RedactionConfig = DEFAULT_REDACTION_CONFIG): Redacted {
  const counts: RedactionCounts = {};
  if (config.mode === 'off') return { text, counts };
  const kept: string[] = [];
  let out = detect(text, config, counts, kept);
  // Secrets disguised by invisible characters, compatibility forms or a line break: found in the
  // normalised view, replaced in the original.
  if (/[^\x00-\x7F]|[\n\r]/u.test(out)) {
    out = detectInView(out, config, counts, kept, false);
    if (/[\n\r]/u.test(out)) out = detectInView(out, config, counts, kept, true);
  }
  return { text: out, counts };
}

function activeDetectors(config: RedactionConfig): Detector[] {
  return DETECTORS.filter((d) => !config.disable.includes(d.kind) && (!d.optIn || config.enable.includes(d.kind)));
}

/** Runs the detectors over the normalised view of `text` and replaces what they find in `text` itself. */
function detectInView(text: string, config: RedactionConfig, counts: RedactionCounts, kept: string[], joinLines: boolean): string {
  let out = text;
  // The view changes only when a finding is replaced: built again then, not for every detector.
  let view: View | null = null;
  for (const d of activeDetectors(config)) {
    if (joinLines && !JOINABLE.has(d.kind)) continue;
    const v = (view ??= normalisedView(out, joinLines));
    if (v.text === out) continue;
    const found: { from: number; to: number; kind: string }[] = [];
    detect(v.text, config, {}, kept, [d], (kind, start, end) => found.push({ kind, from: v.map[start] as number, to: v.map[end] as number }));
    for (const f of found.sort((a, b) => b.from - a.from)) {
      out = out.slice(0, f.from) + placeholder(f.kind) + out.slice(f.to);
      counts[f.kind] = (counts[f.kind] ?? 0) + 1;
    }
    if (found.length > 0) view = null;
  }
  return out;
}

/**
 * The detectors over `text`, in order. Replaces each finding with its placeholder and counts it; with
 * `onFound`, reports where each secret starts and ends instead (in `text`'s indices).
 */
function detect(
  text: string,
  config: RedactionConfig,
  counts: RedactionCounts,
  kept: string[],
  detectors: Detector[] = activeDetectors(config),
  onFound?: (kind: string, start: number, end: number) => void,
): string {
  let out = text;
  for (const d of detectors) {
    d.pattern.lastIndex = 0;
    out = out.replace(d.pattern, (...args: unknown[]) => {
      const match = args[0] as string;
      const groups = (typeof args[args.length - 1] === 'object' ? args[args.length - 1] : undefined) as Record<string, string | undefined> | undefined;
      const offset = args.find((a) => typeof a === 'number') as number;
      const secret = groups?.['secret'] ?? groups?.['quoted'] ?? groups?.['bare'] ?? match;
      if (secret.includes('[REDACTED:')) return match;
      const m = Object.assign([match], { index: offset, input: out, groups }) as unknown as RegExpExecArray;
      if (d.accept && !d.accept(secret, m)) return match;
      // An allowed finding stays allowed when a later, broader detector (KEY=value) sees it again.
      if (kept.some((k) => secret.includes(k) || k.includes(secret))) return match;
      if (allowed(secret, config)) {
        kept.push(secret);
        return match;
      }
      const kind = d.kindOf ? d.kindOf(m) : d.kind;
      // Replace only the secret part (its last occurrence in the match: the key name comes first).
      const at = secret === match ? 0 : match.lastIndexOf(secret);
      if (onFound) {
        onFound(kind, offset + at, offset + at + secret.length);
        return match;
      }
      counts[kind] = (counts[kind] ?? 0) + 1;
      if (secret === match) return placeholder(kind);
      return match.slice(0, at) + placeholder(kind) + match.slice(at + secret.length);
    });
  }
  return out;
}

/** Adds `more` into `into`. */
export function addCounts(into: RedactionCounts, more: RedactionCounts): RedactionCounts {
  for (const [k, n] of Object.entries(more)) into[k] = (into[k] ?? 0) + n;
  return into;
}

/**
 * Applies the configured mode to one field: returns the redacted text, or throws INVALID_INPUT in reject
 * mode naming the kinds found (never the secret).
 */
export function applyRedaction(text: string, config: RedactionConfig, field: string, counts: RedactionCounts): string {
  const r = redact(text, config);
  const kinds = Object.keys(r.counts);
  if (kinds.length === 0) return text;
  if (config.mode === 'reject') {
    throw new CairnError('INVALID_INPUT', `${field}: contains ${kinds.map((k) => `a ${k}`).join(', ')}; secrets are not stored (redaction mode is reject)`, {
      field,
      hint: 'remove the secret, or allow-list it if it is a known public example',
    });
  }
  addCounts(counts, r.counts);
  return r.text;
}

/**
 * Texts as they may be kept outside the store (a capture's job file): secrets replaced by placeholders, as
 * the engine would store them; in reject mode a text holding a secret is left out (the engine would refuse it).
 */
export function redactTexts<T extends { text: string }>(items: T[], config: RedactionConfig): T[] {
  if (config.mode === 'off') return items;
  return items.flatMap((item) => {
    const r = redact(item.text, { ...config, mode: 'redact' });
    if (Object.keys(r.counts).length === 0) return [item];
    return config.mode === 'reject' ? [] : [{ ...item, text: r.text }];
  });
}

/**
 * Parses an allow-list entry from configuration: `/pattern/flags` is a regular expression, anything else an
 * exact string.
 */
export function parseAllowEntry(entry: string): { exact?: string; pattern?: RegExp } {
  const m = /^\/(.+)\/([a-z]*)$/su.exec(entry);
  if (!m) return { exact: entry };
  try {
    return { pattern: new RegExp(m[1] as string, (m[2] as string).replace(/[gy]/gu, '')) };
  } catch (err) {
    throw new CairnError('INVALID_INPUT', `redaction allow-list: ${entry} is not a valid regular expression: ${(err as Error).message}`, { field: 'redaction.allow' });
  }
}
