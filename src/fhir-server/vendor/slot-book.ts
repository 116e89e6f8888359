// The vendor profile's Slots. Each Schedule with clinic hours (./clinic-hours.ts) has a Slot for every slot length
// of its hours on the clinic's days, from two days back (a replayed or late event still finds its Slot) to 30 days
// ahead, made at start and again whenever a clinic's day turns: the ones missing are written, each under an id
// made of its Schedule and its start, so a restart or a second pass writes none twice; free ones that fell out of
// the window behind are removed. The book indexes every Slot the store holds (generated, from the master data, or
// a staff edit's) by Schedule and start, and each Schedule's actors: what the Slot search answers from.
import type { Schedule, Slot } from '@medplum/fhirtypes';
import type { Logger } from '../../logger.ts';
import { type ClinicHours, clinicHoursOf, dayStart, localDay, slotStarts } from './clinic-hours.ts';
import type { Records, Stored } from './records.ts';

export const DAYS_BEHIND = 2;
export const DAYS_AHEAD = 30;

interface ScheduleEntry {
  actors: string[];
  hours: ClinicHours | undefined;
  /** The clinic's day the Slots were last made for. */
  madeFor: number | undefined;
}

interface Placed {
  schedule: string;
  start: number;
  status: string;
}

export interface SlotBook {
  /** Reads the Schedules and Slots the store holds, then makes the missing Slots. */
  load(now: number): Promise<void>;
  /** Whether a clinic's day turned since its Slots were made (cheap: asked before every request). */
  stale(now: number): boolean;
  /** Makes the Slots missing from each Schedule's window and removes the free generated ones behind it. Under the lock. */
  roll(now: number): Promise<void>;
  /** The Schedules whose actor is the reference (`Practitioner/pr-1001`), or that have an actor of that id. */
  schedulesOf(actor: string): string[];
  hasSchedule(id: string): boolean;
  timeZoneOf(schedule: string): string | undefined;
  /** The ids of the Schedule's Slots starting in [from, to), by start. */
  between(schedule: string, from: number, to: number): string[];
  /** Follows a record written or removed (only Slots and Schedules matter here). */
  observe(type: string, id: string, record: Stored | undefined): void;
}

const GENERATED = /-\d{8}T\d{4}Z$/;

/** `sch-3001-20260105T1300Z`: the Schedule and the start in UTC, so one start of one Schedule is one id. */
export const generatedSlotId = (schedule: string, start: number): string =>
  `${schedule}-${new Date(start).toISOString().slice(0, 16).replaceAll('-', '').replace(':', '')}Z`;

export function createSlotBook(deps: { records: Records; logger: Logger }): SlotBook {
  const schedules = new Map<string, ScheduleEntry>();
  const starts = new Map<string, Map<number, Set<string>>>();
  const placed = new Map<string, Placed>();

  function unplace(id: string): void {
    const was = placed.get(id);
    if (!was) return;
    placed.delete(id);
    const ids = starts.get(was.schedule)?.get(was.start);
    ids?.delete(id);
    if (ids?.size === 0) starts.get(was.schedule)!.delete(was.start);
  }

  function place(slot: Slot & { id: string }): void {
    unplace(slot.id);
    const schedule = slot.schedule?.reference?.replace(/^Schedule\//, '');
    const start = Date.parse(slot.start ?? '');
    if (!schedule || Number.isNaN(start)) return;
    placed.set(slot.id, { schedule, start, status: slot.status ?? '' });
    const byStart = starts.get(schedule) ?? new Map<number, Set<string>>();
    starts.set(schedule, byStart);
    byStart.set(start, (byStart.get(start) ?? new Set()).add(slot.id));
  }

  function learn(schedule: Schedule & { id: string }): void {
    const actors = (schedule.actor ?? []).flatMap((a) => (a.reference ? [a.reference] : []));
    // A staff edit of the hours makes the next request generate for them again.
    schedules.set(schedule.id, { actors, hours: clinicHoursOf(schedule).hours, madeFor: undefined });
  }

  async function make(schedule: string, hours: ClinicHours, today: number): Promise<number> {
    let made = 0;
    for (let day = today - DAYS_BEHIND; day <= today + DAYS_AHEAD; day++) {
      for (const start of slotStarts(hours, day)) {
        const id = generatedSlotId(schedule, start);
        if (starts.get(schedule)?.get(start)?.size || placed.has(id)) continue;
        const end = new Date(start + hours.slotMinutes * 60_000).toISOString();
        await deps.records.write<Slot>({
          resourceType: 'Slot',
          id,
          schedule: { reference: `Schedule/${schedule}` },
          status: 'free',
          start: new Date(start).toISOString(),
          end,
        });
        made++;
      }
    }
    return made;
  }

  /** Free generated Slots that start before the window; booked ones stay with their appointments. */
  async function prune(schedule: string, hours: ClinicHours, today: number): Promise<number> {
    const from = dayStart(today - DAYS_BEHIND, hours.timeZone);
    const gone = [...placed].filter(([id, p]) => p.schedule === schedule && p.start < from && p.status === 'free' && GENERATED.test(id));
    for (const [id] of gone) await deps.records.remove('Slot', id);
    return gone.length;
  }

  const book: SlotBook = {
    async load(now) {
      for (const schedule of await deps.records.all<Schedule>('Schedule')) learn(schedule);
      for (const slot of await deps.records.all<Slot>('Slot')) place(slot);
      await book.roll(now);
    },
    stale: (now) => [...schedules.values()].some((s) => s.hours && s.madeFor !== localDay(now, s.hours.timeZone)),
    async roll(now) {
      let [made, removed] = [0, 0];
      for (const [id, entry] of schedules) {
        const today = entry.hours && localDay(now, entry.hours.timeZone);
        if (!entry.hours || today === undefined || entry.madeFor === today) continue;
        made += await make(id, entry.hours, today);
        removed += await prune(id, entry.hours, today);
        entry.madeFor = today;
      }
      if (made || removed) deps.logger.info({ made, removed, slots: placed.size }, 'vendor profile: slots made for the days ahead');
    },
    schedulesOf(actor) {
      const bare = !actor.includes('/');
      return [...schedules].filter(([, s]) => s.actors.some((a) => a === actor || (bare && a.endsWith(`/${actor}`)))).map(([id]) => id);
    },
    hasSchedule: (id) => schedules.has(id),
    timeZoneOf: (schedule) => schedules.get(schedule)?.hours?.timeZone,
    between(schedule, from, to) {
      const found: [number, string][] = [];
      for (const [start, ids] of starts.get(schedule) ?? []) if (start >= from && start < to) for (const id of ids) found.push([start, id]);
      return found.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1)).map(([, id]) => id);
    },
    observe(type, id, record) {
      if (type === 'Slot') {
        if (record) place(record as Stored<Slot>);
        else unplace(id);
      } else if (type === 'Schedule') {
        if (record) learn(record as Stored<Schedule>);
        else schedules.delete(id);
      }
    },
  };
  return book;
}
