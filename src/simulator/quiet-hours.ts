// Clinic-local time with the platform's IANA time-zone data (Intl), no library: whether an instant falls
// in a clinic's quiet window (windows across midnight included) and when that window ends, as a UTC
// instant, across daylight-saving changes.

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

interface Local {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export function localParts(ms: number, timeZone: string): Local {
  const parts = Object.fromEntries(
    formatter(timeZone)
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  return { year: +parts.year!, month: +parts.month!, day: +parts.day!, hour: +parts.hour!, minute: +parts.minute!, second: +parts.second! };
}

/** The zone's offset from UTC at an instant, in ms (positive east of Greenwich). */
export function offsetMs(ms: number, timeZone: string): number {
  const l = localParts(ms, timeZone);
  return Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second) - Math.floor(ms / 1000) * 1000;
}

/** The UTC instant of a local wall time; a time skipped by a DST change maps to just after the gap. */
export function zonedToUtc(year: number, month: number, day: number, hour: number, minute: number, timeZone: string): number {
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  let guess = wall - offsetMs(wall, timeZone);
  guess = wall - offsetMs(guess, timeZone);
  return guess;
}

/** ISO 8601 with the zone's offset, e.g. 2026-03-29T10:00:00.000+02:00 (startsAtLocal). */
export function toLocalIso(ms: number, timeZone: string): string {
  const off = offsetMs(ms, timeZone);
  const local = new Date(ms + off).toISOString().slice(0, 23);
  const sign = off >= 0 ? '+' : '-';
  const abs = Math.abs(off) / 60_000;
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

const minutes = (hhmm: string) => {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
};

/** Undefined outside the window; inside it, the UTC instant at which the window ends. */
export function quietUntil(ms: number, timeZone: string, window: { start: string; end: string }): number | undefined {
  const start = minutes(window.start);
  const end = minutes(window.end);
  if (start === end) return undefined;
  const l = localParts(ms, timeZone);
  const now = l.hour * 60 + l.minute;
  const acrossMidnight = start > end;
  const inside = acrossMidnight ? now >= start || now < end : now >= start && now < end;
  if (!inside) return undefined;
  // The end is later today, or (for a window across midnight entered before midnight) tomorrow.
  const endsTomorrow = acrossMidnight && now >= start;
  const day = new Date(Date.UTC(l.year, l.month - 1, l.day + (endsTomorrow ? 1 : 0)));
  return zonedToUtc(day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate(), Math.floor(end / 60), end % 60, timeZone);
}

export const isHhMm = (s: string): boolean => /^([01]\d|2[0-3]):[0-5]\d$/.test(s);
