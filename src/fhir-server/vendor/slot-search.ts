// GET Slot?schedule.actor=Practitioner/{id}&start=eq{instant}&status=free, the search a client books by, answered
// from the slot book's index: Medplum's in-memory search takes no chained parameter (it finds nothing) and reads
// every Slot it holds for each search. Any GET Slot naming `schedule` or `schedule.actor` is answered here; other
// Slot searches go to the store as before.
//
// `start` takes eq (the default), ge, gt, le and lt, each as often as wanted (all must hold): an instant with its
// offset or Z (seconds optional; a `+` that reached us as a space is read as `+`), or a date, which is that day in
// each Schedule's own time zone. `status` takes a comma-separated list; `_count` and `_offset` page the answer.
import type { IncomingHttpHeaders } from 'node:http';
import type { Bundle, Slot } from '@medplum/fhirtypes';
import type { FhirAnswer } from '../fhir-handler.ts';
import { refuse } from './answers.ts';
import { dayStart } from './clinic-hours.ts';
import type { Records } from './records.ts';
import type { SlotBook } from './slot-book.ts';

const PARAMS = ['schedule', 'schedule.actor', 'start', 'status', '_count', '_offset'];
const INSTANT = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const PREFIX = /^(eq|ne|gt|lt|ge|le|sa|eb|ap)/;

/** [from, to): what one `start` value allows of a Slot's start, in a Schedule's time zone (a date's day is the clinic's). */
type Bound = (timeZone: string | undefined) => [number, number];

export function isSlotSearch(method: string, url: string): boolean {
  const [path, query = ''] = url.split('?');
  if (method !== 'GET' || path?.replace(/^\/+|\/+$/g, '') !== 'Slot') return false;
  const params = new URLSearchParams(query);
  return params.has('schedule') || params.has('schedule.actor');
}

/** The range of instants the value names: its own precision (a minute, a second, a millisecond), or a whole day. */
function rangeOf(value: string): Bound | undefined {
  if (DATE.test(value)) {
    const day = Date.parse(`${value}T00:00:00Z`) / 86_400_000;
    if (Number.isNaN(day)) return undefined;
    return (timeZone) => (timeZone ? [dayStart(day, timeZone), dayStart(day + 1, timeZone)] : [day * 86_400_000, (day + 1) * 86_400_000]);
  }
  const m = INSTANT.exec(value);
  const at = m ? Date.parse(value) : Number.NaN;
  if (!m || Number.isNaN(at)) return undefined;
  const width = m[5] ? 10 ** (3 - Math.min(3, m[5].length - 1)) : m[4] ? 1000 : 60_000;
  return () => [at, at + width];
}

function boundOf(raw: string): Bound {
  const prefix = PREFIX.exec(raw)?.[1] ?? 'eq';
  const value = raw.slice(PREFIX.test(raw) ? 2 : 0).replace(/ (\d{2}:\d{2})$/, '+$1');
  const range = rangeOf(value);
  if (!range) refuse(400, 'invalid', `Slot search: start=${raw} is not a date (YYYY-MM-DD) or an instant with its offset (2026-01-05T13:00:00Z)`);
  if (!['eq', 'ge', 'gt', 'le', 'lt'].includes(prefix)) refuse(400, 'not-supported', `Slot search: start takes eq, ge, gt, le or lt, not ${prefix}`);
  return (timeZone) => {
    const [lo, hi] = range(timeZone);
    if (prefix === 'eq') return [lo, hi];
    if (prefix === 'ge') return [lo, Number.POSITIVE_INFINITY];
    if (prefix === 'gt') return [hi, Number.POSITIVE_INFINITY];
    return [Number.NEGATIVE_INFINITY, prefix === 'le' ? hi : lo];
  };
}

const list = (params: URLSearchParams, name: string): string[] | undefined =>
  params.has(name) ? params.getAll(name).flatMap((v) => v.split(',').map((s) => s.trim())) : undefined;

function count(params: URLSearchParams, name: '_count' | '_offset'): number | undefined {
  const raw = params.get(name);
  if (raw === null) return undefined;
  if (!/^\d+$/.test(raw) || (name === '_count' && raw === '0'))
    refuse(400, 'invalid', `Slot search: ${name}=${raw} is not a ${name === '_count' ? 'positive' : 'whole'} number`);
  return Number(raw);
}

/** The Schedules the search names: those of every actor given, and of every Schedule given, both when both are. */
function schedulesNamed(params: URLSearchParams, book: SlotBook): string[] {
  const byActor = list(params, 'schedule.actor')?.flatMap((actor) => book.schedulesOf(actor));
  const named = list(params, 'schedule')?.map((s) => s.replace(/^Schedule\//, ''));
  const schedules = byActor && named ? byActor.filter((s) => named.includes(s)) : (byActor ?? named ?? []);
  return [...new Set(schedules)].filter((s) => book.hasSchedule(s));
}

export async function searchSlots(deps: { book: SlotBook; records: Records }, url: string, headers: IncomingHttpHeaders): Promise<FhirAnswer> {
  const params = new URLSearchParams(url.split('?')[1] ?? '');
  const unknown = [...params.keys()].find((k) => !PARAMS.includes(k));
  if (unknown) refuse(400, 'not-supported', `Slot search: ${unknown} is not supported beside schedule and schedule.actor (${PARAMS.join(', ')})`);
  const bounds = params.getAll('start').map(boundOf);
  const statuses = list(params, 'status');
  const [pageSize, offset = 0] = [count(params, '_count'), count(params, '_offset')];
  const found: Slot[] = [];
  for (const schedule of schedulesNamed(params, deps.book)) {
    const timeZone = deps.book.timeZoneOf(schedule);
    const ranges = bounds.map((b) => b(timeZone));
    const from = Math.max(Number.NEGATIVE_INFINITY, ...ranges.map((r) => r[0]));
    const to = Math.min(Number.POSITIVE_INFINITY, ...ranges.map((r) => r[1]));
    for (const id of deps.book.between(schedule, from, to)) {
      const slot = await deps.records.read<Slot>('Slot', id);
      if (slot && (!statuses || statuses.includes(slot.status))) found.push(slot);
    }
  }
  found.sort((a, b) => Date.parse(a.start) - Date.parse(b.start) || (a.id! < b.id! ? -1 : 1));
  const page = found.slice(offset, pageSize === undefined ? undefined : offset + pageSize);
  const more = pageSize !== undefined && offset + pageSize < found.length;
  const next = new URLSearchParams(params);
  next.set('_offset', String(offset + (pageSize ?? 0)));
  const bundle: Bundle<Slot> = {
    resourceType: 'Bundle',
    type: 'searchset',
    total: found.length,
    ...(page.length ? { entry: page.map((resource) => ({ resource, search: { mode: 'match' as const } })) } : {}),
    ...(more && headers.host ? { link: [{ relation: 'next', url: `http://${headers.host}/Slot?${next}` }] } : {}),
  };
  return { status: 200, body: bundle, headers: {} };
}
