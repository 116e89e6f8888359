// The patient of a received message, from its PID: the service's id (the PID-3 repetition under our assigning
// authority), the EMR's MRN (the repetition under HL7_EMR_ASSIGNING_AUTHORITY, or, that unset, any other
// repetition of identifier type MR), the name rejoined in the service's order, and the phone.
import type { Hl7Segment } from '@medplum/core';
import { joinName } from './names.ts';
import { namesAuthority, repetitionCount, subcomponents, value } from './read.ts';

export interface AuthorityOptions {
  /** HL7_ASSIGNING_AUTHORITY. */
  assigningAuthority: string;
  /** HL7_EMR_ASSIGNING_AUTHORITY; unset: an MR-typed repetition is the MRN. */
  emrAssigningAuthority?: string;
}

export interface PatientIds {
  serviceId?: string;
  mrn?: string;
}

/** PID-3's repetitions (CX: 1 id, 4 assigning authority as HD subcomponents, 5 identifier type). */
export function patientIds(pid: Hl7Segment | undefined, opts: AuthorityOptions): PatientIds {
  const ids: PatientIds = {};
  for (let r = 0; r < repetitionCount(pid, 3); r++) {
    const id = value(pid, 3, 1, r);
    if (!id) continue;
    const hd = subcomponents(pid, 3, 4, r);
    if (namesAuthority(hd, opts.assigningAuthority)) {
      ids.serviceId ??= id;
      continue;
    }
    const isMrn = opts.emrAssigningAuthority ? namesAuthority(hd, opts.emrAssigningAuthority) : value(pid, 3, 5, r).toUpperCase() === 'MR';
    if (isMrn) ids.mrn ??= id;
  }
  return ids;
}

/** PID-5's first repetition (XPN: 1 family, FN.1 its surname; 2 given; 3 further given names) as one string. */
export function patientName(pid: Hl7Segment | undefined): string {
  return joinName({ family: subcomponents(pid, 5, 1)[0], given: value(pid, 5, 2), middle: value(pid, 5, 3) });
}

/** PID-13's first number: XTN.1, else XTN.12 (unformatted telephone number). */
export function patientPhone(pid: Hl7Segment | undefined): string {
  for (let r = 0; r < repetitionCount(pid, 13); r++) {
    const phone = value(pid, 13, 1, r) || value(pid, 13, 12, r);
    if (phone) return phone;
  }
  return '';
}
