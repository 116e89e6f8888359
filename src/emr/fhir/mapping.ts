// How the service's records become FHIR R4 resources (docs/fhir-mapping.md is the table of this file).
// Every record carries identifier {system: FHIR_IDENTIFIER_SYSTEM, value: serviceId}; what FHIR has no
// element for (mode, token, payment, the service's raw status) goes in extensions under EXT.
import type { Appointment as FhirAppointment, Extension, Location, Patient, Practitioner } from '@medplum/fhirtypes';
import type { AppointmentInput, LocationInput, PatientField, PatientInput, PractitionerInput } from '../port.ts';

export const EXT = 'https://emr-bridge.dev/fhir/StructureDefinition';

/**
 * The mark of a Patient the adapter created from the service's record (and so may keep in step with the
 * service). Kept in the record itself, so it outlives the adapter's database; a record without it is the
 * EMR's, whose name, birth date and phone a service snapshot never changes.
 */
export const RECORD_ORIGIN = { url: `${EXT}/record-origin`, valueCode: 'emr-bridge' } as const;

/** Service appointment status → FHIR Appointment.status. */
export const APPOINTMENT_STATUS: Record<string, FhirAppointment['status']> = {
  Approved: 'booked',
  Pending: 'pending',
  Cancelled: 'cancelled',
  Completed: 'fulfilled',
  NoShow: 'noshow',
};
/** An unknown service status is kept in the service-status extension; FHIR gets this placeholder. */
export const UNKNOWN_STATUS_FALLBACK: FhirAppointment['status'] = 'proposed';

const identifier = (system: string, serviceId: string) => [{ system, value: serviceId }];

export function patientResource(system: string, p: PatientInput): Patient {
  return {
    resourceType: 'Patient',
    extension: [{ ...RECORD_ORIGIN }],
    identifier: identifier(system, p.serviceId),
    name: [{ text: p.name }],
    telecom: p.phone ? [{ system: 'phone', value: p.phone, use: 'mobile' }] : [],
  };
}

/** Whether the adapter created this record (it carries the record-origin mark). */
export const madeByAdapter = (p: Patient): boolean => (p.extension ?? []).some((e) => e.url === RECORD_ORIGIN.url && e.valueCode === RECORD_ORIGIN.valueCode);

/** The service's ids a record carries under the identifier system. */
export const serviceIdsOf = (p: Patient, system: string): string[] => (p.identifier ?? []).filter((i) => i.system === system && i.value).map((i) => i.value!);

const displayName = (p: Patient): string | undefined => {
  const n = p.name?.[0];
  return n && (n.text ?? [...(n.given ?? []), n.family].filter(Boolean).join(' '));
};

/** The record with the service's identifier added; undefined when it already carries it. */
export function withServiceIdentifier<R extends Patient>(record: R, system: string, serviceId: string): R | undefined {
  const identifiers = record.identifier ?? [];
  if (identifiers.some((i) => i.system === system && i.value === serviceId)) return undefined;
  return { ...record, identifier: [...identifiers, { system, value: serviceId }] };
}

/** The snapshot's fields that a record holds otherwise (the name shown, a phone among its phones). */
export function patientDifferences(existing: Patient, p: PatientInput): PatientField[] {
  const fields: PatientField[] = [];
  if (displayName(existing) !== p.name) fields.push('name');
  if (p.phone && !existing.telecom?.some((t) => t.system === 'phone' && t.value === p.phone)) fields.push('phone');
  return fields;
}

/**
 * A newer snapshot of a patient applied to the record the EMR has. A record the adapter created takes the
 * name and the mobile phone, everything else (other identifiers such as the MRN, birth date, address, other
 * contacts) stays. A record the EMR owns only gains the service's identifier when it lacks it; the fields
 * that differ are returned as differences. `next` is undefined when nothing is to be written, so an
 * unchanged patient costs no write.
 */
export function mergePatient(existing: Patient, system: string, p: PatientInput): { next: Patient | undefined; differences: PatientField[] } {
  const identified = withServiceIdentifier(existing, system, p.serviceId);
  if (!madeByAdapter(existing)) return { next: identified, differences: patientDifferences(existing, p) };
  let changed = identified !== undefined;
  const next: Patient = identified ?? { ...existing };
  if (displayName(existing) !== p.name) {
    next.name = [{ text: p.name }, ...(existing.name ?? []).slice(1)];
    changed = true;
  }
  const phone = existing.telecom?.find((t) => t.system === 'phone');
  if (p.phone && phone?.value !== p.phone) {
    next.telecom = [{ system: 'phone', value: p.phone, use: 'mobile' }, ...(existing.telecom ?? []).filter((t) => t !== phone)];
    changed = true;
  }
  return { next: changed ? next : undefined, differences: [] };
}

export function practitionerResource(system: string, d: PractitionerInput): Practitioner {
  return { resourceType: 'Practitioner', identifier: identifier(system, d.serviceId), name: [{ text: d.name }] };
}

export function locationResource(system: string, l: LocationInput): Location {
  return { resourceType: 'Location', identifier: identifier(system, l.serviceId), name: l.name, status: 'active' };
}

/** The references an appointment's participants are named by: `Patient/12`, or a Bundle entry's `urn:uuid:` fullUrl. */
export interface AppointmentActors {
  patient: string;
  practitioner: string;
  location: string;
}

export function appointmentResource(system: string, a: AppointmentInput): FhirAppointment {
  return appointmentWithActors(system, a, {
    patient: `Patient/${a.patientId}`,
    practitioner: `Practitioner/${a.practitionerId}`,
    location: `Location/${a.locationId}`,
  });
}

/** The Appointment of a snapshot whose participants are named by the given references. */
export function appointmentWithActors(
  system: string,
  a: Omit<AppointmentInput, 'patientId' | 'practitionerId' | 'locationId'>,
  actors: AppointmentActors,
): FhirAppointment {
  const known = APPOINTMENT_STATUS[a.status];
  const extension: Extension[] = [
    { url: `${EXT}/service-status`, valueString: a.status },
    { url: `${EXT}/appointment-mode`, valueString: a.mode },
    { url: `${EXT}/queue-token`, valueString: a.token },
    { url: `${EXT}/snapshot-occurred-at`, valueInstant: a.occurredAt },
    {
      url: `${EXT}/payment`,
      extension: [
        { url: 'type', valueString: a.payment.type },
        { url: 'amountPaid', valueDecimal: a.payment.amountPaid },
        { url: 'balanceDue', valueDecimal: a.payment.balanceDue },
        { url: 'currency', valueCode: a.payment.currency },
        { url: 'payAtClinic', valueBoolean: a.payment.payAtClinic },
      ],
    },
  ];
  if (a.startsAtLocal) extension.push({ url: `${EXT}/starts-at-local`, valueString: a.startsAtLocal });
  return {
    resourceType: 'Appointment',
    identifier: identifier(system, a.serviceId),
    status: known ?? UNKNOWN_STATUS_FALLBACK,
    start: a.startsAt,
    ...(a.notes ? { comment: a.notes } : {}),
    extension,
    participant: [
      { actor: { reference: actors.patient }, status: 'accepted' },
      { actor: { reference: actors.practitioner }, status: 'accepted' },
      { actor: { reference: actors.location }, status: 'accepted' },
    ],
  };
}

export const isKnownStatus = (status: string): boolean => status in APPOINTMENT_STATUS;
