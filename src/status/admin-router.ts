// GET /admin/status: each dependency (database, EMR, service), whether it works now, why not, and since when;
// and what the EMR module does and does not do (an HL7 v2 EMR is not told a document's final status).
import Router from '@koa/router';
import type { Inbox } from '../inbox/inbox.ts';
import type { DependencyStatus } from './dependency-status.ts';

/** What the chosen EMR module does, for people and monitoring: its protocol, and where documents' final statuses go. */
export interface EmrCapabilities {
  protocol: string;
  /** 'emr': written back to the EMR (FHIR: a Communication); 'adapter': kept here only (admin API, console). */
  documentOutcomes: 'emr' | 'adapter';
  /** How documents reach the adapter: scanned on a schedule, or pushed by the EMR. */
  documents: 'scanned' | 'pushed';
}

export function createStatusAdminRouter(deps: {
  status: DependencyStatus;
  database: Pick<Inbox, 'isWritable' | 'writeFailure'>;
  emr?: EmrCapabilities;
}): Router {
  const router = new Router();
  router.get('/status', (ctx) => {
    // The database is asked now (what its last commits met); the EMR and the service report with every call.
    reportDatabase(deps.status, deps.database);
    ctx.body = { components: deps.status.components(), ...(deps.emr ? { capabilities: { emr: deps.emr } } : {}) };
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
