// What ../emr-latency.ts checks after each run, as the end-to-end suites do: every backlog event applied and none
// dead (the adapter's database), every delivery made (the simulator, when it sent them), and the EMR's records against the
// simulator's final state: exactly one record per serviceId, each appointment's status and start the simulator's,
// its patient the right record, and the ids the adapter posted back the EMR's. Beside the vendor EMR, whose doctors
// and rooms are its own (mapped by the roster's crosswalk), each appointment is in the Slot of its doctor's
// Schedule at its start and no Slot is held by two. Answers the failures, as lines.
import type Database from 'better-sqlite3';
import { APPOINTMENT_STATUS } from '../../src/emr/fhir/mapping.ts';
import { generatedSlotId } from '../../src/fhir-server/vendor/slot-book.ts';
import { fillerStatus } from '../../src/emr/hl7v2/messages/siu.ts';
import { requestJson } from '../../src/http/json-request.ts';
import { type Backlog, type Entities, inParallel, type LatencyStack, type Sender } from './emr-latency-stack.ts';
import type { VendorBench } from './vendor-bench.ts';

const IDENTIFIER_SYSTEM = 'urn:emr-bridge:service';
const PAGE = 1000;
/** Examples named per failure line. */
const EXAMPLES = 3;

interface Person {
  serviceId: string;
  externalId: string | null;
}
interface SimAppointment {
  appointment: Person & { status: string; startsAt: string };
  patient: Person;
  doctor: Person;
  location: Person;
}

/** One EMR record as the checks read it, whichever the EMR. */
interface EmrRecord {
  id: string;
  status?: string;
  /** Epoch ms. */
  start?: number;
  /** The patient's EMR id (FHIR), or service id (HL7), that the appointment names. */
  patient?: string;
  /** The Slot a FHIR appointment names (`Slot/{id}`), when it names one. */
  slot?: string;
}

type Kind = keyof Entities;
type Records = Record<Kind, Map<string, EmrRecord[]>>;

/** A failure line when `bad` is not empty: how many, and a few of them. */
function failure(what: string, bad: string[]): string[] {
  return bad.length ? [`${bad.length} ${what}: ${bad.slice(0, EXAMPLES).join(', ')}${bad.length > EXAMPLES ? ', …' : ''}`] : [];
}

function group(records: { serviceId: string; record: EmrRecord }[]): Map<string, EmrRecord[]> {
  const by = new Map<string, EmrRecord[]>();
  for (const { serviceId, record } of records) by.set(serviceId, [...(by.get(serviceId) ?? []), record]);
  return by;
}

async function getJson<T>(url: string): Promise<T> {
  const res = await requestJson<T>('GET', url);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  return res.body;
}

// ---- the EMR's records -----------------------------------------------------------------------------------------

type FhirResource = {
  id: string;
  status?: string;
  start?: string;
  identifier?: { system?: string; value?: string }[];
  participant?: { actor?: { reference?: string } }[];
  slot?: { reference?: string }[];
};

/** Every resource of a type, a page at a time, straight from the FHIR server (not through the proxy). */
async function fhirAll(base: string, type: string): Promise<FhirResource[]> {
  const all: FhirResource[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await getJson<{ entry?: { resource: FhirResource }[] }>(`${base}/${type}?_count=${PAGE}&_offset=${offset}`);
    all.push(...(page.entry ?? []).map((e) => e.resource));
    if ((page.entry ?? []).length < PAGE) return all;
  }
}

const serviceIdsOf = (r: FhirResource) => (r.identifier ?? []).filter((i) => i.system === IDENTIFIER_SYSTEM && i.value).map((i) => i.value!);

async function fhirRecords(base: string): Promise<Records> {
  const read = async (type: string) => {
    const resources = await fhirAll(base, type);
    return group(
      resources.flatMap((r) =>
        serviceIdsOf(r).map((serviceId) => ({
          serviceId,
          record: {
            id: r.id,
            ...(r.status ? { status: r.status } : {}),
            ...(r.start ? { start: Date.parse(r.start) } : {}),
            ...(type === 'Appointment'
              ? {
                  patient: r.participant
                    ?.map((p) => p.actor?.reference)
                    .find((ref) => ref?.startsWith('Patient/'))
                    ?.slice('Patient/'.length),
                  ...(r.slot?.[0]?.reference ? { slot: r.slot[0].reference } : {}),
                }
              : {}),
          },
        })),
      ),
    );
  };
  return { doctors: await read('Practitioner'), locations: await read('Location'), patients: await read('Patient'), appointments: await read('Appointment') };
}

/** HL7 TS (`YYYYMMDDHHMM[SS][+HHMM]`) to epoch ms; undefined when it is not one. */
export function hl7Time(ts: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?(?:\.\d+)?([+-])?(\d{2})?(\d{2})?$/.exec(ts);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, sign, oh, om] = m;
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0));
  const offset = sign ? (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om ?? 0)) * 60_000 : 0;
  return utc - offset;
}

async function hl7Records(controlUrl: string): Promise<Records> {
  const { patients } = await getJson<{ patients: { serviceId: string; mrn: string }[] }>(`${controlUrl}/_emr/patients`);
  const { appointments } = await getJson<{ appointments: { serviceId: string; fillerId: string; start: string; status: string; patientServiceId?: string }[] }>(
    `${controlUrl}/_emr/appointments`,
  );
  const start = (ts: string) => hl7Time(ts);
  return {
    // An HL7 EMR keeps no record of the doctors and locations it is sent.
    doctors: new Map(),
    locations: new Map(),
    patients: group(patients.map((p) => ({ serviceId: p.serviceId, record: { id: p.mrn } }))),
    appointments: group(
      appointments.map((a) => ({
        serviceId: a.serviceId,
        record: { id: a.fillerId, status: a.status, ...(start(a.start) !== undefined ? { start: start(a.start)! } : {}), patient: a.patientServiceId },
      })),
    ),
  };
}

// ---- the checks --------------------------------------------------------------------------------------------------

/** Exactly one record per serviceId the simulator made, and none for an id it did not. */
function oneRecordEach(kind: Kind, expected: string[], records: Map<string, EmrRecord[]>): string[] {
  const known = new Set(expected);
  return [
    ...failure(
      `${kind} with no EMR record`,
      expected.filter((id) => !records.has(id)),
    ),
    ...failure(
      `${kind} with more than one EMR record`,
      expected.filter((id) => (records.get(id)?.length ?? 0) > 1),
    ),
    ...failure(
      `EMR ${kind} records for ids the simulator never made`,
      [...records.keys()].filter((id) => !known.has(id)),
    ),
  ];
}

/** The appointment's status, start, patient and mapped ids against the simulator's final state. */
function appointmentMatches(emr: 'fhir' | 'hl7', sim: SimAppointment, records: Records, vendor: VendorBench | undefined): string[] {
  const a = records.appointments.get(sim.appointment.serviceId)?.[0];
  if (!a) return [];
  const wrong: string[] = [];
  const status = emr === 'fhir' ? APPOINTMENT_STATUS[sim.appointment.status] : fillerStatus(sim.appointment.status);
  if (a.status !== status) wrong.push(`status ${a.status} not ${status}`);
  // HL7 v2 times carry whole seconds.
  const start = emr === 'fhir' ? Date.parse(sim.appointment.startsAt) : Math.floor(Date.parse(sim.appointment.startsAt) / 1000) * 1000;
  if (a.start !== start) wrong.push(`start ${a.start === undefined ? 'none' : new Date(a.start).toISOString()} not ${sim.appointment.startsAt}`);
  const patientRecord = records.patients.get(sim.patient.serviceId)?.[0];
  const patient = emr === 'fhir' ? patientRecord?.id : sim.patient.serviceId;
  if (a.patient !== patient) wrong.push(`patient ${a.patient} not ${patient}`);
  if (sim.appointment.externalId !== a.id) wrong.push(`externalId ${sim.appointment.externalId} not ${a.id}`);
  if (patientRecord && sim.patient.externalId !== patientRecord.id) wrong.push(`patient externalId ${sim.patient.externalId} not ${patientRecord.id}`);
  for (const kind of ['doctor', 'location'] as const) {
    // The vendor EMR's own records carry no service id: the roster's crosswalk names them.
    const emrId = vendor ? vendor.emrIds.get(sim[kind].serviceId) : records[`${kind}s`].get(sim[kind].serviceId)?.[0]?.id;
    if (emrId && sim[kind].externalId !== emrId) wrong.push(`${kind} externalId ${sim[kind].externalId} not ${emrId}`);
  }
  if (vendor) {
    const slot = `Slot/${generatedSlotId(vendor.scheduleOf(sim.doctor.serviceId), Date.parse(sim.appointment.startsAt))}`;
    if (a.slot !== slot) wrong.push(`slot ${a.slot} not ${slot}`);
  }
  return wrong.length ? [`${sim.appointment.serviceId} (${wrong.join('; ')})`] : [];
}

/** No Slot held by two appointments that are not cancelled (a cancelled one's Slot is free again). */
function doubleBooked(records: Records): string[] {
  const holders = new Map<string, string[]>();
  for (const [serviceId, [a]] of records.appointments)
    if (a?.slot && a.status !== 'cancelled') holders.set(a.slot, [...(holders.get(a.slot) ?? []), serviceId]);
  return failure(
    'Slots booked by more than one appointment',
    [...holders].filter(([, ids]) => ids.length > 1).map(([slot, ids]) => `${slot}: ${ids.join(' ')}`),
  );
}

/** The backlog's events in the adapter's database: all applied, none dead. */
export function eventStates(db: Database.Database, backlog: Backlog): Record<string, number> {
  const rows = db.prepare('SELECT state, count(*) AS n FROM processing WHERE inbox_id > ? GROUP BY state').all(backlog.afterInboxId) as {
    state: string;
    n: number;
  }[];
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

/**
 * A patient.created discarded as stale is right when its appointment's event, newer, was applied first with the same
 * patient inside it (the two are different entities, claimed side by side): the patient's record and mapping are
 * checked with the appointments. Any other event not applied is a failure.
 */
function eventFailures(db: Database.Database, backlog: Backlog): string[] {
  const states = eventStates(db, backlog);
  const received = db.prepare('SELECT count(*) FROM inbox_events WHERE id > ?').pluck().get(backlog.afterInboxId) as number;
  const staleOther = db
    .prepare(
      "SELECT count(*) FROM processing p JOIN inbox_events e ON e.id = p.inbox_id WHERE p.inbox_id > ? AND p.state = 'discarded_stale' AND e.event_type <> 'patient.created'",
    )
    .pluck()
    .get(backlog.afterInboxId) as number;
  const final = (states.applied ?? 0) + (states.discarded_stale ?? 0) - staleOther;
  return [
    ...(received !== backlog.events ? [`${received} backlog events in the inbox, ${backlog.events} sent`] : []),
    ...(final !== backlog.events ? [`${final} of ${backlog.events} backlog events applied (by state: ${JSON.stringify(states)})`] : []),
  ];
}

async function deliveryFailures(stack: LatencyStack): Promise<string[]> {
  const sub = await getJson<{ paused: boolean; queued: number }>(`${stack.simUrl}/_sim/subscriptions/${stack.subscriptionId}`);
  const alerts = await getJson<{ kind: string }[]>(`${stack.simUrl}/_sim/alerts`);
  const givenUp = alerts.filter((a) => a.kind === 'delivery_given_up').length;
  return [
    ...(sub.paused || sub.queued > 0 ? [`the subscription is ${sub.paused ? 'paused' : 'active'} with ${sub.queued} deliveries queued`] : []),
    ...(givenUp ? [`${givenUp} deliveries given up by the simulator`] : []),
  ];
}

/** Every check of a finished run; no line: all passed. The simulator's deliveries are checked when it sent the backlog. */
export async function checkRun(stack: LatencyStack, backlog: Backlog, sender: Sender): Promise<string[]> {
  const { entities } = stack;
  const simAppointments = await inParallel(entities.appointments, 8, (id) =>
    getJson<SimAppointment>(`${stack.simUrl}/_sim/appointments/${encodeURIComponent(id)}`),
  );
  const records = stack.emr === 'fhir' ? await fhirRecords(stack.emrUrl) : await hl7Records(stack.emrUrl);
  // The vendor EMR's doctors and rooms are its own records, carrying no service id.
  const kinds: Kind[] = stack.emr === 'fhir' && !stack.vendor ? ['doctors', 'locations', 'patients', 'appointments'] : ['patients', 'appointments'];
  return [
    ...eventFailures(stack.db(), backlog),
    ...(sender === 'simulator' ? await deliveryFailures(stack) : []),
    ...kinds.flatMap((kind) => oneRecordEach(kind, entities[kind], records[kind])),
    ...failure(
      "appointments unlike the simulator's",
      simAppointments.flatMap((a) => appointmentMatches(stack.emr, a, records, stack.vendor)),
    ),
    ...(stack.vendor ? doubleBooked(records) : []),
  ];
}
