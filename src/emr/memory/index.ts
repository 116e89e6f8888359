// An in-process EmrPort with the FHIR adapter's semantics (one record per serviceId, a patient the service
// knows by an EMR id adopted rather than made twice, snapshots applied whole to the records it made and
// never to the EMR's own, an appointment claimed with its participants in one call as a transaction would be
// (unless `transactions` is off), outcomes kept per document, failures as the port's EmrError classes): for unit
// tests, benchmarks against "an in-process EMR", and as the smallest example of what a fork for another EMR
// implements. It passes the port's conformance suite (test/emr/memory-conformance.test.ts).
import type {
  AppointmentClaim,
  AppointmentClaimed,
  AppointmentInput,
  DocumentOutcome,
  EmrDocument,
  EmrPort,
  EmrRecord,
  KnownRecord,
  MappedEntityType,
  PatientField,
  PatientInput,
} from '../port.ts';
import { EmrError } from '../errors.ts';
import { fhirRecordRefs } from '../fhir/refs.ts';
import { createMemoryOwnedRecords, KIND_OF, type MemoryOwnedState } from './owned-records.ts';

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
  /** One call, all or nothing, as a FHIR transaction; undefined while `transactions` is false. */
  claimAppointment(claim: AppointmentClaim): Promise<AppointmentClaimed | undefined>;
  /** Default true. While false, claimAppointment answers undefined, as an EMR without transactions: the caller claims one by one. */
  transactions: boolean;
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

export interface MemoryEmr extends MemoryOwnedState {}

/** The fields a test reads and sets; the operations read them live. */
type MemoryState = Pick<
  MemoryEmr,
  'records' | 'outcomes' | 'documents' | 'contents' | 'down' | 'refusing' | 'failWith' | 'calls' | 'differences' | 'transactions'
>;

/** The state, and what only the EMR itself keeps: appointments by EMR id, the EMR's own patients, the next id. */
type Own = {
  state: MemoryState;
  byId: Map<string, AppointmentInput>;
  emrPatients: Map<string, MemoryRecord>;
  next: number;
  /** The types it lets the adapter create (./owned-records.ts): a create of another is refused, as a vendor EMR refuses it. */
  creatable: Set<MappedEntityType>;
};

export function createMemoryEmr(): MemoryEmr {
  const state: MemoryState = {
    records: { patient: new Map(), practitioner: new Map(), location: new Map(), appointment: new Map() },
    outcomes: new Map(),
    documents: [],
    contents: new Map(),
    down: false,
    refusing: false,
    failWith: undefined,
    calls: 0,
    differences: [],
    transactions: true,
  };
  const own: Own = { state, byId: new Map(), emrPatients: new Map(), next: 1, creatable: new Set(['patient', 'doctor', 'location']) };
  const owned = createMemoryOwnedRecords({
    records: state.records,
    gate: () => gate(state),
    nextId: () => own.next++,
    patientById: (id) => patientById(own, id),
    emrPatients: () => [...own.emrPatients.values()],
  });
  own.creatable = owned.creatable;
  // Named as the FHIR adapter names its records, whose twin this is.
  return Object.assign(
    state,
    { refs: fhirRecordRefs },
    patientOperations(own),
    recordOperations(own),
    { claimAppointment: (claim: AppointmentClaim) => claimAppointment(own, claim) },
    documentOperations(own),
    owned,
  );
}

function patientOperations(own: Own): Pick<MemoryEmr, 'addEmrPatient' | 'patients' | 'ensurePatient' | 'updatePatient' | 'linkPatient'> {
  const { records } = own.state;
  return {
    addEmrPatient(data) {
      const id = `emr-own-${own.next++}`;
      own.emrPatients.set(id, { id, data, origin: 'emr' });
      return id;
    },
    patients: () => [...new Map([...own.emrPatients.values(), ...records.patient.values()].map((r) => [r.id, r])).values()],
    /** As the FHIR adapter: by serviceId; else the EMR's own record the externalId names, if no other service patient holds it; else new. */
    async ensurePatient({ externalId, ...p }) {
      const adoptable = externalId && !records.patient.has(p.serviceId) ? patientById(own, externalId) : undefined;
      const heldByAnother = adoptable && [...records.patient.entries()].some(([serviceId, r]) => r.id === adoptable.id && serviceId !== p.serviceId);
      if (adoptable && !heldByAnother) {
        gate(own.state);
        records.patient.set(p.serviceId, adoptable);
        return { id: adoptable.id, created: false };
      }
      return ensure(own, 'patient', p.serviceId, p, 'adapter');
    },
    async updatePatient(id, p) {
      gate(own.state);
      const entry = patientById(own, id);
      if (!entry) throw refused(`patient ${id}`);
      if (entry.origin === 'adapter') {
        entry.data = { serviceId: p.serviceId, name: p.name, phone: p.phone };
        return { differences: [] };
      }
      const fields = differencesOf(entry.data as Partial<PatientInput>, p);
      if (fields.length > 0) own.state.differences.push({ serviceId: p.serviceId, fields });
      return { differences: fields };
    },
    async linkPatient(id, serviceId) {
      gate(own.state);
      // A patient the EMR had before the service: it becomes known under the service's id as well.
      const entry = patientById(own, id);
      if (!entry) throw refused(`patient ${id}`);
      records.patient.set(serviceId, entry);
    },
  };
}

type RecordOperations = Pick<
  MemoryEmr,
  'ensurePractitioner' | 'ensureLocation' | 'ensureAppointment' | 'updateAppointment' | 'appointments' | 'ping' | 'close'
>;

function recordOperations(own: Own): RecordOperations {
  return {
    ensurePractitioner: (d) => ensure(own, 'practitioner', d.serviceId, d),
    ensureLocation: (l) => ensure(own, 'location', l.serviceId, l),
    async ensureAppointment(a) {
      const r = await ensure(own, 'appointment', a.serviceId, a);
      if (r.created) own.byId.set(r.id, a);
      return r;
    },
    async updateAppointment(id, a) {
      gate(own.state);
      if (!own.byId.has(id)) throw refused(`appointment ${id}`);
      own.byId.set(id, a);
    },
    appointments: () => [...own.state.records.appointment.values()].map((r) => ({ ...(own.byId.get(r.id) as AppointmentInput), id: r.id })),
    ping: async () => gate(own.state),
    async close() {},
  };
}

/** An appointment and the records it names, found or made in one call: the call fails before any is made, or none fails. */
async function claimAppointment(own: Own, claim: AppointmentClaim): Promise<AppointmentClaimed | undefined> {
  if (!own.state.transactions) return undefined;
  gate(own.state);
  for (const [kind, p] of [
    ['patient', claim.patient],
    ['practitioner', claim.practitioner],
    ['location', claim.location],
  ] as const)
    if ('serviceId' in p) refuseUncreatable(own, kind, p.serviceId);
  const participant = <I extends { serviceId: string }>(kind: Kind, p: KnownRecord | I, data: (p: I) => unknown, origin?: MemoryRecord['origin']) =>
    'serviceId' in p ? claimRecord(own, kind, p.serviceId, data(p), origin) : { id: p.id, created: false };
  const patient = participant('patient', claim.patient, (p) => ({ serviceId: p.serviceId, name: p.name, phone: p.phone }), 'adapter');
  const practitioner = participant('practitioner', claim.practitioner, (d) => d);
  const location = participant('location', claim.location, (l) => l);
  const input: AppointmentInput = { ...claim.appointment, patientId: patient.id, practitionerId: practitioner.id, locationId: location.id };
  const appointment = claimRecord(own, 'appointment', input.serviceId, input);
  if (appointment.created) own.byId.set(appointment.id, input);
  return { patient, practitioner, location, appointment };
}

function documentOperations({ state }: Own): Pick<MemoryEmr, 'listDocumentsChangedSince' | 'readDocumentBytes' | 'recordDocumentOutcome'> {
  return {
    async listDocumentsChangedSince(watermark) {
      gate(state);
      const documents = state.documents.filter((d) => watermark === undefined || d.lastUpdated >= watermark);
      // ISO 8601 times compare as strings: the newest is the last in sort order.
      const newest = [watermark ?? '', ...documents.map((d) => d.lastUpdated)].sort().at(-1)!;
      return { documents, watermark: newest };
    },
    async readDocumentBytes(doc) {
      gate(state);
      if ('base64' in doc.content) return Buffer.from(doc.content.base64, 'base64');
      const url = new URL(doc.content.url, `${MEMORY_EMR_BASE_URL}/`);
      if (url.origin !== new URL(MEMORY_EMR_BASE_URL).origin)
        throw new EmrError('document_content_refused', "the document's content is on another origin than the EMR; it is not read");
      const bytes = state.contents.get(url.href);
      if (!bytes) throw refused(`content at ${url.pathname}`);
      return bytes;
    },
    async recordDocumentOutcome(o) {
      gate(state);
      const list = state.outcomes.get(o.documentId) ?? [];
      const last = list[list.length - 1];
      if (!last || JSON.stringify(last) !== JSON.stringify(o)) list.push(o);
      state.outcomes.set(o.documentId, list);
    },
  };
}

/** Every call counts, and fails while the EMR is set to fail. */
function gate(state: MemoryState): void {
  state.calls++;
  if (state.failWith) throw state.failWith;
  if (state.down) throw new EmrError('emr_unavailable', 'the in-memory EMR is down');
  if (state.refusing) throw new EmrError('emr_unauthorized', 'the in-memory EMR refuses the adapter', 401);
}

const refused = (what: string) => new EmrError('emr_rejected', `the in-memory EMR has no ${what}`, 404);

async function ensure(own: Own, kind: Kind, serviceId: string, data: unknown, origin?: MemoryRecord['origin']): Promise<EmrRecord> {
  gate(own.state);
  refuseUncreatable(own, kind, serviceId);
  return claimRecord(own, kind, serviceId, data, origin);
}

/** A create of a type the EMR keeps for itself is refused, for every record alike (as FHIR's 405 is). */
function refuseUncreatable(own: Own, kind: Kind, serviceId: string): void {
  const entityType = (Object.keys(KIND_OF) as MappedEntityType[]).find((t) => KIND_OF[t] === kind);
  if (entityType && !own.creatable.has(entityType) && !own.state.records[kind].has(serviceId))
    throw new EmrError('emr_incompatible', `the in-memory EMR does not let the adapter create a ${kind}`, 405);
}

/** The record with this serviceId, made when there is none (no call of its own: the caller's call counts). */
function claimRecord(own: Own, kind: Kind, serviceId: string, data: unknown, origin?: MemoryRecord['origin']): EmrRecord {
  const found = own.state.records[kind].get(serviceId);
  if (found) return { id: found.id, created: false };
  const id = `${kind}-${own.next++}`;
  own.state.records[kind].set(serviceId, { id, data, ...(origin ? { origin } : {}) });
  return { id, created: true };
}

/** A patient record by its EMR id: one the adapter claimed, one the EMR made, or the patient a document is for. */
function patientById(own: Own, id: string): MemoryRecord | undefined {
  const known = [...own.state.records.patient.values()].find((r) => r.id === id) ?? own.emrPatients.get(id);
  if (known) return known;
  const subject = own.state.documents.find((d) => d.patient.id === id)?.patient;
  if (!subject) return undefined;
  const record: MemoryRecord = { id, data: { name: subject.name, phone: subject.phone }, origin: 'emr' };
  own.emrPatients.set(id, record);
  return record;
}

function differencesOf(held: Partial<PatientInput>, p: PatientInput): PatientField[] {
  const fields: PatientField[] = [];
  if (held.name !== p.name) fields.push('name');
  if (p.phone && held.phone !== p.phone) fields.push('phone');
  return fields;
}
