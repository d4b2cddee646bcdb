import { CairnError } from '../interfaces/errors.js';
import type { CodeAnchor } from '../interfaces/code.js';
import { isInvisible } from './deobfuscate.js';
import { FEEDBACK_VERDICTS, FUSION_METHODS, MEMORY_KINDS, MEMORY_SCOPES, ORIGINS, type FeedbackVerdict, type FusionMethod, type MemoryKind, type MemoryScope, type Provenance, type ProvenanceFilter, type RouteInfo } from '../interfaces/memory.js';

/**
 * The one validation source of cairn: every range and format of an input value, written here once as a plain
 * check. The engine checks every value through the validate* functions below (so the HTTP API and the CLI,
 * which call the engine, get the same answers); the MCP tools wrap the same functions in their input schemas
 * (mcp-schemas.ts, which takes the ranges for JSON Schema from the constants here) and the config file checks
 * its namespace with `validateNamespace`. A failure is INVALID_INPUT naming the field.
 *
 * No schema library: zod took 65–90 ms to load, most of a cold prompt hook's budget (which validates a
 * search's limit), so only the surfaces that describe their inputs to clients (MCP) load it.
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
export const IMPORTANCE_RANGE = { min: 1, max: 10 } as const;

/** INVALID_INPUT naming the field. */
function invalid(field: string, message: string): never {
  throw new CairnError('INVALID_INPUT', `${field}: ${message}`, { field });
}

const got = (value: unknown): string => JSON.stringify(value) ?? String(value);

function wholeNumber(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) invalid(field, `must be a whole number from ${min} to ${max} (got ${got(value)})`);
  return value;
}

function oneOf<T extends string>(value: unknown, field: string, allowed: readonly T[], withGot = true): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) invalid(field, `must be one of ${allowed.join(', ')}${withGot ? ` (got ${got(value)})` : ''}`);
  return value as T;
}

function aString(value: unknown, field: string, message = 'must be a string'): string {
  if (typeof value !== 'string') invalid(field, message);
  return value;
}

/** A namespace is 1–256 printable characters, no control characters, no leading/trailing space. */
export function validateNamespace(value: unknown, field = 'namespace'): string {
  const v = aString(value, field);
  if (v.length < 1) invalid(field, 'must not be empty');
  if (v.length > MAX_NAMESPACE_LENGTH) invalid(field, `must be at most ${MAX_NAMESPACE_LENGTH} characters`);
  if (/\p{Cc}/u.test(v)) invalid(field, 'must not contain control characters');
  if (v.trim() !== v) invalid(field, 'must not start or end with whitespace');
  return v;
}

/** Non-blank, visible, at most 32 KB of UTF-8, no NUL and well-formed UTF-16 (a lone surrogate cannot be stored exactly: it would become U+FFFD). */
export function validateText(value: unknown, field = 'text'): string {
  const v = aString(value, field);
  if (v.trim().length === 0) invalid(field, 'must not be empty');
  if (isInvisible(v)) invalid(field, 'must not be empty: it holds only invisible characters (zero-width spaces, joiners, fillers)');
  const bytes = Buffer.byteLength(v, 'utf8');
  if (bytes > MAX_TEXT_BYTES) invalid(field, `is ${bytes} bytes; the limit is ${MAX_TEXT_BYTES} bytes (32 KB)`);
  if (v.includes('\u0000')) invalid(field, 'must not contain NUL characters');
  if (/\p{Cs}/u.test(v)) invalid(field, 'must not contain a lone surrogate (malformed UTF-16)');
  return v;
}

export function validateKind(value: unknown, field = 'kind'): MemoryKind {
  return oneOf(value, field, MEMORY_KINDS);
}

export function validateFusion(value: unknown, field = 'fusion'): FusionMethod {
  return oneOf(value, field, FUSION_METHODS);
}

export function validateImportance(value: unknown, field = 'importance'): number {
  return wholeNumber(value, field, IMPORTANCE_RANGE.min, IMPORTANCE_RANGE.max);
}

const TAG = /^[\p{L}\p{N}][\p{L}\p{N}_.:/-]{0,63}$/u;

/**
 * The first `max + 1` items of a list (enough to tell it is too long), holes read as `undefined`: as JSON's null is
 * refused, so is a hole (a JavaScript caller can send one).
 */
function items(value: unknown[], max = value.length): unknown[] {
  return Array.from({ length: Math.min(value.length, max + 1) }, (_, i) => value[i]);
}

/** One tag: 1–64 letters, digits or _ . : / -, starting with a letter or digit; returned trimmed and lower-cased. */
export function validateTag(value: unknown, field = 'tag'): string {
  const tag = aString(value, field).trim().toLowerCase();
  if (!TAG.test(tag)) invalid(field, `"${String(value)}" must be 1–64 letters, digits or _ . : / - and start with a letter or digit`);
  return tag;
}

/** Tags, trimmed and lower-cased, counted after de-duplication (" DB " and "db" are one tag). */
export function validateTags(value: unknown, field = 'tags'): string[] {
  if (!Array.isArray(value)) invalid(field, 'must be a list of strings');
  // Every item is read: tags count after de-duplication, so a long list of one tag is valid.
  const tags = items(value).map((t, i) => validateTag(t, `${field}[${i}]`));
  const distinct = [...new Set(tags)];
  if (distinct.length > MAX_TAGS) invalid(field, `at most ${MAX_TAGS} different tags (got ${distinct.length})`);
  return distinct;
}

export function validateLimit(value: unknown, field = 'limit', max = 1000): number {
  return wholeNumber(value, field, 1, max);
}

/** A weight or share from 0 to 1. */
export function validateShare(value: unknown, field: string): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) invalid(field, 'must be a number from 0 to 1');
  return value;
}

export function validateTokenBudget(value: unknown, field = 'tokenBudget'): number {
  return wholeNumber(value, field, TOKEN_BUDGET_RANGE.min, TOKEN_BUDGET_RANGE.max);
}

/** Accepts an ISO-8601 date or date-time; returns it normalised to UTC ISO form. */
export function validateTime(value: unknown, field: string): string {
  const v = aString(value, field, 'must be an ISO-8601 date');
  if (v.trim() === '') invalid(field, 'must be an ISO-8601 date');
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) invalid(field, `"${v}" is not a valid ISO-8601 date`);
  return new Date(ms).toISOString();
}

const PROVENANCE_KEYS = ['source', 'trigger', 'sessionId', 'origin', 'agent', 'externalId', 'speaker', 'subject'] as const;

/** One provenance value: a string of at most MAX_PROVENANCE_CHARS characters. */
export function validateProvenanceValue(value: unknown, field: string): string {
  const message = `must be a string of at most ${MAX_PROVENANCE_CHARS} characters`;
  const v = aString(value, field, message);
  if (v.length > MAX_PROVENANCE_CHARS) invalid(field, message);
  return v;
}

export function validateOrigin(value: unknown, field = 'origin'): (typeof ORIGINS)[number] {
  return oneOf(value, field, ORIGINS, false);
}

export function validateProvenance(value: unknown, field = 'metadata'): Provenance {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) invalid(field, 'must be an object');
  const out: Provenance = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined || v === null) continue;
    if (!(PROVENANCE_KEYS as readonly string[]).includes(key)) invalid(`${field}.${key}`, `unknown field; allowed: ${PROVENANCE_KEYS.join(', ')}`);
    const s = validateProvenanceValue(v, `${field}.${key}`);
    (out as Record<string, string>)[key] = key === 'origin' ? validateOrigin(s, `${field}.origin`) : s;
  }
  return out;
}

/** A provenance filter: each of source, agent and sessionId a provenance value; empty ones are left out. */
export function validateProvenanceFilter(value: unknown, field = 'provenance'): ProvenanceFilter {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) invalid(field, 'must be an object');
  const out: ProvenanceFilter = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined || v === null || v === '') continue;
    if (!['source', 'agent', 'sessionId'].includes(key)) invalid(`${field}.${key}`, 'unknown field; allowed: source, agent, sessionId');
    out[key as keyof ProvenanceFilter] = validateProvenanceValue(v, `${field}.${key}`);
  }
  return out;
}

/** True when the memory's provenance has every value the filter names. */
export function matchesProvenance(metadata: Provenance, filter: ProvenanceFilter): boolean {
  return (['source', 'agent', 'sessionId'] as const).every((k) => filter[k] === undefined || metadata[k] === filter[k]);
}

/** A route's title: a non-blank string (returned as given; validateRoute trims it). */
function validateRouteTitle(value: unknown, field = 'title'): string {
  const v = aString(value, field);
  if (v.trim() === '') invalid(field, 'must not be empty');
  return v;
}

/** A route's paths: a list of at most MAX_ROUTE_PATHS non-blank strings (returned as given; validateRoute trims them). */
export function validateRoutePaths(value: unknown, field = 'paths'): string[] {
  const message = 'must be a list of non-empty strings';
  if (!Array.isArray(value)) invalid(field, message);
  const paths = items(value, MAX_ROUTE_PATHS).map((p, i) => aString(p, `${field}[${i}]`, 'is not valid'));
  if (paths.some((p) => p.trim() === '')) invalid(field, message);
  if (paths.length > MAX_ROUTE_PATHS) invalid(field, `at most ${MAX_ROUTE_PATHS} paths`);
  return paths;
}

export function validateRoute(value: unknown, field = 'route'): RouteInfo {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) invalid(field, 'must be an object');
  const r = value as Record<string, unknown>;
  const title = validateRouteTitle(r['title'] ?? '', `${field}.title`).trim();
  const description = typeof r['description'] === 'string' ? r['description'].trim() : '';
  const paths = validateRoutePaths(r['paths'] ?? [], `${field}.paths`);
  return { title, description, paths: paths.map((p) => p.trim()) };
}

/** A memory id: 26 letters and digits, returned upper-cased. */
export function validateId(value: unknown, field = 'id'): string {
  const v = aString(value, field);
  if (!/^[0-9A-Za-z]{26}$/u.test(v)) invalid(field, `must be a memory id (26 characters, e.g. 01JD3X…; got ${got(value)})`);
  return v.toUpperCase();
}

export const MAX_ANCHORS = 20;

/** A path inside the repository, relative to its top level, returned with `./` and a trailing `/` dropped. */
export function validateAnchorPath(value: unknown, field = 'path'): string {
  const p = aString(value, field)
    .trim()
    .replace(/^\.\//u, '')
    .replace(/\/+$/u, '');
  if (p === '' || p.length > 1024 || p.startsWith('/') || p.split('/').includes('..') || /\p{Cc}/u.test(p)) invalid(field, 'must be a path inside the repository, relative to its top level');
  return p;
}

/** What an anchor's symbol may be. */
export const ANCHOR_SYMBOL = /^[\p{L}\p{N}_$.:#-]{1,200}$/u;

/** An anchor's symbol: 1–200 letters, digits or _ $ . : # -. */
export function validateAnchorSymbol(value: unknown, field = 'symbol'): string {
  const v = aString(value, field);
  if (!ANCHOR_SYMBOL.test(v)) invalid(field, 'must be a name of 1–200 letters, digits or _ $ . : # -');
  return v;
}

/** An anchor's line range: [first, last], whole numbers from 1, first ≤ last. */
export function validateAnchorLines(value: unknown, field = 'lines'): [number, number] {
  const message = 'must be [first, last], whole line numbers from 1 with first ≤ last';
  if (!Array.isArray(value) || value.length !== 2) invalid(field, message);
  const [a, b] = value as unknown[];
  if (typeof a !== 'number' || typeof b !== 'number' || !Number.isInteger(a) || !Number.isInteger(b) || a < 1 || b < 1 || a > b) invalid(field, message);
  return [a, b];
}

/** One code anchor: a path (a bare string is one) or `{ path, symbol?, lines? }` and nothing else. */
export function validateAnchor(value: unknown, field = 'anchor'): CodeAnchor {
  if (typeof value === 'string') return { path: validateAnchorPath(value, field) };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) invalid(field, 'must be { path, symbol?, lines? }');
  const a = value as Record<string, unknown>;
  const unknown = Object.keys(a).find((k) => k !== 'path' && k !== 'symbol' && k !== 'lines');
  if (unknown !== undefined) invalid(`${field}.${unknown}`, 'unknown field; allowed: path, symbol, lines');
  const out: CodeAnchor = { path: validateAnchorPath(a['path'], `${field}.path`) };
  if (a['symbol'] !== undefined) out.symbol = validateAnchorSymbol(a['symbol'], `${field}.symbol`);
  if (a['lines'] !== undefined) out.lines = validateAnchorLines(a['lines'], `${field}.lines`);
  return out;
}

/** Code anchors: top-level-relative paths (no `..`, not absolute), an optional symbol and line range. */
export function validateAnchors(value: unknown, field = 'anchors'): CodeAnchor[] {
  if (!Array.isArray(value)) invalid(field, 'must be a list of { path, symbol?, lines? }');
  if (value.length > MAX_ANCHORS) invalid(field, `at most ${MAX_ANCHORS} anchors`);
  return items(value, MAX_ANCHORS).map((a, i) => validateAnchor(a, `${field}[${i}]`));
}

export function validateScope(value: unknown, field = 'scope'): MemoryScope {
  return oneOf(value, field, MEMORY_SCOPES);
}

export function validateVerdict(value: unknown, field = 'verdict'): FeedbackVerdict {
  return oneOf(value, field, FEEDBACK_VERDICTS);
}
