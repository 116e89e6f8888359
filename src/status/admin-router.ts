// GET /admin/status: each dependency (database, EMR, service), whether it works now, why not, and since when.
import Router from '@koa/router';
import type { DependencyStatus } from './dependency-status.ts';

export function createStatusAdminRouter(deps: { status: DependencyStatus; databaseWritable: () => boolean }): Router {
  const router = new Router();
  router.get('/status', (ctx) => {
    // The database is asked now; the EMR and the service report with every call the adapter makes.
    if (deps.databaseWritable()) deps.status.ok('database');
    else deps.status.failing('database', 'database_unwritable: the inbox cannot take writes');
    ctx.body = { components: deps.status.components() };
  });
  return router;
}
