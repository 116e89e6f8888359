// Planned EMR downtime windows (EMR_DOWNTIME): `<cron>@<IANA zone>/<ISO 8601 duration>`, several separated by
// `;`, e.g. `0 2 * * SUN@America/New_York/PT2H`. The cron part (five fields, day and month names allowed) is
// parsed and checked by node-cron, the project's scheduler, and read as node-cron reads it: every field must
// match, the two day fields included (`0 2 1-7 * SUN` is the first Sunday of a month). node-cron only says
// whether one instant matches, so when a window starts is worked out here, on the zone's wall clock (Intl),
// with cron(8)'s rule for the days the clocks change: a start in the hour skipped when the clocks go forward
// happens at the change; a start in the hour that repeats when they go back happens once, the first time.
// A window lasts its duration in elapsed time (a day is 24 hours). Pure: the caller passes the instant.
import cron from 'node-cron';

export interface DowntimeWindow {
  /** As written in EMR_DOWNTIME: names the window in messages and on the status page. */
  text: string;
  cron: string;
  zone: string;
  durationMs: number;
  fields: CronFields;
}

interface CronFields {
  minutes: readonly number[];
  hours: readonly number[];
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  /** 0 is Sunday. */
  daysOfWeek: ReadonlySet<number>;
}

/** A window in force: from its start to its end (windows that overlap or touch are one). */
export interface ScheduledDowntime {
  start: number;
  until: number;
  /** The window the instant asked about falls in (the first listed, when several do). */
  window: DowntimeWindow;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The longest window: an upgrade weekend fits many times over; a month-long "window" is a mistake. */
export const MAX_WINDOW_MS = 31 * DAY;
/** How far windows that overlap are merged into one (beyond it, a window that never ends is reported a piece at a time). */
const MAX_MERGED_MS = 2 * MAX_WINDOW_MS;

/** One number of a duration: digits, and a fraction after a full stop or a comma (ISO 8601 allows either). */
const NUMBER = '(\\d+(?:[.,]\\d+)?)';
/** PnYnMnWnDTnHnMnS, every part optional; what must be there, and where a fraction may go, is checked after. */
const DURATION = new RegExp(`^P(?:${NUMBER}Y)?(?:${NUMBER}M)?(?:${NUMBER}W)?(?:${NUMBER}D)?(?:T(?:${NUMBER}H)?(?:${NUMBER}M)?(?:${NUMBER}S)?)?$`);
const EXAMPLES = 'e.g. PT2H, PT90M, PT27S, PT1H30M15S, PT1.5M, P1DT6H';

/**
 * An ISO 8601 duration in ms, of weeks, days, hours, minutes and seconds (`PT2H`, `PT27S`, `P1DT6H`, `P2W`), the
 * last part given may have a fraction (`PT1.5M`, `PT0,5S`), as ISO 8601 allows; throws an Error saying why not.
 * Years and months (of no fixed length), zero, and more than 31 days are refused. Lower case is read too.
 */
export function parseIsoDuration(text: string): number {
  const given = text.trim().toUpperCase();
  if (given === '') throw new Error(`no duration given; expected an ISO 8601 duration (${EXAMPLES})`);
  const m = DURATION.exec(given);
  const parts = m?.slice(1) ?? [];
  const present = parts.filter((v) => v !== undefined);
  if (!m || present.length === 0 || given.endsWith('T')) throw new Error(`${JSON.stringify(text)} is not an ISO 8601 duration (${EXAMPLES})`);
  if (present.slice(0, -1).some((v) => /[.,]/.test(v)))
    throw new Error(`${JSON.stringify(text)}: only the last part of an ISO 8601 duration may have a fraction (PT1H30.5M, not PT1.5H30M)`);
  if (parts[0] !== undefined || parts[1] !== undefined)
    throw new Error(`${text}: years and months have no fixed length; give weeks, days, hours, minutes or seconds (P30D, not P1M)`);
  const [, , weeks, days, hours, minutes, seconds] = parts.map((v) => (v === undefined ? 0 : Number(v.replace(',', '.')))) as number[];
  const ms = Math.round((weeks! * 7 + days!) * DAY + hours! * HOUR + minutes! * MINUTE + seconds! * SECOND);
  if (ms === 0) throw new Error(`${text} is ${/[1-9]/.test(given) ? 'shorter than a millisecond' : 'zero'}: a window must have a length`);
  if (ms > MAX_WINDOW_MS) throw new Error(`${text} is longer than 31 days`);
  return ms;
}

/** Whether `zone` is a time zone Intl knows (an IANA name such as America/New_York, or UTC). */
function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** One window, `<cron>@<zone>/<duration>`; throws an Error saying what is wrong with it (not naming it). */
export function parseDowntimeWindow(text: string): DowntimeWindow {
  const trimmed = text.trim();
  const at = trimmed.indexOf('@');
  const slash = trimmed.lastIndexOf('/');
  if (at <= 0 || slash < at) throw new Error('expected <cron>@<IANA zone>/<ISO 8601 duration>, e.g. 0 2 * * SUN@America/New_York/PT2H');
  const expression = trimmed.slice(0, at).trim().replace(/\s+/g, ' ');
  const zone = trimmed.slice(at + 1, slash).trim();
  const count = expression.split(' ').length;
  if (count !== 5) throw new Error(`the cron part needs five fields (minute hour day-of-month month day-of-week), not ${count}`);
  const checked = cron.validateDetailed(expression);
  if (!checked.valid || !checked.fields) throw new Error(`the cron part: ${checked.errors.map((e) => e.message).join('; ')}`);
  const f = checked.fields;
  // node-cron's L, W and # tokens (last day, nearest weekday, nth weekday) are not read here.
  const numbers = (values: readonly (number | string)[], name: string): number[] => {
    if (values.some((v) => typeof v !== 'number')) throw new Error(`the cron part: ${name} uses L, W or #, which are not supported here`);
    return values as number[];
  };
  if (!zone || !knownZone(zone)) throw new Error(`${JSON.stringify(zone)} is not an IANA time zone (e.g. America/New_York, Europe/Berlin, UTC)`);
  const durationMs = parseIsoDuration(trimmed.slice(slash + 1));
  return {
    text: `${expression}@${zone}/${trimmed.slice(slash + 1).trim()}`,
    cron: expression,
    zone,
    durationMs,
    fields: {
      minutes: [...numbers(f.minute, 'minute')].sort((a, b) => a - b),
      hours: [...numbers(f.hour, 'hour')].sort((a, b) => a - b),
      daysOfMonth: new Set(numbers(f.dayOfMonth, 'day of month')),
      months: new Set(numbers(f.month, 'month')),
      daysOfWeek: new Set(numbers(f.dayOfWeek, 'day of week')),
    },
  };
}

/** EMR_DOWNTIME: the windows, and one problem per bad one, naming it (`window 2 "…": …`). */
export function parseDowntimeWindows(list: string | undefined): { windows: DowntimeWindow[]; problems: string[] } {
  const windows: DowntimeWindow[] = [];
  const problems: string[] = [];
  const texts = (list ?? '')
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
  texts.forEach((text, i) => {
    try {
      windows.push(parseDowntimeWindow(text));
    } catch (err) {
      problems.push(`window ${i + 1} ${JSON.stringify(text)}: ${(err as Error).message}`);
    }
  });
  return { windows, problems };
}

/** The wall clock of a zone: an instant's local date and time, written as if it were UTC (ms). */
function createWallClock(zone: string) {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  /** The local time at instant `t` (whole seconds). */
  const wallOf = (t: number): number => {
    const p: Record<string, number> = {};
    for (const part of format.formatToParts(new Date(t))) if (part.type !== 'literal') p[part.type] = Number(part.value);
    return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour! % 24, p.minute!, p.second!);
  };
  /** The zone's offset from UTC at instant `t`, in ms. */
  const offsetAt = (t: number): number => wallOf(t) - Math.floor(t / 1000) * 1000;

  /**
   * The instant a local time (minute-aligned) happens: the first one when it happens twice (the clocks went
   * back), the moment of the change when it never does (the clocks went forward over it).
   */
  function instantOf(local: number): number {
    const before = offsetAt(local - DAY);
    const after = offsetAt(local + DAY);
    const found = [...new Set([local - before, local - after])].filter((t) => wallOf(t) === local).sort((a, b) => a - b);
    if (found.length > 0) return found[0]!;
    // Skipped: the first minute whose local time is past it, between the two offsets' readings.
    let lo = local - Math.max(before, after);
    let hi = local - Math.min(before, after);
    lo = Math.floor(lo / MINUTE);
    hi = Math.ceil(hi / MINUTE);
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (wallOf(mid * MINUTE) > local) hi = mid;
      else lo = mid + 1;
    }
    return lo * MINUTE;
  }
  return { wallOf, instantOf };
}

/** When each window starts, and which window is in force at an instant. */
export interface DowntimeSchedule {
  readonly windows: readonly DowntimeWindow[];
  /** The window in force at `now` (start <= now < until), windows that overlap or touch merged. */
  at(now: number): ScheduledDowntime | undefined;
  /** The next window to start after `now`, within `horizonMs` (default 40 days); undefined when none does. */
  next(now: number, horizonMs?: number): ScheduledDowntime | undefined;
}

export function createDowntimeSchedule(windows: readonly DowntimeWindow[]): DowntimeSchedule {
  const clocks = new Map(windows.map((w) => [w, createWallClock(w.zone)]));

  /** Starts of `w` with from <= start < to, oldest first. */
  function startsBetween(w: DowntimeWindow, from: number, to: number): number[] {
    const { wallOf, instantOf } = clocks.get(w)!;
    const { fields } = w;
    const starts = new Set<number>();
    // Local days from the one before `from` to the one after `to` (a skipped time moves a start later only).
    const firstDay = Math.floor(wallOf(from) / DAY) * DAY - DAY;
    const lastDay = Math.floor(wallOf(to) / DAY) * DAY + DAY;
    for (let day = firstDay; day <= lastDay; day += DAY) {
      const date = new Date(day);
      if (!fields.months.has(date.getUTCMonth() + 1) || !fields.daysOfMonth.has(date.getUTCDate()) || !fields.daysOfWeek.has(date.getUTCDay())) continue;
      for (const h of fields.hours)
        for (const m of fields.minutes) {
          const t = instantOf(day + h * HOUR + m * MINUTE);
          if (t >= from && t < to) starts.add(t);
        }
    }
    return [...starts].sort((a, b) => a - b);
  }

  /**
   * Extends `until` over every window starting at or before it, until none does (at most MAX_MERGED_MS past the
   * start: windows that never leave a gap are reported a piece at a time).
   */
  function merged(start: number, until: number, window: DowntimeWindow): ScheduledDowntime {
    let end = until;
    for (let grew = true; grew && end - start < MAX_MERGED_MS; ) {
      grew = false;
      for (const w of windows) {
        const starts = startsBetween(w, start, end + 1);
        const last = starts.at(-1);
        if (last !== undefined && last + w.durationMs > end) {
          end = last + w.durationMs;
          grew = true;
        }
      }
    }
    return { start, until: end, window };
  }

  function at(now: number): ScheduledDowntime | undefined {
    let found: ScheduledDowntime | undefined;
    for (const w of windows) {
      const start = startsBetween(w, now - w.durationMs + 1, now + 1).at(-1);
      if (start === undefined) continue;
      if (!found || start < found.start) found = { start, until: start + w.durationMs, window: w };
    }
    return found && merged(found.start, found.until, found.window);
  }

  function next(now: number, horizonMs = 40 * DAY): ScheduledDowntime | undefined {
    let found: { start: number; window: DowntimeWindow } | undefined;
    for (const w of windows) {
      // A day at a time: the first start ends the walk.
      for (let from = now + 1; from < now + horizonMs && (!found || from < found.start); from += DAY) {
        const start = startsBetween(w, from, Math.min(from + DAY, now + horizonMs))[0];
        if (start !== undefined) {
          if (!found || start < found.start) found = { start, window: w };
          break;
        }
      }
    }
    return found && merged(found.start, found.start + found.window.durationMs, found.window);
  }

  // What at() found holds until the window in force ends or the next one starts: asked on every check of the
  // gate, it is worked out again only then (or when the clock went back, as a test's may).
  let memo: { from: number; to: number; value: ScheduledDowntime | undefined } | undefined;
  function cachedAt(now: number): ScheduledDowntime | undefined {
    if (windows.length === 0) return undefined;
    if (memo && now >= memo.from && now < memo.to) return memo.value;
    const value = at(now);
    memo = { from: now, to: value ? value.until : (next(now)?.start ?? now + HOUR), value };
    return value;
  }

  return { windows, at: cachedAt, next };
}
