// The in-memory EMR (src/emr/memory) against the EmrPort conformance suite: the smallest harness, and the
// proof that the port's double in unit tests behaves as the FHIR adapter does.
import { createMemoryEmr, MEMORY_EMR_BASE_URL, type MemoryEmr } from '../../src/emr/memory/index.ts';
import type { AppointmentInput, PatientInput } from '../../src/emr/port.ts';
import { describeEmrPort, type ClaimedKind, type EmrHarness } from './conformance/describe-emr-port.ts';

function memoryHarness(): EmrHarness {
  const emr: MemoryEmr = createMemoryEmr();
  let documents = 0;
  const serviceIdsOf = (kind: ClaimedKind, id: string) => [...emr.records[kind].entries()].filter(([, r]) => r.id === id).map(([serviceId]) => serviceId);
  return {
    emr,
    addEmrPatient: async (p) => emr.addEmrPatient(p),
    async readPatient(id) {
      const record = emr.patients().find((r) => r.id === id);
      if (!record) return undefined;
      const data = record.data as Partial<PatientInput>;
      return { name: data.name ?? '', phones: data.phone ? [data.phone] : [], serviceIds: serviceIdsOf('patient', id) };
    },
    countByServiceId: async (kind, serviceId) => (emr.records[kind].has(serviceId) ? 1 : 0),
    async readAppointment(id) {
      const a: (AppointmentInput & { id: string }) | undefined = emr.appointments().find((x) => x.id === id);
      return a && { startsAt: a.startsAt, cancelled: a.status === 'Cancelled', serviceStatus: a.status };
    },
    async addDocument(seed) {
      const id = `memory-doc-${++documents}`;
      const patient = emr.patients().find((r) => r.id === seed.patientId);
      if (!patient) throw new Error(`no patient ${seed.patientId} in the in-memory EMR`);
      const { name, phone } = patient.data as Partial<PatientInput>;
      const [serviceId] = serviceIdsOf('patient', seed.patientId);
      let content: { base64: string } | { url: string } = { base64: Buffer.from(seed.bytes).toString('base64') };
      if (seed.content === 'url') {
        const url = `${MEMORY_EMR_BASE_URL}/Binary/${id}`;
        emr.contents.set(url, seed.bytes);
        content = { url };
      }
      emr.documents.push({
        id,
        version: '1',
        documentType: seed.documentType,
        label: seed.label,
        filename: seed.filename,
        mimeType: seed.mimeType,
        content,
        patient: { id: seed.patientId, ...(serviceId ? { serviceId } : {}), ...(name ? { name } : {}), ...(phone ? { phone } : {}) },
        lastUpdated: new Date().toISOString(),
      });
      return id;
    },
    async readOutcomes(documentId) {
      const history = emr.outcomes.get(documentId) ?? [];
      return history.length ? [{ status: history[history.length - 1]!.status, version: String(history.length) }] : [];
    },
    async unreachable() {
      emr.down = true;
      return {
        emr,
        end: async () => {
          emr.down = false;
        },
      };
    },
    async refusingAdapter() {
      emr.refusing = true;
      return {
        emr,
        end: async () => {
          emr.refusing = false;
        },
      };
    },
    close: () => emr.close(),
  };
}

describeEmrPort('the in-memory EMR', async () => memoryHarness());
