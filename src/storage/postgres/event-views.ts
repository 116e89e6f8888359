// What the console and the admin API read of events in PostgreSQL: the same rows and rules as
// ../sqlite/event-views.ts. A search's SQL is built from the filters given; the per-minute counts go by the
// inbox's counts per minute (every replica's) and a processing index.
import {
  EVENT_RECORD_COLUMNS,
  EVENTS_FROM as FROM,
  type EventRowColumns,
  type EventViews,
  type HistoryRowColumns,
  type MinuteCounts,
  perMinuteSql,
  searchSql,
  toEventRecord,
  toEventRow,
} from '../event-views.ts';
import type { Pool } from './pool.ts';
import { createClearSealer, type Sealer } from '../../sealing/sealer.ts';
import { openInboxBody } from '../inbox-bodies.ts';

export function createPostgresEventViews(pool: Pool, sealer: Sealer = createClearSealer()): EventViews {
  return {
    async search(q) {
      let n = 0;
      const { sql, params } = searchSql(q, () => `$${++n}`);
      const { rows } = await pool.query<EventRowColumns>(`${sql} LIMIT $${++n}`, [...params, q.limit]);
      return rows.map(toEventRow);
    },
    async get(eventId) {
      const { rows } = await pool.query<EventRowColumns & { headers: string; body_stored: boolean }>(
        `SELECT ${EVENT_RECORD_COLUMNS} ${FROM} WHERE e.event_id = $1`,
        [eventId],
      );
      const r = rows[0];
      if (!r) return undefined;
      const history = await pool.query<HistoryRowColumns>('SELECT at, state, attempt, reason, emr_refs FROM event_history WHERE inbox_id = $1 ORDER BY id', [
        r.inbox_id,
      ]);
      return toEventRecord(r, history.rows);
    },
    async body(eventId) {
      const { rows } = await pool.query<{ body: Buffer | null }>('SELECT body FROM inbox_events WHERE event_id = $1', [eventId]);
      return rows[0] && openInboxBody(sealer, { eventId, body: rows[0].body });
    },
    async perMinute(since, until) {
      const { rows } = await pool.query<MinuteCounts>(perMinuteSql('$1', '$2'), [since, until]);
      return rows;
    },
    async deadCount() {
      const { rows } = await pool.query<{ n: number }>("SELECT count(*) AS n FROM processing WHERE state = 'dead'");
      return rows[0]!.n;
    },
  };
}
