// Reading the patient of a received message: PID-3's repetition under the service's assigning authority
// (type PI) is the service's id; PID-5 and PID-13 are kept as the HL7 text they came in.
import type { Hl7Message } from '@medplum/core';
import { componentOf, repetitionCount } from './hl7-text.ts';

export interface ReceivedPatient {
  serviceId?: string;
  name: string;
  phone: string;
}

export function patientOf(msg: Hl7Message, assigningAuthority: string): ReceivedPatient {
  const pid = msg.getSegment('PID');
  const ids = pid?.getField(3);
  let serviceId: string | undefined;
  for (let r = 0; r < repetitionCount(ids) && !serviceId; r++) {
    // CX-4 is an HD: its namespace is the first subcomponent.
    const authority = componentOf(ids, 4, r).split('&')[0];
    const type = componentOf(ids, 5, r);
    if (authority === assigningAuthority && (type === 'PI' || type === '')) serviceId = componentOf(ids, 1, r) || undefined;
  }
  return {
    ...(serviceId ? { serviceId } : {}),
    name: pid?.getField(5)?.toString() ?? '',
    phone: pid?.getField(13)?.toString() ?? '',
  };
}
