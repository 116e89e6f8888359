// Retention of the processor's rows in PostgreSQL. Every replica runs the hourly pass; one at a time prunes
// (a transaction advisory lock, tried: a replica that finds it held prunes nothing, the other is at it).
// Ids come from a sequence and are never reused, so unlike SQLite the newest inbox row may go too. An event's
// history rows go with it (no foreign key: they are deleted here, by the events being deleted).
import type { RetentionStore } from '../retention.ts';
import { type Pool, withTransaction } from './pool.ts';

const FINISHED = "state IN ('applied', 'discarded_stale')";

export function createPostgresRetentionStore(pool: Pool): RetentionStore {
  return {
    pruneEvents: (c) =>
      withTransaction(pool, async (client) => {
        const lock = await client.query<{ taken: boolean }>("SELECT pg_try_advisory_xact_lock(hashtextextended('emr-bridge:retention', 0)) AS taken");
        if (!lock.rows[0]!.taken) return { bodies: 0, events: 0 };
        const bodies = await client.query(
          `UPDATE inbox_events SET body = NULL
           WHERE body IS NOT NULL AND id IN (SELECT inbox_id FROM processing WHERE ${FINISHED} AND finished_at < $1
             UNION ALL SELECT inbox_id FROM processing WHERE state = 'dismissed' AND dismissed_at < $1)`,
          [c.bodiesBefore],
        );
        await client.query(`DELETE FROM event_history WHERE inbox_id IN (SELECT inbox_id FROM processing WHERE ${FINISHED} AND finished_at < $1)`, [
          c.eventsBefore,
        ]);
        // Their processing rows cascade.
        const events = await client.query(`DELETE FROM inbox_events WHERE id IN (SELECT inbox_id FROM processing WHERE ${FINISHED} AND finished_at < $1)`, [
          c.eventsBefore,
        ]);
        // The counts of what was received (the console's) are kept as long as the events' ids.
        await client.query('DELETE FROM inbox_minutes WHERE minute < $1', [c.eventsBefore]);
        return { bodies: bodies.rowCount ?? 0, events: events.rowCount ?? 0 };
      }),
    async pruneSentMappings(before) {
      const r = await pool.query("DELETE FROM mapping_outbox WHERE state = 'sent' AND updated_at < $1", [before]);
      return r.rowCount ?? 0;
    },
  };
}
