// The EMR naming its own id for a record the adapter sent: from its ADT feed (A01, A04, A08, A28, A31) a
// patient's MRN beside our service id in PID-3; from its SIU feed (S12, S13, S14) an appointment's SCH-2 beside
// our SCH-1. A message that does not carry both is not an error but a record the adapter has no mapping to
// make for (the EMR's own patients and bookings): 'none', acknowledged AA.
//
// | field  | read                                                                                 |
// |--------|--------------------------------------------------------------------------------------|
// | MSH-9  | `ADT^<A01,A04,A08,A28,A31>` or `SIU^<S12,S13,S14>`                                    |
// | PID-3  | CX.1 under CX.4 = our AA → serviceId; under the EMR's AA (or typed `MR`) → the MRN     |
// | SCH-1  | EI.1 the serviceId when EI.2 (or EI.3) is our AA: without it the id is another placer's |
// | SCH-2  | EI.1 the EMR's appointment id                                                         |
import type { Hl7Message } from '@medplum/core';
import type { IdentifiedRecord } from '../../port.ts';
import { type AuthorityOptions, patientIds } from './patient.ts';
import { namesAuthority, value } from './read.ts';
import { accept, type Read, refuse } from './refusal.ts';

const ADT_TRIGGERS = new Set(['A01', 'A04', 'A08', 'A28', 'A31']);
const SIU_TRIGGERS = new Set(['S12', 'S13', 'S14']);

export type IdentityRead = IdentifiedRecord | 'none';

export function readIdentity(message: Hl7Message, opts: AuthorityOptions): Read<IdentityRead> {
  const msh = message.getSegment('MSH');
  const code = value(msh, 9, 1);
  const trigger = value(msh, 9, 2);
  if (code === 'ADT') {
    if (!ADT_TRIGGERS.has(trigger)) return refuse('MSH', 9, '201', `ADT^${trigger} is not an ADT event the adapter reads`);
    return readPatientIdentity(message, opts);
  }
  if (code === 'SIU') {
    if (!SIU_TRIGGERS.has(trigger)) return refuse('MSH', 9, '201', `SIU^${trigger} is not an SIU event the adapter reads`);
    return readAppointmentIdentity(message, opts);
  }
  return refuse('MSH', 9, '200', `${code}^${trigger} is not a message type the adapter reads for identities`);
}

function readPatientIdentity(message: Hl7Message, opts: AuthorityOptions): Read<IdentityRead> {
  const pid = message.getSegment('PID');
  if (!pid) return refuse('PID', 3, '100', 'the ADT message has no PID segment');
  const { serviceId, mrn } = patientIds(pid, opts);
  return accept(serviceId && mrn ? { entityType: 'patient', serviceId, emrId: mrn } : 'none');
}

function readAppointmentIdentity(message: Hl7Message, opts: AuthorityOptions): Read<IdentityRead> {
  const sch = message.getSegment('SCH');
  if (!sch) return refuse('SCH', 1, '100', 'the SIU message has no SCH segment');
  const placer = value(sch, 1, 1);
  const ours = namesAuthority([value(sch, 1, 2), value(sch, 1, 3)], opts.assigningAuthority);
  const filler = value(sch, 2, 1);
  return accept(placer && ours && filler ? { entityType: 'appointment', serviceId: placer, emrId: filler } : 'none');
}
