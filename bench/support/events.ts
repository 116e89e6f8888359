// The benchmarks' webhook bodies: copies of the appointment.created sample (samples/events/), each with
// a fresh eventId so every delivery is new to the inbox.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { loadSamples } from '../../src/replay/samples.ts';
import { ROOT } from './child.ts';

type AppointmentEvent = Record<string, unknown> & { appointment: Record<string, unknown>; patient: Record<string, unknown> };

const SAMPLE = loadSamples([join(ROOT, 'samples/events/01-appointment-created.json')], ROOT)[0]!.steps[0]!.body! as AppointmentEvent;

/** The sample with a fresh eventId; `appointmentId` gives the appointment and its patient ids of their own. */
export function appointmentEvent(o: { appointmentId?: string; eventType?: string; occurredAt?: string; startsAt?: string } = {}): AppointmentEvent {
  const event = structuredClone(SAMPLE);
  event.eventId = randomUUID();
  if (o.eventType) event.eventType = o.eventType;
  if (o.occurredAt) event.occurredAt = o.occurredAt;
  if (o.startsAt) event.appointment.startsAt = o.startsAt;
  if (o.appointmentId) {
    event.appointment.serviceId = o.appointmentId;
    event.patient.serviceId = `pat_${o.appointmentId}`;
  }
  return event;
}
