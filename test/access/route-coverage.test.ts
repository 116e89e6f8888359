// Every route the adapter serves under /admin has a declared need in src/access/admin-routes.ts (so a new
// route, a body reveal above all, cannot ship on the default by accident), and the table names no route that
// is gone; every declared state change needs an operator and has an audit action.
import type Koa from 'koa';
import type Router from '@koa/router';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_ROUTE_RULES } from '../../src/access/admin-routes.ts';
import type { AppDeps } from '../../src/app/app.ts';
import { ADMIN_CATCH_ALL } from '../../src/app/admin-access.ts';
import { startZeroConfigAdapter } from '../support/zero-config-adapter.ts';

// The app the composition root builds, so the routes checked are the ones it really serves.
const built = vi.hoisted(() => [] as { deps: AppDeps; app: Koa }[]);
vi.mock('../../src/app/app.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/app/app.ts')>();
  return {
    ...real,
    createApp(deps: AppDeps) {
      const app = real.createApp(deps);
      built.push({ deps, app });
      return app;
    },
  };
});

/** `METHOD /admin/path` of every route on the app's admin router (GET for GET and HEAD). */
function adminRoutes(app: Koa): string[] {
  const out = new Set<string>();
  for (const mw of app.middleware) {
    const router = (mw as { router?: Router }).router;
    if (router?.opts.prefix !== '/admin') continue;
    for (const layer of router.stack) {
      if (layer.methods.length === 0 || layer.path === ADMIN_CATCH_ALL) continue;
      for (const m of layer.methods) if (m !== 'HEAD') out.add(`${m} ${String(layer.path)}`);
    }
  }
  return [...out].sort();
}

describe('the admin routes', () => {
  let zero: Awaited<ReturnType<typeof startZeroConfigAdapter>>;
  let routes: string[];
  beforeAll(async () => {
    built.length = 0;
    zero = await startZeroConfigAdapter();
    routes = adminRoutes(built[0]!.app);
  }, 60_000);
  afterAll(async () => zero?.close());

  it('are found where the composition root mounts them', () => {
    expect(routes).toContain('POST /admin/dead-letters/:eventId/replay');
    expect(routes).toContain('GET /admin/audit');
  });

  it('each have a declared need, and the table names no route that is not served', () => {
    const declared = Object.keys(ADMIN_ROUTE_RULES).sort();
    expect(
      routes.filter((r) => !declared.includes(r)),
      'routes missing from src/access/admin-routes.ts',
    ).toEqual([]);
    expect(
      declared.filter((r) => !routes.includes(r)),
      'rules for routes that are not served',
    ).toEqual([]);
  });

  it('need an operator, and are audited, for every state change', () => {
    for (const [route, rule] of Object.entries(ADMIN_ROUTE_RULES)) {
      if (route.startsWith('GET ')) {
        // A read a viewer may make is not recorded; one that shows a body needs an operator and is.
        if (rule.needs === 'viewer') expect(rule.action, route).toBeUndefined();
        else expect(rule.action, route).toMatch(/^[a-z_]+\.[a-z_.]+$/);
        continue;
      }
      expect(rule.needs, route).toBe('operator');
      expect(rule.action, route).toMatch(/^[a-z_]+\.[a-z_.]+$/);
    }
  });

  it('have one action name each', () => {
    const actions = Object.values(ADMIN_ROUTE_RULES).flatMap((r) => (r.action ? [r.action] : []));
    expect(new Set(actions).size).toBe(actions.length);
  });
});
