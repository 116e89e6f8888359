// The in-memory EMR (src/emr/memory) against the EmrPort conformance suite in both shapes: ids at once (the
// smallest harness, and the proof that the port's double in unit tests behaves as the FHIR adapter does), and
// ids named later with documents pushed (./memory/pushed.ts, the shape an HL7 v2 EMR has).
import { createMemoryEmr, MEMORY_EMR_BASE_URL, type MemoryEmr } from '../../src/emr/memory/index.ts';
import type { AppointmentInput, PatientInput } from '../../src/emr/port.ts';
import { createPushedMemoryEmr } from '../../src/emr/memory/pushed.ts';
import { describeEmrPort, type ClaimedKind, type EmrHarness } from './conformance/describe-emr-port.ts';
import { describePushedEmrPort, type PushedEmrHarness } from './conformance/describe-pushed-emr-port.ts';

function memoryHarness(emr: MemoryEmr = createMemoryEmr()): EmrHarness {
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

/** The same in-memory EMR in the pushed shape: ids named in its feed, documents handed in. */
function pushedMemoryHarness(): PushedEmrHarness {
  const pushed = createPushedMemoryEmr();
  const base = memoryHarness(pushed.emr);
  let documents = 0;
  return {
    emr: pushed,
    settle: () => pushed.feed(),
    countByServiceId: base.countByServiceId,
    readPatient: base.readPatient,
    readAppointment: base.readAppointment,
    async fileDocument(seed) {
      const record = pushed.emr.records.patient.get(seed.patientServiceId);
      if (!record) throw new Error(`no patient ${seed.patientServiceId} in the in-memory EMR`);
      const { name, phone } = record.data as Partial<PatientInput>;
      const id = `pushed-doc-${++documents}`;
      pushed.fileDocument({
        id,
        version: '1',
        documentType: seed.documentType,
        label: seed.label,
        filename: seed.filename,
        mimeType: seed.mimeType,
        content: { base64: Buffer.from(seed.bytes).toString('base64') },
        patient: { id: record.id, serviceId: seed.patientServiceId, ...(name ? { name } : {}), ...(phone ? { phone } : {}) },
        lastUpdated: new Date().toISOString(),
      });
      return id;
    },
    unreachable: base.unreachable,
    close: () => pushed.close(),
  };
}

describePushedEmrPort('the in-memory EMR', async () => pushedMemoryHarness());
