// The emr-latency bench's vendor runs (../emr-latency.ts): an EMR that owns its records and books into its Slots,
// the bundled FHIR server's vendor profile, with master data of the bench's clinic (ten practitioners and three
// rooms, as the default runs' clinic has; each practitioner's Schedule open every day 08:00-20:00 New York time in
// 15-minute Slots, some 1,400 a practitioner over the 30 days the profile makes ahead), a simulator clinic whose
// roster names them under fixed service ids, and the crosswalk file that maps the one to the other, imported before
// anything is booked. Every appointment goes on a free Slot of its own: each doctor's Slots are handed out in order
// from tomorrow on, each once (nextSlot). Half the bookings then change, as the EMR takes it by JSON Patch: moved to
// the doctor's next free Slot, or cancelled, completed or marked no-show (vendorChanges).
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLINIC_HOURS_EXTENSION, type ClinicHours, localDay, slotStarts, TIMEZONE_EXTENSION } from '../../src/fhir-server/vendor/clinic-hours.ts';

const TIME_ZONE = 'America/New_York';
const HOURS: ClinicHours = { timeZone: TIME_ZONE, days: new Set([0, 1, 2, 3, 4, 5, 6]), opens: 8 * 60, closes: 20 * 60, slotMinutes: 15 };
const DAY_CODES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

export interface VendorBench {
  /** The vendor profile's master data (`bench/support/bundled-emr-process.ts fhir-vendor <file>`). */
  masterDataFile: string;
  /** POST /_sim/clinics: the roster under fixed service ids, in the Schedules' zone, no quiet hours. */
  clinic: Record<string, unknown>;
  doctors: string[];
  locations: string[];
  /** The crosswalk import (entityType,serviceId,emrId) mapping the roster to the master data. */
  crosswalkCsv: string;
  /** The next free Slot's start of the doctor (its index in `doctors`), never the same one twice. */
  nextSlot(doctor: number): string;
  /** The EMR ids the crosswalk maps the roster's service ids to. */
  emrIds: ReadonlyMap<string, string>;
  /** The id of the Schedule of a roster doctor (by service id). */
  scheduleOf(doctor: string): string;
}

const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}:00`;

function schedule(i: number): Record<string, unknown> {
  return {
    resourceType: 'Schedule',
    id: `sch-b${i}`,
    active: true,
    extension: [
      { url: TIMEZONE_EXTENSION, valueCode: TIME_ZONE },
      {
        url: CLINIC_HOURS_EXTENSION,
        extension: [
          ...[...HOURS.days].map((d) => ({ url: 'daysOfWeek', valueCode: DAY_CODES[d] })),
          { url: 'openingTime', valueTime: hhmm(HOURS.opens) },
          { url: 'closingTime', valueTime: hhmm(HOURS.closes) },
          { url: 'slotMinutes', valueInteger: HOURS.slotMinutes },
        ],
      },
    ],
    actor: [{ reference: `Practitioner/pr-b${i}`, display: `Dr Bench ${i}` }],
  };
}

function masterData(doctors: number, locations: number): object {
  const resources = [
    ...Array.from({ length: doctors }, (_, i) => ({
      resourceType: 'Practitioner',
      id: `pr-b${i}`,
      active: true,
      name: [{ text: `Dr Bench ${i}`, family: 'Bench', given: [String(i)], prefix: ['Dr'] }],
    })),
    ...Array.from({ length: locations }, (_, i) => ({ resourceType: 'Location', id: `loc-b${i}`, status: 'active', name: `Room ${i}` })),
    ...Array.from({ length: doctors }, (_, i) => schedule(i)),
  ];
  return { resourceType: 'Bundle', type: 'collection', entry: resources.map((resource) => ({ resource })) };
}

/** Each doctor's Slot starts from tomorrow (the clinic's day after `now`) on, a day at a time, each handed out once. */
function slotHandout(doctors: number, now: number): (doctor: number) => string {
  const next = Array.from({ length: doctors }, () => ({ day: localDay(now, TIME_ZONE) + 1, queue: [] as number[] }));
  return (doctor) => {
    const d = next[doctor]!;
    while (d.queue.length === 0) d.queue = slotStarts(HOURS, d.day++);
    return new Date(d.queue.shift()!).toISOString();
  };
}

/** Writes the master data into `dir` and answers the run's roster, crosswalk and Slot handout. */
export function writeVendorBench(dir: string, doctors: number, locations: number, now: number): VendorBench {
  const masterDataFile = join(dir, 'emr-master-data.json');
  writeFileSync(masterDataFile, JSON.stringify(masterData(doctors, locations)));
  const doctorIds = Array.from({ length: doctors }, (_, i) => `doc_bench_${i}`);
  const locationIds = Array.from({ length: locations }, (_, i) => `loc_bench_${i}`);
  const lines = [...doctorIds.map((id, i) => `doctor,${id},pr-b${i}`), ...locationIds.map((id, i) => `location,${id},loc-b${i}`)];
  return {
    masterDataFile,
    clinic: {
      timeZone: TIME_ZONE,
      quietHours: { start: '00:00', end: '00:00' },
      roster: {
        doctors: doctorIds.map((serviceId, i) => ({ serviceId, name: `Dr Bench ${i}` })),
        locations: locationIds.map((serviceId, i) => ({ serviceId, name: `Room ${i}` })),
      },
    },
    doctors: doctorIds,
    locations: locationIds,
    crosswalkCsv: `entityType,serviceId,emrId\n${lines.join('\n')}\n`,
    nextSlot: slotHandout(doctors, now),
    emrIds: new Map([...doctorIds.map((id, i) => [id, `pr-b${i}`] as const), ...locationIds.map((id, i) => [id, `loc-b${i}`] as const)]),
    scheduleOf: (doctor) => `sch-b${doctorIds.indexOf(doctor)}`,
  };
}

/** Every CHANGE_EVERY-th booking changes, in turn moved to another free Slot or given each final status. */
const CHANGE_EVERY = 2;
const CHANGES = ['reschedule', 'cancel', 'reschedule', 'complete', 'reschedule', 'no-show'] as const;
const CHANGE_EVENTS: Record<(typeof CHANGES)[number], string> = {
  reschedule: 'appointment.rescheduled',
  cancel: 'appointment.cancelled',
  complete: 'appointment.completed',
  'no-show': 'appointment.no_show',
};

/**
 * The vendor run's changes of the bookings `made` (a reschedule onto the doctor's next free Slot, a cancellation,
 * a completion, a no-show), made in the simulator as any channel would, and their events as it sends them: a
 * second after the bookings', so that no snapshot looks older than its booking's.
 */
export async function vendorChanges(
  made: { serviceId: string }[],
  post: (path: string, body: unknown) => Promise<Record<string, unknown>>,
  slotOf: (i: number) => Record<string, string>,
  clinicId: string,
): Promise<Record<string, unknown>[]> {
  const occurredAt = new Date(Date.now() + 1000).toISOString();
  const bodies: Record<string, unknown>[] = [];
  for (const [i, m] of made.entries()) {
    if (i % CHANGE_EVERY !== 0) continue;
    const change = CHANGES[(i / CHANGE_EVERY) % CHANGES.length]!;
    const changed = await post(`/_sim/appointments/${m.serviceId}/${change}`, change === 'reschedule' ? slotOf(i) : {});
    const { serviceId: _, ...snapshot } = changed;
    bodies.push({ eventId: randomUUID(), eventType: CHANGE_EVENTS[change], occurredAt, clinicId, ...snapshot });
  }
  return bodies;
}
