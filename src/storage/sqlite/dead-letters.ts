// Dead letters in SQLite: parked events (processing rows with their inbox row) and parked mappings
// (mapping_outbox rows), a page at a time, reopened or dismissed. An event reopened or dismissed gets its
// history row in the same transaction, written first for exactly the rows the change then moves.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../sqlite/open.ts';
import type { ParkedState } from '../../work/dismissal.ts';
import {
  type DeadEventRow,
  type DeadEventStore,
  type DeadLetterStores,
  type DeadMappingRow,
  type DeadMappingStore,
  toDeadMapping,
  toEventStatus,
} from '../dead-letters.ts';

function createDeadEvents(db: Db, clock: Clock): DeadEventStore {
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
  const historyOf = (where: string) =>
    db.prepare(`INSERT INTO event_history (inbox_id, at, state, attempt, reason)
                SELECT inbox_id, @now, @state, CASE WHEN @state = 'replayed' THEN 0 ELSE attempts END, @reason FROM processing WHERE state = 'dead' AND ${where}`);
  const oneHistory = historyOf('inbox_id IN (SELECT id FROM inbox_events WHERE event_id = @eventId)');
  const typeHistory = historyOf('(@eventType IS NULL OR inbox_id IN (SELECT id FROM inbox_events WHERE event_type = @eventType))');
  const reopenOne = db.transaction((eventId: string) => {
    oneHistory.run({ eventId, now: clock.now(), state: 'replayed', reason: null });
    return reopen.run(eventId).changes;
  });
  const reopenType = db.transaction((eventType: string | null) => {
    typeHistory.run({ eventType, now: clock.now(), state: 'replayed', reason: null });
    return reopenAll.run({ eventType }).changes;
  });
  const dismissOne = db.transaction((eventId: string, reason: string, by: string) => {
    const now = clock.now();
    oneHistory.run({ eventId, now, state: 'dismissed', reason });
    return dismiss.run({ eventId, reason, by, now }).changes;
  });
  return {
    page: async (q) =>
      (
        eventsPage[q.state].all({
          after: q.afterInboxId,
          type: q.type ?? null,
          since: q.since ?? null,
          until: q.until ?? null,
          limit: q.limit,
        }) as DeadEventRow[]
      ).map((r) => ({ inboxId: r.inbox_id, status: toEventStatus(r) })),
    async get(eventId) {
      const r = one.get(eventId) as DeadEventRow | undefined;
      return r && toEventStatus(r);
    },
    reopen: async (eventId) => reopenOne.immediate(eventId) === 1,
    reopenAll: async (eventType) => reopenType.immediate(eventType ?? null),
    dismiss: async (eventId, reason, by) => dismissOne.immediate(eventId, reason, by) === 1,
  };
}

function createDeadMappings(db: Db, clock: Clock): DeadMappingStore {
  const columns = 'entity_type, service_id, external_id, attempts, last_error, dismissed_reason, dismissed_by, dismissed_at';
  // One statement per state, with the state written out: dead ones are then read by mapping_outbox_dead.
  const pageIn = (state: ParkedState) =>
    db.prepare(`
    SELECT ${columns} FROM mapping_outbox
    WHERE state = '${state}' AND (@afterType IS NULL OR (entity_type, service_id) > (@afterType, @afterId))
      AND (@since IS NULL OR created_at >= @since) AND (@until IS NULL OR created_at < @until)
    ORDER BY entity_type, service_id LIMIT @limit`);
  const page = { dead: pageIn('dead'), dismissed: pageIn('dismissed') };
  const one = db.prepare(`SELECT ${columns} FROM mapping_outbox WHERE entity_type = ? AND service_id = ?`);
  const reopen = db.prepare(
    "UPDATE mapping_outbox SET state = 'pending', attempts = 0, next_attempt_at = 0, last_error = NULL WHERE state = 'dead' AND entity_type = ? AND service_id = ?",
  );
  const reopenAll = db.prepare("UPDATE mapping_outbox SET state = 'pending', attempts = 0, next_attempt_at = 0 WHERE state = 'dead'");
  const dead = db.prepare("SELECT count(*) FROM mapping_outbox WHERE state = 'dead'").pluck();
  const dismiss = db.prepare(`
    UPDATE mapping_outbox SET state = 'dismissed', dismissed_reason = @reason, dismissed_by = @by, dismissed_at = @now
    WHERE state = 'dead' AND entity_type = @entityType AND service_id = @serviceId`);
  return {
    page: async (q) =>
      (
        page[q.state].all({
          afterType: q.after?.[0] ?? null,
          afterId: q.after?.[1] ?? null,
          since: q.since ?? null,
          until: q.until ?? null,
          limit: q.limit,
        }) as DeadMappingRow[]
      ).map(toDeadMapping),
    async get(entityType, serviceId) {
      const r = one.get(entityType, serviceId) as DeadMappingRow | undefined;
      return r && toDeadMapping(r);
    },
    reopen: async (entityType, serviceId) => reopen.run(entityType, serviceId).changes === 1,
    reopenAll: async () => reopenAll.run().changes,
    deadCount: async () => dead.get() as number,
    dismiss: async (entityType, serviceId, reason, by) => dismiss.run({ entityType, serviceId, reason, by, now: clock.now() }).changes === 1,
  };
}

export function createSqliteDeadLetterStores(db: Db, clock: Clock): DeadLetterStores {
  return { events: createDeadEvents(db, clock), mappings: createDeadMappings(db, clock) };
}
