// Events received and applied per minute over the last 24 hours, one entry per minute (oldest first, the
// current minute last, minutes with nothing as zeros): what the console's chart and GET /admin/stats/minutes
// show, from the events' history (one indexed query; see src/storage/event-views.ts).
import type { Clock } from '../clock.ts';
import type { EventViews, MinuteCounts } from '../storage/event-views.ts';

export const MINUTE_MS = 60_000;
export const MINUTES_PER_DAY = 24 * 60;

/** `n` minutes from `start` (a minute's start, epoch ms), each with its counts or zeros. */
export function minuteSeries(counted: readonly MinuteCounts[], start: number, n: number): MinuteCounts[] {
  const byMinute = new Map(counted.map((c) => [c.minute, c]));
  return Array.from({ length: n }, (_, i) => {
    const minute = start + i * MINUTE_MS;
    const c = byMinute.get(minute);
    return { minute, received: c?.received ?? 0, applied: c?.applied ?? 0 };
  });
}

/** The last 24 hours by minute, ending with the minute under way. */
export async function lastDayPerMinute(events: Pick<EventViews, 'perMinute'>, clock: Clock): Promise<MinuteCounts[]> {
  const end = Math.floor(clock.now() / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  const start = end - MINUTES_PER_DAY * MINUTE_MS;
  return minuteSeries(await events.perMinute(start, end), start, MINUTES_PER_DAY);
}
