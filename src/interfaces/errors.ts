/**
 * The one error class of cairn. Every failure that crosses a layer boundary is a CairnError with a code
 * from the closed list below; surfaces translate the code once (CLI exit code, MCP isError, HTTP status).
 */
export const ERROR_CODES = [
  'INVALID_INPUT',
  'NOT_FOUND',
  'CONFLICT',
  'STORE_UNAVAILABLE',
  'INTEGRITY',
  'UNSUPPORTED',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'RATE_LIMITED',
  /** A request body or a single message over the surface's size limit. */
  'TOO_LARGE',
  'QUARANTINED',
  'EMBEDDER_MISMATCH',
  'EMBEDDER_UNAVAILABLE',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface CairnErrorOptions {
  /** The underlying error, kept for debugging; never shown to end users as a stack trace. */
  cause?: unknown;
  /** The input field the error is about, when there is one (e.g. `importance`). */
  field?: string;
  /** A short hint telling the user what to do next (e.g. `run cairn reindex`). */
  hint?: string;
}

export class CairnError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: CairnErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CairnError';
    this.code = code;
    this.field = options.field;
    this.hint = options.hint;
  }
}

/** True when `err` is a CairnError, optionally with the given code. */
export function isCairnError(err: unknown, code?: ErrorCode): err is CairnError {
  return err instanceof CairnError && (code === undefined || err.code === code);
}
