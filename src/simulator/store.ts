// The simulator's records: one JSON row per clinic, key, subscription, patient, doctor, location,
// appointment and document, typed by kind. Small and generic on purpose: the simulator's state is
// tiny, and one shape keeps its persistence obvious.
import type { Db } from '../sqlite/open.ts';

export interface Clinic {
  id: string;
  timeZone: string;
  quietHours: { start: string; end: string };
  autoSend: { lab_report: boolean; prescription: boolean };
  /** Fixed doctors and locations (their service ids and names): an appointment that names none takes one of them. */
  roster?: { doctors: RosterEntry[]; locations: RosterEntry[] };
  /** When the clinic sees patients, in its time zone: an appointment given no start takes the first free one. */
  appointmentHours?: AppointmentHours;
}
export interface RosterEntry {
  serviceId: string;
  name: string;
}
export interface AppointmentHours {
  days: ('sun' | 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat')[];
  /** HH:MM */
  opens: string;
  closes: string;
  slotMinutes: number;
}
export interface ApiKey {
  id: string;
  clinicId: string;
  mode: 'live' | 'sandbox';
}
export interface Subscription {
  id: string;
  clinicId: string;
  url: string;
  eventTypes: string[];
  keyId: string;
  /** Newest first; all of them sign while a rotation is under way. */
  secrets: string[];
  paused: boolean;
  consecutiveFailures: number;
  /** Resumed and still draining the queue it kept while paused: one delivery at a time, oldest first. */
  draining?: boolean;
}
export interface Person {
  id: string;
  clinicId: string;
  externalId: string | null;
  name: string;
  phone?: string;
}
export interface SimAppointment {
  id: string;
  clinicId: string;
  externalId: string | null;
  startsAt: string;
  mode: string;
  status: string;
  token: string;
  notes: string;
  payment: { type: string; amountPaid: number; balanceDue: number; currency: string; payAtClinic: boolean };
  doctorId: string;
  patientId: string;
  locationId: string;
}
export interface SimDocument {
  id: string;
  clinicId: string;
  externalId: string;
  documentType: 'lab_report' | 'prescription';
  patientServiceId: string;
  status: 'SENT' | 'HELD' | 'FAILED' | 'SUPPRESSED';
  statusReason?: string;
  releaseAfter?: string;
  sentAt?: string;
  heldFor?: 'auto_send' | 'quiet_hours';
  label: string;
  file: { name: string; mimeType: string; size: number; sha256: string; base64: string };
  /** The first response, replayed for a repeated externalId. */
  firstResponse: unknown;
}

/** Where a clinic's externalId points: its document's serviceId. */
export interface DocumentRef {
  id: string;
  serviceId: string;
}

interface Kinds {
  document_ref: DocumentRef;
  clinic: Clinic;
  key: ApiKey;
  subscription: Subscription;
  patient: Person;
  doctor: Person;
  location: Person;
  appointment: SimAppointment;
  document: SimDocument;
}
export type Kind = keyof Kinds;

export interface Store {
  get<K extends Kind>(kind: K, id: string): Kinds[K] | undefined;
  put<K extends Kind>(kind: K, value: Kinds[K] & { id: string }, clinicId?: string): void;
  list<K extends Kind>(kind: K, clinicId?: string): Kinds[K][];
  remove(kind: Kind, id: string): void;
  /** Held documents waiting for the end of quiet hours (an indexed read, not a scan of every document). */
  quietHolds(): SimDocument[];
  meta(key: string): string | undefined;
  setMeta(key: string, value: string): void;
}

/** Its terms are those of the partial index records_quiet_holds (db/simulator/002_quiet_holds.sql), which it reads. */
export const QUIET_HOLDS_SQL =
  "SELECT data FROM records WHERE kind = 'document' AND json_extract(data, '$.heldFor') = 'quiet_hours' AND json_extract(data, '$.status') = 'HELD'";

export function createStore(db: Db): Store {
  const get = db.prepare('SELECT data FROM records WHERE kind = ? AND id = ?').pluck();
  const put = db.prepare('INSERT INTO records (kind, id, clinic_id, data) VALUES (?, ?, ?, ?) ON CONFLICT (kind, id) DO UPDATE SET data = excluded.data');
  const listAll = db.prepare('SELECT data FROM records WHERE kind = ? ORDER BY rowid').pluck();
  const listClinic = db.prepare('SELECT data FROM records WHERE kind = ? AND clinic_id = ? ORDER BY rowid').pluck();
  const meta = db.prepare('SELECT value FROM meta WHERE key = ?').pluck();
  const remove = db.prepare('DELETE FROM records WHERE kind = ? AND id = ?');
  const quietHolds = db.prepare(QUIET_HOLDS_SQL).pluck();
  const setMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  return {
    get: (kind, id) => {
      const d = get.get(kind, id) as string | undefined;
      return d === undefined ? undefined : JSON.parse(d);
    },
    put: (kind, value, clinicId) => {
      put.run(kind, value.id, clinicId ?? (value as { clinicId?: string }).clinicId ?? null, JSON.stringify(value));
    },
    list: (kind, clinicId) => ((clinicId === undefined ? listAll.all(kind) : listClinic.all(kind, clinicId)) as string[]).map((d) => JSON.parse(d)),
    remove: (kind, id) => {
      remove.run(kind, id);
    },
    quietHolds: () => (quietHolds.all() as string[]).map((d) => JSON.parse(d) as SimDocument),
    meta: (key) => meta.get(key) as string | undefined,
    setMeta: (key, value) => {
      setMeta.run(key, value);
    },
  };
}
