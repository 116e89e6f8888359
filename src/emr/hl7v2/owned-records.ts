// What the HL7 v2 module answers about the crosswalk's records (src/processor/resolve.ts, src/crosswalk/): a doctor
// or location that HL7_REQUIRE_MAPPED lists is never named by the service's id, so an appointment naming one nobody
// mapped waits; any other doctor or location goes by its EMR id when the crosswalk (or the snapshot) has one, by the
// service's id otherwise. Patients are registered by ADT as before. An interface engine cannot be asked whether a
// record exists, nor searched: an id a person gives is taken as given, and there is nothing to suggest.
import type { EmrPort, MappedEntityType } from '../port.ts';
import type { Hl7Settings } from './settings.ts';

export function createOwnedRecords(
  settings: Pick<Hl7Settings, 'requireMapped'>,
): Required<Pick<EmrPort, 'mayCreate' | 'prefersMapped' | 'recordExists' | 'suggest'>> {
  const required: ReadonlySet<MappedEntityType> = new Set(settings.requireMapped);
  return {
    // "Create" is naming it by the service's id in AIP-3 / AIL-3 (no message registers it): refused for the listed types.
    mayCreate: async (entityType) => !required.has(entityType),
    prefersMapped: async (entityType) => entityType !== 'patient',
    recordExists: async () => undefined,
    suggest: async () => [],
  };
}
