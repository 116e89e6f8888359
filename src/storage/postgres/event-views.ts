// What the console and the admin API read of events in PostgreSQL: the same rows and rules as
// ../sqlite/event-views.ts. A search's SQL is built from the filters given; the per-minute counts go by the
// event_history_state index.
import { EVENT_ROW_COLUMNS, type EventHistoryEntry, type EventRowColumns, type EventViews, type MinuteCounts, searchSql, toEventRow } from '../event-views.ts';
import type { Pool } from './pool.ts';

const FROM = 'FROM inbox_events e LEFT JOIN processing p ON p.inbox_id = e.id';

export function createPostgresEventViews(pool: Pool): EventViews {
  return {
    async search(q) {
      let n = 0;
      const { sql, params } = searchSql(q, () => `$${++n}`);
      const { rows } = await pool.query<EventRowColumns>(`${sql} LIMIT $${++n}`, [...params, q.limit]);
      return rows.map(toEventRow);
    },
    async get(eventId) {
      const { rows } = await pool.query<EventRowColumns & { headers: string; body_stored: boolean; emr_refs: string | null }>(
        `SELECT ${EVENT_ROW_COLUMNS}, e.headers, e.body IS NOT NULL AS body_stored, p.emr_refs ${FROM} WHERE e.event_id = $1`,
        [eventId],
      );
      const r = rows[0];
      if (!r) return undefined;
      const history = await pool.query<EventHistoryEntry>('SELECT at, state, attempt, reason FROM event_history WHERE inbox_id = $1 ORDER BY id', [r.inbox_id]);
      return {
        ...toEventRow(r),
        headers: JSON.parse(r.headers) as Record<string, string>,
        emrRefs: r.emr_refs ? r.emr_refs.split(' ') : [],
        bodyStored: r.body_stored,
        history: history.rows,
      };
    },
    async body(eventId) {
      const { rows } = await pool.query<{ body: Buffer | null }>('SELECT body FROM inbox_events WHERE event_id = $1', [eventId]);
      return rows[0]?.body;
    },
    async perMinute(since, until) {
      const { rows } = await pool.query<MinuteCounts>(
        `SELECT (at / 60000) * 60000 AS minute, count(*) FILTER (WHERE state = 'received') AS received, count(*) FILTER (WHERE state = 'applied') AS applied
         FROM event_history WHERE state IN ('received', 'applied') AND at >= $1 AND at < $2
         GROUP BY minute ORDER BY minute`,
        [since, until],
      );
      return rows;
    },
    async deadCount() {
      const { rows } = await pool.query<{ n: number }>("SELECT count(*) AS n FROM processing WHERE state = 'dead'");
      return rows[0]!.n;
    },
  };
}
