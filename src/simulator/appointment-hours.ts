// When a clinic with appointment hours sees patients: the starts of one of its local days (every slotMinutes from
// opening, the last ending by closing, in its time zone, across daylight-saving changes), and the first start from
// an instant on at which one of its doctors has no appointment yet. An appointment the simulator places by itself
// so never shares its doctor's time with another, as a scheduling EMR books one per Slot.
import { WEEKDAYS } from './control/schemas.ts';
import { localParts, zonedToUtc } from './quiet-hours.ts';
import type { AppointmentHours } from './store.ts';

const DAY_MS = 86_400_000;
/** How far ahead a free start is looked for. */
const DAYS_SEARCHED = 366;

const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** The clinic's calendar day at an instant, as days since 1970-01-01. */
function localDay(ms: number, timeZone: string): number {
  const l = localParts(ms, timeZone);
  return Date.UTC(l.year, l.month - 1, l.day) / DAY_MS;
}

/** The starts of one local day, in order; a wall time the clocks skip that day is none. */
export function dayStarts(hours: AppointmentHours, timeZone: string, day: number): number[] {
  const date = new Date(day * DAY_MS);
  if (!hours.days.includes(WEEKDAYS[date.getUTCDay()]!)) return [];
  const [year, month, dayOfMonth] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
  const starts: number[] = [];
  for (let m = minutesOf(hours.opens); m + hours.slotMinutes <= minutesOf(hours.closes); m += hours.slotMinutes) {
    const at = zonedToUtc(year, month, dayOfMonth, Math.floor(m / 60), m % 60, timeZone);
    const back = localParts(at, timeZone);
    if (back.hour * 60 + back.minute === m && back.day === dayOfMonth) starts.push(at);
  }
  return starts;
}

/**
 * The first start at or after `from` at which one of `doctors` (tried in order) is not `busy`, and that doctor;
 * undefined when none is free within a year.
 */
export function firstFreeStart(
  hours: AppointmentHours,
  timeZone: string,
  from: number,
  doctors: readonly string[],
  busy: (doctorId: string, start: number) => boolean,
): { doctorId: string; start: number } | undefined {
  const first = localDay(from, timeZone);
  for (let day = first; day < first + DAYS_SEARCHED; day++)
    for (const start of dayStarts(hours, timeZone, day)) {
      if (start < from) continue;
      const doctorId = doctors.find((d) => !busy(d, start));
      if (doctorId !== undefined) return { doctorId, start };
    }
  return undefined;
}
