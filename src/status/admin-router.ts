// GET /admin/status: each dependency (database, EMR, service), whether it works now, why not, and since when.
import Router from '@koa/router';
import type { Inbox } from '../inbox/inbox.ts';
import type { DependencyStatus } from './dependency-status.ts';

export function createStatusAdminRouter(deps: { status: DependencyStatus; database: Pick<Inbox, 'isWritable' | 'writeFailure'> }): Router {
  const router = new Router();
  router.get('/status', (ctx) => {
    // The database is asked now (what its last commits met); the EMR and the service report with every call.
    reportDatabase(deps.status, deps.database);
    ctx.body = { components: deps.status.components() };
  });
  return router;
}

/** Asks the database now and reports it: what /admin/status and the console's overview show. */
export function reportDatabase(status: DependencyStatus, database: Pick<Inbox, 'isWritable' | 'writeFailure'>): void {
  if (database.isWritable()) {
    status.ok('database');
    return;
  }
  const code = database.writeFailure()?.code ?? 'database_unwritable';
  status.failing('database', `${code}: the store cannot take writes`);
}
