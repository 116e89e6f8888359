// HL7 DTM values (YYYYMMDDHHMMSS+ZZZZ). An appointment's time keeps the clock's local time and offset exactly
// as the service gave them (startsAtLocal), so the EMR shows the hour the clinic booked, not a UTC one; the
// message's own time (MSH-7, EVN-2) is the injected clock's reading in UTC. No Date.now(): time is passed in.

const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}(?::?\d{2})?)$/i;

/** A local time with its offset, as read from an ISO 8601 instant. */
interface LocalTime {
  /** The local wall-clock reading as if it were UTC: arithmetic on it never crosses an offset. */
  wallMs: number;
  /** `+0100`, `-0530`, `+0000` for Z. */
  offset: string;
}

function parseIso(iso: string): LocalTime {
  const m = ISO.exec(iso);
  if (!m) throw new RangeError(`not an ISO 8601 date-time with an offset: ${iso}`);
  const [, y, mo, d, h, mi, s, zone] = m;
  const wallMs = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0));
  // Date.UTC rolls 2026-02-30 over to March; an input like that is not an instant at all.
  if (new Date(wallMs).toISOString().slice(0, 19) !== `${y}-${mo}-${d}T${h}:${mi}:${s ?? '00'}`) {
    throw new RangeError(`not a valid date-time: ${iso}`);
  }
  const z = zone!.toUpperCase() === 'Z' ? '+0000' : zone!.replace(':', '');
  return { wallMs, offset: z.length === 3 ? `${z}00` : z };
}

function format(wallMs: number, offset: string): string {
  return new Date(wallMs).toISOString().slice(0, 19).replace(/[-:T]/g, '') + offset;
}

/**
 * `2026-02-01T10:00:00.000+01:00` → `20260201100000+0100`; `Z` → `+0000`. Fractions of a second are dropped
 * (the contract's form is to the second). Throws RangeError for anything else: an input the event schema
 * (startsAtLocal: ISO with offset) would have refused already.
 */
export function hl7DateTime(iso: string): string {
  const t = parseIso(iso);
  return format(t.wallMs, t.offset);
}

/**
 * The local time `minutes` later, in the start's offset. Across a daylight-saving change the offset is the
 * start's, which still names the right instant (the reading is shifted by the hour instead).
 */
export function hl7DateTimePlusMinutes(iso: string, minutes: number): string {
  const t = parseIso(iso);
  return format(t.wallMs + minutes * 60_000, t.offset);
}

/** MSH-7 and EVN-2: the injected clock's reading (ms since the epoch) in UTC, to the second. */
export function hl7Now(nowMs: number): string {
  return format(nowMs, '+0000');
}

/** An instant as ISO 8601 UTC with milliseconds, as the rest of the adapter writes times. */
export function isoNow(nowMs: number): string {
  return new Date(nowMs).toISOString();
}
