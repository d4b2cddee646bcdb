import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit as honoBodyLimit } from 'hono/body-limit';
import { CairnError, isCairnError, type ErrorCode } from '../../interfaces/errors.js';
import type { Logger } from '../../interfaces/embedder.js';

/**
 * The one error boundary of the HTTP surface: every refusal and failure, from the host guard, the
 * authentication middleware, the body limit, the API, MCP's JSON routes, the page and the app's last-resort
 * handler, becomes this one JSON body, `{ error: { code, message, field?, hint? } }`, with the status its
 * code calls for. Anything that is not a CairnError is an INTERNAL 500 whose details go to the log only.
 */

const STATUS: Record<ErrorCode, number> = {
  INVALID_INPUT: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  EMBEDDER_MISMATCH: 409,
  TOO_LARGE: 413,
  QUARANTINED: 422,
  RATE_LIMITED: 429,
  UNSUPPORTED: 501,
  STORE_UNAVAILABLE: 503,
  EMBEDDER_UNAVAILABLE: 503,
  INTEGRITY: 500,
  INTERNAL: 500,
};

export function statusOf(code: ErrorCode): number {
  return STATUS[code];
}

export type ErrorBody = { error: { code: ErrorCode; message: string; field?: string; hint?: string } };

/** The one JSON shape of an HTTP error. */
export function errorBody(err: CairnError): ErrorBody {
  return {
    error: { code: err.code, message: err.message, ...(err.field ? { field: err.field } : {}), ...(err.hint ? { hint: err.hint } : {}) },
  };
}

/** `err` as the HTTP answer; a non-CairnError (or INTERNAL) is logged when a logger is given, never shown. */
export function errorResponse(c: Context, err: unknown, logger?: Logger): Response {
  const e = isCairnError(err) ? err : new CairnError('INTERNAL', 'internal error', { cause: err });
  if (e.code === 'INTERNAL' && logger) {
    const cause = err instanceof Error ? err : new Error(String(err));
    logger.error(`http: ${c.req.method} ${c.req.path}: ${cause.message}`, { stack: cause.stack });
  }
  const headers: Record<string, string> = {};
  if (e.code === 'UNAUTHORIZED') headers['www-authenticate'] = 'Bearer realm="cairn"';
  // A non-CairnError became a plain 'internal error' above: its cause is never part of the body.
  return c.json(errorBody(e), statusOf(e.code) as 400, headers);
}

/** The largest JSON body the HTTP surface reads (MCP messages and API calls): 4 MiB. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

function tooLarge(max: number): CairnError {
  return new CairnError('TOO_LARGE', `the request body is over ${max} bytes`, { hint: 'send less per request' });
}

/**
 * The request body as text, refused with TOO_LARGE as soon as it is known to pass `max` bytes: at once
 * from a declared Content-Length, otherwise while streaming, so an oversized body is never held in memory.
 */
export async function readBodyText(c: Context, max: number): Promise<string> {
  const declared = Number(c.req.header('content-length'));
  if (Number.isFinite(declared) && declared > max) throw tooLarge(max);
  const stream = c.req.raw.body;
  if (!stream) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      void reader.cancel().catch(() => {});
      throw tooLarge(max);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Middleware form of the same limit, for routes whose body another library reads (MCP). */
export function bodyLimit(max: number): MiddlewareHandler {
  return honoBodyLimit({ maxSize: max, onError: (c) => errorResponse(c, tooLarge(max)) });
}
