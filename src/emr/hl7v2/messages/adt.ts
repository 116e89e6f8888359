// ADT messages for a patient snapshot: A28 (or A04) the first, A31 (or A08) a change of name or phone
// (HL7_PATIENT_EVENTS picks the pair). The body is EVN, PID (./pid.ts) and a `PV1|1|N`: the patient is
// registered, not admitted to anything.
//
// | trigger | MSH-9             | segments             |
// |---------|-------------------|----------------------|
// | A28     | `ADT^A28^ADT_A05` | MSH EVN PID PV1      |
// | A31     | `ADT^A31^ADT_A05` | MSH EVN PID PV1      |
// | A04     | `ADT^A04^ADT_A01` | MSH EVN PID PV1      |
// | A08     | `ADT^A08^ADT_A01` | MSH EVN PID PV1      |
// PV1-1 set id `1`, PV1-2 patient class `N` (not applicable).
import type { PatientInput } from '../../port.ts';
import { type BuiltMessage, built, segment } from './compose.ts';
import { buildEvn, buildMsh, type HeaderContext } from './header.ts';
import { buildPid } from './pid.ts';

export type PatientTrigger = 'A28' | 'A31' | 'A04' | 'A08';

const STRUCTURE: Record<PatientTrigger, string> = { A28: 'ADT_A05', A31: 'ADT_A05', A04: 'ADT_A01', A08: 'ADT_A01' };

export interface PatientMessageInput {
  trigger: PatientTrigger;
  patient: PatientInput;
  /** The EMR's MRN, once known: a second PID-3 repetition. */
  mrn?: string;
  emrAssigningAuthority?: string;
}

export function buildPatientMessage(header: HeaderContext, input: PatientMessageInput): BuiltMessage {
  const { trigger, patient } = input;
  return built([
    buildMsh(header, ['ADT', trigger, STRUCTURE[trigger]]),
    buildEvn(header, trigger),
    buildPid({ ...patient, mrn: input.mrn, emrAssigningAuthority: input.emrAssigningAuthority }, header.assigningAuthority),
    segment('PV1', ['1', 'N']),
  ]);
}
