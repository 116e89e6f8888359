// What the bundled HL7 EMR holds and what its callers hand it: patients, appointments, the log of received
// messages, the faults it can be told to play, and the documents it files. Plain data, shared by its parts.

/** The EMR's own assigning authority: MRN repetitions travel as `MRN000123^^^HOSPITAL^MR`, filler ids as `APT000045^HOSPITAL`. */
export const EMR_AUTHORITY = 'HOSPITAL';

export interface EmrPatient {
  /** The service's id (PID-3 repetition under the service's assigning authority, type PI). */
  serviceId: string;
  /** The MRN this EMR assigned, e.g. MRN000123. */
  mrn: string;
  /** PID-5 as received (HL7 text, e.g. `Doe^Jane`). */
  name: string;
  /** PID-13 as received (HL7 text). */
  phone: string;
}

export interface EmrAppointment {
  /** SCH-1's first component: the service's appointment id. */
  serviceId: string;
  /** The filler id this EMR assigned, e.g. APT000045 (SCH-2 of its notifications). */
  fillerId: string;
  /** SCH-11.4 or TQ1-7 as received (`YYYYMMDDHHMMSS+HHMM`); empty when none came. */
  start: string;
  /** SCH-25's first component (Booked, Pending, Cancelled, Complete, Noshow, …). */
  status: string;
  cancelled: boolean;
  /** The patient's service id from the SIU's PID-3, when it carried one. */
  patientServiceId?: string;
  /** AIP-3 as received (HL7 text, e.g. `doc_1^Hopper^Grace^^^^^^SERVICE`, or an EMR id alone `DR-17^Hopper^Grace`). */
  doctor?: string;
  /** AIL-3 as received (HL7 text, e.g. `loc_1^^^^^^^^Room 1^^SERVICE`). */
  location?: string;
}

export type AckCode = 'AA' | 'AE' | 'AR';

export interface ReceivedMessage {
  /** MSH-9's message type and trigger, e.g. `ADT^A28`. */
  type: string;
  /** MSH-10. */
  controlId: string;
  /** When it arrived (ISO 8601, the EMR's clock). */
  at: string;
  /** What it was answered: AA, AE, AR, or `none` (the silent fault). */
  ack: AckCode | 'none';
  /** The same MSH-3/MSH-4/MSH-10 was already applied: acknowledged again, not applied again. */
  duplicate: boolean;
}

export type FaultMode = 'AE' | 'AR' | 'late' | 'silent';

export interface FaultSetting {
  /** null switches faults off. */
  mode: FaultMode | null;
  /** For `late`: how long the acknowledgment waits (ms). */
  delayMs?: number;
  /** Only the next `count` messages; absent: until switched off. */
  count?: number;
}

export type DocumentType = 'lab_report' | 'prescription';

/** The patient a document is filed for: by the service's id or by this EMR's MRN (one must be given). */
export interface DocumentPatient {
  patientServiceId?: string;
  mrn?: string;
}

export interface DocumentRequest extends DocumentPatient {
  documentType: DocumentType;
  label: string;
  filename?: string;
  pdf: Buffer;
  /** TXA-12; a fresh one when absent. */
  documentId?: string;
}

export interface LabResultRequest extends DocumentPatient {
  label: string;
  pdf: Buffer;
  /** OBR-3; a fresh one when absent. */
  documentId?: string;
}
