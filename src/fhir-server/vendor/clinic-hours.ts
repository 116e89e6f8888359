// A Schedule's clinic hours as the vendor profile's master data writes them (the clinic-hours extension: the days
// of the week, the opening and closing time, the slot length) in the clinic's time zone (the Schedule's standard
// timezone extension), and the instants the Slots of one local day start at, right across daylight-saving changes.
import type { Extension, Schedule } from '@medplum/fhirtypes';
import { isValidTimeZone, localParts, zonedToUtc } from '../../simulator/quiet-hours.ts';

export const TIMEZONE_EXTENSION = 'http://hl7.org/fhir/StructureDefinition/timezone';
export const CLINIC_HOURS_EXTENSION = 'https://emr-bridge.dev/fhir/StructureDefinition/clinic-hours';

/** Index 0 is Sunday, as Date.getUTCDay counts. */
const DAY_CODES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const TIME = /^([01]\d|2[0-3]):([0-5]\d)(?::00)?$/;
const DAY_MS = 24 * 3600_000;

export interface ClinicHours {
  timeZone: string;
  /** 0 is Sunday. */
  days: ReadonlySet<number>;
  /** Minutes after local midnight. */
  opens: number;
  closes: number;
  slotMinutes: number;
}

/** A local calendar day as a count of days since 1970-01-01 (no time zone: the clinic's own day). */
export type DayNumber = number;

const sub = (ext: Extension, url: string): Extension[] => (ext.extension ?? []).filter((e) => e.url === url);

function minutesOf(text: string | undefined): number | undefined {
  const m = text === undefined ? null : TIME.exec(text);
  return m ? Number(m[1]) * 60 + Number(m[2]) : undefined;
}

/**
 * The Schedule's clinic hours, undefined when it has none (no Slots are generated for it), or the problems that
 * make them unusable.
 */
export function clinicHoursOf(schedule: Schedule): { hours?: ClinicHours; problems: string[] } {
  const ext = schedule.extension?.find((e) => e.url === CLINIC_HOURS_EXTENSION);
  if (!ext) return { problems: [] };
  const problems: string[] = [];
  const timeZone = schedule.extension?.find((e) => e.url === TIMEZONE_EXTENSION)?.valueCode;
  if (!timeZone || !isValidTimeZone(timeZone)) problems.push(`clinic hours need a known time zone in the ${TIMEZONE_EXTENSION} extension`);
  const codes = sub(ext, 'daysOfWeek').map((e) => e.valueCode ?? '');
  const days = new Set(codes.map((c) => DAY_CODES.indexOf(c as (typeof DAY_CODES)[number])));
  if (codes.length === 0 || days.has(-1)) problems.push(`clinic hours need daysOfWeek, each one of ${DAY_CODES.join(', ')}`);
  const opens = minutesOf(sub(ext, 'openingTime')[0]?.valueTime);
  const closes = minutesOf(sub(ext, 'closingTime')[0]?.valueTime);
  if (opens === undefined || closes === undefined || opens >= closes) problems.push('clinic hours need an openingTime before their closingTime (hh:mm:00)');
  const slotMinutes = sub(ext, 'slotMinutes')[0]?.valueInteger;
  if (
    slotMinutes === undefined ||
    !Number.isInteger(slotMinutes) ||
    slotMinutes < 5 ||
    (closes !== undefined && opens !== undefined && slotMinutes > closes - opens)
  )
    problems.push('clinic hours need slotMinutes, a whole number of at least 5 that fits between opening and closing');
  if (problems.length) return { problems };
  return { hours: { timeZone: timeZone!, days, opens: opens!, closes: closes!, slotMinutes: slotMinutes! }, problems };
}

/** The clinic's calendar day at an instant. */
export function localDay(ms: number, timeZone: string): DayNumber {
  const l = localParts(ms, timeZone);
  return Date.UTC(l.year, l.month - 1, l.day) / DAY_MS;
}

/** The instant the clinic's day begins (its local midnight, or the first minute after a gap there). */
export function dayStart(day: DayNumber, timeZone: string): number {
  const d = new Date(day * DAY_MS);
  return zonedToUtc(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), 0, 0, timeZone);
}

/**
 * The start of each Slot of one local day, in order: every slotMinutes from opening until the last that ends by
 * closing. A wall time the clocks skip that day is no Slot (the one after the gap already is).
 */
export function slotStarts(hours: ClinicHours, day: DayNumber): number[] {
  const date = new Date(day * DAY_MS);
  if (!hours.days.has(date.getUTCDay())) return [];
  const [year, month, dayOfMonth] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
  const minutes: number[] = [];
  for (let m = hours.opens; m + hours.slotMinutes <= hours.closes; m += hours.slotMinutes) minutes.push(m);
  const at = (m: number) => zonedToUtc(year, month, dayOfMonth, Math.floor(m / 60), m % 60, hours.timeZone);
  const [first, last] = [at(minutes[0]!), at(minutes.at(-1)!)];
  // The usual day: one offset from opening to the last Slot, so each start is the first's plus its minutes (the
  // zone's data is read twice a day, not for every Slot).
  if (last - first === (minutes.at(-1)! - minutes[0]!) * 60_000) return minutes.map((m) => first + (m - minutes[0]!) * 60_000);
  return minutes.flatMap((m) => {
    const start = at(m);
    const back = localParts(start, hours.timeZone);
    return back.hour * 60 + back.minute === m && back.day === dayOfMonth ? [start] : [];
  });
}
