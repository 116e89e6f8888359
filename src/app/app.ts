// createApp builds the adapter's Koa app without listening: tests drive app.callback() through
// supertest, and only the CLI listens. Routes: the webhook receiver, health, readiness, metrics, and the
// admin API (each part contributes a router, all behind the admin credentials, each route's role checked and
// its state changes recorded in the audit trail).
import Koa, { type Context, type Middleware } from 'koa';
import Router from '@koa/router';
import type { CredentialCheck } from '../actor.ts';
import { createCredentialCheck } from '../access/credentials.ts';
import { createSignInThrottle, type SignInThrottle } from '../access/throttle.ts';
import { noAuditor } from '../audit/audit-trail.ts';
import type { Auditor } from '../audit/auditor.ts';
import { systemClock, toIso } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { ADMIN_CATCH_ALL, adminAccess } from './admin-access.ts';
import { adminAuth } from './admin-auth.ts';
import { answerError, errorMiddleware } from '../http/error-middleware.ts';

/** One method on one exact path, answered by `handle` (which throws what the error middleware would answer). */
export interface DirectRoute {
  method: string;
  path: string;
  handle(ctx: Context): Promise<void>;
}

/** A router whose hot route createApp answers directly (routeDirectly). */
type DirectlyRouted = Router & { directRoute?: DirectRoute };

/**
 * Marks the hot route of `router` (the webhook): createApp answers it first, before the error middleware
 * and without the router's dispatch (path matching, a middleware chain composed per request), its errors
 * answered as the error middleware answers them. The router keeps the route too, so it works on its own and
 * its other methods still get 405 from allowedMethods. The mark travels with the router: no registry.
 */
export function routeDirectly(router: Router, route: DirectRoute): Router {
  return Object.assign(router as DirectlyRouted, { directRoute: route });
}

function directRoutesMiddleware(routes: DirectRoute[], logger: Logger): Middleware {
  const answer = (ctx: Context) => (err: unknown) => answerError(ctx, err, logger);
  return (ctx, next) => {
    // The raw URL first (what a client sends), the parsed path when there is a query string.
    for (const r of routes) if (ctx.method === r.method && (ctx.req.url === r.path || ctx.path === r.path)) return r.handle(ctx).catch(answer(ctx));
    return next();
  };
}

export interface ReadinessCheck {
  name: string;
  /** Throws (or returns false) when not ready. */
  check(): boolean | Promise<boolean>;
  /** Reported in /readyz's `checks` but never makes it 503 (a neighbour whose outage must not stop the receiver). */
  advisory?: boolean;
  /**
   * A planned downtime of what it checks (the EMR), in force now: the check is not run, `checks` says `downtime`
   * and /readyz's `downtime` until when and why.
   */
  downtime?: () => { until: number; reason: string } | undefined;
}

export interface AppDeps {
  logger: Logger;
  metrics: Metrics;
  /** Routers served as they are (the webhook receiver). */
  routers: Router[];
  /** Routers mounted under /admin, behind the admin token. */
  adminRouters: Router[];
  /** Routers served without the token where the admin API is, never on the public surface (GET /openapi.json). */
  adminSurfaceRouters?: Router[];
  /** The operator console (/console, src/console/router.ts): where the admin API is, never on the public surface. */
  consoleRouter?: Router;
  adminToken: string | undefined;
  /** Who may use the admin API; default: ADMIN_TOKEN alone, as the operator `admin`. */
  credentials?: CredentialCheck;
  /** Where admin actions and failed sign-ins are recorded; default: nowhere (tests of other parts). */
  auditor?: Auditor;
  /** Slows repeated failed sign-ins (shared with the console's sign-in form); default: one of this app's own. */
  signInThrottle?: SignInThrottle;
  /** Runs on /admin ahead of the bearer check: a console session signs the request in there (authenticatedAs). */
  adminSession?: Middleware;
  readiness: ReadinessCheck[];
  /**
   * What this app serves: everything (the default, one port), only the public part (the receiver's routers,
   * health and readiness: what the service and a load balancer reach), or only the admin part (admin API,
   * metrics, health and readiness) when ADMIN_PORT keeps it on the internal network.
   */
  surface?: 'all' | 'public' | 'admin';
}

export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  const surface = deps.surface ?? 'all';
  const direct = surface === 'admin' ? [] : deps.routers.flatMap((r) => (r as DirectlyRouted).directRoute ?? []);
  if (direct.length > 0) app.use(directRoutesMiddleware(direct, deps.logger));
  app.use(errorMiddleware(deps.logger));

  // The webhook route first: it is the one on the hot path.
  if (surface !== 'admin') for (const r of deps.routers) app.use(r.routes()).use(r.allowedMethods());

  const root = new Router();
  root.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  root.get('/readyz', async (ctx) => {
    const planned = deps.readiness.map((r) => r.downtime?.());
    // All at once: a slow neighbour's probe (bounded) does not add to the others'.
    const outcomes = await Promise.all(
      deps.readiness.map(async (r, i) => {
        if (planned[i]) return true;
        try {
          return (await r.check()) !== false;
        } catch {
          return false;
        }
      }),
    );
    const results: Record<string, 'ok' | 'failing' | 'downtime'> = {};
    const downtime: Record<string, { until: string; reason: string }> = {};
    deps.readiness.forEach((r, i) => {
      const d = planned[i];
      results[r.name] = d ? 'downtime' : outcomes[i] ? 'ok' : 'failing';
      if (d) downtime[r.name] = { until: toIso(d.until), reason: d.reason };
    });
    const ready = deps.readiness.every((r, i) => r.advisory || outcomes[i]);
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'not_ready', checks: results, ...(Object.keys(downtime).length > 0 ? { downtime } : {}) };
  });
  if (surface !== 'public')
    root.get('/metrics', async (ctx) => {
      ctx.type = deps.metrics.registry.contentType;
      ctx.body = await deps.metrics.registry.metrics();
    });
  app.use(root.routes()).use(root.allowedMethods());
  if (surface === 'public') return app;
  for (const r of deps.adminSurfaceRouters ?? []) app.use(r.routes()).use(r.allowedMethods());
  if (deps.consoleRouter) app.use(deps.consoleRouter.routes());

  const admin = new Router({ prefix: '/admin' });
  const auditor = deps.auditor ?? noAuditor;
  if (deps.adminSession) admin.use(deps.adminSession);
  admin.use(
    adminAuth({
      credentials: deps.credentials ?? createCredentialCheck({ adminToken: deps.adminToken, credentials: [] }),
      throttle: deps.signInThrottle ?? createSignInThrottle({ clock: systemClock }),
      auditor,
      logger: deps.logger,
    }),
    adminAccess({ router: admin, auditor }),
  );
  for (const r of deps.adminRouters) admin.use(r.routes(), r.allowedMethods());
  // Unknown admin paths still need the token, so the admin surface cannot be probed without it.
  admin.all(ADMIN_CATCH_ALL.slice('/admin'.length), (ctx) => {
    ctx.status = 404;
    ctx.body = { error: { code: 'not_found', message: 'no such admin route' } };
  });
  app.use(admin.routes()).use(admin.allowedMethods());
  return app;
}
