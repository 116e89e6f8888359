// How an EMR record is named to a person: a FHIR reference, `Patient/12` (the resource type of each entity the
// service maps, and the EMR's id). What an applied event stores of what it touched, and what the mapping
// lookup takes (`Patient/12` or a bare id) are written and read here.
import { MAPPING_ENTITY_TYPES, type MappingEntityType } from '../contract/api.ts';

export const RESOURCE_TYPES: Record<MappingEntityType, string> = {
  appointment: 'Appointment',
  patient: 'Patient',
  doctor: 'Practitioner',
  location: 'Location',
};

export const emrRef = (entityType: MappingEntityType, emrId: string): string => `${RESOURCE_TYPES[entityType]}/${emrId}`;

/** `Patient/12` → the entity type and the bare id; a bare id (no known resource type before a slash) stands alone. */
export function parseEmrRef(ref: string): { emrId: string; entityType?: MappingEntityType } {
  const slash = ref.indexOf('/');
  if (slash > 0) {
    const entityType = MAPPING_ENTITY_TYPES.find((t) => RESOURCE_TYPES[t] === ref.slice(0, slash));
    if (entityType) return { emrId: ref.slice(slash + 1), entityType };
  }
  return { emrId: ref };
}
