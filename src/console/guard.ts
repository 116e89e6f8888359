// Who may see and do what on the console. Every page but sign-in needs a live session (else: to sign-in,
// saying the session ended); every POST needs the session's CSRF token (else 403, audited `refused`); an
// operator action by a viewer is a 403 page, audited `denied`; each action's outcome is audited with door
// `console` (here, or by the operation itself: the crosswalk records each mapping). Audit entries carry the
// credential's name and ids only.
import type { Context, Middleware } from 'koa';
import { canDo, type Role } from '../actor.ts';
import type { AuditOutcome } from '../storage/audit.ts';
import { addressOf } from '../app/admin-auth.ts';
import { CSRF_FIELD, sameToken } from './csrf.ts';
import type { ConsoleContext } from './deps.ts';
import { badForm, ConsolePageError, noRights } from './errors.ts';
import { readForm } from './form.ts';
import { type PageOptions, renderPage } from './layout.ts';
import { clearCookie, SESSION_COOKIE, sessionCookie, setSessionCookie, type ConsoleSession } from './session.ts';

export async function audit(c: ConsoleContext, ctx: Context, actor: string, action: string, targets: string[], outcome: AuditOutcome): Promise<void> {
  // The auditor logs the entry too (identifiers only).
  await c.auditor.record({ actor, door: 'console', action, targets, from: addressOf(ctx), outcome });
}

/** A path of the console to come back to after signing in (never another site). */
export const safeNext = (next: string | undefined): string | undefined =>
  next && /^\/console(\/[A-Za-z0-9._~%/-]*)?(\?[A-Za-z0-9._~%&=+-]*)?$/.test(next) && !next.includes('//') ? next : undefined;

/** Puts the live session the cookie names (if any) in ctx.state.session, its idle time restarted. */
export function attachSession(c: ConsoleContext): Middleware {
  return async (ctx, next) => {
    const id = ctx.path.startsWith('/console/assets/') ? undefined : sessionCookie(ctx);
    const session = id ? await c.sessions.use(id) : undefined;
    if (session) {
      ctx.state.session = session;
      setSessionCookie(ctx, session, c.sessionMinutes);
    } else if (id) {
      ctx.state.sessionEnded = true;
      clearCookie(ctx, SESSION_COOKIE);
    }
    await next();
  };
}

/** Every page but sign-in: without a live session, to sign-in (saying the session ended, if there was one). */
export function requireSession(): Middleware {
  return async (ctx, next) => {
    if (ctx.state.session) return next();
    const ended = ctx.state.sessionEnded === true;
    if (ctx.path.endsWith('.json')) {
      // A page's script asked: it shows that the session ended instead of following a redirect to HTML.
      ctx.status = 401;
      ctx.body = { error: { code: 'session_ended', message: 'sign in again' } };
      return;
    }
    const back = ctx.method === 'GET' ? safeNext(ctx.url) : undefined;
    const q = new URLSearchParams({
      ...(ended ? { m: 'expired' } : {}),
      ...(back && back !== '/console' && back !== '/console/' ? { next: back } : {}),
    }).toString();
    ctx.status = 303;
    ctx.redirect(`/console/sign-in${q ? `?${q}` : ''}`);
  };
}

export const sessionOf = (ctx: Context): ConsoleSession => ctx.state.session as ConsoleSession;

/** The one-time message for this page, taken from the session. */
export function takeFlash(c: ConsoleContext, ctx: Context): Promise<string | undefined> {
  return c.sessions.takeFlash(sessionOf(ctx));
}

/** Answers a page of the signed-in session, with the one-time message waiting for it, if any. */
export async function sendPage(c: ConsoleContext, ctx: Context, page: Omit<PageOptions, 'session' | 'flash'>): Promise<void> {
  const flash = await takeFlash(c, ctx);
  ctx.type = 'html';
  ctx.body = renderPage({ ...page, session: sessionOf(ctx), ...(flash ? { flash } : {}) });
}

/** A GET that leads to an operator action (its confirmation step): a viewer gets the 403 page, audited. */
export async function mustBeAllowed(c: ConsoleContext, ctx: Context, action: string, needs: Role, targets: string[], what: string): Promise<void> {
  const { actor } = sessionOf(ctx);
  if (canDo(actor, needs)) return;
  await audit(c, ctx, actor.name, action, targets, 'denied');
  throw noRights(what);
}

export interface ActionSpec {
  /** The audit trail's name for it (`dead_letter.replay`). */
  action: string;
  needs: Role;
  /** What a refusal says it needed (`Replaying a dead letter`). */
  what: string;
  targets(ctx: Context, form: URLSearchParams): string[];
  /** Reads the form (default: URL-encoded, src/console/form.ts); the one file form reads multipart. */
  form?(ctx: Context): Promise<URLSearchParams>;
  /**
   * Does it and answers (a redirect or a page); returns the outcome to audit, or null when the operation it
   * called recorded its own outcome (src/crosswalk/ audits each mapping with who and from where).
   */
  run(ctx: Context, form: URLSearchParams, session: ConsoleSession): Promise<AuditOutcome | null>;
}

/** A console POST: the CSRF token, then the role, then the action, each step audited. */
export function consoleAction(c: ConsoleContext, spec: ActionSpec): Middleware {
  return async (ctx) => {
    const session = sessionOf(ctx);
    const form = await (spec.form ?? readForm)(ctx);
    const targets = spec.targets(ctx, form);
    if (!sameToken(form.get(CSRF_FIELD), session.csrf)) {
      await audit(c, ctx, session.actor.name, spec.action, targets, 'refused');
      throw badForm();
    }
    if (!canDo(session.actor, spec.needs)) {
      await audit(c, ctx, session.actor.name, spec.action, targets, 'denied');
      throw noRights(spec.what);
    }
    let outcome: AuditOutcome | null;
    try {
      outcome = await spec.run(ctx, form, session);
    } catch (err) {
      const missing = err instanceof ConsolePageError && err.status === 404;
      await audit(c, ctx, session.actor.name, spec.action, targets, missing ? 'not_found' : 'failed');
      throw err;
    }
    if (outcome !== null) await audit(c, ctx, session.actor.name, spec.action, targets, outcome);
  };
}

/** After an action: back to a page (303, so a reload does not post again) with a one-time message. */
export async function redirectWith(c: ConsoleContext, ctx: Context, to: string, flash: string): Promise<void> {
  await c.sessions.setFlash(sessionOf(ctx).id, flash);
  ctx.status = 303;
  ctx.redirect(to);
}
