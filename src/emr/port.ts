// The whole EMR side of emr-bridge as one interface. The processor and the pusher talk only to this;
// the FHIR R4 adapter in ./fhir/ implements it. Two shapes of EMR fit it: one that answers each write with its
// own id and is scanned for documents (FHIR), and one that takes a write now, names its id later and pushes
// documents to the adapter (HL7 v2 over MLLP): `pending` records, EmrInbound and start(). Failures are EmrError (./errors.ts): an outage, a refusal
// of one call, or an incident (the EMR refuses the adapter itself). A fork for another EMR re-implements this one file's
// interface in a folder of its own, proves it with the suite in test/emr/conformance/describe-emr-port.ts, and
// hands it to startAdapter (src/runtime/adapter.ts); docs/forking.md goes step by step.
import type { MappingEntityType } from '../contract/api.ts';
import type { DocumentStatus, DocumentType, Payment } from '../contract/events.ts';
import type { EmrStateStore, StateEntries } from '../storage/emr-state.ts';
import type { RecordRefs } from './refs.ts';

/** A record in the EMR: its own identifier (for FHIR, the resource's logical id). */
export interface EmrRecord {
  id: string;
  /** True when this call created it; false when it already existed (found by the service's id). */
  created: boolean;
  /**
   * A pushed EMR took the record but names its own id later: `id` is then the port's handle for it, which the
   * port takes wherever an EMR id goes (its later updates), and the EMR's id arrives through
   * EmrInbound.recordIdentified. The caller records no mapping for a pending record; asked again for the same
   * serviceId, the port answers the same handle with `created: false`. Absent: `id` is the EMR's own.
   */
  pending?: boolean;
}

/** An EMR's own id for a record the adapter claimed, named by a pushed EMR after the claim. */
export interface IdentifiedRecord {
  entityType: MappingEntityType;
  serviceId: string;
  emrId: string;
}

/**
 * Where a pushed EMR hands what it sends the adapter. Each resolves once what it was given is committed, so
 * the port acknowledges the EMR only then; each is idempotent (the EMR may send the same message again).
 */
export interface EmrInbound {
  /** The port's own durable share of the store (identifiers only), shared by every replica. */
  state: EmrStateStore;
  /**
   * Records the mapping and queues it for the service, once. `state`, the port's own entries (what the message
   * that named it taught the port, its seen mark), is written to `state` in the same commit.
   */
  recordIdentified(record: IdentifiedRecord, state?: StateEntries): Promise<void>;
  /** Files the document in the pusher's outbox (never sent twice for one id), as a scanned one would be. */
  documentPushed(doc: EmrDocument): Promise<void>;
  /**
   * The EMR withdraws a document it pushed (HL7 v2: MDM^T11): 'cancelled' while it had not gone to the service
   * (it will not), 'sent' when it already had, 'unknown' when the outbox never had it.
   */
  documentCancelled(documentId: string): Promise<'cancelled' | 'sent' | 'unknown'>;
}

export interface PatientInput {
  serviceId: string;
  name: string;
  phone: string;
}

/** A patient to find or create: the snapshot, plus the EMR id the service already holds for it, if any. */
export interface PatientClaim extends PatientInput {
  /**
   * The event's externalId: the EMR patient id the service knows this patient by (one a document was sent
   * for, as patientExternalId, before the service had heard of the patient). Null or absent: none.
   */
  externalId?: string | null;
}

/** The snapshot fields a patient record and the service may disagree on. */
export type PatientField = 'name' | 'phone';

/** What applying a snapshot to an existing patient record did. */
export interface PatientUpdate {
  /**
   * Fields where the snapshot differs from a record the EMR owns (one the adapter did not create): they
   * are reported here and left as the EMR has them. Empty for a record the adapter created (it takes the
   * snapshot) and when nothing differs.
   */
  differences: PatientField[];
}

export interface PractitionerInput {
  serviceId: string;
  name: string;
}

export interface LocationInput {
  serviceId: string;
  name: string;
}

/** A complete current-state snapshot of an appointment, with its participants already in the EMR. */
export interface AppointmentInput {
  serviceId: string;
  /** The service's status as received (Approved, Pending, ...); unknown values are kept by the adapter. */
  status: string;
  startsAt: string;
  startsAtLocal?: string;
  mode: string;
  token: string;
  notes: string;
  payment: Payment;
  patientId: string;
  practitionerId: string;
  locationId: string;
  /**
   * The doctor's and the location's names as the event gives them: an EMR that names them beside their ids in
   * the appointment (HL7 v2: AIP-3, AIL-3) takes them from here, whether they were resolved or claimed.
   */
  practitionerName?: string;
  locationName?: string;
  /** occurredAt of the event this snapshot came from. */
  occurredAt: string;
}

/** A record the caller already knows by its EMR id (its mapping): named, not claimed. */
export interface KnownRecord {
  id: string;
}

/**
 * An appointment to find or create together with the records it names. Each participant is either known (its
 * EMR id) or to be found or created from its snapshot, as ensurePatient (without an externalId),
 * ensurePractitioner and ensureLocation would.
 */
export interface AppointmentClaim {
  patient: KnownRecord | PatientInput;
  practitioner: KnownRecord | PractitionerInput;
  location: KnownRecord | LocationInput;
  /** The appointment's snapshot; its participants' ids are the records above. */
  appointment: Omit<AppointmentInput, 'patientId' | 'practitionerId' | 'locationId'>;
}

/** What claimAppointment found or created, one record each; a known participant is answered as found (`created: false`). */
export interface AppointmentClaimed {
  patient: EmrRecord;
  practitioner: EmrRecord;
  location: EmrRecord;
  appointment: EmrRecord;
}

/** A document waiting in the EMR to go to a patient. */
export interface EmrDocument {
  /** The EMR's id of the document (FHIR: DocumentReference id). Used as the service externalId. */
  id: string;
  /** Changes whenever the document changes (FHIR: meta.versionId). */
  version: string;
  documentType: DocumentType;
  label: string;
  filename: string;
  mimeType?: string;
  content: { base64: string } | { url: string };
  patient: {
    id: string;
    /** The patient's id at the service, when the EMR record carries one. */
    serviceId?: string;
    name?: string;
    phone?: string;
  };
  doctorPhone?: string;
  meta?: Record<string, unknown>;
  lastUpdated: string;
}

export interface DocumentChanges {
  documents: EmrDocument[];
  /** Pass back on the next call to get only what changed after these. */
  watermark: string;
}

/** What became of a document, written back to the EMR. REJECTED: refused before it left (local checks). */
export interface DocumentOutcome {
  documentId: string;
  documentType: DocumentType;
  status: DocumentStatus | 'REJECTED';
  statusReason?: string;
  serviceId?: string;
  releaseAfter?: string;
  sentAt?: string;
  occurredAt: string;
}

/** The port's methods that make no call to the EMR (wiring, closing, its own marks, its links' counts): never wrapped as calls. */
export const LOCAL_PORT_METHODS: ReadonlySet<string> = new Set(['start', 'close', 'pruneBefore', 'links']);

/** The service records the adapter maps to EMR records without always creating them (the crosswalk's types). */
export type MappedEntityType = 'patient' | 'doctor' | 'location';

/** An EMR record a person may choose for a service record (a crosswalk suggestion). */
export interface RecordSuggestion {
  emrId: string;
  /** What a person recognises it by (a name; for a patient, the name and phone the EMR holds). */
  display: string;
}

export interface EmrPort {
  /** How its records are named to a person (the console, the event history, mapping lookups). */
  readonly refs: RecordRefs;
  /**
   * Whether the adapter may create records of this type in the EMR (FHIR: FHIR_CREATES, by default what the EMR's
   * CapabilityStatement declares). Absent: it may. A type it may not create is matched only: the crosswalk, the
   * EMR by the service's id (findByServiceId), the snapshot's externalId; otherwise its events wait.
   */
  mayCreate?(entityType: MappedEntityType): Promise<boolean>;
  /**
   * Whether a record of a type the adapter may create is still named by the EMR id the crosswalk (or the snapshot's
   * externalId) holds for it, when there is one, instead of being found or created: the port then receives that id
   * where the record's goes (HL7 v2: a doctor's and a location's, carried in AIP-3 and AIL-3). Without one, the
   * record is found or created as usual and nothing waits. Absent: no.
   */
  prefersMapped?(entityType: MappedEntityType): Promise<boolean>;
  /** The one EMR record carrying the service's id, without creating one; undefined when there is none. */
  findByServiceId?(entityType: MappedEntityType, serviceId: string): Promise<string | undefined>;
  /** Whether the EMR holds this record; undefined when the EMR cannot be asked (HL7 v2: the id is taken as given). */
  recordExists?(entityType: MappedEntityType, emrId: string): Promise<boolean | undefined>;
  /** The EMR's records that match by name (and phone, for a patient), for a person to choose from. */
  suggest?(entityType: MappedEntityType, query: { name: string; phone?: string }): Promise<RecordSuggestion[]>;
  /**
   * How documents reach the adapter: 'scanned' (default), listDocumentsChangedSince on the pusher's schedule;
   * 'pushed', through EmrInbound.documentPushed (listDocumentsChangedSince then finds nothing).
   */
  readonly documentSource?: 'scanned' | 'pushed';
  /**
   * Whether recordDocumentOutcome reaches the EMR ('emr', the default) or the EMR has no place for it and the
   * final status stays in the adapter ('adapter'): GET /admin/status says which.
   */
  readonly documentOutcomes?: 'emr' | 'adapter';
  /**
   * Forgets what the port keeps only to recognise a repeat (HL7 v2: the messages it took), last written before
   * the cutoff: run with the processor's retention, at RETENTION_EVENT_ID_DAYS. Says how many.
   */
  pruneBefore?(cutoffMs: number): Promise<number>;
  /** Opens what the port holds (connections, a listener for what the EMR pushes); before any other call. */
  start?(inbound: EmrInbound): Promise<void>;
  /**
   * Finds the record carrying the service's id; else, when `externalId` names an existing patient that
   * carries no other service id, marks that one with the service's id (the EMR's own record, which the
   * service met through a document); else creates one, marked as made by the adapter. Never makes two
   * for one serviceId, given that the caller does not claim one serviceId twice at once (the processor
   * holds a lock per entity).
   */
  ensurePatient(input: PatientClaim): Promise<EmrRecord>;
  /**
   * Applies a newer snapshot of a patient to its existing record. A record the adapter created takes the
   * snapshot's name and phone; a record the EMR owns (anything the adapter did not create) keeps its
   * name, birth date and phone, and the fields that differ are returned (never their values).
   */
  updatePatient(id: string, input: PatientInput & { occurredAt?: string }): Promise<PatientUpdate>;
  /**
   * Marks an existing patient record with the service's id: a patient the service first met through a
   * document sent for it. Idempotent.
   */
  linkPatient(id: string, serviceId: string): Promise<void>;
  ensurePractitioner(input: PractitionerInput): Promise<EmrRecord>;
  ensureLocation(input: LocationInput): Promise<EmrRecord>;
  ensureAppointment(input: AppointmentInput): Promise<EmrRecord>;
  /**
   * Finds or creates an appointment and the records it names in one round trip (FHIR: a transaction Bundle of
   * conditional creates), where the EMR allows it; undefined when it does not (the caller claims them one by
   * one). The same promise as the ensure methods: never two records for one serviceId, given that the caller
   * holds the lock of every record it claims. A record found, not created, is left as it was: the caller applies
   * the snapshot with updatePatient or updateAppointment.
   */
  claimAppointment?(claim: AppointmentClaim): Promise<AppointmentClaimed | undefined>;
  /** Applies a full snapshot to an existing appointment. */
  updateAppointment(id: string, input: AppointmentInput): Promise<void>;
  /** Documents for patients created or changed after the watermark (undefined: from the beginning). */
  listDocumentsChangedSince(watermark: string | undefined): Promise<DocumentChanges>;
  /**
   * Reads a document's bytes from the EMR (its content is a URL). Content the adapter will not read (another
   * origin than the EMR's) throws EmrError document_content_refused.
   */
  readDocumentBytes(doc: EmrDocument): Promise<Uint8Array>;
  /** Records the document's latest status in the EMR. Idempotent: the same outcome twice changes nothing. */
  recordDocumentOutcome(outcome: DocumentOutcome): Promise<void>;
  /** Throws when the EMR cannot be reached, or is not what the adapter needs (start-up, readiness). */
  ping(): Promise<void>;
  /**
   * A pushed EMR's connections for what the adapter sends (HL7 v2: HL7_SEND_CONNECTIONS MLLP links), each one
   * message in flight: how many are configured, how many are connected now. /admin/status shows them.
   */
  links?(): { configured: number; connected: number };
  close(): Promise<void>;
}
