// Samples replayed at an adapter that books appointments into the EMR's Slots (FHIR_APPOINTMENT_BOOKING=slot, as
// the vendor demo does). As written, the samples could not apply there: their appointments start at fixed times
// long past, several of them for one doctor at one time, and their doctors and locations are records such an EMR
// keeps itself (an event naming one nobody mapped waits). So before anything is sent, every doctor and location
// the samples name that a crosswalk file maps (the samples name the demo's roster, samples/crosswalk.csv) is mapped
// under the id the replay sends (--fresh-ids' new one), and every time of every appointment whose doctor is mapped
// moves onto a free Slot of that doctor's practitioner, one of its own, the first free ones from now on (its
// startsAt, and its startsAtLocal in the Schedule's time zone). The events then apply with the verdicts they have
// anywhere else.
import { toLocalIso } from '../simulator/quiet-hours.ts';
import type { Sample } from './samples.ts';

export type RosterType = 'doctor' | 'location';

export interface RosterMapping {
  entityType: RosterType;
  serviceId: string;
  emrId: string;
}

export interface FreeSlot {
  /** An instant, as the EMR gives it. */
  start: string;
  /** The IANA zone of the Slot's Schedule (startsAtLocal is written in it). */
  timeZone: string;
}

/** What placing the samples on Slots needs of the adapter and its EMR (the CLI builds it: src/cli/replay-slots.ts). */
export interface SlotTarget {
  /** EMR ids by `doctor:serviceId` and `location:serviceId`, under the samples' own ids (before --fresh-ids). */
  crosswalk: ReadonlyMap<string, string>;
  /** Maps the records as an operator's import does; throws when one is refused. */
  map(mappings: RosterMapping[]): Promise<void>;
  /** The first `count` free Slots of the practitioner from now on, by start (fewer when it has fewer). */
  freeSlots(practitionerId: string, count: number): Promise<FreeSlot[]>;
}

type Body = Record<string, unknown>;
type Named = { serviceId?: unknown } | undefined;

const bodiesOf = (samples: Sample[]): Body[] => samples.flatMap((s) => s.steps.flatMap((step) => (step.body ? [step.body] : [])));
const idOf = (named: unknown): string | undefined => {
  const id = (named as Named)?.serviceId;
  return typeof id === 'string' ? id : undefined;
};
/** One appointment at one time: every event of it with that start lands in the same Slot. */
const timeKey = (appointment: unknown): string | undefined => {
  const a = appointment as { serviceId?: unknown; startsAt?: unknown } | undefined;
  return typeof a?.serviceId === 'string' && typeof a.startsAt === 'string' ? `${a.serviceId}|${a.startsAt}` : undefined;
};

/** The crosswalk's records the samples name, in order of first mention. */
function namedRecords(bodies: Body[], crosswalk: ReadonlyMap<string, string>): { entityType: RosterType; serviceId: string; emrId: string }[] {
  const found = new Map<string, RosterMapping>();
  for (const body of bodies)
    for (const entityType of ['doctor', 'location'] as const) {
      const serviceId = idOf(body[entityType]);
      const emrId = serviceId && crosswalk.get(`${entityType}:${serviceId}`);
      if (serviceId && emrId) found.set(`${entityType}:${serviceId}`, { entityType, serviceId, emrId });
    }
  return [...found.values()];
}

/** Each mapped doctor's practitioner with its appointments' times, in order of first mention. */
function timesByPractitioner(bodies: Body[], crosswalk: ReadonlyMap<string, string>): Map<string, string[]> {
  const times = new Map<string, string[]>();
  for (const body of bodies) {
    const doctor = idOf(body.doctor);
    const practitioner = doctor && crosswalk.get(`doctor:${doctor}`);
    const key = timeKey(body.appointment);
    if (!practitioner || !key) continue;
    const list = times.get(practitioner) ?? [];
    if (!list.includes(key)) list.push(key);
    times.set(practitioner, list);
  }
  return times;
}

/** The Slot each appointment time moves to. */
async function slotsFor(times: Map<string, string[]>, target: SlotTarget): Promise<Map<string, FreeSlot>> {
  const placed = new Map<string, FreeSlot>();
  for (const [practitioner, keys] of times) {
    const free = await target.freeSlots(practitioner, keys.length);
    if (free.length < keys.length) throw new Error(`Practitioner/${practitioner} has ${free.length} free Slots from now on; the samples need ${keys.length}`);
    for (const [i, key] of keys.entries()) placed.set(key, free[i]!);
  }
  return placed;
}

/** The body with its appointment's start moved to its Slot (unchanged when it has none). */
function moved(body: Body, placed: Map<string, FreeSlot>): Body {
  const key = timeKey(body.appointment);
  const slot = key && placed.get(key);
  if (!slot) return body;
  const at = Date.parse(slot.start);
  const appointment = { ...(body.appointment as Body), startsAt: new Date(at).toISOString(), startsAtLocal: toLocalIso(at, slot.timeZone) };
  return { ...body, appointment };
}

/**
 * Maps the crosswalk's records the samples name (each under `sentId(serviceId)`, the id the replay sends) and
 * answers the samples with their appointments moved onto free Slots; `out` says what was done.
 */
export async function placeOnSlots(
  samples: Sample[],
  target: SlotTarget,
  sentId: (serviceId: string) => string,
  out: (line: string) => void,
): Promise<Sample[]> {
  const bodies = bodiesOf(samples);
  const records = namedRecords(bodies, target.crosswalk);
  const placed = await slotsFor(timesByPractitioner(bodies, target.crosswalk), target);
  if (records.length) await target.map(records.map((r) => ({ ...r, serviceId: sentId(r.serviceId) })));
  const count = (type: RosterType) => records.filter((r) => r.entityType === type).length;
  out(
    `booking into Slots: ${count('doctor')} doctors and ${count('location')} locations of the samples mapped as the crosswalk file maps them; ${placed.size} appointment times moved onto free Slots`,
  );
  return samples.map((s) => ({ ...s, steps: s.steps.map((step) => (step.body ? { ...step, body: moved(step.body, placed) } : step)) }));
}
