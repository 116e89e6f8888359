// A Schedule's clinic hours read from its extensions, and the Slot starts of one clinic day in the clinic's time
// zone: on the days the clocks change (the offset of each Slot, no Slot in the hour that is skipped, one for each
// wall time of the hour that repeats), east of Greenwich, and the problems that make hours unusable.
import type { Extension, Schedule } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import {
  CLINIC_HOURS_EXTENSION,
  type ClinicHours,
  clinicHoursOf,
  localDay,
  slotStarts,
  TIMEZONE_EXTENSION,
} from '../../../src/fhir-server/vendor/clinic-hours.ts';

const hours = (o: Partial<ClinicHours> = {}): ClinicHours => ({
  timeZone: 'America/New_York',
  days: new Set([1, 2, 3, 4, 5, 6]),
  opens: 8 * 60,
  closes: 18 * 60,
  slotMinutes: 15,
  ...o,
});

const day = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000;
const iso = (ms: number[]) => ms.map((m) => new Date(m).toISOString().slice(0, 16));

describe('slotStarts', () => {
  it('makes a Slot every slot length from opening to the last that ends by closing, in the clinic time zone', () => {
    const starts = slotStarts(hours(), day('2026-03-06'));
    expect(starts).toHaveLength(40);
    expect(iso([starts[0]!, starts[39]!])).toEqual(['2026-03-06T13:00', '2026-03-06T22:45']);
  });

  it('keeps the wall clock across the change to daylight saving: Saturday at 08:00 EST, Monday at 08:00 EDT', () => {
    expect(iso(slotStarts(hours(), day('2026-03-07')).slice(0, 1))).toEqual(['2026-03-07T13:00']);
    expect(slotStarts(hours(), day('2026-03-08'))).toEqual([]);
    expect(iso(slotStarts(hours(), day('2026-03-09')).slice(0, 1))).toEqual(['2026-03-09T12:00']);
  });

  it('makes no Slot in the hour the clocks skip, and one for each wall time of the hour they repeat', () => {
    const night = hours({ days: new Set([0]), opens: 60, closes: 4 * 60, slotMinutes: 60 });
    // 2026-03-08: 02:00 does not happen in New York; 2026-11-01: 01:00 happens twice, the Slot is the first one.
    expect(iso(slotStarts(night, day('2026-03-08')))).toEqual(['2026-03-08T06:00', '2026-03-08T07:00']);
    expect(iso(slotStarts(night, day('2026-11-01')))).toEqual(['2026-11-01T05:00', '2026-11-01T07:00', '2026-11-01T08:00']);
  });

  it('works east of Greenwich, where the clinic day begins on the UTC day before', () => {
    const kolkata = hours({ timeZone: 'Asia/Kolkata', days: new Set([1]), opens: 0, closes: 60, slotMinutes: 30 });
    expect(iso(slotStarts(kolkata, day('2026-03-09')))).toEqual(['2026-03-08T18:30', '2026-03-08T19:00']);
    expect(localDay(Date.parse('2026-03-08T18:30:00Z'), 'Asia/Kolkata')).toBe(day('2026-03-09'));
  });
});

describe('clinicHoursOf', () => {
  const schedule = (zone: string | undefined, parts: Extension[]): Schedule => ({
    resourceType: 'Schedule',
    actor: [],
    extension: [...(zone ? [{ url: TIMEZONE_EXTENSION, valueCode: zone }] : []), { url: CLINIC_HOURS_EXTENSION, extension: parts }],
  });
  const days = [
    { url: 'daysOfWeek', valueCode: 'mon' },
    { url: 'daysOfWeek', valueCode: 'sat' },
  ];
  const times = [
    { url: 'openingTime', valueTime: '08:00:00' },
    { url: 'closingTime', valueTime: '18:00:00' },
    { url: 'slotMinutes', valueInteger: 15 },
  ];

  it('reads the days, the hours and the slot length', () => {
    expect(clinicHoursOf(schedule('America/New_York', [...days, ...times]))).toEqual({
      hours: { timeZone: 'America/New_York', days: new Set([1, 6]), opens: 480, closes: 1080, slotMinutes: 15 },
      problems: [],
    });
  });

  it('gives none for a Schedule without the extension: no Slots are made for it', () => {
    expect(clinicHoursOf({ resourceType: 'Schedule', actor: [] })).toEqual({ problems: [] });
  });

  it.each([
    ['no time zone', schedule(undefined, [...days, ...times]), /known time zone/],
    ['an unknown time zone', schedule('Mars/Olympus', [...days, ...times]), /known time zone/],
    ['no day', schedule('UTC', times), /daysOfWeek/],
    ['a day that is not one', schedule('UTC', [{ url: 'daysOfWeek', valueCode: 'monday' }, ...times]), /daysOfWeek/],
    [
      'closing before opening',
      schedule('UTC', [...days, { url: 'openingTime', valueTime: '18:00:00' }, { url: 'closingTime', valueTime: '08:00:00' }]),
      /openingTime before/,
    ],
    ['a slot length longer than the day', schedule('UTC', [...days, ...times.slice(0, 2), { url: 'slotMinutes', valueInteger: 700 }]), /slotMinutes/],
  ])('names the problem with %s', (_what, s, problem) => {
    const read = clinicHoursOf(s);
    expect(read.hours).toBeUndefined();
    expect(read.problems.join('; ')).toMatch(problem);
  });
});
