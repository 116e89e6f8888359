// The mapping outbox's rows in SQLite. One process owns the database, so a due mapping is just read: nothing
// else could post it meanwhile. Sent marks are written together, in one commit per pass.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../sqlite/open.ts';
import type { MappingOutboxStore, QueuedMapping } from '../mapping-outbox.ts';

export function createSqliteMappingOutboxStore(db: Db, clock: Clock): MappingOutboxStore {
  const due = db.prepare(`
    SELECT entity_type AS entityType, service_id AS serviceId, external_id AS externalId, attempts, trace_context AS traceContext
    FROM mapping_outbox WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?`);
  const done = db.prepare(
    'UPDATE mapping_outbox SET state = ?, attempts = attempts + 1, last_error = ?, updated_at = ? WHERE entity_type = ? AND service_id = ?',
  );
  const retry = db.prepare(
    'UPDATE mapping_outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ?, updated_at = ? WHERE entity_type = ? AND service_id = ?',
  );
  const pending = db.prepare("SELECT count(*) FROM mapping_outbox WHERE state = 'pending'").pluck();
  const markSent = db.transaction((rows: QueuedMapping[]) => {
    for (const r of rows) done.run('sent', null, clock.now(), r.entityType, r.serviceId);
  });
  return {
    claimDue: async (limit) => due.all(clock.now(), limit) as QueuedMapping[],
    async markSent(rows) {
      if (rows.length) markSent.immediate(rows);
    },
    async retryAt(r, at, reason) {
      retry.run(at, reason, clock.now(), r.entityType, r.serviceId);
    },
    async markDead(r, reason) {
      done.run('dead', reason, clock.now(), r.entityType, r.serviceId);
    },
    pending: async () => pending.get() as number,
  };
}
