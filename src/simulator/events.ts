// The events the simulator sends: complete current-state snapshots built from its records, in the
// shapes of src/contract/events.ts (the interface's appointment body; the patient and document bodies of
// docs/decisions.md#patient-created-body and docs/decisions.md#document-event-bodies). Ids and mappings
// come back on later events once claimed.
import { randomUUID } from 'node:crypto';
import { toIso } from '../clock.ts';
import type { AppointmentEventType } from '../contract/events.ts';
import { toLocalIso } from './quiet-hours.ts';
import type { Clinic, Person, SimAppointment, SimDocument, Store } from './store.ts';

const envelope = (eventType: string, clinicId: string, nowMs: number) => ({
  eventId: randomUUID(),
  eventType,
  occurredAt: toIso(nowMs),
  clinicId,
});

const person = (p: Person, withPhone: boolean) => ({
  serviceId: p.id,
  externalId: p.externalId,
  name: p.name,
  ...(withPhone ? { phone: p.phone ?? '' } : {}),
});

export function appointmentSnapshot(store: Store, a: SimAppointment) {
  const clinic = store.get('clinic', a.clinicId) as Clinic;
  return {
    appointment: {
      serviceId: a.id,
      externalId: a.externalId,
      startsAt: a.startsAt,
      startsAtLocal: toLocalIso(Date.parse(a.startsAt), clinic.timeZone),
      mode: a.mode,
      status: a.status,
      token: a.token,
      notes: a.notes,
      payment: a.payment,
    },
    doctor: person(store.get('doctor', a.doctorId)!, false),
    patient: person(store.get('patient', a.patientId)!, true),
    location: person(store.get('location', a.locationId)!, false),
  };
}

export function appointmentEvent(store: Store, type: AppointmentEventType, a: SimAppointment, nowMs: number) {
  return { ...envelope(type, a.clinicId, nowMs), ...appointmentSnapshot(store, a) };
}

export function patientCreatedEvent(p: Person, nowMs: number) {
  return { ...envelope('patient.created', p.clinicId, nowMs), patient: person(p, true) };
}

export function documentEvent(d: SimDocument, nowMs: number) {
  return {
    ...envelope(d.status === 'SENT' ? 'document.delivered' : 'document.failed', d.clinicId, nowMs),
    document: {
      serviceId: d.id,
      externalId: d.externalId,
      documentType: d.documentType,
      patientServiceId: d.patientServiceId,
      status: d.status,
      ...(d.statusReason ? { statusReason: d.statusReason } : {}),
      ...(d.sentAt ? { sentAt: d.sentAt } : {}),
    },
  };
}

/** Deliveries with the same key wait for each other: one appointment's events stay in order. */
export function orderKeyOf(event: { eventId: string; appointment?: { serviceId: string } }): string {
  return event.appointment ? `appointment:${event.appointment.serviceId}` : `event:${event.eventId}`;
}
