// Documents the EMR pushes: MDM^T02 (T04, T08, T10 new versions of one) and ORU^R01, read into the port's
// EmrDocument for the pusher's outbox; MDM^T11 cancels one not yet sent. Each refusal names the field the
// listener's AE points the EMR's people at.
//
// | field  | MDM                                   | ORU^R01                          |
// |--------|---------------------------------------|----------------------------------|
// | id     | TXA-12.1 (unique document number)     | OBR-3.1 (filler order number)    |
// | type   | TXA-2.1 in HL7_LAB_REPORT_TYPES / HL7_PRESCRIPTION_TYPES | always lab_report  |
// | label  | TXA-2.2 (the text), else TXA-2.1      | OBR-4.2, else OBR-4.1            |
// | file   | first OBX with OBX-2 `ED`, OBX-5 (./encapsulated.ts)                     |
// | version| MSH-10: each new version is a new message (TXA has no version field)    |
// | patient| PID-3 service id / MRN, PID-5 name ("given family"), PID-13 phone (./patient.ts) |
//
// The file name is `<document id>.<extension of the MIME subtype>` (characters outside [A-Za-z0-9._-] as `_`).
// The patient's `id` is the MRN when PID-3 carries one; with only the service id it is the port's handle for
// that patient (patientHandle), as for any record the EMR has not named yet.
import type { Hl7Message } from '@medplum/core';
import type { DocumentType } from '../../../contract/events.ts';
import type { EmrDocument } from '../../port.ts';
import { readEncapsulatedFile } from './encapsulated.ts';
import { type AuthorityOptions, patientIds, patientName, patientPhone } from './patient.ts';
import { value } from './read.ts';
import { accept, type Read, refuse } from './refusal.ts';
import { isoNow } from './time.ts';

export interface DocumentOptions extends AuthorityOptions {
  /** HL7_LAB_REPORT_TYPES: TXA-2 codes that mean a lab report. */
  labReportTypes: readonly string[];
  /** HL7_PRESCRIPTION_TYPES. */
  prescriptionTypes: readonly string[];
  /** The injected clock's reading, ms since the epoch: lastUpdated. */
  now: number;
  /** The port's handle for a patient known only by its service id; default `pending:patient:<serviceId>`. */
  patientHandle?: (serviceId: string) => string;
}

export type DocumentRead = { kind: 'document'; document: EmrDocument } | { kind: 'cancel'; documentId: string };

const MDM_TRIGGERS = new Set(['T02', 'T04', 'T08', 'T10', 'T11']);

export const defaultPatientHandle = (serviceId: string): string => `pending:patient:${serviceId}`;

interface Heading {
  id: string;
  documentType: DocumentType;
  label: string;
}

export function readDocument(message: Hl7Message, opts: DocumentOptions): Read<DocumentRead> {
  const msh = message.getSegment('MSH');
  const code = value(msh, 9, 1);
  const trigger = value(msh, 9, 2);
  let heading: Read<Heading>;
  if (code === 'MDM') {
    if (!MDM_TRIGGERS.has(trigger)) return refuse('MSH', 9, '201', `MDM^${trigger} is not a document event the adapter reads`);
    const txa = message.getSegment('TXA');
    if (!txa) return refuse('TXA', 12, '100', 'the MDM message has no TXA segment');
    const id = value(txa, 12, 1);
    if (!id) return refuse('TXA', 12, '101', 'TXA-12 (unique document number) is empty');
    if (trigger === 'T11') return accept({ kind: 'cancel', documentId: id });
    heading = mdmHeading(id, value(txa, 2, 1), value(txa, 2, 2), opts);
  } else if (code === 'ORU') {
    if (trigger !== 'R01') return refuse('MSH', 9, '201', `ORU^${trigger} is not a document event the adapter reads`);
    const obr = message.getSegment('OBR');
    const id = value(obr, 3, 1);
    if (!id) return refuse('OBR', 3, '101', obr ? 'OBR-3 (filler order number) is empty' : 'the ORU message has no OBR segment');
    heading = accept({ id, documentType: 'lab_report', label: value(obr, 4, 2) || value(obr, 4, 1) });
  } else {
    return refuse('MSH', 9, '200', `${code}^${trigger} is not a document message`);
  }
  if (!heading.ok) return heading;

  const file = readEncapsulatedFile(message);
  if (!file.ok) return file;

  const pid = message.getSegment('PID');
  const { serviceId, mrn } = patientIds(pid, opts);
  if (!serviceId && !mrn) {
    return refuse('PID', 3, pid ? '101' : '100', `PID-3 carries neither a service id under ${opts.assigningAuthority} nor an MRN`);
  }
  const name = patientName(pid);
  const phone = patientPhone(pid);
  const { id, documentType, label } = heading.value;
  const document: EmrDocument = {
    id,
    version: value(msh, 10),
    documentType,
    label,
    filename: `${id.replace(/[^A-Za-z0-9._-]/g, '_')}.${file.value.extension}`,
    mimeType: file.value.mimeType,
    content: { base64: file.value.base64 },
    patient: {
      id: mrn ?? (opts.patientHandle ?? defaultPatientHandle)(serviceId!),
      ...(serviceId ? { serviceId } : {}),
      ...(name ? { name } : {}),
      ...(phone ? { phone } : {}),
    },
    lastUpdated: isoNow(opts.now),
  };
  return accept({ kind: 'document', document });
}

function mdmHeading(id: string, typeCode: string, typeText: string, opts: DocumentOptions): Read<Heading> {
  if (!typeCode) return refuse('TXA', 2, '101', 'TXA-2 (document type) is empty');
  const documentType: DocumentType | undefined = opts.labReportTypes.includes(typeCode)
    ? 'lab_report'
    : opts.prescriptionTypes.includes(typeCode)
      ? 'prescription'
      : undefined;
  if (!documentType) {
    const known = [...opts.labReportTypes, ...opts.prescriptionTypes].join(', ');
    return refuse('TXA', 2, '103', `document type "${typeCode}" is not a lab report or prescription type (${known})`);
  }
  return accept({ id, documentType, label: typeText || typeCode });
}
