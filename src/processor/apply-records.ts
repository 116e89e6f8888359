// The steps applying an event takes for each record it names (./apply.ts applies the whole event): the record
// found by its mapping, or found or created through the EmrPort inside the entity's claim section, its mapping
// recorded at once and queued for the service when the service has none, its name kept for the event's refs;
// and a patient's snapshot applied to its record, one section per patient, unless a newer one was.
import { hash } from 'node:crypto';
import type { MappingEntityType } from '../contract/api.ts';
import type { EmrRecord, PatientInput } from '../emr/port.ts';
import { CROSSWALK_ENTITY_TYPES, type CrosswalkEntityType, recordKey } from '../storage/crosswalk.ts';
import type { Applied, ApplyDeps } from './apply.ts';

/** A service entity as an event names it. */
export interface Entity {
  serviceId: string;
  externalId: string | null;
}

/** The EMR record of a service entity, and whether this event's claim created it. */
export interface Found {
  id: string;
  isNew: boolean;
  pending?: true;
}

/** The section in which a service entity's record is found or created. */
export const claimKey = (entityType: MappingEntityType, serviceId: string) => `claim:${entityType}:${serviceId}`;

/** A record found or created now, its mapping recorded (inside the claim's section). */
export async function recordClaimed(deps: ApplyDeps, entityType: MappingEntityType, serviceId: string, record: EmrRecord): Promise<Found> {
  // The port's handle of a record whose EMR id comes later is no mapping: the EMR's id will be.
  if (record.pending) return { id: record.id, isNew: record.created, pending: true as const };
  return { id: await deps.mappings.record(entityType, serviceId, record.id), isNew: record.created };
}

/**
 * A person's crosswalk mapping of a record the adapter may create (set before the adapter met the record), recorded
 * as the adapter's own. Called inside the record's claim section, which the crosswalk module's writes take too: the
 * person's record is the one found, and none is created beside it; once recorded, it stands as any found one does.
 */
export async function adoptCrosswalked(deps: ApplyDeps, entityType: MappingEntityType, serviceId: string): Promise<Found | undefined> {
  if (!(CROSSWALK_ENTITY_TYPES as readonly string[]).includes(entityType)) return undefined;
  const record = { entityType: entityType as CrosswalkEntityType, serviceId };
  const emrId = (await deps.crosswalk.mapped([record])).get(recordKey(record));
  return emrId === undefined ? undefined : recordClaimed(deps, entityType, serviceId, { id: emrId, created: false });
}

/** The record named in what the event leaves: claimed for the service when it has no mapping yet, and in the refs. */
export function noteRecord(deps: ApplyDeps, out: Pick<Applied, 'claims' | 'refs'>, entityType: MappingEntityType, entity: Entity, found: Found): Found {
  if (entity.externalId === null && !('pending' in found)) out.claims.push({ entityType, serviceId: entity.serviceId, emrId: found.id });
  out.refs.push(deps.emr.refs.describe(entityType, found.id));
  return found;
}

/** The EMR record of a service entity: the mapped one, or one found or created now (and claimed for the service when it has none). */
export async function findOrClaim(
  deps: ApplyDeps,
  out: Pick<Applied, 'claims' | 'refs'>,
  entityType: MappingEntityType,
  entity: Entity,
  ensure: () => Promise<EmrRecord>,
  resolved?: string,
): Promise<Found> {
  // A record the EMR owns, resolved before anything was written (./resolve.ts): named, never created.
  if (resolved !== undefined) return noteRecord(deps, out, entityType, entity, { id: resolved, isNew: false });
  // A mapping, once recorded, never changes: one found needs no section.
  const mapped = await deps.mappings.find(entityType, entity.serviceId);
  // Find-or-create is one step per entity: two events naming the same new doctor make one record. The record
  // resolves once committed, inside the section, so whoever takes the key next (another replica too) finds it.
  const found =
    mapped !== undefined
      ? { id: mapped, isNew: false }
      : await deps.locks.run(claimKey(entityType, entity.serviceId), async () => {
          const known = await deps.mappings.find(entityType, entity.serviceId);
          if (known) return { id: known, isNew: false };
          return (await adoptCrosswalked(deps, entityType, entity.serviceId)) ?? recordClaimed(deps, entityType, entity.serviceId, await ensure());
        });
  return noteRecord(deps, out, entityType, entity, found);
}

/** A patient as an event names it. */
export type PatientEntity = Entity & { name: string; phone: string };
/** The event whose snapshot is applied. */
export type EventMark = { eventId: string; occurredAt: string };

/** The section of a patient's snapshot (holding its claim's section inside). */
export const patientKey = (serviceId: string) => `patient:${serviceId}`;
export const patientInput = (p: PatientEntity): PatientInput => ({ serviceId: p.serviceId, name: p.name, phone: p.phone });

/**
 * A patient record that already existed takes the event's snapshot of it, unless a newer one was applied
 * (only a record the adapter created changes: the EMR port keeps the EMR's own records as they are).
 * Check, write and version are one step per patient, so an older snapshot carried by another appointment's
 * event, applied at the same moment, can never land after a newer one.
 */
export async function applyPatientSnapshot(deps: ApplyDeps, out: Applied, patient: PatientEntity, event: EventMark, resolved?: string): Promise<string> {
  const input = patientInput(patient);
  return deps.locks.run(patientKey(patient.serviceId), async () => {
    // The service's externalId, when it has one, is an EMR patient id: the EMR's own record the service met
    // through a document (sent with patientExternalId), which this event must find, not duplicate.
    const ensure = () => deps.emr.ensurePatient({ ...input, externalId: patient.externalId });
    const record = await findOrClaim(deps, out, 'patient', patient, ensure, resolved);
    await takeSnapshot(deps, out, patient, event, record);
    return record.id;
  });
}

/** The snapshot applied to the patient's record (inside the patient's section), unless a newer one was. */
export async function takeSnapshot(deps: ApplyDeps, out: Applied, patient: PatientEntity, event: EventMark, record: Found): Promise<void> {
  const { occurredAt } = event;
  const entityKey = patientKey(patient.serviceId);
  const applied = await deps.versions.newest(entityKey);
  if (applied !== undefined && occurredAt < applied.occurredAt) return;
  const digest = hash('sha256', JSON.stringify([patient.name, patient.phone]), 'base64url');
  // A record the EMR owns keeps its name and phone; the EMR port reports (and logs) what differs.
  if (!record.isNew && applied?.hash !== digest) await deps.emr.updatePatient(record.id, { ...patientInput(patient), occurredAt });
  // Noted once the EMR has it, before the section ends, so the next section of this patient sees it; it is
  // also written with the event's applied mark.
  const version = { occurredAt, hash: digest };
  await deps.versions.note(entityKey, version, event.eventId);
  out.versions.push({ entityKey, version });
}
