// What a signed-in actor may do on the admin API, and the audit trail of what it did. Each request is matched
// to its route on the admin router and given that route's rule (src/access/admin-routes.ts): a viewer asking
// for an operator's route gets 403 `forbidden`. After the route ran (or refused), one audit entry is written
// for every request whose rule names an action (state changes and body reveals; never plain reads), with the
// outcome its answer had: ok, denied (403), not_found (404), refused (another 4xx) or failed (5xx). A route whose
// module writes that entry itself (the crosswalk's, with this request's actor, door and address) says so, and
// the middleware then writes none: one change, one entry.
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { canDo } from '../actor.ts';
import { ADMIN_ROUTE_RULES, type AdminRouteRule, ruleFor } from '../access/admin-routes.ts';
import type { Auditor } from '../audit/auditor.ts';
import { AppError, ForbiddenError } from '../errors.ts';
import type { AuditOutcome } from '../storage/audit.ts';
import { actorOf, addressOf, doorOf } from './admin-auth.ts';
import { parsedBodyOf } from '../http/json-body.ts';

/** The catch-all path under /admin that answers route-not-found (./app.ts): not a route of its own. */
export const ADMIN_CATCH_ALL = '/admin/{*rest}';

interface MatchedRoute {
  path: string;
  params: Record<string, string>;
}

/** The route of `router` that will answer this request (the first whose path and method match), with its params. */
export function matchRoute(router: Router, method: string, path: string): MatchedRoute | undefined {
  const layer = router.match(path, method).pathAndMethod.find((l) => l.methods.length > 0 && l.path !== ADMIN_CATCH_ALL);
  if (!layer || typeof layer.path !== 'string') return undefined;
  return { path: layer.path, params: layer.params(path, layer.captures(path), {}) as Record<string, string> };
}

/** What a route leaves on ctx.state when its module wrote the request's audit entry (auditedByRoute). */
interface AuditState {
  auditedByRoute?: true;
}

/** For a route whose module recorded this request's change in the audit trail: the middleware records no second entry. */
export const auditedByRoute = (ctx: Context): void => {
  (ctx.state as AuditState).auditedByRoute = true;
};

export function outcomeOf(status: number): AuditOutcome {
  if (status >= 500) return 'failed';
  if (status === 403) return 'denied';
  if (status === 404) return 'not_found';
  if (status >= 400) return 'refused';
  return 'ok';
}

/** The status the error middleware will answer `err` with (src/http/error-middleware.ts). */
function statusOf(err: unknown): number {
  if (err instanceof AppError) return err.status;
  const status = (err as { status?: unknown }).status;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : 500;
}

function targetsOf(rule: AdminRouteRule, ctx: Context, route: MatchedRoute | undefined): string[] {
  if (!rule.targets) return [];
  const params = { ...route?.params, ...(ctx.params as Record<string, string> | undefined) };
  return rule.targets({ params, body: parsedBodyOf(ctx.req) }).filter((t): t is string => typeof t === 'string' && t !== '');
}

export function adminAccess(deps: { router: Router; auditor: Auditor; rules?: Readonly<Record<string, AdminRouteRule>> }): Middleware {
  const rules = deps.rules ?? ADMIN_ROUTE_RULES;
  return async (ctx, next) => {
    const actor = actorOf(ctx);
    if (!actor) throw new Error('adminAccess runs after adminAuth');
    const route = matchRoute(deps.router, ctx.method, ctx.path);
    const rule = ruleFor(ctx.method, route?.path, rules);
    let status = 500;
    try {
      if (!canDo(actor, rule.needs)) throw new ForbiddenError(`this needs the ${rule.needs} role; ${actor.name} is a ${actor.role}`);
      await next();
      status = ctx.status;
    } catch (err) {
      status = statusOf(err);
      throw err;
    } finally {
      if (rule.action && !(ctx.state as AuditState).auditedByRoute)
        await deps.auditor.record({
          actor: actor.name,
          door: doorOf(ctx),
          action: rule.action,
          targets: targetsOf(rule, ctx, route),
          from: addressOf(ctx),
          outcome: outcomeOf(status),
        });
    }
  };
}
