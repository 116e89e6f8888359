// Small in-memory stand-ins for the console's ports (ConsoleData, ConsoleActions, Auditor) for the
// supertest-level console tests: a few events, dead letters (events and refused mappings), documents and
// mappings, and actions that move them as the real ones would (a replayed dead letter is pending again, a
// replayed or dismissed mapping no longer dead, a retried document queued).
import type { Auditor } from '../../../src/audit/auditor.ts';
import type { AuditEntry, AuditRecord } from '../../../src/storage/audit.ts';
import type { Clock } from '../../../src/clock.ts';
import type { ConsoleActions, ConsoleData, DeadMappingView, DocumentDetail, EventDetail, MappingView, Overview } from '../../../src/console/data.ts';

export const T0 = Date.parse('2026-01-15T10:00:00.000Z');

function event(eventId: string, eventType: string, state: string, extra: Partial<EventDetail> = {}): EventDetail {
  return {
    eventId,
    eventType,
    entityKey: `patient:pat_${eventId}`,
    state,
    attempts: state === 'dead' ? 3 : 1,
    receivedAt: T0,
    finishedAt: state === 'applied' ? T0 + 500 : null,
    headers: { 'x-service-event-id': eventId, 'x-service-event-type': eventType, 'x-service-key': 'key_1' },
    history: [
      { at: T0, state: 'pending', attempt: 0, reason: null },
      { at: T0 + 500, state, attempt: 1, reason: state === 'dead' ? 'EMR refused: 422' : null },
    ],
    emrRefs: state === 'applied' ? ['Patient/123'] : [],
    lastError: state === 'dead' ? 'EMR refused: 422' : null,
    bodyStored: true,
    ...extra,
  };
}

function document(externalId: string, status: string): DocumentDetail {
  return {
    externalId,
    documentType: 'lab_report',
    status,
    errorCode: status === 'FAILED' ? 'send_failed' : null,
    createdAt: T0,
    updatedAt: T0 + 1000,
    serviceId: 'pat_1',
    history: [
      { at: T0, status: 'queued', detail: 'found in the EMR' },
      { at: T0 + 1000, status, detail: null },
    ],
    retryable: status === 'FAILED',
  };
}

export interface FakeData extends ConsoleData {
  events_: Map<string, EventDetail>;
  /** Refused mappings, keyed `entityType/serviceId`; a replayed or dismissed one leaves. */
  deadMappings_: Map<string, DeadMappingView>;
  documents_: Map<string, DocumentDetail>;
  bodies: Map<string, string | null>;
  overview_: Overview;
}

export function fakeData(): FakeData {
  const events_ = new Map<string, EventDetail>(
    [
      event('evt_applied_1', 'patient.created', 'applied'),
      event('evt_dead_1', 'appointment.created', 'dead'),
      event('evt_dead_2', 'appointment.created', 'dead'),
      event('evt_dead_3', 'patient.updated', 'dead'),
      event('evt_<script>', 'patient.created', 'applied'),
    ].map((e) => [e.eventId, e]),
  );
  const bodies = new Map<string, string | null>([...events_.keys()].map((id) => [id, JSON.stringify({ eventId: id, data: { firstName: 'Ada' } })]));
  const documents_ = new Map<string, DocumentDetail>([document('doc_failed_1', 'FAILED'), document('doc_sent_1', 'SENT')].map((d) => [d.externalId, d]));
  const mappings: MappingView[] = [{ entityType: 'patient', serviceId: 'pat_1', emrId: 'Patient/123', posted: true }];
  const deadMappings_ = new Map<string, DeadMappingView>(
    [
      { entityType: 'patient', serviceId: 'pat_404', externalId: 'Patient/404', attempts: 1, reason: 'not_found: no patient pat_404' },
      { entityType: 'doctor', serviceId: 'doc_<b>', externalId: 'Practitioner/7', attempts: 1, reason: 'mapping_conflict: doctor doc_<b> is already mapped' },
    ].map((m) => [`${m.entityType}/${m.serviceId}`, m]),
  );
  const overview_: Overview = {
    components: [
      { name: 'database', ok: true },
      { name: 'emr', ok: false, reason: 'emr_unreachable: connect ECONNREFUSED', since: T0 },
      { name: 'service', ok: true },
    ],
    inboxDepth: 4,
    inboxOldestAt: T0 - 90_000,
    inboxAgeMs: 90_000,
    deadLetters: 3,
    deadMappings: 2,
    documentsByStatus: { FAILED: 1, SENT: 1 },
    ackLatencyMs: { p50: 2, p99: 9 },
    perMinute: Array.from({ length: 1440 }, (_, i) => ({ minute: T0 - (1439 - i) * 60_000, received: i % 60 === 0 ? 3 : 0, applied: i % 60 === 0 ? 2 : 0 })),
    openAlerts: [{ name: 'emr', ok: false, reason: 'emr_unreachable: connect ECONNREFUSED', since: T0 }],
  };
  const summary = ({ history: _h, headers: _hd, emrRefs: _e, lastError: _l, bodyStored: _b, ...s }: EventDetail) => s;
  return {
    events_,
    deadMappings_,
    documents_,
    bodies,
    overview_,
    overview: async () => overview_,
    async events(q) {
      const rows = [...events_.values()].filter(
        (e) => (!q.eventId || e.eventId === q.eventId) && (!q.eventType || e.eventType === q.eventType) && (!q.state || e.state === q.state),
      );
      const start = q.after ? Number(q.after) : 0;
      return { rows: rows.slice(start, start + q.limit).map(summary), next: start + q.limit < rows.length ? String(start + q.limit) : null };
    },
    event: async (id) => events_.get(id),
    eventBody: async (id) => bodies.get(id) ?? null,
    async deadLetters(q) {
      const rows = [...events_.values()].filter((e) => e.state === 'dead' && (!q.eventType || e.eventType === q.eventType));
      return { rows: rows.slice(0, q.limit).map((e) => ({ ...summary(e), reason: e.lastError })), next: rows.length > q.limit ? 'more' : null };
    },
    async deadMappings(q) {
      const rows = [...deadMappings_.values()];
      return { rows: rows.slice(0, q.limit), next: rows.length > q.limit ? 'more' : null };
    },
    async documents(q) {
      const rows = [...documents_.values()].filter((d) => !q.status || d.status === q.status);
      return { rows: rows.map(({ history: _h, serviceId: _s, retryable: _r, ...d }) => d), next: null };
    },
    document: async (id) => documents_.get(id),
    mappings: async (q) => mappings.filter((m) => m.serviceId === q.serviceId || m.emrId === q.emrId || m.emrId === `Patient/${q.emrId}`),
  };
}

export function fakeActions(data: FakeData): ConsoleActions & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async replay(ids) {
      calls.push(`replay ${ids.join(',')}`);
      const replayed = ids.filter((id) => data.events_.get(id)?.state === 'dead');
      for (const id of replayed) data.events_.get(id)!.state = 'pending';
      return { replayed, notDead: ids.filter((id) => !replayed.includes(id)) };
    },
    async replayAllOfType(type) {
      calls.push(`replayAll ${type}`);
      let events = 0;
      for (const e of data.events_.values())
        if (e.state === 'dead' && e.eventType === type) {
          e.state = 'pending';
          events++;
        }
      return { events };
    },
    async replayMapping(entityType, serviceId) {
      calls.push(`replayMapping ${entityType}/${serviceId}`);
      return data.deadMappings_.delete(`${entityType}/${serviceId}`);
    },
    async dismissMapping(entityType, serviceId, reason, by) {
      calls.push(`dismissMapping ${entityType}/${serviceId} ${reason} ${by}`);
      return data.deadMappings_.delete(`${entityType}/${serviceId}`);
    },
    async retryDocument(id) {
      calls.push(`retry ${id}`);
      const d = data.documents_.get(id);
      if (!d?.retryable) return { ok: false, reason: 'not failed here' };
      Object.assign(d, { status: 'queued', retryable: false });
      return { ok: true };
    },
  };
}

export function fakeAuditor(clock: Clock): Auditor & { entries: AuditRecord[] } {
  const entries: AuditRecord[] = [];
  return {
    entries,
    async record(e: AuditEntry) {
      entries.push({ ...e, targets: [...e.targets], id: entries.length + 1, at: clock.now() });
    },
    async page(q) {
      const rows = entries
        .filter((e) => (!q.actor || e.actor === q.actor) && (!q.action || e.action === q.action) && (!q.target || e.targets.includes(q.target)))
        .filter((e) => !q.before || e.id < q.before)
        .reverse();
      return { entries: rows.slice(0, q.limit), next: rows.length > q.limit ? rows[q.limit - 1]!.id : null };
    },
  };
}
