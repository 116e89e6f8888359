// Claiming an appointment and the records it names in one round trip: a transaction Bundle posted to the base,
// one conditional create per record to find or create (If-None-Exist by the service's id, as ./claims.ts sends
// them one by one), the appointment naming the others by their entries' `urn:uuid:` fullUrls, which the server
// rewrites to the ids it made or found. Only where the server declares transactions and conditional create for
// every claimed type (./capabilities.ts); elsewhere the caller is told to claim the records one by one.
import { randomUUID } from 'node:crypto';
import type { Bundle, BundleEntry, Resource } from '@medplum/fhirtypes';
import { EmrError } from '../errors.ts';
import type { AppointmentClaim, AppointmentClaimed, EmrRecord, KnownRecord } from '../port.ts';
import type { CapabilityCheck } from './capabilities.ts';
import { createdId } from './created.ts';
import { type FhirHttp, statusFailure } from './http.ts';
import { appointmentWithActors, locationResource, patientResource, practitionerResource } from './mapping.ts';

export interface AppointmentClaimDeps {
  http: FhirHttp;
  system: string;
  capabilities: CapabilityCheck;
  /** Called with the appointment's serviceId and status before it is sent (an unknown status is logged). */
  checkStatus(serviceId: string, status: string): void;
}

type Role = keyof AppointmentClaimed;

/** One record of the claim: known by its id (no entry), or an entry of the Bundle to find or create it. */
interface Part {
  role: Role;
  resourceType: string;
  /** How the appointment names it: `Patient/12`, or the entry's fullUrl. */
  reference: string;
  known?: string;
  entry?: BundleEntry;
}

/** A participant named by its id, or an entry to find or create it from its snapshot. */
function part<I extends { serviceId: string }>(
  system: string,
  role: Role,
  resourceType: string,
  participant: KnownRecord | I,
  build: (input: I) => Resource,
): Part {
  if (!('serviceId' in participant)) return { role, resourceType, reference: `${resourceType}/${participant.id}`, known: participant.id };
  return { role, resourceType, ...claimEntry(system, build(participant), participant.serviceId) };
}

/** A conditional create of `resource` by the service's id, named in the Bundle by a fresh urn:uuid. */
function claimEntry(system: string, resource: Resource, serviceId: string): { reference: string; entry: BundleEntry } {
  const fullUrl = `urn:uuid:${randomUUID()}`;
  return {
    reference: fullUrl,
    entry: { fullUrl, resource, request: { method: 'POST', url: resource.resourceType, ifNoneExist: `identifier=${system}|${serviceId}` } },
  };
}

/** The record's id from the entry's location (`Patient/12/_history/1`, relative or absolute), else from its resource. */
const idOf = (entry: BundleEntry, resourceType: string): string | undefined =>
  createdId({ ...(entry.response?.location ? { location: entry.response.location } : {}), body: entry.resource }, resourceType);

/** What the server answered for one entry: 201 created, 200 found; a refusal fails the claim as that status fails a call. */
function recordOf(entry: BundleEntry | undefined, resourceType: string): EmrRecord {
  const status = Number(/^\d{3}/.exec(entry?.response?.status ?? '')?.[0] ?? 0);
  const id = entry && (status === 200 || status === 201) ? idOf(entry, resourceType) : undefined;
  if (id) return { id, created: status === 201 };
  if (status >= 400) throw statusFailure(status, `the EMR refused the ${resourceType} of a transaction (${status})`);
  throw new EmrError('emr_unavailable', `the EMR's transaction response names no ${resourceType} record`);
}

/** EmrPort.claimAppointment over FHIR: undefined when the server does not declare transactions. */
export function createAppointmentClaims(deps: AppointmentClaimDeps): (claim: AppointmentClaim) => Promise<AppointmentClaimed | undefined> {
  const { system } = deps;
  return async (claim) => {
    if (!(await deps.capabilities.current()).transactions()) return undefined;
    const patient = part(system, 'patient', 'Patient', claim.patient, (p) => patientResource(system, p));
    const practitioner = part(system, 'practitioner', 'Practitioner', claim.practitioner, (d) => practitionerResource(system, d));
    const location = part(system, 'location', 'Location', claim.location, (l) => locationResource(system, l));
    const a = claim.appointment;
    deps.checkStatus(a.serviceId, a.status);
    const actors = { patient: patient.reference, practitioner: practitioner.reference, location: location.reference };
    const appointment: Part = {
      role: 'appointment',
      resourceType: 'Appointment',
      ...claimEntry(system, appointmentWithActors(system, a, actors), a.serviceId),
    };
    const sent = [patient, practitioner, location, appointment].filter((p) => p.entry);
    const bundle: Bundle = { resourceType: 'Bundle', type: 'transaction', entry: sent.map((p) => p.entry!) };
    const answered = (await deps.http.call<Bundle>('POST', '', bundle)).body?.entry ?? [];
    if (answered.length !== sent.length)
      throw new EmrError('emr_unavailable', `the EMR answered a transaction of ${sent.length} entries with ${answered.length}`);
    const records = new Map(sent.map((p, i): [Role, EmrRecord] => [p.role, recordOf(answered[i], p.resourceType)]));
    const recordFor = (p: Part): EmrRecord => (p.known !== undefined ? { id: p.known, created: false } : records.get(p.role)!);
    return { patient: recordFor(patient), practitioner: recordFor(practitioner), location: recordFor(location), appointment: recordFor(appointment) };
  };
}
