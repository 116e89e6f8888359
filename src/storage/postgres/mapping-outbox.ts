// The mapping outbox's rows in PostgreSQL. A due mapping handed to a replica has its due time moved on by the
// lease (picked FOR UPDATE SKIP LOCKED), so no other replica posts it meanwhile; the outcome sets it again.
import type { Clock } from '../../clock.ts';
import type { MappingOutboxStore, QueuedMapping } from '../mapping-outbox.ts';
import type { Pool } from './pool.ts';

const COLUMNS = 'm.entity_type AS "entityType", m.service_id AS "serviceId", m.external_id AS "externalId", m.attempts, m.trace_context AS "traceContext"';

export function createPostgresMappingOutboxStore(pool: Pool, clock: Clock): MappingOutboxStore {
  return {
    async claimDue(limit, leaseMs) {
      const now = clock.now();
      const { rows } = await pool.query<QueuedMapping>(
        `WITH due AS (
           SELECT entity_type, service_id FROM mapping_outbox
           WHERE state = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         UPDATE mapping_outbox m SET next_attempt_at = $3 FROM due
         WHERE m.entity_type = due.entity_type AND m.service_id = due.service_id
         RETURNING ${COLUMNS}`,
        [now, limit, now + leaseMs],
      );
      return rows;
    },
    async markSent(rows) {
      if (!rows.length) return;
      await pool.query(
        `UPDATE mapping_outbox m SET state = 'sent', attempts = m.attempts + 1, last_error = NULL, updated_at = $3
         FROM unnest($1::text[], $2::text[]) AS s(t, id)
         WHERE m.entity_type = s.t AND m.service_id = s.id AND m.state = 'pending'`,
        [rows.map((r) => r.entityType), rows.map((r) => r.serviceId), clock.now()],
      );
    },
    async retryAt(r, at, reason) {
      await pool.query(
        `UPDATE mapping_outbox SET attempts = attempts + 1, next_attempt_at = $1, last_error = $2, updated_at = $3
         WHERE entity_type = $4 AND service_id = $5 AND state = 'pending'`,
        [at, reason, clock.now(), r.entityType, r.serviceId],
      );
    },
    async markDead(r, reason) {
      await pool.query(
        `UPDATE mapping_outbox SET state = 'dead', attempts = attempts + 1, last_error = $1, updated_at = $2
         WHERE entity_type = $3 AND service_id = $4 AND state = 'pending'`,
        [reason, clock.now(), r.entityType, r.serviceId],
      );
    },
    async pending() {
      const { rows } = await pool.query<{ n: number }>("SELECT count(*) AS n FROM mapping_outbox WHERE state = 'pending'");
      return rows[0]!.n;
    },
  };
}
