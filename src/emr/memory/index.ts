// An in-process EmrPort with the FHIR adapter's semantics (one record per serviceId, a patient the service
// knows by an EMR id adopted rather than made twice, snapshots applied whole to the records it made and
// never to the EMR's own, outcomes kept per document, failures as the port's EmrError classes): for unit
// tests, benchmarks against "an in-process EMR", and as the smallest example of what a fork for another EMR
// implements. It passes the port's conformance suite (test/emr/memory-conformance.test.ts).
import type { AppointmentInput, DocumentOutcome, EmrDocument, EmrPort, EmrRecord, PatientClaim, PatientField, PatientInput } from '../port.ts';
import { EmrError } from '../errors.ts';

type Kind = 'patient' | 'practitioner' | 'location' | 'appointment';

/** The in-memory EMR's own address: document content at a URL under it is read from `contents`; any other is refused. */
export const MEMORY_EMR_BASE_URL = 'http://memory-emr.invalid';

/** A record; `origin` 'adapter' when the adapter created it (only a patient's is looked at). */
export interface MemoryRecord {
  id: string;
  data: unknown;
  origin?: 'adapter' | 'emr';
}

export interface MemoryEmr extends EmrPort {
  /** By serviceId. */
  records: Record<Kind, Map<string, MemoryRecord>>;
  /** A patient the EMR made itself (a clerk's work), known to no service yet; returns its id. */
  addEmrPatient(data: { name: string; phone?: string; birthDate?: string }): string;
  /** Every patient record by its EMR id, linked to the service or not. */
  patients(): MemoryRecord[];
  /** Snapshot differences left unapplied on EMR-owned patients, as updatePatient reported them. */
  differences: { serviceId: string; fields: PatientField[] }[];
  appointments(): (AppointmentInput & { id: string })[];
  outcomes: Map<string, DocumentOutcome[]>;
  /** Documents waiting in the EMR; their patients exist in it (a document is always for a patient it has). */
  documents: EmrDocument[];
  /** Document content served at URLs under MEMORY_EMR_BASE_URL, by URL. */
  contents: Map<string, Uint8Array>;
  /** While true every call fails as an unreachable EMR would: emr_unavailable (retryable). */
  down: boolean;
  /** While true every call fails as an EMR that refuses the adapter's sign-in would: emr_unauthorized (an incident). */
  refusing: boolean;
  /** While set, every call fails with it: e.g. an EmrError emr_unauthorized, as an EMR that refuses the adapter. */
  failWith: Error | undefined;
  calls: number;
}

export function createMemoryEmr(): MemoryEmr {
  let next = 1;
  const records: MemoryEmr['records'] = { patient: new Map(), practitioner: new Map(), location: new Map(), appointment: new Map() };
  const byId = new Map<string, AppointmentInput>();
  const emrPatients = new Map<string, MemoryRecord>();
  /** A patient record by its EMR id: one the adapter claimed, one the EMR made, or the patient a document is for. */
  const patientById = (id: string): MemoryRecord | undefined => {
    const known = [...records.patient.values()].find((r) => r.id === id) ?? emrPatients.get(id);
    if (known) return known;
    const subject = emr.documents.find((d) => d.patient.id === id)?.patient;
    if (!subject) return undefined;
    const record: MemoryRecord = { id, data: { name: subject.name, phone: subject.phone }, origin: 'emr' };
    emrPatients.set(id, record);
    return record;
  };
  const refused = (what: string) => new EmrError('emr_rejected', `the in-memory EMR has no ${what}`, 404);

  const emr: MemoryEmr = {
    records,
    outcomes: new Map(),
    documents: [],
    contents: new Map(),
    down: false,
    refusing: false,
    failWith: undefined,
    calls: 0,
    differences: [],
    appointments: () => [...records.appointment.values()].map((r) => ({ ...(byId.get(r.id) as AppointmentInput), id: r.id })),
    addEmrPatient(data) {
      const id = `emr-own-${next++}`;
      emrPatients.set(id, { id, data, origin: 'emr' });
      return id;
    },
    patients: () => [...new Map([...emrPatients.values(), ...records.patient.values()].map((r) => [r.id, r])).values()],
    ensurePatient,
    async updatePatient(id, p) {
      gate();
      const entry = patientById(id);
      if (!entry) throw refused(`patient ${id}`);
      if (entry.origin === 'adapter') {
        entry.data = p;
        return { differences: [] };
      }
      const fields = differencesOf(entry.data as Partial<PatientInput>, p);
      if (fields.length > 0) emr.differences.push({ serviceId: p.serviceId, fields });
      return { differences: fields };
    },
    async linkPatient(id, serviceId) {
      gate();
      // A patient the EMR had before the service: it becomes known under the service's id as well.
      const entry = patientById(id);
      if (!entry) throw refused(`patient ${id}`);
      records.patient.set(serviceId, entry);
    },
    ensurePractitioner: (d) => ensure('practitioner', d.serviceId, d),
    ensureLocation: (l) => ensure('location', l.serviceId, l),
    async ensureAppointment(a) {
      const r = await ensure('appointment', a.serviceId, a);
      if (r.created) byId.set(r.id, a);
      return r;
    },
    async updateAppointment(id, a) {
      gate();
      if (!byId.has(id)) throw refused(`appointment ${id}`);
      byId.set(id, a);
    },
    async listDocumentsChangedSince(watermark) {
      gate();
      const documents = emr.documents.filter((d) => watermark === undefined || d.lastUpdated >= watermark);
      // ISO 8601 times compare as strings: the newest is the last in sort order.
      const newest = [watermark ?? '', ...documents.map((d) => d.lastUpdated)].sort().at(-1)!;
      return { documents, watermark: newest };
    },
    async readDocumentBytes(doc) {
      gate();
      if ('base64' in doc.content) return Buffer.from(doc.content.base64, 'base64');
      const url = new URL(doc.content.url, `${MEMORY_EMR_BASE_URL}/`);
      if (url.origin !== new URL(MEMORY_EMR_BASE_URL).origin)
        throw new EmrError('document_content_refused', "the document's content is on another origin than the EMR; it is not read");
      const bytes = emr.contents.get(url.href);
      if (!bytes) throw refused(`content at ${url.pathname}`);
      return bytes;
    },
    async recordDocumentOutcome(o) {
      gate();
      const list = emr.outcomes.get(o.documentId) ?? [];
      const last = list[list.length - 1];
      if (!last || JSON.stringify(last) !== JSON.stringify(o)) list.push(o);
      emr.outcomes.set(o.documentId, list);
    },
    async ping() {
      gate();
    },
    async close() {},
  };

  function gate(): void {
    emr.calls++;
    if (emr.failWith) throw emr.failWith;
    if (emr.down) throw new EmrError('emr_unavailable', 'the in-memory EMR is down');
    if (emr.refusing) throw new EmrError('emr_unauthorized', 'the in-memory EMR refuses the adapter', 401);
  }

  async function ensure(kind: Kind, serviceId: string, data: unknown, origin?: MemoryRecord['origin']): Promise<EmrRecord> {
    gate();
    const found = records[kind].get(serviceId);
    if (found) return { id: found.id, created: false };
    const id = `${kind}-${next++}`;
    records[kind].set(serviceId, { id, data, ...(origin ? { origin } : {}) });
    return { id, created: true };
  }

  /** As the FHIR adapter: by serviceId; else the EMR's own record the externalId names, if no other service patient holds it; else new. */
  async function ensurePatient({ externalId, ...p }: PatientClaim): Promise<EmrRecord> {
    const adoptable = externalId && !records.patient.has(p.serviceId) ? patientById(externalId) : undefined;
    const heldByAnother = adoptable && [...records.patient.entries()].some(([serviceId, r]) => r.id === adoptable.id && serviceId !== p.serviceId);
    if (adoptable && !heldByAnother) {
      gate();
      records.patient.set(p.serviceId, adoptable);
      return { id: adoptable.id, created: false };
    }
    return ensure('patient', p.serviceId, p, 'adapter');
  }

  return emr;
}

function differencesOf(held: Partial<PatientInput>, p: PatientInput): PatientField[] {
  const fields: PatientField[] = [];
  if (held.name !== p.name) fields.push('name');
  if (p.phone && held.phone !== p.phone) fields.push('phone');
  return fields;
}
