// Applies one validated event to the EMR. Each entity is found or created through the EmrPort (which
// never makes two records for one serviceId, and finds a patient the service knows by an EMR id) and its
// EMR id recorded at once; an entity the service has not mapped yet (externalId null) gets its mapping
// queued for the service. A pushed EMR's record whose id comes later (pending) gets neither: its mapping is
// recorded and queued when the EMR names it (EmrInbound.recordIdentified). The caller marks the
// event applied afterwards, so a crash in between repeats only idempotent steps. Every record the event wrote
// or claimed is named as the EMR names it (`Patient/12`), stored with the applied mark for the console. Where
// the port can (EmrPort.claimAppointment), a new appointment and the unmapped records it names are claimed in
// one EMR call, leaving what claiming them one by one (./apply-records.ts) would.
import type { AppointmentEvent, DocumentEvent, PatientCreatedEvent, WebhookEvent } from '../contract/events.ts';
import type { AppointmentClaim, AppointmentClaimed, AppointmentInput, EmrPort, EmrRecord } from '../emr/port.ts';
import type { EntityLocks } from '../storage/entity-locks.ts';
import type { MappingStore } from '../storage/mappings.ts';
import type { MappingClaim } from '../storage/processing.ts';
import type { AppliedVersion, EntityVersions } from '../storage/versions.ts';
import { type Participant, type Resolved, type ResolveDeps, resolveOwned } from './resolve.ts';
import {
  adoptCrosswalked,
  applyPatientSnapshot,
  claimKey,
  type Entity,
  type Found,
  findOrClaim,
  noteRecord,
  patientInput,
  patientKey,
  recordClaimed,
  takeSnapshot,
} from './apply-records.ts';

export interface DocumentEventSink {
  apply(event: DocumentEvent): Promise<void>;
}

export interface ApplyDeps {
  emr: EmrPort;
  mappings: Pick<MappingStore, 'find' | 'record'>;
  /** Where the records the EMR owns are mapped, and listed when unmapped (./resolve.ts). */
  crosswalk: ResolveDeps['crosswalk'];
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

/** The appointment's snapshot, without its participants' EMR ids. */
function appointmentSnapshot(e: AppointmentEvent): AppointmentClaim['appointment'] {
  const a = e.appointment;
  return {
    serviceId: a.serviceId,
    status: a.status,
    startsAt: a.startsAt,
    startsAtLocal: a.startsAtLocal,
    mode: a.mode,
    token: a.token,
    notes: a.notes,
    payment: a.payment,
    practitionerName: e.doctor.name,
    locationName: e.location.name,
    occurredAt: e.occurredAt,
  };
}

/** The appointment's snapshot naming its participants by their EMR ids. */
const appointmentInput = (e: AppointmentEvent, patient: { id: string }, doctor: { id: string }, location: { id: string }): AppointmentInput => ({
  ...appointmentSnapshot(e),
  patientId: patient.id,
  practitionerId: doctor.id,
  locationId: location.id,
});

/** The mapping of each record an appointment event names, where there is one. */
type Mapped = Partial<Record<'patient' | 'doctor' | 'location' | 'appointment', string>>;

async function mappedRecords(deps: ApplyDeps, e: AppointmentEvent): Promise<Mapped> {
  const [patient, doctor, location, appointment] = await Promise.all([
    deps.mappings.find('patient', e.patient.serviceId),
    deps.mappings.find('doctor', e.doctor.serviceId),
    deps.mappings.find('location', e.location.serviceId),
    deps.mappings.find('appointment', e.appointment.serviceId),
  ]);
  return { patient, doctor, location, appointment };
}

/** What to ask the EMR for: the records mapped named by their ids, the others to find or create. */
function claimOf(e: AppointmentEvent, mapped: Mapped): AppointmentClaim {
  const known = (id: string | undefined) => (id === undefined ? undefined : { id });
  return {
    patient: known(mapped.patient) ?? patientInput(e.patient),
    practitioner: known(mapped.doctor) ?? { serviceId: e.doctor.serviceId, name: e.doctor.name },
    location: known(mapped.location) ?? { serviceId: e.location.serviceId, name: e.location.name },
    appointment: appointmentSnapshot(e),
  };
}

/**
 * The one-call path (EmrPort.claimAppointment): an appointment with no mapping yet, whose patient is mapped or
 * one the service knows by no EMR id (one it knows by an EMR id is adopted by ensurePatient, one by one), is
 * claimed with every unmapped record it names in one EMR call. The sections are the same as one by one, held
 * together and taken in one order: the patient's first (as applyPatientSnapshot nests them), then the claim
 * key of each unmapped record, sorted; so no two events wait for each other in a ring. False when nothing was done
 * (the port cannot, or the appointment got a mapping meanwhile): the caller claims one by one.
 */
async function claimAtOnce(deps: ApplyDeps, e: AppointmentEvent, out: Applied, resolved: Resolved): Promise<boolean> {
  if (!deps.emr.claimAppointment) return false;
  const before = { ...(await mappedRecords(deps, e)), ...resolved };
  if (before.appointment !== undefined || (before.patient === undefined && e.patient.externalId !== null)) return false;
  const serviceIds = { patient: e.patient.serviceId, doctor: e.doctor.serviceId, location: e.location.serviceId, appointment: e.appointment.serviceId };
  const unmapped = (Object.keys(serviceIds) as (keyof Mapped)[]).filter((t) => before[t] === undefined);
  const keys = [patientKey(e.patient.serviceId), ...unmapped.map((t) => claimKey(t, serviceIds[t])).sort()];
  return deps.locks.runAll(keys, async () => {
    // A person's crosswalk mapping of one of them is adopted, as one by one (./apply-records.ts).
    for (const t of unmapped) await adoptCrosswalked(deps, t, serviceIds[t]);
    // Mappings recorded meanwhile (by an event that held these sections before) are named, not claimed.
    const mapped = { ...(await mappedRecords(deps, e)), ...resolved };
    if (mapped.appointment !== undefined) return false;
    const claimed = await deps.emr.claimAppointment!(claimOf(e, mapped));
    if (!claimed) return false;
    await settleClaim(deps, out, e, mapped, claimed);
    return true;
  });
}

/** What claiming one by one would have left: each mapping recorded and claimed, the refs in order, the patient's snapshot, the appointment's. */
async function settleClaim(deps: ApplyDeps, out: Applied, e: AppointmentEvent, mapped: Mapped, claimed: AppointmentClaimed): Promise<void> {
  const record = (entityType: keyof Mapped, entity: Entity, claim: EmrRecord): Promise<Found> | Found => {
    const known = mapped[entityType];
    return known !== undefined ? { id: known, isNew: false } : recordClaimed(deps, entityType, entity.serviceId, claim);
  };
  // Recorded together: the records asked for at one moment share one commit (the mapping store's group commit).
  const [p, d, l, a] = await Promise.all([
    record('patient', e.patient, claimed.patient),
    record('doctor', e.doctor, claimed.practitioner),
    record('location', e.location, claimed.location),
    record('appointment', e.appointment, claimed.appointment),
  ]);
  const patient = noteRecord(deps, out, 'patient', e.patient, p);
  await takeSnapshot(deps, out, e.patient, e, patient);
  const doctor = noteRecord(deps, out, 'doctor', e.doctor, d);
  const location = noteRecord(deps, out, 'location', e.location, l);
  const appointment = noteRecord(deps, out, 'appointment', e.appointment, a);
  // A record that already existed (found, not created by this call) gets this event's full snapshot.
  if (!appointment.isNew) await deps.emr.updateAppointment(appointment.id, appointmentInput(e, patient, doctor, location));
}

/** The records an appointment event names that the EMR may own, in the order a waiting event lists them. */
const participantsOf = (e: AppointmentEvent): Participant[] => [
  { entityType: 'patient', serviceId: e.patient.serviceId, externalId: e.patient.externalId, name: null },
  { entityType: 'doctor', serviceId: e.doctor.serviceId, externalId: e.doctor.externalId, name: e.doctor.name },
  { entityType: 'location', serviceId: e.location.serviceId, externalId: e.location.externalId, name: e.location.name },
];

async function applyAppointment(deps: ApplyDeps, e: AppointmentEvent, out: Applied): Promise<void> {
  // Every participant the EMR owns is resolved before anything is written: one unmapped, and the event waits.
  const resolved = await resolveOwned(deps, participantsOf(e));
  if (await claimAtOnce(deps, e, out, resolved)) return;
  const patient = { id: await applyPatientSnapshot(deps, out, e.patient, e, resolved.patient) };
  const ensureDoctor = () => deps.emr.ensurePractitioner({ serviceId: e.doctor.serviceId, name: e.doctor.name });
  const doctor = await findOrClaim(deps, out, 'doctor', e.doctor, ensureDoctor, resolved.doctor);
  const ensureLocation = () => deps.emr.ensureLocation({ serviceId: e.location.serviceId, name: e.location.name });
  const location = await findOrClaim(deps, out, 'location', e.location, ensureLocation, resolved.location);
  const input = appointmentInput(e, patient, doctor, location);
  const appointment = await findOrClaim(deps, out, 'appointment', e.appointment, () => deps.emr.ensureAppointment(input));
  // A record that already existed (found, not created by this call) gets this event's full snapshot.
  if (!appointment.isNew) await deps.emr.updateAppointment(appointment.id, input);
}

/** Returns the mappings to queue for the service, the snapshots applied and the records touched. */
export async function applyEvent(deps: ApplyDeps, event: WebhookEvent): Promise<Applied> {
  const out: Applied = { claims: [], versions: [], refs: [] };
  switch (event.eventType) {
    case 'patient.created': {
      const { patient } = event as PatientCreatedEvent;
      const resolved = await resolveOwned(deps, [{ entityType: 'patient', serviceId: patient.serviceId, externalId: patient.externalId, name: null }]);
      await applyPatientSnapshot(deps, out, patient, event, resolved.patient);
      break;
    }
    case 'document.delivered':
    case 'document.failed':
      await deps.documentEvents.apply(event);
      break;
    default:
      await applyAppointment(deps, event as AppointmentEvent, out);
  }
  return out;
}
