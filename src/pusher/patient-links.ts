// A document sent for an EMR patient the service had not met: the service makes a patient of its own and
// names it in its answer (patientServiceId), and fires patient.created for it. That event carries the EMR
// id the document named (patientExternalId), so the processor finds the EMR record whichever comes first;
// linking the two here, as soon as the answer arrives, records the same mapping (or finds it recorded),
// posts it to the service and writes the service's id into the EMR record itself.
import type { Clock } from '../clock.ts';
import type { Db } from '../database/open.ts';
import { createMappingStore } from '../mappings/store.ts';

export interface PatientLinks {
  /**
   * Links a service patient to the EMR patient a document was sent for. The first record for a service
   * patient stands (one the processor claimed first keeps it); returns whether this link is the one that
   * stands, and so whether the EMR record may carry the service's id. Idempotent.
   */
  link(serviceId: string, emrPatientId: string): boolean;
}

export function createPatientLinks(deps: { db: Db; clock: Clock }): PatientLinks {
  const mappings = createMappingStore(deps.db, deps.clock);
  const link = deps.db.transaction((serviceId: string, emrPatientId: string) => {
    if (mappings.record('patient', serviceId, emrPatientId) !== emrPatientId) return false;
    mappings.enqueue('patient', serviceId, emrPatientId);
    return true;
  });
  return {
    // Once a mapping stands, asking again (every status write-back does) is a read, not a commit.
    link(serviceId, emrPatientId) {
      const standing = mappings.find('patient', serviceId);
      return standing === undefined ? link.immediate(serviceId, emrPatientId) : standing === emrPatientId;
    },
  };
}
