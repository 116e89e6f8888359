// A FHIR EMR's records as a person reads them: FHIR references, `Patient/12` (the resource type each entity
// the service maps is claimed as, and the resource's logical id).
import { labelledRefs } from '../refs.ts';

export const FHIR_RESOURCE_TYPES = { appointment: 'Appointment', patient: 'Patient', doctor: 'Practitioner', location: 'Location' } as const;

export const fhirRecordRefs = labelledRefs(FHIR_RESOURCE_TYPES, '/');
