// Dead letters: events (and mappings) that could not be applied, kept with their reason until a person
// replays them or dismisses them. Replay puts an event back in its original place in its entity's order,
// with fresh attempts. Dismissal keeps it for good (state 'dismissed', with who, why and when): it is no
// longer listed by default, cannot be replayed and is never pruned. Only identifiers and reasons are
// shown, never bodies.
import { z } from 'zod';
import type { Clock } from '../clock.ts';
import type { Db } from '../database/open.ts';
import type { Logger } from '../logger.ts';
import type { EventState } from './queue.ts';

export type ParkedState = 'dead' | 'dismissed';

export interface Dismissal {
  reason: string;
  by: string;
  at: string;
}

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

export interface DeadMapping {
  entityType: string;
  serviceId: string;
  externalId: string;
  attempts: number;
  lastError?: string;
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

interface DismissalColumns {
  dismissed_reason: string | null;
  dismissed_by: string | null;
  dismissed_at: number | null;
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

interface MappingRow extends DismissalColumns {
  entity_type: string;
  service_id: string;
  external_id: string;
  attempts: number;
  last_error: string | null;
}

const toDismissal = (r: DismissalColumns) =>
  r.dismissed_at === null ? {} : { dismissal: { reason: r.dismissed_reason ?? '', by: r.dismissed_by ?? '', at: new Date(r.dismissed_at).toISOString() } };

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

const toMapping = (r: MappingRow): DeadMapping => ({
  entityType: r.entity_type,
  serviceId: r.service_id,
  externalId: r.external_id,
  attempts: r.attempts,
  ...(r.last_error ? { lastError: r.last_error } : {}),
  ...toDismissal(r),
});

export function createDeadLetters(deps: { db: Db; clock: Clock; logger: Logger }) {
  const { db, clock, logger } = deps;
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
  const mappingColumns = 'entity_type, service_id, external_id, attempts, last_error, dismissed_reason, dismissed_by, dismissed_at';
  const mappingsPage = db.prepare(`
    SELECT ${mappingColumns} FROM mapping_outbox
    WHERE state = @state AND (@afterType IS NULL OR (entity_type, service_id) > (@afterType, @afterId))
      AND (@since IS NULL OR created_at >= @since) AND (@until IS NULL OR created_at < @until)
    ORDER BY entity_type, service_id LIMIT @limit`);
  const oneMapping = db.prepare(`SELECT ${mappingColumns} FROM mapping_outbox WHERE entity_type = ? AND service_id = ?`);
  // A dead letter without an entity key could not be parsed; replay re-reads it (it may be fixed data).
  const reopen = db.prepare(`
    UPDATE processing SET state = 'pending', attempts = 0, next_attempt_at = 0, lease_until = NULL, last_error = NULL, finished_at = NULL,
      entity_key = coalesce(entity_key, 'unparsed:' || inbox_id)
    WHERE state = 'dead' AND inbox_id IN (SELECT id FROM inbox_events WHERE event_id = ?)`);
  const reopenAll = db.prepare(`
    UPDATE processing SET state = 'pending', attempts = 0, next_attempt_at = 0, lease_until = NULL, last_error = NULL, finished_at = NULL,
      entity_key = coalesce(entity_key, 'unparsed:' || inbox_id)
    WHERE state = 'dead' AND (@eventType IS NULL OR inbox_id IN (SELECT id FROM inbox_events WHERE event_type = @eventType))`);
  const reopenMappings = db.prepare("UPDATE mapping_outbox SET state = 'pending', attempts = 0, next_attempt_at = 0 WHERE state = 'dead'");
  const dismissEvent = db.prepare(`
    UPDATE processing SET state = 'dismissed', dismissed_reason = @reason, dismissed_by = @by, dismissed_at = @now
    WHERE state = 'dead' AND inbox_id IN (SELECT id FROM inbox_events WHERE event_id = @eventId)`);
  const dismissMapping = db.prepare(`
    UPDATE mapping_outbox SET state = 'dismissed', dismissed_reason = @reason, dismissed_by = @by, dismissed_at = @now
    WHERE state = 'dead' AND entity_type = @entityType AND service_id = @serviceId`);

  function pageOfEvents(f: DeadLetterFilter, afterInboxId: number, limit: number): EventRow[] {
    return eventsPage[f.state].all({ after: afterInboxId, type: f.type ?? null, since: f.since ?? null, until: f.until ?? null, limit }) as EventRow[];
  }

  function pageOfMappings(f: DeadLetterFilter, after: [string, string] | null, limit: number): MappingRow[] {
    return mappingsPage.all({
      state: f.state,
      afterType: after?.[0] ?? null,
      afterId: after?.[1] ?? null,
      since: f.since ?? null,
      until: f.until ?? null,
      limit,
    }) as MappingRow[];
  }

  /** The mappings part of a page: `room` items at most, starting after `after`. */
  function mappingsPart(f: DeadLetterFilter, after: [string, string] | null, room: number): { rows: MappingRow[]; next: DeadLetterPosition | null } {
    // An event type filter names events only.
    if (f.type !== undefined) return { rows: [], next: null };
    const rows = pageOfMappings(f, after, room + 1);
    if (rows.length <= room) return { rows, next: null };
    const shown = rows.slice(0, room);
    const last = shown[shown.length - 1];
    return { rows: shown, next: { mappings: last ? [last.entity_type, last.service_id] : after } };
  }

  function page(f: DeadLetterFilter): DeadLetterPage {
    const after = f.after ?? { events: 0 };
    if ('mappings' in after) {
      const part = mappingsPart(f, after.mappings, f.limit);
      return { events: [], mappings: part.rows.map(toMapping), next: part.next };
    }
    const events = pageOfEvents(f, after.events, f.limit + 1);
    if (events.length > f.limit) {
      const shown = events.slice(0, f.limit);
      return { events: shown.map(toStatus), mappings: [], next: { events: shown[shown.length - 1]!.inbox_id } };
    }
    const part = mappingsPart(f, null, f.limit - events.length);
    return { events: events.map(toStatus), mappings: part.rows.map(toMapping), next: part.next };
  }

  return {
    /** One page of parked events, then mappings, in the given state (dead letters unless told otherwise). */
    page,
    get(eventId: string): EventStatus | undefined {
      const r = one.get(eventId) as EventRow | undefined;
      return r && toStatus(r);
    },
    getMapping(entityType: string, serviceId: string): DeadMapping | undefined {
      const r = oneMapping.get(entityType, serviceId) as MappingRow | undefined;
      return r && toMapping(r);
    },
    /** Returns whether the event was a dead letter (and is now queued again). */
    replay(eventId: string): boolean {
      const changed = reopen.run(eventId).changes === 1;
      if (changed) logger.info({ eventId }, 'dead letter replayed');
      return changed;
    },
    replayAll(filter: { eventType?: string } = {}): { events: number; mappings: number } {
      const events = reopenAll.run({ eventType: filter.eventType ?? null }).changes;
      const mappings = filter.eventType ? 0 : reopenMappings.run().changes;
      logger.info({ events, mappings, eventType: filter.eventType }, 'dead letters replayed');
      return { events, mappings };
    },
    /** Returns whether the event was a dead letter (and is now dismissed). The reason is stored, not logged. */
    dismiss(eventId: string, reason: string, by: string): boolean {
      const changed = dismissEvent.run({ eventId, reason, by, now: clock.now() }).changes === 1;
      if (changed) logger.info({ eventId, by }, 'dead letter dismissed');
      return changed;
    },
    /** The same for a mapping the service refused. */
    dismissMapping(entityType: string, serviceId: string, reason: string, by: string): boolean {
      const changed = dismissMapping.run({ entityType, serviceId, reason, by, now: clock.now() }).changes === 1;
      if (changed) logger.info({ entityType, serviceId, by }, 'dead mapping dismissed');
      return changed;
    },
  };
}

export type DeadLetters = ReturnType<typeof createDeadLetters>;
