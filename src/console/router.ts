// The operator console at /console: server-rendered pages (one file each in pages/), a little JavaScript
// and CSS from assets/, sessions, CSRF and the audit of every action. createApp mounts this router on the
// admin surface (with the admin API: on ADMIN_PORT when it is set), never on the public-only surface.
// Order for every /console request: security headers, error pages, the session, then the open routes
// (assets, sign-in), the pages that need a session, and a 404 page for anything else.
import Router from '@koa/router';
import { registerAssets } from './assets.ts';
import type { ConsoleContext, ConsoleDeps } from './deps.ts';
import { errorPages, notFound } from './errors.ts';
import { attachSession, requireSession } from './guard.ts';
import { securityHeaders } from './headers.ts';
import { registerAudit } from './pages/audit.ts';
import { registerDeadLetters } from './pages/dead-letters.ts';
import { registerDocument } from './pages/document.ts';
import { registerDocuments } from './pages/documents.ts';
import { registerEmrDowntime } from './pages/emr-downtime.ts';
import { registerEvent } from './pages/event.ts';
import { registerEvents } from './pages/events.ts';
import { registerMappings } from './pages/mappings.ts';
import { registerNeedsMapping } from './pages/needs-mapping.ts';
import { registerCrosswalkImport } from './pages/needs-mapping-import.ts';
import { registerOverview } from './pages/overview.ts';
import { registerQuarantine } from './pages/quarantine.ts';
import { registerSignIn } from './pages/sign-in.ts';
import { createSessionStore } from './session.ts';

export type { ConsoleDeps } from './deps.ts';

export function createConsoleRouter(deps: ConsoleDeps): Router {
  const c: ConsoleContext = { ...deps, sessions: createSessionStore({ store: deps.sessionStore, clock: deps.clock, idleMinutes: deps.sessionMinutes }) };

  const open = new Router({ prefix: '/console' });
  registerAssets(open);
  registerSignIn(open, c);

  const pages = new Router({ prefix: '/console' });
  pages.use(requireSession());
  registerOverview(pages, c);
  registerEvents(pages, c);
  registerEvent(pages, c);
  registerDeadLetters(pages, c);
  registerNeedsMapping(pages, c);
  registerCrosswalkImport(pages, c);
  registerQuarantine(pages, c);
  registerDocuments(pages, c);
  registerDocument(pages, c);
  registerMappings(pages, c);
  registerAudit(pages, c);
  registerEmrDowntime(pages, c);

  const router = new Router();
  router.all(
    ['/console', '/console/{*rest}'],
    securityHeaders,
    errorPages({ logger: deps.logger, ...(deps.available ? { available: deps.available } : {}) }),
    attachSession(c),
    open.routes(),
    pages.routes(),
    () => {
      throw notFound();
    },
  );
  return router;
}
