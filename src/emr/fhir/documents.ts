// Documents on the FHIR side. Outgoing: DocumentReference (status current) whose type matches the
// configured codes, found by _lastUpdated. Outcome: one Communication per document, identified by
// <system>|document-outcome:<DocumentReference id> and updated in place (by its id), whose
// status follows the service's (SENT completed, HELD on-hold, FAILED/REJECTED not-done, SUPPRESSED stopped);
// the same outcome again writes nothing (no new version in the EMR's history).
import type { Bundle, Communication, DocumentReference, Patient, Practitioner } from '@medplum/fhirtypes';
import type { DocumentType } from '../../contract/events.ts';
import type { DocumentChanges, DocumentOutcome, EmrDocument } from '../port.ts';
import type { FhirHttp } from './http.ts';
import { findOneByIdentifier, matchesOf } from './search.ts';
import { EXT } from './mapping.ts';

export interface DocumentSettings {
  identifierSystem: string;
  labReportTypeCodes: string[];
  prescriptionTypeCodes: string[];
}

const PAGE = 100;

const COMMUNICATION_STATUS: Record<DocumentOutcome['status'], Communication['status']> = {
  SENT: 'completed',
  HELD: 'on-hold',
  FAILED: 'not-done',
  REJECTED: 'not-done',
  SUPPRESSED: 'stopped',
};

function documentTypeOf(doc: DocumentReference, s: DocumentSettings): DocumentType | undefined {
  const codes = (doc.type?.coding ?? []).map((c) => `${c.system ?? ''}|${c.code ?? ''}`);
  if (codes.some((c) => s.labReportTypeCodes.includes(c))) return 'lab_report';
  if (codes.some((c) => s.prescriptionTypeCodes.includes(c))) return 'prescription';
  return undefined;
}

async function readPatient(http: FhirHttp, cache: Map<string, Patient | undefined>, ref: string | undefined) {
  if (!ref?.startsWith('Patient/')) return undefined;
  if (!cache.has(ref)) cache.set(ref, (await http.call<Patient>('GET', ref)).body);
  return cache.get(ref);
}

async function readPractitionerPhone(http: FhirHttp, refs: (string | undefined)[]): Promise<string | undefined> {
  const ref = refs.find((r) => r?.startsWith('Practitioner/'));
  if (!ref) return undefined;
  const p = (await http.call<Practitioner>('GET', ref)).body;
  return p.telecom?.find((t) => t.system === 'phone')?.value;
}

async function toEmrDocument(
  http: FhirHttp,
  s: DocumentSettings,
  doc: DocumentReference,
  patients: Map<string, Patient | undefined>,
): Promise<EmrDocument | undefined> {
  const documentType = documentTypeOf(doc, s);
  const attachment = doc.content?.[0]?.attachment;
  // Checked here too: a server may ignore the status parameter and answer superseded documents.
  if (!documentType || !attachment || !doc.id || doc.status !== 'current') return undefined;
  const patient = await readPatient(http, patients, doc.subject?.reference);
  const serviceId = patient?.identifier?.find((i) => i.system === s.identifierSystem)?.value;
  const name = patient?.name?.[0];
  const doctorPhone =
    documentType === 'prescription'
      ? await readPractitionerPhone(
          http,
          (doc.author ?? []).map((a) => a.reference),
        )
      : undefined;
  return {
    id: doc.id,
    version: doc.meta?.versionId ?? '',
    documentType,
    label: doc.description ?? attachment.title ?? '',
    filename: attachment.title ?? '',
    ...(attachment.contentType ? { mimeType: attachment.contentType } : {}),
    content: attachment.data ? { base64: attachment.data } : { url: attachment.url ?? '' },
    patient: {
      id: doc.subject?.reference?.replace(/^Patient\//, '') ?? '',
      ...(serviceId ? { serviceId } : {}),
      ...(name ? { name: name.text ?? [...(name.given ?? []), name.family].filter(Boolean).join(' ') } : {}),
      ...(patient?.telecom?.find((t) => t.system === 'phone')?.value ? { phone: patient.telecom.find((t) => t.system === 'phone')!.value! } : {}),
    },
    ...(doctorPhone ? { doctorPhone } : {}),
    lastUpdated: doc.meta?.lastUpdated ?? '',
  };
}

/**
 * Documents changed at or after the watermark. `ge`, not `gt`: two documents can share a millisecond,
 * and one written just after a scan read the other must not be missed; the pusher's outbox (one row per
 * document id and version) ignores what it has already seen.
 */
export async function listDocumentsChangedSince(http: FhirHttp, s: DocumentSettings, watermark: string | undefined): Promise<DocumentChanges> {
  const types = [...s.labReportTypeCodes, ...s.prescriptionTypeCodes].join(',');
  const since = watermark ? `&_lastUpdated=ge${encodeURIComponent(watermark)}` : '';
  const documents: EmrDocument[] = [];
  const patients = new Map<string, Patient | undefined>();
  let newest = watermark ?? '';
  for (let offset = 0; ; offset += PAGE) {
    const path = `DocumentReference?status=current&type=${encodeURIComponent(types)}${since}&_sort=_lastUpdated&_count=${PAGE}&_offset=${offset}`;
    const page = (await http.call<Bundle>('GET', path)).body;
    for (const resource of matchesOf<DocumentReference>(page, 'DocumentReference')) {
      const doc = await toEmrDocument(http, s, resource, patients);
      if (doc) documents.push(doc);
      const updated = resource.meta?.lastUpdated ?? '';
      if (updated > newest) newest = updated;
    }
    if ((page.entry ?? []).length < PAGE) break;
  }
  return { documents, watermark: newest };
}

export async function recordDocumentOutcome(http: FhirHttp, system: string, o: DocumentOutcome): Promise<void> {
  const idValue = `document-outcome:${o.documentId}`;
  const communication: Communication = {
    resourceType: 'Communication',
    identifier: [{ system, value: idValue }],
    status: COMMUNICATION_STATUS[o.status],
    about: [{ reference: `DocumentReference/${o.documentId}` }],
    ...(o.sentAt ? { sent: o.sentAt } : {}),
    ...(o.statusReason ? { statusReason: { text: o.statusReason } } : {}),
    extension: [
      { url: `${EXT}/document-status`, valueCode: o.status },
      { url: `${EXT}/document-type`, valueCode: o.documentType },
      { url: `${EXT}/status-recorded-at`, valueInstant: o.occurredAt },
      ...(o.serviceId ? [{ url: `${EXT}/service-id`, valueString: o.serviceId }] : []),
      ...(o.releaseAfter ? [{ url: `${EXT}/release-after`, valueInstant: o.releaseAfter }] : []),
    ],
  };
  const held = await findOneByIdentifier<Communication>(http, 'Communication', system, idValue);
  if (held && sameOutcome(held, communication)) return;
  // By its id, never a conditional update: a server that ignores the identifier parameter would pick any record.
  if (held?.id) await http.call('PUT', `Communication/${encodeURIComponent(held.id)}`, { ...communication, id: held.id });
  else await http.call('POST', 'Communication', communication);
}

/** Whether the EMR's Communication already says what this one says (what the server adds, id and meta, aside). */
function sameOutcome(held: Communication, next: Communication): boolean {
  const keys = new Set([...Object.keys(held), ...Object.keys(next)].filter((k) => k !== 'id' && k !== 'meta'));
  return [...keys].every((k) => JSON.stringify(held[k as keyof Communication]) === JSON.stringify(next[k as keyof Communication]));
}
