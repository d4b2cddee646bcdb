import type { z } from 'zod';
import { isCairnError } from '../interfaces/errors.js';

/**
 * zod schemas that check with the core's validators (core/validate.ts, the one validation source), for the surfaces
 * that describe their inputs with zod (the MCP tools, the config file): a schema says what a client is told (types,
 * enums, ranges), the validator decides, and its message is the one the user reads.
 */

export type Validator = (value: unknown, field: string) => unknown;

/** The core validator's complaint about `input` (its message after the field name, and the path below the value), or null. */
function problem(validate: Validator, input: unknown): { message: string; path: (string | number)[] } | null {
  try {
    validate(input, '$');
    return null;
  } catch (err) {
    if (!isCairnError(err) || err.code !== 'INVALID_INPUT' || err.field === undefined) throw err;
    const field = err.field;
    const path = [...field.slice(1).matchAll(/\[(\d+)\]|\.([^.[]+)/gu)].map((m) => (m[1] !== undefined ? Number(m[1]) : (m[2] as string)));
    return { message: err.message.slice(field.length + 2), path };
  }
}

/** zod's options for a check: the core validator's message, and no further checks (one complaint per value). */
export const says = (validate: Validator) => ({ error: (issue: { input: unknown }) => problem(validate, issue.input)?.message, abort: true });

/** `shape` (what clients are told) with the core validator run on every value the shape lets through. */
export function checked<S extends z.ZodType>(shape: S, validate: Validator): S {
  return shape.superRefine((value, ctx) => {
    const p = problem(validate, value);
    if (p) ctx.addIssue({ code: 'custom', message: p.message, path: p.path, input: value });
  });
}
