// EMR_DOWNTIME's windows: their parsing (each mistake named), ISO 8601 durations, and when a window is in
// force, in the zone it names, across the days America/New_York changes its clocks (2026: March 8, when 02:00
// EST becomes 03:00 EDT at 07:00Z, and November 1, when 02:00 EDT becomes 01:00 EST at 06:00Z).
import { describe, expect, it } from 'vitest';
import { createDowntimeSchedule, parseDowntimeWindow, parseDowntimeWindows, parseIsoDuration } from '../../src/work/downtime-windows.ts';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const schedule = (text: string) => createDowntimeSchedule(parseDowntimeWindows(text).windows);
/** The window in force at `when`, as ISO start and end; undefined when none is. */
const inForce = (text: string, when: string) => {
  const w = schedule(text).at(at(when));
  return w && { start: iso(w.start), until: iso(w.until) };
};

describe('parseIsoDuration', () => {
  it('reads weeks, days, hours and minutes', () => {
    expect(parseIsoDuration('PT2H')).toBe(2 * 3_600_000);
    expect(parseIsoDuration('PT90M')).toBe(90 * 60_000);
    expect(parseIsoDuration('P1DT6H30M')).toBe((30 * 60 + 30) * 60_000);
    expect(parseIsoDuration('P2D')).toBe(48 * 3_600_000);
    expect(parseIsoDuration('P1W')).toBe(7 * 24 * 3_600_000);
    expect(parseIsoDuration('pt45m')).toBe(45 * 60_000);
  });

  it('reads seconds, alone and with the other parts', () => {
    expect(parseIsoDuration('PT27S')).toBe(27_000);
    expect(parseIsoDuration('PT1H30M15S')).toBe(((60 + 30) * 60 + 15) * 1000);
    expect(parseIsoDuration('P1DT1S')).toBe(86_401_000);
    expect(parseIsoDuration('PT90S')).toBe(90_000);
    expect(parseIsoDuration('pt5s')).toBe(5_000);
  });

  it('reads a fraction of the last part given, after a full stop or a comma', () => {
    expect(parseIsoDuration('PT1.5M')).toBe(90_000);
    expect(parseIsoDuration('PT0.5S')).toBe(500);
    expect(parseIsoDuration('PT0,5S')).toBe(500);
    expect(parseIsoDuration('PT1.5H')).toBe(90 * 60_000);
    expect(parseIsoDuration('P0.5D')).toBe(12 * 3_600_000);
    expect(parseIsoDuration('PT1H30,25M')).toBe((90 * 60 + 15) * 1000);
  });

  it('refuses zero, nothing, and what is not a duration, saying which', () => {
    expect(() => parseIsoDuration('')).toThrow(/^no duration given; expected an ISO 8601 duration \(e\.g\. PT2H, PT90M, PT27S/);
    expect(() => parseIsoDuration('PT0S')).toThrow(/^PT0S is zero: a window must have a length$/);
    expect(() => parseIsoDuration('P0DT0,0S')).toThrow(/^P0DT0,0S is zero/);
    expect(() => parseIsoDuration('PT0.0001S')).toThrow(/^PT0.0001S is shorter than a millisecond/);
    expect(() => parseIsoDuration('PT1.5H30M')).toThrow(/^"PT1.5H30M": only the last part of an ISO 8601 duration may have a fraction/);
    expect(() => parseIsoDuration('P1M')).toThrow(/^P1M: years and months have no fixed length/);
    for (const bad of ['P', 'PT', 'P1DT', '2H', 'PT2', '27S', 'PT.5S', 'PT1.S', 'PT1.5.5S', 'PT1:30', 'PT27SS', 'PT-1H', '-PT1H', 'PT1H 30M', 'P1S'])
      expect(() => parseIsoDuration(bad), bad).toThrow(/is not an ISO 8601 duration \(e\.g\./);
  });

  it('refuses years, months and more than 31 days, seconds counted', () => {
    for (const bad of ['P1Y', 'P1M', 'P1Y2D', 'P32D', 'P5W', 'P31DT1S', 'PT2678400.5S']) expect(() => parseIsoDuration(bad), bad).toThrow();
    expect(parseIsoDuration('PT2678400S')).toBe(31 * 86_400_000);
  });
});

describe('parseDowntimeWindow', () => {
  it('reads the cron part, the zone and the duration, day names allowed', () => {
    const w = parseDowntimeWindow(' 0 2 * * SUN@America/New_York/PT2H ');
    expect(w).toMatchObject({ cron: '0 2 * * SUN', zone: 'America/New_York', durationMs: 7_200_000, text: '0 2 * * SUN@America/New_York/PT2H' });
    expect([...w.fields.daysOfWeek]).toEqual([0]);
    expect(parseDowntimeWindow('30 23 * * sat,sun@America/Argentina/Buenos_Aires/PT4H').zone).toBe('America/Argentina/Buenos_Aires');
    expect(parseDowntimeWindow('0 0 1 JAN *@UTC/P1D').durationMs).toBe(86_400_000);
  });

  it('reads a window of seconds, and it is in force for those seconds only', () => {
    // 04:43 in Kolkata (UTC+05:30) on 2 December is 23:13 UTC on 1 December.
    expect(parseDowntimeWindow('43 4 2 12 *@Asia/Kolkata/PT27S')).toMatchObject({ zone: 'Asia/Kolkata', durationMs: 27_000 });
    const window = '43 4 2 12 *@Asia/Kolkata/PT27S';
    expect(inForce(window, '2026-12-01T23:13:26.999Z')).toEqual({ start: '2026-12-01T23:13:00.000Z', until: '2026-12-01T23:13:27.000Z' });
    expect(inForce(window, '2026-12-01T23:13:27.000Z')).toBeUndefined();
    expect(inForce('0 2 * * *@UTC/PT0.5S', '2026-06-01T02:00:00.499Z')).toMatchObject({ until: '2026-06-01T02:00:00.500Z' });
  });

  it('says what is wrong', () => {
    expect(() => parseDowntimeWindow('0 2 * * SUN')).toThrow(/<cron>@<IANA zone>\/<ISO 8601 duration>/);
    expect(() => parseDowntimeWindow('0 0 2 * * SUN@UTC/PT2H')).toThrow(/five fields .* not 6/);
    expect(() => parseDowntimeWindow('0 25 * * SUN@UTC/PT2H')).toThrow(/25 is a invalid expression for hour/);
    expect(() => parseDowntimeWindow('0 2 L * *@UTC/PT2H')).toThrow(/L, W or #/);
    expect(() => parseDowntimeWindow('0 2 * * SUN@America/New_Yrk/PT2H')).toThrow(/"America\/New_Yrk" is not an IANA time zone/);
    expect(() => parseDowntimeWindow('0 2 * * SUN@America/New_York/2 hours')).toThrow(/not an ISO 8601 duration/);
  });

  it('names each bad window of a list by its place and text', () => {
    const { windows, problems } = parseDowntimeWindows('0 2 * * SUN@America/New_York/PT2H; 0 3 * * MON@Nowhere/PT1H;;0 4 * * *@UTC/P40D');
    expect(windows).toHaveLength(1);
    expect(problems).toEqual([
      'window 2 "0 3 * * MON@Nowhere/PT1H": "Nowhere" is not an IANA time zone (e.g. America/New_York, Europe/Berlin, UTC)',
      'window 3 "0 4 * * *@UTC/P40D": P40D is longer than 31 days',
    ]);
  });
});

describe('a window in force', () => {
  it('runs from its start for its duration, and one that began earlier is in force at once', () => {
    const text = '0 2 * * SUN@America/New_York/PT2H';
    // Sunday 2026-01-18, 02:00 EST = 07:00Z.
    expect(inForce(text, '2026-01-18T06:59:59.999Z')).toBeUndefined();
    expect(inForce(text, '2026-01-18T07:00:00.000Z')).toEqual({ start: '2026-01-18T07:00:00.000Z', until: '2026-01-18T09:00:00.000Z' });
    expect(inForce(text, '2026-01-18T08:30:00.000Z')).toEqual({ start: '2026-01-18T07:00:00.000Z', until: '2026-01-18T09:00:00.000Z' });
    expect(inForce(text, '2026-01-18T09:00:00.000Z')).toBeUndefined();
    expect(inForce(text, '2026-01-19T07:30:00.000Z')).toBeUndefined();
  });

  it('starts at 01:00 local on both sides of the March change, and lasts two hours of elapsed time', () => {
    const text = '0 1 * * SUN@America/New_York/PT2H';
    // March 1: EST (-5). March 8: 01:00 is still EST; the window spans the change and ends at 04:00 EDT.
    expect(inForce(text, '2026-03-01T06:00:00.000Z')?.until).toBe('2026-03-01T08:00:00.000Z');
    expect(inForce(text, '2026-03-08T05:59:00.000Z')).toBeUndefined();
    expect(inForce(text, '2026-03-08T06:00:00.000Z')).toEqual({ start: '2026-03-08T06:00:00.000Z', until: '2026-03-08T08:00:00.000Z' });
    expect(inForce(text, '2026-03-08T07:59:59.000Z')).toBeDefined();
    expect(inForce(text, '2026-03-08T08:00:00.000Z')).toBeUndefined();
    // March 15: EDT (-4), so 01:00 is an hour earlier in UTC.
    expect(inForce(text, '2026-03-15T05:00:00.000Z')).toEqual({ start: '2026-03-15T05:00:00.000Z', until: '2026-03-15T07:00:00.000Z' });
    expect(inForce(text, '2026-03-15T04:59:00.000Z')).toBeUndefined();
  });

  it('starts at the change when its start is in the hour the clocks skip in March', () => {
    // 02:30 does not happen on 2026-03-08: the window starts at the change, 03:00 EDT = 07:00Z.
    const text = '30 2 * * SUN@America/New_York/PT1H';
    expect(inForce(text, '2026-03-08T06:59:00.000Z')).toBeUndefined();
    expect(inForce(text, '2026-03-08T07:00:00.000Z')).toEqual({ start: '2026-03-08T07:00:00.000Z', until: '2026-03-08T08:00:00.000Z' });
    expect(inForce(text, '2026-03-08T08:00:00.000Z')).toBeUndefined();
    expect(schedule(text).next(at('2026-03-07T00:00:00.000Z'))?.start).toBe(at('2026-03-08T07:00:00.000Z'));
  });

  it('starts once, the first time, when its start is in the hour that repeats in November', () => {
    // 01:30 happens twice on 2026-11-01: 05:30Z (EDT) and 06:30Z (EST). The window starts at the first only.
    const text = '30 1 * * SUN@America/New_York/PT1H';
    expect(inForce(text, '2026-11-01T05:29:00.000Z')).toBeUndefined();
    expect(inForce(text, '2026-11-01T05:30:00.000Z')).toEqual({ start: '2026-11-01T05:30:00.000Z', until: '2026-11-01T06:30:00.000Z' });
    expect(inForce(text, '2026-11-01T06:30:00.000Z')).toBeUndefined();
    expect(inForce(text, '2026-11-01T07:00:00.000Z')).toBeUndefined();
    // The next Sunday, EST: 01:30 = 06:30Z.
    expect(inForce(text, '2026-11-08T06:30:00.000Z')?.until).toBe('2026-11-08T07:30:00.000Z');
  });

  it('spans the November change in elapsed time: two hours from 01:00 EDT end at 01:00 EST', () => {
    const text = '0 1 * * SUN@America/New_York/PT2H';
    expect(inForce(text, '2026-10-25T05:00:00.000Z')?.until).toBe('2026-10-25T07:00:00.000Z');
    expect(inForce(text, '2026-11-01T05:00:00.000Z')).toEqual({ start: '2026-11-01T05:00:00.000Z', until: '2026-11-01T07:00:00.000Z' });
    expect(inForce(text, '2026-11-01T06:30:00.000Z')).toBeDefined();
    expect(inForce(text, '2026-11-01T07:00:00.000Z')).toBeUndefined();
    expect(inForce(text, '2026-11-08T06:00:00.000Z')?.until).toBe('2026-11-08T08:00:00.000Z');
  });

  it('merges windows that overlap or touch, and reads both day fields as node-cron does (first Sunday)', () => {
    const text = '0 2 * * SUN@UTC/PT2H; 0 4 * * SUN@UTC/PT1H; 0 9 1-7 * SUN@UTC/PT1H';
    expect(inForce(text, '2026-03-01T02:30:00.000Z')).toEqual({ start: '2026-03-01T02:00:00.000Z', until: '2026-03-01T05:00:00.000Z' });
    expect(inForce(text, '2026-03-01T09:30:00.000Z')?.until).toBe('2026-03-01T10:00:00.000Z');
    expect(inForce(text, '2026-03-08T09:30:00.000Z')).toBeUndefined();
    expect(inForce(text, '2026-03-02T09:30:00.000Z')).toBeUndefined();
  });

  it('answers the same whether asked once or every five minutes (what it remembers between asks)', () => {
    const s = schedule('0 1 * * SUN@America/New_York/PT2H; 30 2 * * *@America/New_York/PT15M');
    const fresh = (t: number) => createDowntimeSchedule(s.windows).at(t);
    for (let t = at('2026-03-07T00:00:00.000Z'); t < at('2026-03-09T00:00:00.000Z'); t += 5 * 60_000) expect(s.at(t)?.until, iso(t)).toBe(fresh(t)?.until);
  });
});
