// A processor on an in-memory SQLite database (its stores from createSqliteProcessorStores) with a manual
// clock, an in-memory EMR and a recording service client; events go into the inbox through the receiver's inbox
// store.
import { randomUUID } from 'node:crypto';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { openDatabase, type Db } from '../../src/sqlite/open.ts';
import { createMemoryEmr, type MemoryEmr } from '../../src/emr/memory/index.ts';
import type { EmrPort, EmrRecord, KnownRecord } from '../../src/emr/port.ts';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createProcessor, type Processor } from '../../src/processor/index.ts';
import type { ProcessorStores } from '../../src/storage/processor-stores.ts';
import { createSqliteDocumentStore } from '../../src/storage/sqlite/documents.ts';
import { createSqliteInboxStore } from '../../src/storage/sqlite/inbox.ts';
import { createSqliteProcessorStores } from '../../src/storage/sqlite/processor-stores.ts';
import type { DocumentEvent } from '../../src/contract/events.ts';
import { captureLogger } from './log-capture.ts';
import { appointmentEventBody } from './webhooks.ts';

export interface ProcessorFixture {
  db: Db;
  /** The processor's stores over `db` (the one set the processor uses). */
  stores: ProcessorStores;
  clock: ManualClock;
  emr: MemoryEmr;
  metrics: Metrics;
  processor: Processor;
  mappingsPut: { entityType: string; serviceId: string; externalId: string }[];
  /** Makes the next putMapping calls fail with this error. */
  failMappings: (err: unknown | undefined) => void;
  documentEvents: DocumentEvent[];
  logLines: () => Record<string, unknown>[];
  store(body: unknown, eventId?: string): string;
  state(eventId: string): { state: string; attempts: number; last_error: string | null; next_attempt_at: number } | undefined;
}

export function processorFixture(settings: Record<string, string> = {}): ProcessorFixture {
  const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
  const clock = createManualClock();
  const emr = createMemoryEmr();
  const metrics = createMetrics();
  const { logger, lines } = captureLogger();
  const mappingsPut: ProcessorFixture['mappingsPut'] = [];
  let mappingError: unknown;
  const documentEvents: DocumentEvent[] = [];
  const config = parseConfig({ PROCESSOR_MAX_ATTEMPTS: '4', PROCESSOR_BACKOFF_BASE_MS: '1000', PROCESSOR_BACKOFF_MAX_MS: '8000', ...settings });
  const stores = createSqliteProcessorStores(db, clock);
  const documents = createSqliteDocumentStore(db, clock);
  const processor = createProcessor({
    stores,
    pruneFinishedDocuments: (cutoffMs) => documents.pruneFinished(cutoffMs),
    clock,
    logger,
    emr,
    metrics,
    config,
    random: () => 0.5,
    serviceClient: {
      async putMapping(entityType, serviceId, externalId) {
        if (mappingError) throw mappingError;
        mappingsPut.push({ entityType, serviceId, externalId });
      },
    },
    documentEvents: {
      async apply(e) {
        documentEvents.push(e);
      },
    },
  });
  const inbox = createSqliteInboxStore(db);
  const state = db.prepare(
    'SELECT p.state, p.attempts, p.last_error, p.next_attempt_at FROM processing p JOIN inbox_events e ON e.id = p.inbox_id WHERE e.event_id = ?',
  );
  return {
    db,
    stores,
    clock,
    emr,
    metrics,
    processor,
    mappingsPut,
    documentEvents,
    failMappings: (err) => {
      mappingError = err;
    },
    logLines: lines,
    store(body, eventId) {
      const raw = typeof body === 'string' ? body : JSON.stringify(body);
      const id = eventId ?? (body as { eventId?: string }).eventId ?? randomUUID();
      const [duplicate] = inbox.insertBatch([
        { eventId: id, eventType: (body as { eventType?: string }).eventType ?? 'unknown', headers: {}, body: Buffer.from(raw), receivedAt: clock.now() },
      ]) as boolean[];
      if (duplicate) throw new Error(`${id}: stored already`);
      return id;
    },
    state: (eventId) => state.get(eventId) as ReturnType<ProcessorFixture['state']>,
  };
}

/** An appointment event for one appointment; each override changes one thing. */
export function appointmentEvent(
  o: { serviceId?: string; eventType?: string; occurredAt?: string; status?: string; externalIds?: boolean; startsAt?: string } = {},
) {
  const base = appointmentEventBody({ eventType: o.eventType ?? 'appointment.created', occurredAt: o.occurredAt ?? '2026-01-15T09:00:00.000Z' });
  const sid = o.serviceId ?? 'apt_1';
  const ext = (id: string) => (o.externalIds ? `emr-${id}` : null);
  base.appointment = {
    ...(base.appointment as object),
    serviceId: sid,
    externalId: ext(sid),
    ...(o.status ? { status: o.status } : {}),
    ...(o.startsAt ? { startsAt: o.startsAt } : {}),
  };
  base.patient = { ...(base.patient as object), serviceId: `pat_${sid}`, externalId: ext(`pat_${sid}`) };
  base.doctor = { ...(base.doctor as object), externalId: ext('doc_1') };
  base.location = { ...(base.location as object), externalId: ext('loc_1') };
  return base;
}

/**
 * claimAppointment over an EMR whose find-or-create is not atomic (`racy`): each participant is found or made
 * as the racy ensure methods do, at once, then the appointment; undefined while the EMR's transactions are off.
 */
export function racyClaim(
  emr: MemoryEmr,
  racy: (kind: 'patient' | 'practitioner' | 'location') => (input: { serviceId: string }) => Promise<EmrRecord>,
): MemoryEmr['claimAppointment'] {
  const ensureAppointment = emr.ensureAppointment.bind(emr);
  const participant = async (kind: 'patient' | 'practitioner' | 'location', p: KnownRecord | { serviceId: string }): Promise<EmrRecord> =>
    'serviceId' in p ? racy(kind)(p) : { id: p.id, created: false };
  return async (claim) => {
    if (!emr.transactions) return undefined;
    const [patient, practitioner, location] = await Promise.all([
      participant('patient', claim.patient),
      participant('practitioner', claim.practitioner),
      participant('location', claim.location),
    ]);
    const appointment = await ensureAppointment({ ...claim.appointment, patientId: patient.id, practitionerId: practitioner.id, locationId: location.id });
    return { patient, practitioner, location, appointment };
  };
}

/** The EmrPort methods an event's applying calls: what a test swaps for a real EMR's, keeping the fixture's others. */
const APPLYING_METHODS = [
  'ensurePatient',
  'ensurePractitioner',
  'ensureLocation',
  'ensureAppointment',
  'updateAppointment',
  'updatePatient',
  'claimAppointment',
] as const;

/** Makes the fixture's EMR apply events through `port` (a real FHIR adapter, say): its applying methods replace the twin's. */
export function applyThrough(emr: MemoryEmr, port: Pick<EmrPort, (typeof APPLYING_METHODS)[number]>): void {
  for (const k of APPLYING_METHODS) Object.assign(emr, { [k]: port[k] });
}
