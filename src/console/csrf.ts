// CSRF protection: every console POST carries a token in a hidden form field, compared in constant time.
// Signed in, the token is the session's own (src/console/session.ts). The sign-in form, before any session,
// uses a double-submit token: a random value in a SameSite=Strict HttpOnly cookie and the same in the form.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { html, type Html } from './html.ts';
import { CONSOLE_PATH, randomToken } from './session.ts';

export const CSRF_FIELD = 'csrf';
export const SIGN_IN_CSRF_COOKIE = 'emr_bridge_sign_in';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Whether a presented token is the expected one; hashing both sides makes the comparison length-blind. */
export function sameToken(presented: string | null | undefined, expected: string | undefined): boolean {
  if (!presented || !expected) return false;
  return timingSafeEqual(digest(presented), digest(expected));
}

export const csrfField = (token: string): Html => html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;

/** The sign-in form's token: the one its cookie already holds, or a new one set now. */
export function signInToken(ctx: Context): string {
  const existing = ctx.cookies.get(SIGN_IN_CSRF_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomToken();
  ctx.cookies.set(SIGN_IN_CSRF_COOKIE, token, { httpOnly: true, sameSite: 'strict', secure: ctx.secure, path: CONSOLE_PATH, overwrite: true });
  return token;
}
