// The few error classes of emr-bridge. Each has a stable `code`, an HTTP status and whether a retry can
// help; the HTTP error middleware turns them into {"error": {"code", "message"}} and nothing more.

export interface AppErrorOptions {
  code: string;
  status: number;
  message: string;
  retryable?: boolean;
  /** Dotted path of the offending request field, where there is one. */
  field?: string;
  /**
   * A dependency refuses all work, not this item (a sign-in refused, a server that is not what we need):
   * the work waits without spending its retry budget, and the fix is a person's, made once for everything.
   */
  incident?: boolean;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: string;
  readonly status: number;
  readonly retryable: boolean;
  readonly incident: boolean;
  readonly field?: string;

  constructor(opts: AppErrorOptions) {
    super(opts.message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = opts.code;
    this.status = opts.status;
    this.retryable = opts.retryable ?? false;
    this.incident = opts.incident ?? false;
    if (opts.field !== undefined) this.field = opts.field;
  }
}

/** Bad input from a caller: 400, never retryable. */
export class ValidationError extends AppError {
  constructor(message: string, field?: string, code = 'invalid_request') {
    super({ code, status: 400, message, ...(field === undefined ? {} : { field }) });
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'missing or invalid credentials', code = 'unauthorized') {
    super({ code, status: 401, message });
  }
}

/** Signed in, but the credential's role does not allow this: 403, never retryable. */
export class ForbiddenError extends AppError {
  constructor(message = 'this credential may not do that', code = 'forbidden') {
    super({ code, status: 403, message });
  }
}

/** Too many failed sign-ins from one address: 429 until `retryAfterSeconds` have passed. */
export class TooManyAttemptsError extends AppError {
  constructor(readonly retryAfterSeconds: number) {
    super({ code: 'too_many_attempts', status: 429, message: `too many failed sign-ins from this address; try again in ${retryAfterSeconds} s` });
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'not found') {
    super({ code: 'not_found', status: 404, message });
  }
}

/** A dependency (database, EMR, service) cannot take the work now; the caller should try again. */
export class UnavailableError extends AppError {
  constructor(message: string, cause?: unknown, code = 'unavailable') {
    super({ code, status: 503, message, retryable: true, cause });
  }
}

/** A setting is missing or malformed: start-up stops with this. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export const isRetryable = (err: unknown): boolean => err instanceof AppError && err.retryable;

/** True for a dependency-wide failure (see AppErrorOptions.incident): never charged to one event or document. */
export const isIncident = (err: unknown): boolean => err instanceof AppError && err.incident;

/** A short, log-safe description of any thrown value: class and code, never a payload. */
export function describeError(err: unknown): { type: string; code?: string; message: string } {
  if (err instanceof AppError) return { type: err.name, code: err.code, message: err.message };
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { type: err.name, ...(typeof code === 'string' ? { code } : {}), message: err.message };
  }
  return { type: typeof err, message: String(err) };
}
