// Signing in and out. Sign-in takes an admin credential's token (checked by the CredentialCheck, in constant
// time) and starts a new session; its form carries a double-submit CSRF token. Failed sign-ins from one
// address are slowed by the throttle, and each is audited `sign_in` `refused` with actor `-` (a token is
// never recorded, nor logged). Signing out ends the session at once.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { CSRF_FIELD, csrfField, SIGN_IN_CSRF_COOKIE, sameToken, signInToken } from '../csrf.ts';
import { addressOf } from '../../app/admin-auth.ts';
import type { ConsoleContext } from '../deps.ts';
import { badForm, ConsolePageError } from '../errors.ts';
import { readForm } from '../form.ts';
import { audit, consoleAction, requireSession, safeNext } from '../guard.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { clearCookie, SESSION_COOKIE, sessionCookie, setSessionCookie } from '../session.ts';

const MESSAGES: Record<string, string> = {
  expired: 'Your session has ended (it was idle too long, or reached its lifetime). Sign in again.',
  'signed-out': 'You have signed out.',
};

function signInPage(ctx: Context, c: ConsoleContext, o: { next?: string; message?: string; error?: string }): string {
  return renderPage({
    title: 'Sign in',
    body: html`<form class="card narrow" method="post" action="/console/sign-in">
  ${o.message ? html`<p class="notice" role="status">${o.message}</p>` : ''}
  ${o.error ? html`<p class="error" role="alert" id="sign-in-error">${o.error}</p>` : ''}
  <p>Sign in with an admin credential's token (<code>ADMIN_TOKEN</code>, or one of the named credentials). A session ends after ${c.sessionMinutes} minutes without use.</p>
  <label for="token">Credential token</label>
  <input id="token" name="token" type="password" autocomplete="off" required autofocus${o.error ? html` aria-describedby="sign-in-error" aria-invalid="true"` : ''}>
  ${csrfField(signInToken(ctx))}
  ${o.next ? html`<input type="hidden" name="next" value="${o.next}">` : ''}
  <button type="submit">Sign in</button>
</form>`,
  });
}

async function showSignIn(c: ConsoleContext, ctx: Context): Promise<void> {
  if (ctx.state.session) {
    ctx.status = 303;
    ctx.redirect('/console');
    return;
  }
  const m = typeof ctx.query.m === 'string' ? MESSAGES[ctx.query.m] : undefined;
  const next = safeNext(typeof ctx.query.next === 'string' ? ctx.query.next : undefined);
  ctx.type = 'html';
  ctx.body = signInPage(ctx, c, { ...(next ? { next } : {}), ...(m ? { message: m } : {}) });
}

async function signIn(c: ConsoleContext, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  const refuse = () => audit(c, ctx, '-', 'sign_in', [], 'refused');
  if (!sameToken(form.get(CSRF_FIELD), ctx.cookies.get(SIGN_IN_CSRF_COOKIE))) {
    await refuse();
    throw badForm();
  }
  const waitMs = await c.throttle.waitMs(addressOf(ctx));
  if (waitMs > 0) {
    await refuse();
    const seconds = Math.ceil(waitMs / 1000);
    throw new ConsolePageError(
      429,
      'Too many failed sign-ins',
      html`Sign-ins from this address failed several times in a row. Wait ${seconds} seconds, then try again.`,
      {
        'Retry-After': String(seconds),
      },
    );
  }
  const next = safeNext(form.get('next') ?? undefined);
  const actor = c.credentials.verify(form.get('token')?.trim() ?? '');
  if (!actor) {
    await c.throttle.failed(addressOf(ctx));
    await refuse();
    ctx.status = 401;
    ctx.type = 'html';
    ctx.body = signInPage(ctx, c, { ...(next ? { next } : {}), error: 'That credential was not accepted.' });
    return;
  }
  await c.throttle.succeeded(addressOf(ctx));
  // Always a new session id on sign-in: a session id planted before cannot be carried in.
  const old = sessionCookie(ctx);
  if (old) await c.sessions.end(old);
  const session = await c.sessions.create(actor);
  setSessionCookie(ctx, session, c.sessionMinutes);
  clearCookie(ctx, SIGN_IN_CSRF_COOKIE);
  await audit(c, ctx, actor.name, 'sign_in', [], 'ok');
  ctx.status = 303;
  ctx.redirect(next ?? '/console');
}

export function registerSignIn(router: Router, c: ConsoleContext): void {
  router.get('/sign-in', (ctx) => showSignIn(c, ctx));
  router.post('/sign-in', (ctx) => signIn(c, ctx));
  router.post(
    '/sign-out',
    requireSession(),
    consoleAction(c, {
      action: 'sign_out',
      needs: 'viewer',
      what: 'Signing out',
      targets: () => [],
      async run(ctx, _form, session) {
        await c.sessions.end(session.id);
        clearCookie(ctx, SESSION_COOKIE);
        ctx.status = 303;
        ctx.redirect('/console/sign-in?m=signed-out');
        return 'ok';
      },
    }),
  );
}
