// Dead letters: events (and mappings) that could not be applied, kept with their reason until a person
// replays them or dismisses them. Replay puts an event back in its original place in its entity's order,
// with fresh attempts. Dismissal keeps it for good (state 'dismissed', with who, why and when): it is no
// longer listed by default, cannot be replayed and is never pruned. Only identifiers and reasons are
// shown, never bodies. The mappings' own queries are src/mappings/dead-mappings.ts; this pages both.
import { z } from 'zod';
import type { Clock } from '../clock.ts';
import type { Db } from '../database/open.ts';
import type { Logger } from '../logger.ts';
import { createDeadMappings, type DeadMapping, type DeadMappings } from '../mappings/dead-mappings.ts';
import { toDismissal, type Dismissal, type DismissalColumns, type ParkedState } from '../work/dismissal.ts';
import type { EventState } from './queue.ts';

export type { DeadMapping } from '../mappings/dead-mappings.ts';
export type { Dismissal, ParkedState } from '../work/dismissal.ts';

export interface EventStatus {
  eventId: string;
  eventType: string;
  state: EventState | 'received';
  attempts: number;
  lastError?: string;
  receivedAt: string;
  finishedAt?: string;
  dismissal?: Dismissal;
}

/** Where a page of parked items ends: events first (by arrival), then mappings (by entity type and id). */
export const deadLetterPosition = z.union([
  z.strictObject({ events: z.number().int().nonnegative() }),
  z.strictObject({ mappings: z.tuple([z.string(), z.string()]).nullable() }),
]);
export type DeadLetterPosition = z.infer<typeof deadLetterPosition>;

export interface DeadLetterFilter {
  state: ParkedState;
  limit: number;
  after?: DeadLetterPosition;
  /** An event type: only events of it (mappings are not events, so none is listed). */
  type?: string;
  /** Epoch ms, on when an event was received (a mapping queued); since inclusive, until exclusive. */
  since?: number;
  until?: number;
}

export interface DeadLetterPage {
  events: EventStatus[];
  mappings: DeadMapping[];
  next: DeadLetterPosition | null;
}

interface EventRow extends DismissalColumns {
  inbox_id: number;
  event_id: string;
  event_type: string;
  state: EventState | null;
  attempts: number | null;
  last_error: string | null;
  received_at: number;
  finished_at: number | null;
}

const toStatus = (r: EventRow): EventStatus => ({
  eventId: r.event_id,
  eventType: r.event_type,
  state: r.state ?? 'received',
  attempts: r.attempts ?? 0,
  ...(r.last_error ? { lastError: r.last_error } : {}),
  receivedAt: new Date(r.received_at).toISOString(),
  ...(r.finished_at ? { finishedAt: new Date(r.finished_at).toISOString() } : {}),
  ...toDismissal(r),
});

export interface DeadLetters {
  /** One page of parked events, then mappings, in the given state (dead letters unless told otherwise). */
  page(f: DeadLetterFilter): DeadLetterPage;
  get(eventId: string): EventStatus | undefined;
  getMapping(entityType: string, serviceId: string): DeadMapping | undefined;
  /** Returns whether the event was a dead letter (and is now queued again). */
  replay(eventId: string): boolean;
  replayAll(filter?: { eventType?: string }): { events: number; mappings: number };
  /** Returns whether the event was a dead letter (and is now dismissed). The reason is stored, not logged. */
  dismiss(eventId: string, reason: string, by: string): boolean;
  /** The same for a mapping the service refused. */
  dismissMapping(entityType: string, serviceId: string, reason: string, by: string): boolean;
}

/** Parked events: the processing rows in state dead or dismissed, with their inbox row. */
interface DeadEvents {
  /** Up to `limit` events of the filter's state after inbox id `afterInboxId`, in arrival order. */
  page(f: DeadLetterFilter, afterInboxId: number, limit: number): EventRow[];
  get(eventId: string): EventRow | undefined;
  reopen(eventId: string): boolean;
  reopenAll(eventType: string | undefined): number;
  dismiss(eventId: string, reason: string, by: string): boolean;
}

function createDeadEvents(db: Db, clock: Clock): DeadEvents {
  const select = `SELECT e.id AS inbox_id, e.event_id, e.event_type, p.state, p.attempts, p.last_error, e.received_at, p.finished_at,
                         p.dismissed_reason, p.dismissed_by, p.dismissed_at
                  FROM inbox_events e LEFT JOIN processing p ON p.inbox_id = e.id`;
  // One statement per state, with the state written out: only then can SQLite use its partial index.
  const eventsPageIn = (state: ParkedState) =>
    db.prepare(`${select}
    WHERE p.state = '${state}' AND p.inbox_id > @after
      AND (@type IS NULL OR e.event_type = @type)
      AND (@since IS NULL OR e.received_at >= @since) AND (@until IS NULL OR e.received_at < @until)
    ORDER BY p.inbox_id LIMIT @limit`);
  const eventsPage = { dead: eventsPageIn('dead'), dismissed: eventsPageIn('dismissed') };
  const one = db.prepare(`${select} WHERE e.event_id = ?`);
  // A dead letter without an entity key could not be parsed; replay re-reads it (it may be fixed data).
  const reopen = db.prepare(`
    UPDATE processing SET state = 'pending', attempts = 0, next_attempt_at = 0, lease_until = NULL, last_error = NULL, finished_at = NULL,
      entity_key = coalesce(entity_key, 'unparsed:' || inbox_id)
    WHERE state = 'dead' AND inbox_id IN (SELECT id FROM inbox_events WHERE event_id = ?)`);
  const reopenAll = db.prepare(`
    UPDATE processing SET state = 'pending', attempts = 0, next_attempt_at = 0, lease_until = NULL, last_error = NULL, finished_at = NULL,
      entity_key = coalesce(entity_key, 'unparsed:' || inbox_id)
    WHERE state = 'dead' AND (@eventType IS NULL OR inbox_id IN (SELECT id FROM inbox_events WHERE event_type = @eventType))`);
  const dismiss = db.prepare(`
    UPDATE processing SET state = 'dismissed', dismissed_reason = @reason, dismissed_by = @by, dismissed_at = @now
    WHERE state = 'dead' AND inbox_id IN (SELECT id FROM inbox_events WHERE event_id = @eventId)`);
  return {
    page: (f, afterInboxId, limit) =>
      eventsPage[f.state].all({ after: afterInboxId, type: f.type ?? null, since: f.since ?? null, until: f.until ?? null, limit }) as EventRow[],
    get: (eventId) => one.get(eventId) as EventRow | undefined,
    reopen: (eventId) => reopen.run(eventId).changes === 1,
    reopenAll: (eventType) => reopenAll.run({ eventType: eventType ?? null }).changes,
    dismiss: (eventId, reason, by) => dismiss.run({ eventId, reason, by, now: clock.now() }).changes === 1,
  };
}

/** The mappings part of a page: `room` items at most, starting after `after`. */
function mappingsPart(
  mappings: DeadMappings,
  f: DeadLetterFilter,
  after: [string, string] | null,
  room: number,
): { rows: DeadMapping[]; next: DeadLetterPosition | null } {
  // An event type filter names events only.
  if (f.type !== undefined) return { rows: [], next: null };
  const rows = mappings.page({ state: f.state, after, since: f.since, until: f.until, limit: room + 1 });
  if (rows.length <= room) return { rows, next: null };
  const shown = rows.slice(0, room);
  const last = shown[shown.length - 1];
  return { rows: shown, next: { mappings: last ? [last.entityType, last.serviceId] : after } };
}

/** One page: events first (by arrival), then mappings, `f.limit` items in all. */
function pageOfParked(events: DeadEvents, mappings: DeadMappings, f: DeadLetterFilter): DeadLetterPage {
  const after = f.after ?? { events: 0 };
  if ('mappings' in after) {
    const part = mappingsPart(mappings, f, after.mappings, f.limit);
    return { events: [], mappings: part.rows, next: part.next };
  }
  const rows = events.page(f, after.events, f.limit + 1);
  if (rows.length > f.limit) {
    const shown = rows.slice(0, f.limit);
    return { events: shown.map(toStatus), mappings: [], next: { events: shown[shown.length - 1]!.inbox_id } };
  }
  const part = mappingsPart(mappings, f, null, f.limit - rows.length);
  return { events: rows.map(toStatus), mappings: part.rows, next: part.next };
}

export function createDeadLetters(deps: { db: Db; clock: Clock; logger: Logger }): DeadLetters {
  const { logger } = deps;
  const events = createDeadEvents(deps.db, deps.clock);
  const mappings = createDeadMappings(deps.db, deps.clock);
  return {
    page: (f) => pageOfParked(events, mappings, f),
    get(eventId) {
      const r = events.get(eventId);
      return r && toStatus(r);
    },
    getMapping: (entityType, serviceId) => mappings.get(entityType, serviceId),
    replay(eventId) {
      const changed = events.reopen(eventId);
      if (changed) logger.info({ eventId }, 'dead letter replayed');
      return changed;
    },
    replayAll(filter = {}) {
      const replayedEvents = events.reopenAll(filter.eventType);
      const replayedMappings = filter.eventType ? 0 : mappings.reopenAll();
      logger.info({ events: replayedEvents, mappings: replayedMappings, eventType: filter.eventType }, 'dead letters replayed');
      return { events: replayedEvents, mappings: replayedMappings };
    },
    dismiss(eventId, reason, by) {
      const changed = events.dismiss(eventId, reason, by);
      if (changed) logger.info({ eventId, by }, 'dead letter dismissed');
      return changed;
    },
    dismissMapping(entityType, serviceId, reason, by) {
      const changed = mappings.dismiss(entityType, serviceId, reason, by);
      if (changed) logger.info({ entityType, serviceId, by }, 'dead mapping dismissed');
      return changed;
    },
  };
}
