// EMR_DOWNTIME in the settings: its windows parsed once at start-up, and a bad one stops start-up with a
// message naming the setting, the window (its place and text) and what is wrong with it.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { ConfigError } from '../src/errors.ts';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('EMR_DOWNTIME', () => {
  it('is none by default, and reads `;`-separated windows', () => {
    expect(parseConfig({}).emrDowntime).toEqual([]);
    const windows = parseConfig({ EMR_DOWNTIME: '0 2 * * SUN@America/New_York/PT2H; 30 22 * * FRI@Europe/Berlin/P2DT4H' }).emrDowntime;
    expect(windows.map((w) => [w.text, w.zone, w.durationMs])).toEqual([
      ['0 2 * * SUN@America/New_York/PT2H', 'America/New_York', 2 * 3_600_000],
      ['30 22 * * FRI@Europe/Berlin/P2DT4H', 'Europe/Berlin', 52 * 3_600_000],
    ]);
  });

  it('reads durations with seconds and fractions, as ISO 8601 writes them', () => {
    const windows = parseConfig({ EMR_DOWNTIME: '43 4 2 12 *@Asia/Kolkata/PT27S; 0 2 * * SUN@UTC/PT1.5M; 0 3 * * SUN@UTC/PT1H30M15S' }).emrDowntime;
    expect(windows.map((w) => w.durationMs)).toEqual([27_000, 90_000, 5_415_000]);
  });

  it('stops start-up naming each bad window and why', () => {
    expect(problemsOf({ EMR_DOWNTIME: '0 2 * * SUN@America/New_York/PT2H;0 2 * * SUN@Mars/Olympus/PT2H;0 2 * * SUN/PT2H;0 2 * * SUN@UTC/2h' })).toEqual([
      'EMR_DOWNTIME: window 2 "0 2 * * SUN@Mars/Olympus/PT2H": "Mars/Olympus" is not an IANA time zone (e.g. America/New_York, Europe/Berlin, UTC)',
      'EMR_DOWNTIME: window 3 "0 2 * * SUN/PT2H": expected <cron>@<IANA zone>/<ISO 8601 duration>, e.g. 0 2 * * SUN@America/New_York/PT2H',
      'EMR_DOWNTIME: window 4 "0 2 * * SUN@UTC/2h": "2h" is not an ISO 8601 duration (e.g. PT2H, PT90M, PT27S, PT1H30M15S, PT1.5M, P1DT6H)',
    ]);
    expect(problemsOf({ EMR_DOWNTIME: '0 2 * * SUN@UTC/;0 3 * * SUN@UTC/PT0S' })).toEqual([
      'EMR_DOWNTIME: window 1 "0 2 * * SUN@UTC/": no duration given; expected an ISO 8601 duration (e.g. PT2H, PT90M, PT27S, PT1H30M15S, PT1.5M, P1DT6H)',
      'EMR_DOWNTIME: window 2 "0 3 * * SUN@UTC/PT0S": PT0S is zero: a window must have a length',
    ]);
    expect(problemsOf({ EMR_DOWNTIME: '*/5 2 * * * SUN@UTC/PT1H' })).toEqual([
      'EMR_DOWNTIME: window 1 "*/5 2 * * * SUN@UTC/PT1H": the cron part needs five fields (minute hour day-of-month month day-of-week), not 6',
    ]);
  });
});
