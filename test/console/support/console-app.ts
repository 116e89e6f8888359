// The console mounted by createApp over the fakes (./fakes.ts), the real credential check and throttle,
// sessions in an in-memory SQLite database (the storage's own store), and a manual clock; plus a signed-in supertest agent (it keeps cookies as a browser does) and the
// CSRF token read from a page's hidden field.
import request from 'supertest';
import { createCredentialCheck, sha256Hex } from '../../../src/access/credentials.ts';
import { createSignInThrottle } from '../../../src/access/throttle.ts';
import { createManualClock, type ManualClock } from '../../../src/clock.ts';
import { type ConsoleDeps, createConsoleRouter } from '../../../src/console/router.ts';
import { openDatabase } from '../../../src/sqlite/open.ts';
import { createApp, type AppDeps } from '../../../src/app/app.ts';
import { silentLogger } from '../../../src/logger.ts';
import { createMetrics } from '../../../src/metrics/metrics.ts';
import { ADAPTER_MIGRATIONS } from '../../../src/paths.ts';
import type { ConsoleSessionStore } from '../../../src/storage/console-sessions.ts';
import { createSqliteConsoleSessionStore } from '../../../src/storage/sqlite/console-sessions.ts';
import { fakeActions, fakeAuditor, fakeData, T0 } from './fakes.ts';

export const OPERATOR_TOKEN = 'console-operator-token-0001';
export const VIEWER_TOKEN = 'console-viewer-token-00001';

export function consoleApp(
  opts: {
    surface?: AppDeps['surface'];
    sessionMinutes?: number;
    available?: () => boolean;
    sessionStore?: ConsoleSessionStore;
    clock?: ManualClock;
    quarantine?: ConsoleDeps['quarantine'];
    emrDowntime?: ConsoleDeps['emrDowntime'];
    crosswalk?: ConsoleDeps['crosswalk'];
    /** The audit trail, when a part built before the console (the crosswalk) records into it too. */
    auditor?: ReturnType<typeof fakeAuditor>;
  } = {},
) {
  const clock = opts.clock ?? createManualClock(T0);
  const data = fakeData();
  const actions = fakeActions(data);
  const auditor = opts.auditor ?? fakeAuditor(clock);
  const credentials = createCredentialCheck({
    adminToken: OPERATOR_TOKEN,
    credentials: [{ name: 'day-viewer', role: 'viewer', sha256: sha256Hex(VIEWER_TOKEN) }],
  });
  const throttle = createSignInThrottle({ clock });
  const logger = silentLogger();
  // Another console (a second replica, or the adapter after a restart) may share the sessions of one.
  const sessionStore = opts.sessionStore ?? createSqliteConsoleSessionStore(openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS }));
  const consoleRouter = createConsoleRouter({
    sessionStore,
    data,
    actions,
    credentials,
    auditor,
    throttle,
    clock,
    logger,
    sessionMinutes: opts.sessionMinutes ?? 30,
    ...(opts.available ? { available: opts.available } : {}),
    ...(opts.quarantine ? { quarantine: opts.quarantine } : {}),
    ...(opts.emrDowntime ? { emrDowntime: opts.emrDowntime } : {}),
    ...(opts.crosswalk ? { crosswalk: opts.crosswalk } : {}),
  });
  const app = createApp({
    logger,
    metrics: createMetrics(),
    routers: [],
    adminRouters: [],
    adminToken: OPERATOR_TOKEN,
    credentials,
    auditor,
    signInThrottle: throttle,
    consoleRouter,
    readiness: [],
    surface: opts.surface ?? 'all',
  });
  return { app, server: app.callback(), clock, data, actions, auditor, sessionStore };
}

export type ConsoleApp = ReturnType<typeof consoleApp>;

/** The value of the page's hidden CSRF field. */
export function csrfOf(html: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no csrf field on the page');
  return m[1]!;
}

/** Signs in with `token` through the sign-in form, as a browser would: the agent (keeping its cookies) and the answer. */
export async function signInThroughForm(c: ConsoleApp, token = OPERATOR_TOKEN) {
  const agent = request.agent(c.server);
  const form = await agent.get('/console/sign-in').expect(200);
  const res = await agent
    .post('/console/sign-in')
    .type('form')
    .send({ token, csrf: csrfOf(form.text) })
    .expect(303);
  return { agent, res };
}

/** A supertest agent signed in with `token`. */
export async function signedIn(c: ConsoleApp, token = OPERATOR_TOKEN) {
  return (await signInThroughForm(c, token)).agent;
}
