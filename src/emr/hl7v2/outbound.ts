// The port's writes as HL7 v2 messages (docs/connecting-an-hl7-emr.md): a patient's first snapshot an ADT^A28 (or A04),
// a change of name or phone an A31 (or A08); an appointment's creation an SIU^S12, a new time an S13, a new
// status or payment an S14, a cancellation an S15. The EMR names its ids later (./inbound.ts), so every claim
// answers the port's handle (pending). What the port must remember across restarts and replicas is kept in its
// share of the store (identifiers only): which claims the EMR acknowledged, the last time and status it sent
// of each appointment, and the MRNs and filler ids the EMR named. MSH-10 is derived from what a message is
// for, so the same message sent again (after a timeout, a crash) carries the same MSH-10. A doctor or location
// reaches the port as its handle (named by the service's id) or as the EMR id the processor resolved from the
// crosswalk (named by that id alone), with its name in the appointment's snapshot.
import { createHash } from 'node:crypto';
import type { AppointmentInput, EmrPort, EmrRecord, PatientClaim, PatientInput } from '../port.ts';
import type { EmrStateStore } from '../../storage/emr-state.ts';
import { buildPatientMessage } from './messages/adt.ts';
import type { HeaderContext } from './messages/header.ts';
import { type AppointmentTrigger, buildAppointmentMessage, type NamedParticipant } from './messages/siu.ts';
import { handleOf, serviceIdOfHandle } from './refs.ts';
import { type MllpSend, sendAccepted } from './send.ts';
import type { Hl7Settings } from './settings.ts';

export interface OutboundDeps {
  settings: Hl7Settings;
  send: MllpSend;
  /** The port's share of the store; there once the port started. */
  state(): EmrStateStore;
  now(): number;
}

/** State keys: identifiers only. */
export const KEYS = {
  acknowledged: (kind: 'patient' | 'appointment', serviceId: string) => `ack:${kind}:${serviceId}`,
  mrn: (serviceId: string) => `mrn:${serviceId}`,
  /** The service id a patient was claimed under, by the MRN the EMR named it with. */
  patientByMrn: (mrn: string) => `patient-by-mrn:${mrn}`,
  filler: (serviceId: string) => `filler:${serviceId}`,
  emrOwned: (serviceId: string) => `emr-owned:${serviceId}`,
};

/** The last time and status the EMR acknowledged of an appointment: which trigger the next snapshot is. */
interface SentAppointment {
  startsAt: string;
  status: string;
}

/** MSH-10 for what a message is for: the same for that message however often it is sent, unique otherwise. */
export const controlIdFor = (purpose: string): string => createHash('sha256').update(purpose).digest('base64url').slice(0, 20);

type Outbound = Pick<
  EmrPort,
  'ensurePatient' | 'updatePatient' | 'linkPatient' | 'ensurePractitioner' | 'ensureLocation' | 'ensureAppointment' | 'updateAppointment'
>;

export function createOutbound(deps: OutboundDeps): Outbound {
  const { settings } = deps;
  // The patient's name for PID-5, from the snapshots this process applied. A name is patient data: it is never
  // stored, so after a restart a message may carry identifiers alone.
  const patients = new Map<string, PatientInput>();

  const header = (purpose: string): HeaderContext => ({
    ...settings.header,
    assigningAuthority: settings.assigningAuthority,
    controlId: controlIdFor(purpose),
    now: deps.now(),
  });
  const pending = (entityType: 'patient' | 'appointment' | 'doctor' | 'location', serviceId: string, created: boolean): EmrRecord => ({
    id: handleOf(entityType, serviceId),
    created,
    pending: true,
  });
  /** AIP-3's or AIL-3's participant: the port's handle names it by the service's id, anything else is the EMR's id. */
  const participant = (id: string, name: string | undefined): NamedParticipant => {
    const serviceId = serviceIdOfHandle(id);
    return serviceId === undefined ? { emrId: id, name: name ?? '' } : { serviceId, name: name ?? '' };
  };

  /** The patient a message names: the snapshot this process has, with the MRN once the EMR named it. */
  async function patientFor(id: string): Promise<PatientInput & { mrn?: string }> {
    const state = deps.state();
    const serviceId = serviceIdOfHandle(id) ?? (await state.get(KEYS.patientByMrn(id))) ?? id;
    const known = patients.get(serviceId) ?? { serviceId, name: '', phone: '' };
    const mrn = serviceIdOfHandle(id) === undefined && id !== serviceId ? id : await state.get(KEYS.mrn(serviceId));
    return { ...known, ...(mrn ? { mrn } : {}) };
  }

  async function sendPatient(trigger: 'created' | 'changed', p: PatientInput, purpose: string, mrn?: string): Promise<void> {
    const message = buildPatientMessage(header(purpose), {
      trigger: settings.patientEvents[trigger],
      patient: p,
      ...(mrn ? { mrn } : {}),
      ...(settings.emrAssigningAuthority ? { emrAssigningAuthority: settings.emrAssigningAuthority } : {}),
    });
    await sendAccepted(deps.send, message.message, `ADT^${settings.patientEvents[trigger]} for patient ${p.serviceId}`, `patient:${p.serviceId}`);
  }

  async function sendAppointment(trigger: AppointmentTrigger, a: AppointmentInput, purpose: string): Promise<void> {
    const state = deps.state();
    const filler = await state.get(KEYS.filler(a.serviceId));
    const message = buildAppointmentMessage(header(purpose), {
      trigger,
      appointment: a,
      ...(filler ? { fillerId: filler } : {}),
      patient: await patientFor(a.patientId),
      ...(settings.emrAssigningAuthority ? { emrAssigningAuthority: settings.emrAssigningAuthority } : {}),
      doctor: participant(a.practitionerId, a.practitionerName),
      location: participant(a.locationId, a.locationName),
    });
    await sendAccepted(deps.send, message.message, `SIU^${trigger} for appointment ${a.serviceId}`, `appointment:${a.serviceId}`);
    // Lazy: it shares the commit of the EMR's next notification. Lost in a crash, the same message (the same
    // MSH-10) goes again, which the EMR takes as the one it has.
    await state.put(KEYS.acknowledged('appointment', a.serviceId), JSON.stringify({ startsAt: a.startsAt, status: a.status } satisfies SentAppointment), {
      lazy: true,
    });
  }

  return {
    async ensurePatient(claim: PatientClaim) {
      const { externalId, ...p } = claim;
      patients.set(p.serviceId, p);
      const state = deps.state();
      if (await state.get(KEYS.acknowledged('patient', p.serviceId))) return pending('patient', p.serviceId, false);
      if (externalId) return adopt(p, externalId);
      await sendPatient('created', p, `new-patient:${p.serviceId}`);
      await state.put(KEYS.acknowledged('patient', p.serviceId), '1', { lazy: true });
      return pending('patient', p.serviceId, true);
    },
    async updatePatient(id, p) {
      patients.set(p.serviceId, { serviceId: p.serviceId, name: p.name, phone: p.phone });
      // The EMR's own patient keeps what the EMR has: a snapshot does not rename it (as with FHIR).
      if (await deps.state().get(KEYS.emrOwned(p.serviceId))) return { differences: [] };
      const digest = createHash('sha256')
        .update(JSON.stringify([p.name, p.phone]))
        .digest('base64url');
      await sendPatient('changed', p, `patient-change:${p.serviceId}:${digest}`, (await patientFor(id)).mrn);
      return { differences: [] };
    },
    async linkPatient(id, serviceId) {
      // A patient the EMR had (known to the service by its MRN) becomes known under the service's id as well.
      const known = patients.get(serviceId) ?? { serviceId, name: '', phone: '' };
      await sendPatient('changed', known, `patient-link:${serviceId}:${id}`, id);
      const state = deps.state();
      await state.putMany([...mrnEntries(serviceId, id), [KEYS.emrOwned(serviceId), '1']]);
    },
    // No message: the EMR knows its practitioners and locations; AIP-3 and AIL-3 name one nobody mapped by the
    // service's id, its name coming with the appointment.
    ensurePractitioner: async (d) => pending('doctor', d.serviceId, false),
    ensureLocation: async (l) => pending('location', l.serviceId, false),
    async ensureAppointment(a) {
      if (await deps.state().get(KEYS.acknowledged('appointment', a.serviceId))) return pending('appointment', a.serviceId, false);
      await sendAppointment('S12', a, `new-appointment:${a.serviceId}`);
      return pending('appointment', a.serviceId, true);
    },
    async updateAppointment(_id, a) {
      const sent = await deps.state().get(KEYS.acknowledged('appointment', a.serviceId));
      const trigger = triggerFor(sent ? (JSON.parse(sent) as SentAppointment) : undefined, a);
      await sendAppointment(trigger, a, `appointment-${trigger}:${a.serviceId}:${a.occurredAt}`);
    },
  };

  /** The EMR's own patient that the service knows by its MRN: marked with the service's id by an A31, never renamed. */
  async function adopt(p: PatientInput, mrn: string): Promise<EmrRecord> {
    const state = deps.state();
    await sendPatient('changed', p, `patient-adopt:${p.serviceId}:${mrn}`, mrn);
    await state.putMany([...mrnEntries(p.serviceId, mrn), [KEYS.emrOwned(p.serviceId), '1'], [KEYS.acknowledged('patient', p.serviceId), '1']]);
    return { id: mrn, created: false };
  }
}

/** Which SIU a snapshot of an existing appointment is: a cancellation S15, a new time S13, anything else S14. */
export function triggerFor(sent: SentAppointment | undefined, a: AppointmentInput): AppointmentTrigger {
  if (a.status === 'Cancelled') return 'S15';
  if (sent && sent.startsAt !== a.startsAt) return 'S13';
  return 'S14';
}

/** The MRN the EMR gave a patient, both ways: PID-3 names the patient by both ids in every later message. */
export const mrnEntries = (serviceId: string, mrn: string): [string, string][] => [
  [KEYS.mrn(serviceId), mrn],
  [KEYS.patientByMrn(mrn), serviceId],
];
