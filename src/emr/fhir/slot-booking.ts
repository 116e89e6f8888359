// Appointments booked into the EMR's schedule (FHIR_APPOINTMENT_BOOKING=slot): the free Slot whose Schedule's
// actor is the doctor's Practitioner and whose start is the appointment's, found by
// `Slot?schedule.actor=Practitioner/{id}&start=eq{startsAt}&status=free` and checked on the Slot itself (a server
// may ignore a parameter); the Appointment names that one Slot and one participant, the patient, and takes the
// Slot's start and end. No free Slot is a refusal a person resolves (open the slot in the EMR, then replay). A
// booking whose answer was lost is found again by the appointment's identifier, or by the patient and the Slot,
// before anything is booked twice.
import type { Appointment, Slot } from '@medplum/fhirtypes';
import type { Logger } from '../../logger.ts';
import { EmrError } from '../errors.ts';
import type { AppointmentInput } from '../port.ts';
import type { FhirHttp } from './http.ts';
import { appointmentResource } from './mapping.ts';
import { searchAll } from './search.ts';

/** Whether two instants are the same moment, however each is written (offset, milliseconds). */
export const sameInstant = (a: string | undefined, b: string): boolean => a !== undefined && Date.parse(a) === Date.parse(b);

/** The practitioner's Slots at `startsAt` (the free ones only, when `free`), as the Slots themselves say. */
async function slotsAt(http: FhirHttp, practitionerId: string, startsAt: string, free: boolean): Promise<Slot[]> {
  const params = new URLSearchParams({ 'schedule.actor': `Practitioner/${practitionerId}`, start: `eq${startsAt}`, ...(free ? { status: 'free' } : {}) });
  const found = await searchAll<Slot>(http, 'Slot', `Slot?${params.toString()}`);
  return found.filter((s) => s.id && sameInstant(s.start, startsAt) && (!free || (s.status === 'free' && s.end)));
}

/** An appointment booked into `slotId` for the patient, as the appointment itself says. */
async function bookedInto(http: FhirHttp, slotId: string, patientId: string): Promise<string | undefined> {
  const params = new URLSearchParams({ slot: `Slot/${slotId}`, patient: `Patient/${patientId}` });
  const found = await searchAll<Appointment>(http, 'Appointment', `Appointment?${params.toString()}`);
  return found.find(
    (r) =>
      r.status !== 'cancelled' &&
      (r.slot ?? []).some((s) => s.reference === `Slot/${slotId}`) &&
      (r.participant ?? []).some((p) => p.actor?.reference === `Patient/${patientId}`),
  )?.id;
}

export interface SlotBooking {
  /** The free Slot at the appointment's start; a non-retryable refusal naming the practitioner and the times when none. */
  freeSlot(a: Pick<AppointmentInput, 'serviceId' | 'practitionerId' | 'startsAt' | 'startsAtLocal'>): Promise<Slot>;
  /** The Appointment to book into `slot`: one Slot, one participant (the patient), the Slot's start and end. */
  bookingOf(system: string, a: AppointmentInput, slot: Slot): Appointment;
  /** An appointment already booked for the patient into a Slot of the practitioner at its start (a booking whose answer was lost), if any. */
  bookedAt(a: Pick<AppointmentInput, 'practitionerId' | 'startsAt' | 'patientId'>): Promise<string | undefined>;
}

export function createSlotBooking(http: FhirHttp, logger: Logger): SlotBooking {
  return {
    async freeSlot(a) {
      const slots = (await slotsAt(http, a.practitionerId, a.startsAt, true)).sort((x, y) => x.id!.localeCompare(y.id!));
      if (!slots.length)
        throw new EmrError(
          'slot_unavailable',
          `no free Slot of Practitioner/${a.practitionerId} at ${a.startsAtLocal ?? a.startsAt} (${new Date(a.startsAt).toISOString()} UTC): open the slot in the EMR, then replay the event`,
        );
      if (slots.length > 1)
        logger.warn(
          { appointmentServiceId: a.serviceId, practitioner: `Practitioner/${a.practitionerId}`, slots: slots.map((s) => `Slot/${s.id}`) },
          'more than one free Slot at this time: the first by id is booked',
        );
      return slots[0]!;
    },
    bookingOf(system, a, slot) {
      const built = appointmentResource(system, a);
      return {
        ...built,
        status: 'booked',
        start: slot.start!,
        end: slot.end!,
        slot: [{ reference: `Slot/${slot.id}` }],
        participant: [{ actor: { reference: `Patient/${a.patientId}` }, status: 'accepted' }],
      };
    },
    async bookedAt(a) {
      for (const slot of await slotsAt(http, a.practitionerId, a.startsAt, false)) {
        const booked = await bookedInto(http, slot.id!, a.patientId);
        if (booked) return booked;
      }
      return undefined;
    },
  };
}
