// The one place errors become HTTP answers: {"error": {"code", "message", "field"?}}. Known errors keep
// their code and message; anything else is a 500 `internal` whose details go to the log, never the caller.
// The middleware answers for every route behind it; a route served ahead of it (createApp's direct routes,
// the webhook) answers its errors through answerError, so both say the same.
import type { Context, Middleware } from 'koa';
import type { Logger } from '../logger.ts';
import { AppError, describeError } from '../errors.ts';

export function errorMiddleware(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { error: { code: 'not_found', message: 'no such route' } };
      }
    } catch (err) {
      answerError(ctx, err, logger);
    }
  };
}

/** Sets the error answer for `err` on `ctx` (and logs what the caller is not told). */
export function answerError(ctx: Context, err: unknown, logger: Logger): void {
  if (err instanceof AppError) {
    ctx.status = err.status;
    ctx.body = { error: { code: err.code, message: err.message, ...(err.field ? { field: err.field } : {}) } };
    if (err.status >= 500) logger.warn({ err: describeError(err), path: ctx.path }, 'request failed');
    return;
  }
  const status = (err as { status?: unknown; expose?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // http-errors from Koa itself or raw-body: their messages are generic and safe to show.
    ctx.status = status;
    ctx.body = { error: { code: status === 413 ? 'payload_too_large' : 'bad_request', message: (err as Error).message } };
    return;
  }
  logger.error({ err: describeError(err), path: ctx.path }, 'unexpected error');
  ctx.status = 500;
  ctx.body = { error: { code: 'internal', message: 'internal error' } };
}
