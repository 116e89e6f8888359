// GET /admin/status: each dependency (database, EMR, service), whether it works now, why not, and since when;
// what the EMR module does and does not do (an HL7 v2 EMR is not told a document's final status); and the EMR
// calls allowed in flight now (the adaptive limit, lowered while the EMR pushes back); and the events waiting for a
// person to map a record in the crosswalk, per entity type, since when.
import Router from '@koa/router';
import type { Inbox } from '../inbox/inbox.ts';
import { CROSSWALK_ENTITY_TYPES, type WaitingSummary } from '../storage/crosswalk.ts';
import type { AdaptiveLimit } from '../work/adaptive-limit.ts';
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
  /** The EMR calls' adaptive limit: shown as it stands now. */
  emrCalls?: Pick<AdaptiveLimit, 'limit' | 'max' | 'inFlight' | 'waiting'>;
  /** A pushed EMR's links (HL7 v2 over MLLP): configured and connected now. */
  emrLinks?: () => { configured: number; connected: number };
  /** The crosswalk's waiting events (CrosswalkStore.waiting). */
  waiting?: () => Promise<WaitingSummary[]>;
}): Router {
  const router = new Router();
  router.get('/status', async (ctx) => {
    // The database is asked now (what its last commits met); the EMR and the service report with every call.
    reportDatabase(deps.status, deps.database);
    const calls = deps.emrCalls;
    ctx.body = {
      components: deps.status.components(),
      ...(deps.emr ? { capabilities: { emr: deps.emr } } : {}),
      ...(calls ? { emrCalls: { limit: calls.limit(), max: calls.max, inFlight: calls.inFlight(), waiting: calls.waiting() } } : {}),
      ...(deps.emrLinks ? { emrLinks: deps.emrLinks() } : {}),
      ...(deps.waiting ? { waiting: waitingView(await deps.waiting()) } : {}),
    };
  });
  return router;
}

/** Every entity type, in the order patient, doctor, location: how many events wait for one, since when (ISO; null when none). */
export function waitingView(summary: readonly WaitingSummary[]) {
  return CROSSWALK_ENTITY_TYPES.map((entityType) => {
    const s = summary.find((w) => w.entityType === entityType);
    return { entityType, events: s?.events ?? 0, since: s?.oldestSince == null ? null : new Date(s.oldestSince).toISOString() };
  });
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
