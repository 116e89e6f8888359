// Who is calling the admin API: `Authorization: Bearer <token>` checked against the credentials (ADMIN_TOKEN
// and ADMIN_CREDENTIALS_FILE, in constant time), or a request another middleware has already signed in (the
// console's session calls authenticatedAs before this runs). The actor goes in ctx.state.actor, the door in
// ctx.state.door. No token, or one that matches none: 401, recorded in the audit trail as a refused sign_in,
// and counted by the sign-in throttle; an address the throttle holds gets 429 until its wait is over.
import { bearerToken } from '../http/bearer.ts';
import type { Context, Middleware } from 'koa';
import type { Actor, CredentialCheck } from '../actor.ts';
import type { SignInThrottle } from '../access/throttle.ts';
import type { Auditor } from '../audit/auditor.ts';
import { TooManyAttemptsError, UnauthorizedError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Door } from '../storage/audit.ts';

/** What the admin middleware leaves on ctx.state for the routes behind it. */
export interface AdminState {
  actor?: Actor;
  door?: Door;
}

/** The header the CLI sends on every admin call (src/cli/admin-client.ts). */
export const SOURCE_HEADER = 'x-emr-bridge-source';

/** For a middleware that signed the request in itself (the console's session): the admin API takes this actor as it is. */
export function authenticatedAs(ctx: Context, actor: Actor, door: Door): void {
  Object.assign(ctx.state as AdminState, { actor: { name: actor.name, role: actor.role }, door });
}

/** The actor the request was signed in as (undefined before the admin middleware ran, or outside /admin). */
export const actorOf = (ctx: Context): Actor | undefined => (ctx.state as AdminState).actor;

/** The door: what signed the request in says (the console), else the CLI's header, else the API. */
export const doorOf = (ctx: Context): Door => (ctx.state as AdminState).door ?? (ctx.get(SOURCE_HEADER) === 'cli' ? 'cli' : 'api');

/** The client's address as the adapter saw it (the socket's: no proxy header is trusted). */
export const addressOf = (ctx: Context): string => (ctx.ip || '-').replace(/^::ffff:/, '');

export interface AdminAuthDeps {
  credentials: CredentialCheck;
  throttle: SignInThrottle;
  auditor: Auditor;
  logger: Logger;
}

export function adminAuth(deps: AdminAuthDeps): Middleware {
  return async (ctx, next) => {
    if (actorOf(ctx)) return next();
    const from = addressOf(ctx);
    const wait = await deps.throttle.waitMs(from);
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      ctx.set('Retry-After', String(seconds));
      throw new TooManyAttemptsError(seconds);
    }
    const token = bearerToken(ctx.get('authorization'));
    const actor = token ? deps.credentials.verify(token) : undefined;
    if (!actor) {
      const delay = await deps.throttle.failed(from);
      if (delay > 0) deps.logger.warn({ from, waitMs: delay }, 'admin sign-ins from this address slowed after repeated failures');
      await deps.auditor.record({ actor: '-', door: doorOf(ctx), action: 'sign_in', targets: [], from, outcome: 'refused' });
      ctx.set('WWW-Authenticate', 'Bearer realm="emr-bridge admin"');
      throw new UnauthorizedError('admin token required');
    }
    await deps.throttle.succeeded(from);
    authenticatedAs(ctx, actor, doorOf(ctx));
    await next();
  };
}
