// Dead letters: events (and mappings) that could not be applied, kept with their reason until a person
// replays them. Replay puts an event back in its original place in its entity's order, with fresh
// attempts. Only identifiers and reasons are shown, never bodies.
import type { Clock } from '../clock.ts';
import type { Db } from '../database/open.ts';
import type { Logger } from '../logger.ts';
import type { EventState } from './queue.ts';

export interface EventStatus {
  eventId: string;
  eventType: string;
  state: EventState | 'received';
  attempts: number;
  lastError?: string;
  receivedAt: string;
  finishedAt?: string;
}

export interface DeadMapping {
  entityType: string;
  serviceId: string;
  externalId: string;
  attempts: number;
  lastError?: string;
}

interface Row {
  event_id: string;
  event_type: string;
  state: EventState | null;
  attempts: number | null;
  last_error: string | null;
  received_at: number;
  finished_at: number | null;
}

const toStatus = (r: Row): EventStatus => ({
  eventId: r.event_id,
  eventType: r.event_type,
  state: r.state ?? 'received',
  attempts: r.attempts ?? 0,
  ...(r.last_error ? { lastError: r.last_error } : {}),
  receivedAt: new Date(r.received_at).toISOString(),
  ...(r.finished_at ? { finishedAt: new Date(r.finished_at).toISOString() } : {}),
});

export function createDeadLetters(deps: { db: Db; clock: Clock; logger: Logger }) {
  const { db, logger } = deps;
  const select = `SELECT e.event_id, e.event_type, p.state, p.attempts, p.last_error, e.received_at, p.finished_at
                  FROM inbox_events e LEFT JOIN processing p ON p.inbox_id = e.id`;
  const list = db.prepare(`${select} WHERE p.state = 'dead' ORDER BY e.id LIMIT ?`);
  const one = db.prepare(`${select} WHERE e.event_id = ?`);
  const deadMappings = db.prepare(
    "SELECT entity_type AS entityType, service_id AS serviceId, external_id AS externalId, attempts, last_error AS lastError FROM mapping_outbox WHERE state = 'dead'",
  );
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

  return {
    list(limit = 500): { events: EventStatus[]; mappings: DeadMapping[] } {
      return {
        events: (list.all(limit) as Row[]).map(toStatus),
        mappings: (deadMappings.all() as (DeadMapping & { lastError: string | null })[]).map((m) => ({
          ...m,
          ...(m.lastError ? {} : { lastError: undefined }),
        })),
      };
    },
    get(eventId: string): EventStatus | undefined {
      const r = one.get(eventId) as Row | undefined;
      return r && toStatus(r);
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
  };
}

export type DeadLetters = ReturnType<typeof createDeadLetters>;
