// The console's error pages: every failure answers a page a person can act on (sign in again, ask for the
// operator role, go back, wait for the adapter) and never a stack trace or a JSON error. Pages throw
// ConsolePageError; anything else thrown is a 500 page, logged with its name and code only.
import type { Context, Middleware } from 'koa';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { html, type Html } from './html.ts';
import { renderPage } from './layout.ts';
import type { ConsoleSession } from './session.ts';

export class ConsolePageError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly explanation: Html | string,
    readonly headers: Record<string, string> = {},
  ) {
    super(title);
  }
}

export const notFound = (what = 'page'): ConsolePageError =>
  new ConsolePageError(404, 'Not found', html`There is no such ${what}. It may have been pruned by retention, or the address is mistyped.`);

export const noRights = (what: string): ConsolePageError =>
  new ConsolePageError(
    403,
    'Not allowed',
    html`${what} needs the <strong>operator</strong> role; you are signed in with a <strong>viewer</strong> credential, which reads only. Ask for an operator credential, or ask an operator to do it.`,
  );

export const badForm = (): ConsolePageError =>
  new ConsolePageError(
    403,
    'Form refused',
    html`The form did not carry this session's security token, so it was refused (a page from another site, or a page older than your session). Go back, reload the page and try again.`,
  );

export const stopping = (): ConsolePageError =>
  new ConsolePageError(
    503,
    'The adapter is not available',
    html`The adapter is starting or stopping and cannot serve the console now. Try again in a minute; if this lasts, check <code>/readyz</code> and the adapter's logs.`,
    { 'Retry-After': '30' },
  );

export function renderError(ctx: Context, err: ConsolePageError): void {
  const session = ctx.state.session as ConsoleSession | undefined;
  ctx.status = err.status;
  for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
  ctx.type = 'html';
  const back = session ? html`<a href="/console">Back to the overview</a>` : html`<a href="/console/sign-in">Sign in</a>`;
  ctx.body = renderPage({
    title: err.title,
    ...(session ? { session } : {}),
    body: html`<section class="error-page" aria-labelledby="error-code"><p id="error-code" class="muted">Error ${err.status}</p><p>${err.explanation}</p><p>${back}</p></section>`,
  });
}

/** Catches everything below it; `available` false (the adapter starting or stopping) answers 503 to every page. */
export function errorPages(deps: { logger: Logger; available?: () => boolean }): Middleware {
  return async (ctx, next) => {
    try {
      if (deps.available && !deps.available() && !ctx.path.startsWith('/console/assets/')) throw stopping();
      await next();
    } catch (err) {
      if (err instanceof ConsolePageError) return renderError(ctx, err);
      if (err instanceof AppError && err.status === 413) return renderError(ctx, new ConsolePageError(413, 'Too large', 'That form was too large.'));
      if (err instanceof AppError && err.status === 503) return renderError(ctx, stopping());
      // A search the data port cannot read (a stale page position, an unknown state): its message names the field.
      if (err instanceof AppError && err.status === 400)
        return renderError(ctx, new ConsolePageError(400, 'That request could not be read', html`${err.message}. Go back and change it, or start again.`));
      const e = err as { name?: string; code?: string; status?: number };
      if (e.status === 413) return renderError(ctx, new ConsolePageError(413, 'Too large', 'That form was too large.'));
      deps.logger.error({ err: { name: e.name, code: e.code }, path: ctx.path }, 'console page failed');
      renderError(
        ctx,
        new ConsolePageError(
          500,
          'Something went wrong',
          html`The page could not be made. The adapter logged it; try again, and if it keeps failing, check the adapter's logs.`,
        ),
      );
    }
  };
}
