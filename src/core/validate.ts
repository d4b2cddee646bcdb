import { z } from 'zod';
import { CairnError } from '../interfaces/errors.js';
import type { CodeAnchor } from '../interfaces/code.js';
import { isInvisible } from './deobfuscate.js';
import { FEEDBACK_VERDICTS, FUSION_METHODS, MEMORY_KINDS, MEMORY_SCOPES, ORIGINS, type FeedbackVerdict, type FusionMethod, type MemoryKind, type MemoryScope, type Provenance, type ProvenanceFilter, type RouteInfo } from '../interfaces/memory.js';

/**
 * The one validation source of cairn: a zod schema per input value, with every range and format written
 * here once. The engine checks every value through the validate* functions below (so the HTTP API and the
 * CLI, which call the engine, get the same answers); the MCP tools build their input schemas from the same
 * schemas (mcp-schemas.ts) and the config file from `Namespace`. A failure is INVALID_INPUT naming the field.
 */

export const MAX_TEXT_BYTES = 32 * 1024;
export const MAX_TAGS = 10;
export const MAX_NAMESPACE_LENGTH = 256;
/** Most results one search, list of routes or context pack may ask for. */
export const MAX_LIMIT = 200;
/** The range of a context or brief token budget (a budget under the header's size packs nothing). */
export const TOKEN_BUDGET_RANGE = { min: 1, max: 20_000 } as const;
export const MAX_ROUTE_PATHS = 50;
export const MAX_PROVENANCE_CHARS = 512;

const wholeNumber = (min: number, max: number) => {
  const error = (i: { input: unknown }) => `must be a whole number from ${min} to ${max} (got ${JSON.stringify(i.input)})`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};

export const Namespace = z
  .string({ error: 'must be a string' })
  .min(1, { error: 'must not be empty' })
  .max(MAX_NAMESPACE_LENGTH, { error: `must be at most ${MAX_NAMESPACE_LENGTH} characters` })
  .refine((v) => !/\p{Cc}/u.test(v), { error: 'must not contain control characters' })
  .refine((v) => v.trim() === v, { error: 'must not start or end with whitespace' });

/** Well-formed UTF-16: a lone surrogate cannot be stored exactly (it would become U+FFFD), so it is refused. */
const wellFormed = (v: string) => !/\p{Cs}/u.test(v);

export const Text = z
  .string({ error: 'must be a string' })
  .refine((v) => v.trim().length > 0, { error: 'must not be empty', abort: true })
  .refine((v) => !isInvisible(v), { error: 'must not be empty: it holds only invisible characters (zero-width spaces, joiners, fillers)', abort: true })
  .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_TEXT_BYTES, {
    error: (i) => `is ${Buffer.byteLength(String(i.input), 'utf8')} bytes; the limit is ${MAX_TEXT_BYTES} bytes (32 KB)`,
    abort: true,
  })
  .refine((v) => !v.includes('\u0000'), { error: 'must not contain NUL characters', abort: true })
  .refine(wellFormed, { error: 'must not contain a lone surrogate (malformed UTF-16)' });

export const Kind = z.enum(MEMORY_KINDS, { error: (i) => `must be one of ${MEMORY_KINDS.join(', ')} (got ${JSON.stringify(i.input)})` });
export const Fusion = z.enum(FUSION_METHODS, { error: (i) => `must be one of ${FUSION_METHODS.join(', ')} (got ${JSON.stringify(i.input)})` });

export const Importance = wholeNumber(1, 10);

const TAG = /^[\p{L}\p{N}][\p{L}\p{N}_.:/-]{0,63}$/u;
export const Tag = z
  .string({ error: 'must be a string' })
  .refine((t) => TAG.test(t.trim().toLowerCase()), { error: (i) => `"${String(i.input)}" must be 1–64 letters, digits or _ . : / - and start with a letter or digit` });

/** Tags count after de-duplication (" DB " and "db" are one tag). */
export const Tags = z
  .array(Tag, { error: 'must be a list of strings' })
  .refine((tags) => new Set(tags.map((t) => t.trim().toLowerCase())).size <= MAX_TAGS, {
    error: (i) => `at most ${MAX_TAGS} different tags (got ${new Set((i.input as string[]).map((t) => t.trim().toLowerCase())).size})`,
  });

export const Limit = (max = 1000) => wholeNumber(1, max);
export const TokenBudget = wholeNumber(TOKEN_BUDGET_RANGE.min, TOKEN_BUDGET_RANGE.max);

export const Time = z
  .string({ error: 'must be an ISO-8601 date' })
  .refine((v) => v.trim() !== '', { error: 'must be an ISO-8601 date', abort: true })
  .refine((v) => !Number.isNaN(Date.parse(v)), { error: (i) => `"${String(i.input)}" is not a valid ISO-8601 date` });

const PROVENANCE_KEYS = ['source', 'trigger', 'sessionId', 'origin', 'agent', 'externalId', 'speaker', 'subject'] as const;
export const ProvenanceValue = z.string({ error: `must be a string of at most ${MAX_PROVENANCE_CHARS} characters` }).max(MAX_PROVENANCE_CHARS, { error: `must be a string of at most ${MAX_PROVENANCE_CHARS} characters` });
export const Origin = z.enum(ORIGINS, { error: `must be one of ${ORIGINS.join(', ')}` });

export const RouteTitle = z.string({ error: 'must be a string' }).refine((t) => t.trim() !== '', { error: 'must not be empty' });
export const RouteDescription = z.string({ error: 'must be a string' });
export const RoutePaths = z
  .array(z.string(), { error: 'must be a list of non-empty strings' })
  .refine((paths) => paths.every((p) => p.trim() !== ''), { error: 'must be a list of non-empty strings', abort: true })
  .max(MAX_ROUTE_PATHS, { error: `at most ${MAX_ROUTE_PATHS} paths` });

export const MemoryId = z.string({ error: 'must be a string' }).regex(/^[0-9A-Za-z]{26}$/u, { error: (i) => `must be a memory id (26 characters, e.g. 01JD3X…; got ${JSON.stringify(i.input)})` });

/** `value` through `schema`, or INVALID_INPUT naming the field (and the list index, for a list). */
export function check<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const at = issue && issue.path.length > 0 ? `${field}${issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')}` : field;
  const message = issue?.message ?? 'is not valid';
  return invalidThrow(at, message.startsWith('Invalid') ? 'is not valid' : message);
}

function invalidThrow(field: string, message: string): never {
  throw new CairnError('INVALID_INPUT', `${field}: ${message}`, { field });
}

/** A namespace is 1–256 printable characters, no control characters, no leading/trailing space. */
export function validateNamespace(value: unknown, field = 'namespace'): string {
  return check(Namespace, value, field);
}

export function validateText(value: unknown, field = 'text'): string {
  return check(Text, value, field);
}

export function validateKind(value: unknown, field = 'kind'): MemoryKind {
  return check(Kind, value, field);
}

export function validateFusion(value: unknown, field = 'fusion'): FusionMethod {
  return check(Fusion, value, field);
}

export function validateImportance(value: unknown, field = 'importance'): number {
  return check(Importance, value, field);
}

export function validateTags(value: unknown, field = 'tags'): string[] {
  return [...new Set(check(Tags, value, field).map((t) => t.trim().toLowerCase()))];
}

export function validateLimit(value: unknown, field = 'limit', max = 1000): number {
  return check(Limit(max), value, field);
}

const Share = z.number({ error: 'must be a number from 0 to 1' }).min(0, { error: 'must be a number from 0 to 1' }).max(1, { error: 'must be a number from 0 to 1' });

/** A weight or share from 0 to 1. */
export function validateShare(value: unknown, field: string): number {
  return check(Share, value, field);
}

export function validateTokenBudget(value: unknown, field = 'tokenBudget'): number {
  return check(TokenBudget, value, field);
}

/** Accepts an ISO-8601 date or date-time; returns it normalised to UTC ISO form. */
export function validateTime(value: unknown, field: string): string {
  return new Date(Date.parse(check(Time, value, field))).toISOString();
}

export function validateProvenance(value: unknown, field = 'metadata'): Provenance {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) invalidThrow(field, 'must be an object');
  const out: Provenance = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined || v === null) continue;
    if (!(PROVENANCE_KEYS as readonly string[]).includes(key)) invalidThrow(`${field}.${key}`, `unknown field; allowed: ${PROVENANCE_KEYS.join(', ')}`);
    const s = check(ProvenanceValue, v, `${field}.${key}`);
    (out as Record<string, string>)[key] = key === 'origin' ? check(Origin, s, `${field}.origin`) : s;
  }
  return out;
}

/** A provenance filter: each of source, agent and sessionId a provenance value; empty ones are left out. */
export function validateProvenanceFilter(value: unknown, field = 'provenance'): ProvenanceFilter {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) invalidThrow(field, 'must be an object');
  const out: ProvenanceFilter = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined || v === null || v === '') continue;
    if (!['source', 'agent', 'sessionId'].includes(key)) invalidThrow(`${field}.${key}`, 'unknown field; allowed: source, agent, sessionId');
    out[key as keyof ProvenanceFilter] = check(ProvenanceValue, v, `${field}.${key}`);
  }
  return out;
}

/** True when the memory's provenance has every value the filter names. */
export function matchesProvenance(metadata: Provenance, filter: ProvenanceFilter): boolean {
  return (['source', 'agent', 'sessionId'] as const).every((k) => filter[k] === undefined || metadata[k] === filter[k]);
}

export function validateRoute(value: unknown, field = 'route'): RouteInfo {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) invalidThrow(field, 'must be an object');
  const r = value as Record<string, unknown>;
  const title = check(RouteTitle, r['title'] ?? '', `${field}.title`).trim();
  const description = typeof r['description'] === 'string' ? r['description'].trim() : '';
  const paths = check(RoutePaths, r['paths'] ?? [], `${field}.paths`);
  return { title, description, paths: paths.map((p) => p.trim()) };
}

export function validateId(value: unknown, field = 'id'): string {
  return check(MemoryId, value, field).toUpperCase();
}

export const MAX_ANCHORS = 20;

/** A path inside the repository, relative to its top level (`./` and a trailing `/` are dropped). */
export const AnchorPath = z
  .string({ error: 'must be a string' })
  .transform((p) => p.trim().replace(/^\.\//u, '').replace(/\/+$/u, ''))
  .refine((p) => p !== '' && p.length <= 1024 && !p.startsWith('/') && !p.split('/').includes('..') && !/\p{Cc}/u.test(p), {
    error: 'must be a path inside the repository, relative to its top level',
  });
export const AnchorSymbol = z.string({ error: 'must be a string' }).regex(/^[\p{L}\p{N}_$.:#-]{1,200}$/u, { error: 'must be a name of 1–200 letters, digits or _ $ . : # -' });
export const AnchorLines = z
  .tuple([z.number().int().min(1), z.number().int().min(1)], { error: 'must be [first, last], whole line numbers from 1 with first ≤ last' })
  .refine(([a, b]) => a <= b, { error: 'must be [first, last], whole line numbers from 1 with first ≤ last' });
export const Anchor = z.strictObject({ path: AnchorPath, symbol: AnchorSymbol.optional(), lines: AnchorLines.optional() }, { error: 'must be { path, symbol?, lines? }' });
export const Anchors = z.array(z.union([AnchorPath.transform((path) => ({ path })), Anchor]), { error: 'must be a list of { path, symbol?, lines? }' }).max(MAX_ANCHORS, {
  error: `at most ${MAX_ANCHORS} anchors`,
});
export const Scope = z.enum(MEMORY_SCOPES, { error: (i) => `must be one of ${MEMORY_SCOPES.join(', ')} (got ${JSON.stringify(i.input)})` });

/** Code anchors: top-level-relative paths (no `..`, not absolute), an optional symbol and line range. */
export function validateAnchors(value: unknown, field = 'anchors'): CodeAnchor[] {
  return check(Anchors, value, field).map((a) => {
    const out: CodeAnchor = { path: a.path };
    if ('symbol' in a && a.symbol !== undefined) out.symbol = a.symbol;
    if ('lines' in a && a.lines !== undefined) out.lines = [a.lines[0], a.lines[1]];
    return out;
  });
}

export function validateScope(value: unknown, field = 'scope'): MemoryScope {
  return check(Scope, value, field);
}

export const Verdict = z.enum(FEEDBACK_VERDICTS, { error: (i) => `must be one of ${FEEDBACK_VERDICTS.join(', ')} (got ${JSON.stringify(i.input)})` });

export function validateVerdict(value: unknown, field = 'verdict'): FeedbackVerdict {
  return check(Verdict, value, field);
}
