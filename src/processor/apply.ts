// Applies one validated event to the EMR. Each entity is found or created through the EmrPort (which
// never makes two records for one serviceId, and finds a patient the service knows by an EMR id) and its
// EMR id recorded at once; an entity the service has not mapped yet (externalId null) gets its mapping
// queued for the service. A pushed EMR's record whose id comes later (pending) gets neither: its mapping is
// recorded and queued when the EMR names it (EmrInbound.recordIdentified). The caller marks the
// event applied afterwards, so a crash in between repeats only idempotent steps. Every record the event wrote
// or claimed is named as the EMR names it (`Patient/12`), stored with the applied mark for the console.
import { hash } from 'node:crypto';
import type { MappingEntityType } from '../contract/api.ts';
import type { AppointmentEvent, DocumentEvent, PatientCreatedEvent, WebhookEvent } from '../contract/events.ts';
import type { EmrPort, EmrRecord } from '../emr/port.ts';
import type { EntityLocks } from '../storage/entity-locks.ts';
import type { MappingStore } from '../storage/mappings.ts';
import type { MappingClaim } from '../storage/processing.ts';
import type { AppliedVersion, EntityVersions } from '../storage/versions.ts';

export interface DocumentEventSink {
  apply(event: DocumentEvent): Promise<void>;
}

export interface ApplyDeps {
  emr: EmrPort;
  mappings: Pick<MappingStore, 'find' | 'record'>;
  documentEvents: DocumentEventSink;
  locks: EntityLocks;
  versions: Pick<EntityVersions, 'newest' | 'note'>;
}

/** What applying an event leaves to record in the same transaction as its applied mark. */
export interface Applied {
  claims: Claim[];
  /** Snapshots applied besides the event's own entity (the patient inside an appointment event). */
  versions: { entityKey: string; version: AppliedVersion }[];
  /** The EMR records the event wrote or claimed, as the EMR's port names them (`Patient/12`), in the order met. */
  refs: string[];
}

/** A mapping to post once the event is marked applied. */
export type Claim = MappingClaim;

/** The EMR record of a service entity: the mapped one, or one found or created now (and claimed for the service when it has none). */
async function findOrClaim(
  deps: ApplyDeps,
  out: Pick<Applied, 'claims' | 'refs'>,
  entityType: MappingEntityType,
  entity: { serviceId: string; externalId: string | null },
  ensure: () => Promise<EmrRecord>,
): Promise<{ id: string; isNew: boolean; pending?: true }> {
  // A mapping, once recorded, never changes: one found needs no section.
  const mapped = await deps.mappings.find(entityType, entity.serviceId);
  // Find-or-create is one step per entity: two events naming the same new doctor make one record. The record
  // resolves once committed, inside the section, so whoever takes the key next (another replica too) finds it.
  const found =
    mapped !== undefined
      ? { id: mapped, isNew: false }
      : await deps.locks.run(`claim:${entityType}:${entity.serviceId}`, async () => {
          const known = await deps.mappings.find(entityType, entity.serviceId);
          if (known) return { id: known, isNew: false };
          const record = await ensure();
          // The port's handle of a record whose EMR id comes later is no mapping: the EMR's id will be.
          if (record.pending) return { id: record.id, isNew: record.created, pending: true as const };
          return { id: await deps.mappings.record(entityType, entity.serviceId, record.id), isNew: record.created };
        });
  if (entity.externalId === null && !('pending' in found)) out.claims.push({ entityType, serviceId: entity.serviceId, emrId: found.id });
  out.refs.push(deps.emr.refs.describe(entityType, found.id));
  return found;
}

/**
 * A patient record that already existed takes the event's snapshot of it, unless a newer one was applied
 * (only a record the adapter created changes: the EMR port keeps the EMR's own records as they are).
 * Check, write and version are one step per patient, so an older snapshot carried by another appointment's
 * event, applied at the same moment, can never land after a newer one.
 */
async function applyPatientSnapshot(
  deps: ApplyDeps,
  out: Applied,
  patient: { serviceId: string; externalId: string | null; name: string; phone: string },
  event: { eventId: string; occurredAt: string },
): Promise<string> {
  const { occurredAt } = event;
  const input = { serviceId: patient.serviceId, name: patient.name, phone: patient.phone };
  const entityKey = `patient:${patient.serviceId}`;
  return deps.locks.run(entityKey, async () => {
    // The service's externalId, when it has one, is an EMR patient id: the EMR's own record the service met
    // through a document (sent with patientExternalId), which this event must find, not duplicate.
    const record = await findOrClaim(deps, out, 'patient', patient, () => deps.emr.ensurePatient({ ...input, externalId: patient.externalId }));
    const applied = await deps.versions.newest(entityKey);
    if (applied !== undefined && occurredAt < applied.occurredAt) return record.id;
    const digest = hash('sha256', JSON.stringify([input.name, input.phone]), 'base64url');
    // A record the EMR owns keeps its name and phone; the EMR port reports (and logs) what differs.
    if (!record.isNew && applied?.hash !== digest) await deps.emr.updatePatient(record.id, { ...input, occurredAt });
    // Noted once the EMR has it, before the section ends, so the next section of this patient sees it; it is
    // also written with the event's applied mark.
    const version = { occurredAt, hash: digest };
    await deps.versions.note(entityKey, version, event.eventId);
    out.versions.push({ entityKey, version });
    return record.id;
  });
}

async function applyAppointment(deps: ApplyDeps, e: AppointmentEvent, out: Applied): Promise<void> {
  const patient = { id: await applyPatientSnapshot(deps, out, e.patient, e) };
  const doctor = await findOrClaim(deps, out, 'doctor', e.doctor, () => deps.emr.ensurePractitioner({ serviceId: e.doctor.serviceId, name: e.doctor.name }));
  const location = await findOrClaim(deps, out, 'location', e.location, () =>
    deps.emr.ensureLocation({ serviceId: e.location.serviceId, name: e.location.name }),
  );
  const a = e.appointment;
  const input = {
    serviceId: a.serviceId,
    status: a.status,
    startsAt: a.startsAt,
    startsAtLocal: a.startsAtLocal,
    mode: a.mode,
    token: a.token,
    notes: a.notes,
    payment: a.payment,
    patientId: patient.id,
    practitionerId: doctor.id,
    locationId: location.id,
    occurredAt: e.occurredAt,
  };
  const appointment = await findOrClaim(deps, out, 'appointment', a, () => deps.emr.ensureAppointment(input));
  // A record that already existed (found, not created by this call) gets this event's full snapshot.
  if (!appointment.isNew) await deps.emr.updateAppointment(appointment.id, input);
}

/** Returns the mappings to queue for the service, the snapshots applied and the records touched. */
export async function applyEvent(deps: ApplyDeps, event: WebhookEvent): Promise<Applied> {
  const out: Applied = { claims: [], versions: [], refs: [] };
  switch (event.eventType) {
    case 'patient.created':
      await applyPatientSnapshot(deps, out, (event as PatientCreatedEvent).patient, event);
      break;
    case 'document.delivered':
    case 'document.failed':
      await deps.documentEvents.apply(event);
      break;
    default:
      await applyAppointment(deps, event as AppointmentEvent, out);
  }
  return out;
}
