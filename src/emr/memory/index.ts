// An in-process EmrPort with the FHIR adapter's semantics (one record per serviceId, snapshots applied
// whole, outcomes kept per document): for unit tests, benchmarks against "an in-process EMR", and as the
// smallest example of what a fork for another EMR implements.
import type { AppointmentInput, DocumentOutcome, EmrDocument, EmrPort, EmrRecord } from '../port.ts';
import { EmrError } from '../errors.ts';

type Kind = 'patient' | 'practitioner' | 'location' | 'appointment';

export interface MemoryEmr extends EmrPort {
  records: Record<Kind, Map<string, { id: string; data: unknown }>>;
  appointments(): (AppointmentInput & { id: string })[];
  outcomes: Map<string, DocumentOutcome[]>;
  documents: EmrDocument[];
  /** While true every call fails as an unreachable EMR would (retryable). */
  down: boolean;
  /** While set, every call fails with it: e.g. an EmrError emr_unauthorized, as an EMR that refuses the adapter. */
  failWith: Error | undefined;
  calls: number;
}

export function createMemoryEmr(): MemoryEmr {
  let next = 1;
  const records: MemoryEmr['records'] = { patient: new Map(), practitioner: new Map(), location: new Map(), appointment: new Map() };
  const byId = new Map<string, AppointmentInput>();

  const emr: MemoryEmr = {
    records,
    outcomes: new Map(),
    documents: [],
    down: false,
    failWith: undefined,
    calls: 0,
    appointments: () => [...records.appointment.values()].map((r) => ({ ...(byId.get(r.id) as AppointmentInput), id: r.id })),
    ensurePatient: (p) => ensure('patient', p.serviceId, p),
    async updatePatient(id, p) {
      gate();
      const entry = [...records.patient.values()].find((r) => r.id === id);
      if (!entry) throw new Error(`no patient ${id}`);
      entry.data = p;
    },
    async linkPatient(id, serviceId) {
      gate();
      // A patient the EMR had before the service: it becomes known under the service's id as well.
      const entry = [...records.patient.values()].find((r) => r.id === id) ?? { id, data: { serviceId } };
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
      if (!byId.has(id)) throw new Error(`no appointment ${id}`);
      byId.set(id, a);
    },
    async listDocumentsChangedSince(watermark) {
      gate();
      const documents = emr.documents.filter((d) => watermark === undefined || d.lastUpdated >= watermark);
      const newest = documents.reduce((m, d) => (d.lastUpdated > m ? d.lastUpdated : m), watermark ?? '');
      return { documents, watermark: newest };
    },
    async readDocumentBytes(doc) {
      gate();
      if ('base64' in doc.content) return Buffer.from(doc.content.base64, 'base64');
      throw new Error('the memory EMR holds no URL content');
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
  }

  async function ensure(kind: Kind, serviceId: string, data: unknown): Promise<EmrRecord> {
    gate();
    const found = records[kind].get(serviceId);
    if (found) return { id: found.id, created: false };
    const id = `${kind}-${next++}`;
    records[kind].set(serviceId, { id, data });
    return { id, created: true };
  }

  return emr;
}
