// Applies one validated event to the EMR. Each entity is found or created through the EmrPort (which
// never makes two records for one serviceId) and its EMR id recorded at once; an entity the service
// has not mapped yet (externalId null) gets its mapping queued for the service. The caller marks the
// event applied afterwards, so a crash in between repeats only idempotent steps.
import type { MappingEntityType } from '../contract/api.ts';
import type { AppointmentEvent, DocumentEvent, PatientCreatedEvent, WebhookEvent } from '../contract/events.ts';
import type { EmrPort, EmrRecord } from '../emr/port.ts';
import type { MappingStore } from './mappings.ts';

export interface DocumentEventSink {
  apply(event: DocumentEvent): Promise<void>;
}

export interface ApplyDeps {
  emr: EmrPort;
  mappings: MappingStore;
  documentEvents: DocumentEventSink;
}

/** A mapping to post once the event is marked applied. */
export interface Claim {
  entityType: MappingEntityType;
  serviceId: string;
  emrId: string;
}

async function resolve(
  deps: ApplyDeps,
  claims: Claim[],
  entityType: MappingEntityType,
  entity: { serviceId: string; externalId: string | null },
  ensure: () => Promise<EmrRecord>,
): Promise<{ id: string; isNew: boolean }> {
  let id = deps.mappings.find(entityType, entity.serviceId);
  let isNew = false;
  if (!id) {
    const record = await ensure();
    id = deps.mappings.record(entityType, entity.serviceId, record.id);
    isNew = record.created;
  }
  if (entity.externalId === null) claims.push({ entityType, serviceId: entity.serviceId, emrId: id });
  return { id, isNew };
}

async function applyAppointment(deps: ApplyDeps, e: AppointmentEvent, claims: Claim[]): Promise<void> {
  const patient = await resolve(deps, claims, 'patient', e.patient, () =>
    deps.emr.ensurePatient({ serviceId: e.patient.serviceId, name: e.patient.name, phone: e.patient.phone }),
  );
  const doctor = await resolve(deps, claims, 'doctor', e.doctor, () =>
    deps.emr.ensurePractitioner({ serviceId: e.doctor.serviceId, name: e.doctor.name }),
  );
  const location = await resolve(deps, claims, 'location', e.location, () =>
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
  const appointment = await resolve(deps, claims, 'appointment', a, () => deps.emr.ensureAppointment(input));
  // A record that already existed (found, not created by this call) gets this event's full snapshot.
  if (!appointment.isNew) await deps.emr.updateAppointment(appointment.id, input);
}

async function applyPatient(deps: ApplyDeps, e: PatientCreatedEvent, claims: Claim[]): Promise<void> {
  await resolve(deps, claims, 'patient', e.patient, () =>
    deps.emr.ensurePatient({ serviceId: e.patient.serviceId, name: e.patient.name, phone: e.patient.phone }),
  );
}

/** Returns the mappings to queue for the service. */
export async function applyEvent(deps: ApplyDeps, event: WebhookEvent): Promise<Claim[]> {
  const claims: Claim[] = [];
  switch (event.eventType) {
    case 'patient.created':
      await applyPatient(deps, event, claims);
      break;
    case 'document.delivered':
    case 'document.failed':
      await deps.documentEvents.apply(event);
      break;
    default:
      await applyAppointment(deps, event, claims);
  }
  return claims;
}
