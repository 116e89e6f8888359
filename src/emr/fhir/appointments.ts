// Appointments on the FHIR side, in either booking mode (FHIR_APPOINTMENT_BOOKING). `create`: a free-standing
// Appointment with start and its three participants, found or created by the service's id (in one transaction
// with the records it names where the EMR declares transactions: ./transaction.ts). `slot`: booked into the
// doctor's free Slot at its start (./slot-booking.ts), the patient its one participant. Either way a change is
// read, merged on the fields emr-bridge owns and written under If-Match (./changes.ts, ./appointment-merge.ts);
// in `slot` mode a new start replaces the Slot (the EMR moves start and end with it), and the old one is the
// EMR's to free.
import type { Appointment } from '@medplum/fhirtypes';
import type { Logger } from '../../logger.ts';
import type { AppointmentInput, EmrPort, EmrRecord } from '../port.ts';
import { mergeAppointment } from './appointment-merge.ts';
import type { CapabilityCheck } from './capabilities.ts';
import type { Changes } from './changes.ts';
import type { Claims } from './claims.ts';
import type { FhirHttp } from './http.ts';
import { APPOINTMENT_STATUS, appointmentResource, isKnownStatus, UNKNOWN_STATUS_FALLBACK } from './mapping.ts';
import { createSlotBooking, sameInstant } from './slot-booking.ts';
import { createAppointmentClaims } from './transaction.ts';

export interface AppointmentDeps {
  http: FhirHttp;
  system: string;
  claims: Claims;
  changes: Changes;
  capabilities: CapabilityCheck;
  logger: Logger;
  booking: 'create' | 'slot';
}

type AppointmentOperations = Pick<EmrPort, 'ensureAppointment' | 'updateAppointment' | 'claimAppointment'>;

/** The statuses a booked appointment moves to in `slot` mode: the service's cancelled, completed and no-show. */
const SLOT_STATUS_CHANGES: readonly Appointment['status'][] = ['cancelled', 'fulfilled', 'noshow'];

/**
 * The status `slot` mode writes: one of those changes when the snapshot says so, else the EMR's own (booked, or
 * where its staff moved it). A scheduling EMR takes no other status after booking (pending or proposed, an unknown
 * one's fallback, would be refused); the service's own status is still in the service-status extension.
 */
function slotStatus(serviceStatus: string, emrStatus: Appointment['status']): Appointment['status'] {
  const mapped = APPOINTMENT_STATUS[serviceStatus] ?? UNKNOWN_STATUS_FALLBACK;
  return SLOT_STATUS_CHANGES.includes(mapped) ? mapped : emrStatus;
}

export function createAppointmentOperations(deps: AppointmentDeps): AppointmentOperations {
  const { system, claims, changes } = deps;
  const warnUnknownStatus = (serviceId: string, status: string) => {
    if (!isKnownStatus(status)) deps.logger.warn({ serviceId, status }, 'unknown appointment status kept as an extension');
  };
  const slots = createSlotBooking(deps.http, deps.logger);

  /** Books the appointment into its Slot, unless a booking of it exists already (by its identifier, or by its patient and Slot). */
  async function book(a: AppointmentInput): Promise<EmrRecord> {
    const found = await claims.findByServiceId('Appointment', a.serviceId);
    if (found) return { id: found, created: false };
    let slot: Awaited<ReturnType<typeof slots.freeSlot>>;
    try {
      slot = await slots.freeSlot(a);
    } catch (err) {
      // The Slot is busy with this very booking when an earlier answer was lost and the EMR kept no identifier.
      const lost = await slots.bookedAt(a);
      if (lost) return { id: lost, created: false };
      throw err;
    }
    const booked = await claims.create(slots.bookingOf(system, a, slot), a.serviceId);
    // Booked, as every booking starts; a snapshot that says otherwise (cancelled first, out of order) is applied now.
    if (slotStatus(a.status, 'booked') !== 'booked') return { ...booked, created: false };
    return booked;
  }

  /** The snapshot as slot mode writes it: its status and own fields, the patient, and a new Slot when its start moved. */
  async function slotChange(current: Appointment, a: AppointmentInput): Promise<Appointment> {
    const built: Appointment = {
      ...appointmentResource(system, a),
      status: slotStatus(a.status, current.status),
      participant: [{ actor: { reference: `Patient/${a.patientId}` }, status: 'accepted' }],
    };
    // The Slot decides start and end: the EMR moves them with the Slot, and refuses them changed on their own.
    const { start: _start, ...rest } = built;
    if (sameInstant(current.start, a.startsAt)) return mergeAppointment(current, rest);
    const slot = await slots.freeSlot(a);
    return mergeAppointment(current, { ...rest, slot: [{ reference: `Slot/${slot.id}` }] });
  }

  return {
    async ensureAppointment(a) {
      warnUnknownStatus(a.serviceId, a.status);
      if (deps.booking === 'slot') return book(a);
      return claims.findOrCreate(appointmentResource(system, a), a.serviceId);
    },
    // One call for an appointment and its records only where appointments are created free-standing.
    claimAppointment:
      deps.booking === 'slot'
        ? async () => undefined
        : createAppointmentClaims({ http: deps.http, system, capabilities: deps.capabilities, checkStatus: warnUnknownStatus }),
    async updateAppointment(id, a) {
      warnUnknownStatus(a.serviceId, a.status);
      // Read, merge the fields emr-bridge owns, write under If-Match: what the EMR's staff added stays.
      if (deps.booking === 'slot') {
        await changes.change<Appointment>('Appointment', id, (current) => slotChange(current, a));
        return;
      }
      const built = appointmentResource(system, a);
      await changes.change<Appointment>('Appointment', id, (current) => mergeAppointment(current, built));
    },
  };
}
