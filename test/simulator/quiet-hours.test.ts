// Quiet hours in clinic time: windows across midnight, two zones, and the nights daylight saving changes.
import { describe, expect, it } from 'vitest';
import { quietUntil, toLocalIso } from '../../src/simulator/quiet-hours.ts';

const w = { start: '21:00', end: '08:00' };
const at = (iso: string) => Date.parse(iso);
const until = (iso: string, tz: string, win = w) => {
  const u = quietUntil(at(iso), tz, win);
  return u === undefined ? undefined : new Date(u).toISOString();
};

describe('quietUntil', () => {
  it.each([
    // Europe/Berlin in winter is UTC+1: 21:00 local = 20:00Z, 08:00 local = 07:00Z.
    ['2026-01-15T19:59:00.000Z', 'Europe/Berlin', undefined],
    ['2026-01-15T20:00:00.000Z', 'Europe/Berlin', '2026-01-16T07:00:00.000Z'],
    ['2026-01-15T23:30:00.000Z', 'Europe/Berlin', '2026-01-16T07:00:00.000Z'],
    ['2026-01-16T06:59:00.000Z', 'Europe/Berlin', '2026-01-16T07:00:00.000Z'],
    ['2026-01-16T07:00:00.000Z', 'Europe/Berlin', undefined],
    // Asia/Kolkata is UTC+5:30 all year: 21:00 local = 15:30Z.
    ['2026-01-15T15:29:00.000Z', 'Asia/Kolkata', undefined],
    ['2026-01-15T15:30:00.000Z', 'Asia/Kolkata', '2026-01-16T02:30:00.000Z'],
  ])('at %s in %s the window ends at %s', (instant, tz, expected) => {
    expect(until(instant, tz)).toBe(expected);
  });

  it('the night clocks go forward (Berlin, 29 March 2026): 08:00 CEST is 06:00Z', () => {
    expect(until('2026-03-28T21:00:00.000Z', 'Europe/Berlin')).toBe('2026-03-29T06:00:00.000Z');
  });

  it('the night clocks go back (New York, 1 November 2026): 08:00 EST is 13:00Z', () => {
    expect(until('2026-11-01T02:00:00.000Z', 'America/New_York')).toBe('2026-11-01T13:00:00.000Z');
  });

  it('a window within one day', () => {
    expect(until('2026-01-15T13:00:00.000Z', 'UTC', { start: '12:00', end: '14:00' })).toBe('2026-01-15T14:00:00.000Z');
    expect(until('2026-01-15T15:00:00.000Z', 'UTC', { start: '12:00', end: '14:00' })).toBeUndefined();
  });

  it('startsAtLocal carries the offset in force', () => {
    expect(toLocalIso(at('2026-01-15T09:00:00.000Z'), 'Europe/Berlin')).toBe('2026-01-15T10:00:00.000+01:00');
    expect(toLocalIso(at('2026-07-15T09:00:00.000Z'), 'Europe/Berlin')).toBe('2026-07-15T11:00:00.000+02:00');
    expect(toLocalIso(at('2026-07-15T09:00:00.000Z'), 'Asia/Kolkata')).toBe('2026-07-15T14:30:00.000+05:30');
  });
});
