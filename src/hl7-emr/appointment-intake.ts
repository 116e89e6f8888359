// SIU^S12 (a new appointment: the EMR assigns a filler id) and S13/S14/S15 (reschedule, modification,
// cancellation) as the EMR applies them. Appointments are keyed by SCH-1's first component, the service's
// id, so a change applies whether SCH-2 is filled or not, and an S12 for an SCH-1 it holds makes nothing new.
// A new or changed appointment's SIU notification (SCH-1 and SCH-2, both patient ids) joins the commit. AIP-3 and
// AIL-3 are kept as received, for a person (and a test) to see whom and where the adapter booked.
import type { Hl7Message } from '@medplum/core';
import type { Refusal } from './ack.ts';
import { componentOf } from './hl7-text.ts';
import type { EmrAppointment } from './model.ts';
import { type AppointmentTrigger, appointmentNotification, type PatientIds } from './outbound.ts';
import type { IntakeContext } from './patient-intake.ts';
import { patientOf } from './pid.ts';
import type { Commit } from './state.ts';

export const APPOINTMENT_TRIGGERS: readonly string[] = ['S12', 'S13', 'S14', 'S15'] satisfies AppointmentTrigger[];

interface Received {
  serviceId: string;
  start: string;
  status: string;
  patient: ReturnType<typeof patientOf>;
  /** AIP-3 and AIL-3 as received (HL7 text); '' when absent. */
  participants: Required<Pick<EmrAppointment, 'doctor' | 'location'>>;
}

function read(ctx: IntakeContext, msg: Hl7Message): Received | Refusal {
  const sch = msg.getSegment('SCH');
  const serviceId = componentOf(sch?.getField(1), 1);
  if (!serviceId) return { field: 'SCH-1', code: '101', text: 'no placer appointment id' };
  const namespace = componentOf(sch?.getField(1), 2);
  if (namespace && namespace !== ctx.assigningAuthority)
    return { field: 'SCH-1', code: '204', text: `placer appointment id under ${namespace}, not ${ctx.assigningAuthority}` };
  return {
    serviceId,
    start: componentOf(sch?.getField(11), 4) || componentOf(msg.getSegment('TQ1')?.getField(7), 1),
    status: componentOf(sch?.getField(25), 1),
    patient: patientOf(msg, ctx.assigningAuthority),
    participants: { doctor: msg.getSegment('AIP')?.getField(3)?.toString() ?? '', location: msg.getSegment('AIL')?.getField(3)?.toString() ?? '' },
  };
}

function changed(before: EmrAppointment, after: EmrAppointment): boolean {
  return (Object.keys(after) as (keyof EmrAppointment)[]).some((k) => before[k] !== after[k]);
}

export function applyAppointment(ctx: IntakeContext, trigger: AppointmentTrigger, msg: Hl7Message): Commit | Refusal {
  const r = read(ctx, msg);
  if ('field' in r) return r;
  const existing = ctx.state.appointment(r.serviceId);
  if (trigger === 'S12' && existing) return {};
  if (trigger !== 'S12' && !existing) return { field: 'SCH-1', code: '204', text: `no appointment with placer id ${r.serviceId}` };
  const appointment = existing ? updated(existing, trigger, r) : created(ctx, r);
  if (existing && !changed(existing, appointment)) return {};
  return { appointments: [appointment], queued: ctx.outbound ? [appointmentNotification(ctx.outbound, trigger, appointment, notifiedPatient(ctx, r))] : [] };
}

function created(ctx: IntakeContext, r: Received): EmrAppointment {
  const status = r.status || 'Booked';
  return {
    serviceId: r.serviceId,
    fillerId: ctx.state.nextFillerId(),
    start: r.start,
    status,
    cancelled: status === 'Cancelled',
    ...patientField(r, undefined),
    ...participantFields(r, undefined),
  };
}

/** A change keeps what the message leaves out; a cancellation stays cancelled. */
function updated(existing: EmrAppointment, trigger: AppointmentTrigger, r: Received): EmrAppointment {
  const status = r.status || (trigger === 'S15' ? 'Cancelled' : existing.status);
  const cancelled = existing.cancelled || trigger === 'S15' || status === 'Cancelled';
  return { ...existing, start: r.start || existing.start, status, cancelled, ...patientField(r, existing), ...participantFields(r, existing) };
}

/** AIP-3 and AIL-3 as the latest message that carried them gave them. */
const participantFields = (r: Received, existing: EmrAppointment | undefined): Pick<EmrAppointment, 'doctor' | 'location'> => {
  const doctor = r.participants.doctor || existing?.doctor;
  const location = r.participants.location || existing?.location;
  return { ...(doctor ? { doctor } : {}), ...(location ? { location } : {}) };
};

const patientField = (r: Received, existing: EmrAppointment | undefined): Pick<EmrAppointment, 'patientServiceId'> => {
  const id = r.patient.serviceId ?? existing?.patientServiceId;
  return id ? { patientServiceId: id } : {};
};

/** The patient in the notification's PID: with the MRN when the EMR knows them, else as the SIU named them. */
function notifiedPatient(ctx: IntakeContext, r: Received): PatientIds {
  const known = r.patient.serviceId ? ctx.state.patient(r.patient.serviceId) : undefined;
  if (known) return known;
  return { ...(r.patient.serviceId ? { serviceId: r.patient.serviceId } : {}), name: r.patient.name, phone: r.patient.phone };
}
