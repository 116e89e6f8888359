// SIU messages for an appointment's events: S12 created, S13 rescheduled, S14 completed / no-show / payment
// changed, S15 cancelled; every one is a complete snapshot (structure SIU_S12) carrying the patient's PID, so the
// EMR can match or register the patient from any of them. SCH-1 never changes: it is how the EMR matches the
// appointment until (and after) it has named its own id in SCH-2.
//
// Segments in SIU_S12 order: MSH SCH TQ1 [NTE] PID PV1 RGS AIL AIP (the standard puts the location
// group before the personnel group).
//
// | field    | type | value                                                                          |
// |----------|------|--------------------------------------------------------------------------------|
// | SCH-1    | EI   | `<appointment serviceId>^<AA>` (EI.1 id, EI.2 namespace)                        |
// | SCH-2    | EI   | `<fillerId>`: the EMR's id once known (its namespace is the EMR's to write)     |
// | SCH-6    | CE   | `<trigger>^<what happened>` (a required field)                                 |
// | SCH-11   | TQ   | TQ.3 duration `M<minutes>`, TQ.4 start, TQ.5 end: local time with its offset   |
// | SCH-25   | CE   | status: Approved→Booked, Pending→Pending, Cancelled→Cancelled, Completed→Complete, NoShow→Noshow, other as received |
// | TQ1-1    | SI   | `1`                                                                            |
// | TQ1-6    | CQ   | `<minutes>^min` when the duration is known                                     |
// | TQ1-7/8  | TS   | start / end, local time with its offset (`YYYYMMDDHHMMSS+HHMM`)                |
// | NTE-3    | FT   | the appointment's notes, when there are any (line breaks escaped `\X0A\`)       |
// | PID      |      | ./pid.ts                                                                       |
// | PV1-1/2  |      | `1`, `O` (outpatient)                                                          |
// | RGS-1    | SI   | `1`                                                                            |
// | AIL-3    | PL   | PL.1 location serviceId, PL.9 its name, PL.11 `<AA>` (assigning authority for location) |
// | AIP-3    | XCN  | XCN.1 doctor serviceId, XCN.2 family, XCN.3 given, XCN.9 `<AA>`                 |
//
// A doctor or location the crosswalk maps (or the snapshot's externalId names) travels by the EMR's own id in
// PL.1 / XCN.1 alone: no assigning authority, since the id is the EMR's, not the service's
// (docs/connecting-an-hl7-emr.md, "AIP-3 and AIL-3: the EMR's own ids from the crosswalk").
import type { AppointmentInput, PatientInput } from '../../port.ts';
import { at, type BuiltMessage, built, segment } from './compose.ts';
import { buildMsh, type HeaderContext } from './header.ts';
import { splitName } from './names.ts';
import { buildPid } from './pid.ts';
import { hl7DateTime, hl7DateTimePlusMinutes } from './time.ts';

export type AppointmentTrigger = 'S12' | 'S13' | 'S14' | 'S15';

const EVENT_REASON: Record<AppointmentTrigger, string> = {
  S12: 'New appointment',
  S13: 'Appointment rescheduled',
  S14: 'Appointment modified',
  S15: 'Appointment cancelled',
};

/** HL7 table 0278 (filler status codes) for the service's statuses; open enumeration: others pass as received. */
const FILLER_STATUS: Record<string, string> = {
  Approved: 'Booked',
  Pending: 'Pending',
  Cancelled: 'Cancelled',
  Completed: 'Complete',
  NoShow: 'Noshow',
};

export function fillerStatus(status: string): string {
  return Object.hasOwn(FILLER_STATUS, status) ? FILLER_STATUS[status]! : status;
}

/** A doctor or location as AIP-3 / AIL-3 name it: by the EMR's own id when it is known, else by the service's id. */
export type NamedParticipant = { name: string } & ({ emrId: string } | { serviceId: string });

/** The first component and the assigning authority of AIP-3 / AIL-3: the service's id under ours, the EMR's alone. */
const idOf = (p: NamedParticipant, aa: string): [string, string | undefined] => ('emrId' in p ? [p.emrId, undefined] : [p.serviceId, aa]);

export interface AppointmentMessageInput {
  trigger: AppointmentTrigger;
  appointment: Pick<AppointmentInput, 'serviceId' | 'status' | 'startsAt' | 'startsAtLocal'> & { durationMinutes?: number; notes?: string };
  /** SCH-2: the EMR's appointment id, once it has named it. */
  fillerId?: string;
  patient: PatientInput & { mrn?: string };
  emrAssigningAuthority?: string;
  doctor: NamedParticipant;
  location: NamedParticipant;
}

export function buildAppointmentMessage(header: HeaderContext, input: AppointmentMessageInput): BuiltMessage {
  const { trigger, appointment: apt, doctor, location } = input;
  const aa = header.assigningAuthority;
  // startsAtLocal carries the clinic's offset; startsAt (UTC) is the fallback for a snapshot without it.
  const startIso = apt.startsAtLocal ?? apt.startsAt;
  const start = hl7DateTime(startIso);
  const minutes = apt.durationMinutes !== undefined && apt.durationMinutes > 0 ? apt.durationMinutes : undefined;
  const end = minutes === undefined ? undefined : hl7DateTimePlusMinutes(startIso, minutes);
  const notes = apt.notes?.trim() ? apt.notes : undefined;
  const doctorName = splitName(doctor.name);
  const [doctorId, doctorAuthority] = idOf(doctor, aa);
  const [locationId, locationAuthority] = idOf(location, aa);

  return built([
    buildMsh(header, ['SIU', trigger, 'SIU_S12']),
    segment(
      'SCH',
      at({
        1: [apt.serviceId, aa],
        2: input.fillerId,
        6: [trigger, EVENT_REASON[trigger]],
        11: ['', '', minutes === undefined ? '' : `M${minutes}`, start, end],
        25: fillerStatus(apt.status),
      }),
    ),
    segment('TQ1', ['1', '', '', '', '', minutes === undefined ? '' : [String(minutes), 'min'], start, end]),
    ...(notes ? [segment('NTE', ['1', '', notes])] : []),
    buildPid({ ...input.patient, emrAssigningAuthority: input.emrAssigningAuthority }, aa),
    segment('PV1', ['1', 'O']),
    segment('RGS', ['1']),
    segment('AIL', ['1', '', [locationId, '', '', '', '', '', '', '', location.name, '', locationAuthority]]),
    segment('AIP', ['1', '', [doctorId, doctorName.family, doctorName.given, '', '', '', '', '', doctorAuthority]]),
  ]);
}
