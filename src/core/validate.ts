import { CairnError } from '../interfaces/errors.js';
import { MEMORY_KINDS, ORIGINS, type MemoryKind, type Provenance, type RouteInfo } from '../interfaces/memory.js';

export const MAX_TEXT_BYTES = 32 * 1024;
export const MAX_TAGS = 10;
export const MAX_NAMESPACE_LENGTH = 256;

function invalid(field: string, message: string): CairnError {
  return new CairnError('INVALID_INPUT', `${field}: ${message}`, { field });
}

/** A namespace is 1–256 printable characters, no control characters, no leading/trailing space. */
export function validateNamespace(value: unknown, field = 'namespace'): string {
  if (typeof value !== 'string') throw invalid(field, 'must be a string');
  if (value.length === 0) throw invalid(field, 'must not be empty');
  if (value.length > MAX_NAMESPACE_LENGTH) throw invalid(field, `must be at most ${MAX_NAMESPACE_LENGTH} characters`);
  if (/\p{Cc}/u.test(value)) throw invalid(field, 'must not contain control characters');
  if (value.trim() !== value) throw invalid(field, 'must not start or end with whitespace');
  return value;
}

export function validateText(value: unknown, field = 'text'): string {
  if (typeof value !== 'string') throw invalid(field, 'must be a string');
  if (value.trim().length === 0) throw invalid(field, 'must not be empty');
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_TEXT_BYTES) throw invalid(field, `is ${bytes} bytes; the limit is ${MAX_TEXT_BYTES} bytes (32 KB)`);
  if (/\u0000/u.test(value)) throw invalid(field, 'must not contain NUL characters');
  return value;
}

export function validateKind(value: unknown, field = 'kind'): MemoryKind {
  if (typeof value !== 'string' || !(MEMORY_KINDS as readonly string[]).includes(value)) {
    throw invalid(field, `must be one of ${MEMORY_KINDS.join(', ')} (got ${JSON.stringify(value)})`);
  }
  return value as MemoryKind;
}

export function validateImportance(value: unknown, field = 'importance'): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 10) {
    throw invalid(field, `must be a whole number from 1 to 10 (got ${JSON.stringify(value)})`);
  }
  return value;
}

export function validateTags(value: unknown, field = 'tags'): string[] {
  if (!Array.isArray(value)) throw invalid(field, 'must be a list of strings');
  if (value.length > MAX_TAGS) throw invalid(field, `at most ${MAX_TAGS} tags (got ${value.length})`);
  const tags = value.map((tag, i) => {
    if (typeof tag !== 'string') throw invalid(`${field}[${i}]`, 'must be a string');
    const t = tag.trim().toLowerCase();
    if (!/^[\p{L}\p{N}][\p{L}\p{N}_.:/-]{0,63}$/u.test(t)) {
      throw invalid(`${field}[${i}]`, `"${tag}" must be 1–64 letters, digits or _ . : / - and start with a letter or digit`);
    }
    return t;
  });
  return [...new Set(tags)];
}

export function validateLimit(value: unknown, field = 'limit', max = 1000): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw invalid(field, `must be a whole number from 1 to ${max} (got ${JSON.stringify(value)})`);
  }
  return value;
}

/** Accepts an ISO-8601 date or date-time; returns it normalised to UTC ISO form. */
export function validateTime(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid(field, 'must be an ISO-8601 date');
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw invalid(field, `"${value}" is not a valid ISO-8601 date`);
  return new Date(t).toISOString();
}

const PROVENANCE_KEYS = ['source', 'trigger', 'sessionId', 'origin', 'agent', 'externalId', 'speaker', 'subject'] as const;

export function validateProvenance(value: unknown, field = 'metadata'): Provenance {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(field, 'must be an object');
  const out: Provenance = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined || v === null) continue;
    if (!(PROVENANCE_KEYS as readonly string[]).includes(key)) {
      throw invalid(`${field}.${key}`, `unknown field; allowed: ${PROVENANCE_KEYS.join(', ')}`);
    }
    if (typeof v !== 'string' || v.length > 512) throw invalid(`${field}.${key}`, 'must be a string of at most 512 characters');
    if (key === 'origin' && !(ORIGINS as readonly string[]).includes(v)) {
      throw invalid(`${field}.origin`, `must be one of ${ORIGINS.join(', ')}`);
    }
    (out as Record<string, string>)[key] = v;
  }
  return out;
}

export function validateRoute(value: unknown, field = 'route'): RouteInfo {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(field, 'must be an object');
  const r = value as Record<string, unknown>;
  const title = typeof r['title'] === 'string' ? r['title'].trim() : '';
  if (!title) throw invalid(`${field}.title`, 'must not be empty');
  const description = typeof r['description'] === 'string' ? r['description'].trim() : '';
  const paths = r['paths'] ?? [];
  if (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string' || p.trim() === '')) {
    throw invalid(`${field}.paths`, 'must be a list of non-empty strings');
  }
  if (paths.length > 50) throw invalid(`${field}.paths`, 'at most 50 paths');
  return { title, description, paths: (paths as string[]).map((p) => p.trim()) };
}

export function validateId(value: unknown, field = 'id'): string {
  if (typeof value !== 'string' || !/^[0-9A-Za-z]{26}$/u.test(value)) {
    throw invalid(field, `must be a memory id (26 characters, e.g. 01JD3X…; got ${JSON.stringify(value)})`);
  }
  return value.toUpperCase();
}
