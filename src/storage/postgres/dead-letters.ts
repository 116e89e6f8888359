// Dead letters in PostgreSQL: the same rows and rules as ../sqlite/dead-letters.ts, in PostgreSQL's SQL. An event
// reopened or dismissed gets its history row in the same statement (a data-modifying WITH), for the rows it moved.
import type { Clock } from '../../clock.ts';
import {
  type DeadEventRow,
  type DeadEventStore,
  type DeadLetterStores,
  type DeadMappingRow,
  type DeadMappingStore,
  toDeadMapping,
  toEventStatus,
} from '../dead-letters.ts';
import type { Pool } from './pool.ts';

const SELECT_EVENTS = `SELECT e.id AS inbox_id, e.event_id, e.event_type, p.state, p.attempts, p.last_error, e.received_at, p.finished_at,
                              p.dismissed_reason, p.dismissed_by, p.dismissed_at
                       FROM inbox_events e LEFT JOIN processing p ON p.inbox_id = e.id`;

/** A dead letter back in its entity's order with fresh attempts; one without an entity key could not be parsed: replay re-reads it. */
const REOPEN = `UPDATE processing SET state = 'pending', attempts = 0, next_attempt_at = 0, lease_until = NULL, last_error = NULL,
                  finished_at = NULL, entity_key = coalesce(entity_key, 'unparsed:' || inbox_id)`;

/** `update` (RETURNING inbox_id, attempts) with a history row per event it moved; the statement's count is theirs. */
const withHistory = (update: string, state: 'replayed' | 'dismissed', at: string, reason: string) =>
  `WITH u AS (${update} RETURNING inbox_id, attempts)
   INSERT INTO event_history (inbox_id, at, state, attempt, reason) SELECT inbox_id, ${at}, '${state}', attempts, ${reason} FROM u`;

function createDeadEvents(pool: Pool, clock: Clock): DeadEventStore {
  return {
    async page(q) {
      const { rows } = await pool.query<DeadEventRow>(
        `${SELECT_EVENTS}
         WHERE p.state = $1 AND p.inbox_id > $2
           AND ($3::text IS NULL OR e.event_type = $3) AND ($4::bigint IS NULL OR e.received_at >= $4) AND ($5::bigint IS NULL OR e.received_at < $5)
         ORDER BY p.inbox_id LIMIT $6`,
        [q.state, q.afterInboxId, q.type ?? null, q.since ?? null, q.until ?? null, q.limit],
      );
      return rows.map((r) => ({ inboxId: r.inbox_id, status: toEventStatus(r) }));
    },
    async get(eventId) {
      const { rows } = await pool.query<DeadEventRow>(`${SELECT_EVENTS} WHERE e.event_id = $1`, [eventId]);
      return rows[0] && toEventStatus(rows[0]);
    },
    async reopen(eventId) {
      const r = await pool.query(
        withHistory(`${REOPEN} WHERE state = 'dead' AND inbox_id IN (SELECT id FROM inbox_events WHERE event_id = $1)`, 'replayed', '$2', 'NULL'),
        [eventId, clock.now()],
      );
      return r.rowCount === 1;
    },
    async reopenAll(eventType) {
      const r = await pool.query(
        withHistory(
          `${REOPEN} WHERE state = 'dead' AND ($1::text IS NULL OR inbox_id IN (SELECT id FROM inbox_events WHERE event_type = $1))`,
          'replayed',
          '$2',
          'NULL',
        ),
        [eventType ?? null, clock.now()],
      );
      return r.rowCount ?? 0;
    },
    async dismiss(eventId, reason, by) {
      const r = await pool.query(
        withHistory(
          `UPDATE processing SET state = 'dismissed', dismissed_reason = $2, dismissed_by = $3, dismissed_at = $4
           WHERE state = 'dead' AND inbox_id IN (SELECT id FROM inbox_events WHERE event_id = $1)`,
          'dismissed',
          '$4',
          '$2',
        ),
        [eventId, reason, by, clock.now()],
      );
      return r.rowCount === 1;
    },
  };
}

const MAPPING_COLUMNS = 'entity_type, service_id, external_id, attempts, last_error, dismissed_reason, dismissed_by, dismissed_at';

function createDeadMappings(pool: Pool, clock: Clock): DeadMappingStore {
  return {
    async page(q) {
      const { rows } = await pool.query<DeadMappingRow>(
        `SELECT ${MAPPING_COLUMNS} FROM mapping_outbox
         WHERE state = $1 AND ($2::text IS NULL OR (entity_type, service_id) > ($2::text, $3::text))
           AND ($4::bigint IS NULL OR created_at >= $4) AND ($5::bigint IS NULL OR created_at < $5)
         ORDER BY entity_type, service_id LIMIT $6`,
        [q.state, q.after?.[0] ?? null, q.after?.[1] ?? null, q.since ?? null, q.until ?? null, q.limit],
      );
      return rows.map(toDeadMapping);
    },
    async get(entityType, serviceId) {
      const { rows } = await pool.query<DeadMappingRow>(`SELECT ${MAPPING_COLUMNS} FROM mapping_outbox WHERE entity_type = $1 AND service_id = $2`, [
        entityType,
        serviceId,
      ]);
      return rows[0] && toDeadMapping(rows[0]);
    },
    async reopen(entityType, serviceId) {
      const r = await pool.query(
        `UPDATE mapping_outbox SET state = 'pending', attempts = 0, next_attempt_at = 0, last_error = NULL
         WHERE state = 'dead' AND entity_type = $1 AND service_id = $2`,
        [entityType, serviceId],
      );
      return r.rowCount === 1;
    },
    async deadCount() {
      const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM mapping_outbox WHERE state = 'dead'");
      return rows[0]!.n;
    },
    async reopenAll() {
      const r = await pool.query("UPDATE mapping_outbox SET state = 'pending', attempts = 0, next_attempt_at = 0 WHERE state = 'dead'");
      return r.rowCount ?? 0;
    },
    async dismiss(entityType, serviceId, reason, by) {
      const r = await pool.query(
        `UPDATE mapping_outbox SET state = 'dismissed', dismissed_reason = $3, dismissed_by = $4, dismissed_at = $5
         WHERE state = 'dead' AND entity_type = $1 AND service_id = $2`,
        [entityType, serviceId, reason, by, clock.now()],
      );
      return r.rowCount === 1;
    },
  };
}

export function createPostgresDeadLetterStores(pool: Pool, clock: Clock): DeadLetterStores {
  return { events: createDeadEvents(pool, clock), mappings: createDeadMappings(pool, clock) };
}
