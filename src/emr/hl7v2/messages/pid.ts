// The patient's PID, the same in every message the adapter sends (ADT and SIU alike): the EMR matches the
// patient by the service id under our assigning authority until it has named its MRN, and by both after.
//
// | PID | field                     | value                                                        |
// |-----|---------------------------|--------------------------------------------------------------|
// | 1   | set id                    | `1`                                                          |
// | 3   | identifier list (CX, rep) | `<serviceId>^^^<AA>^PI`, then `<mrn>^^^<EMR AA>^MR` once known |
// | 5   | name (XPN)                | `<family>^<given>` (names.ts)                                |
// | 13  | home phone (XTN)          | XTN.1 the phone as the service gives it                      |
import type { Hl7Segment } from '@medplum/core';
import type { Component } from './compose.ts';
import { segment } from './compose.ts';
import { splitName } from './names.ts';

export interface PidInput {
  serviceId: string;
  name: string;
  phone: string;
  /** The EMR's MRN, once it has named it. */
  mrn?: string;
  /** HL7_EMR_ASSIGNING_AUTHORITY; unset: the MRN repetition carries no CX-4, only its type `MR`. */
  emrAssigningAuthority?: string;
}

export function buildPid(p: PidInput, assigningAuthority: string): Hl7Segment {
  const ids: Component[][] = [[p.serviceId, '', '', assigningAuthority, 'PI']];
  if (p.mrn) ids.push([p.mrn, '', '', p.emrAssigningAuthority, 'MR']);
  const { family, given } = splitName(p.name);
  return segment('PID', ['1', '', { repeat: ids }, '', [family, given], '', '', '', '', '', '', '', p.phone]);
}
