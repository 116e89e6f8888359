// How a failed call to the service is classified: network trouble, timeouts and the transient statuses of
// ../http/transient.ts (5xx, 429, 408) can pass and are retried; any other 4xx is permanent and carries
// the service's own error code.
import { AppError } from '../errors.ts';
import { isTransientStatus } from '../http/transient.ts';

export class ServiceCallError extends AppError {
  constructor(
    opts: { code: string; message: string; retryable: boolean; field?: string; cause?: unknown },
    /** The service's HTTP status; undefined when no answer came (network, timeout). */
    readonly httpStatus?: number,
    /** From Retry-After on a 429 or 503. */
    readonly retryAfterMs?: number,
  ) {
    super({ ...opts, status: 502 });
  }
}

export function classifyStatus(httpStatus: number, body: unknown, retryAfterMs: number | undefined): ServiceCallError {
  const err = (body as { error?: { code?: unknown; message?: unknown; field?: unknown } } | undefined)?.error;
  const code = typeof err?.code === 'string' ? err.code : `http_${httpStatus}`;
  const message = typeof err?.message === 'string' ? err.message : `service answered ${httpStatus}`;
  const retryable = isTransientStatus(httpStatus);
  return new ServiceCallError({ code, message, retryable, ...(typeof err?.field === 'string' ? { field: err.field } : {}) }, httpStatus, retryAfterMs);
}
