// An HL7 v2 EMR's records as a person reads them: the patient by the EMR's MRN (PID-3), the appointment by its
// filler id (SCH-2). Before the EMR names them, and for doctors and locations (which the EMR never names back),
// the port's handle is the service's id, shown as such.
import type { MappingEntityType } from '../../contract/api.ts';
import { labelledRefs, type RecordRefs } from '../refs.ts';

const LABELS: Record<MappingEntityType, string> = { patient: 'MRN', appointment: 'SCH-2', doctor: 'AIP-3', location: 'AIL-3' };

/** The port's handle of a record the EMR has not named: the service's id, under the entity's kind. */
export const handleOf = (entityType: MappingEntityType, serviceId: string): string => `service:${entityType}:${serviceId}`;

const HANDLE = /^service:(appointment|patient|doctor|location):(.+)$/;

/** The service id behind a handle; undefined for an EMR id. */
export function serviceIdOfHandle(id: string): string | undefined {
  return HANDLE.exec(id)?.[2];
}

// No spaces: the event history keeps an event's references space-separated.
const labelled = labelledRefs(LABELS, ':');

export const hl7RecordRefs: RecordRefs = {
  describe: (entityType, id) => {
    const serviceId = serviceIdOfHandle(id);
    return serviceId === undefined ? labelled.describe(entityType, id) : `${LABELS[entityType]}:(not-yet-named,service-id:${serviceId})`;
  },
  parse: (ref) => labelled.parse(ref),
};
