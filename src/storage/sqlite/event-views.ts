// What the console and the admin API read of events in SQLite. A search's statement is built from the filters
// given (so the planner sees only those, and the state is a literal its partial indexes match) and kept per
// shape (a few hundred at most); the per-minute counts read the covering event_history_state index alone.
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../database/open.ts';
import { EVENT_ROW_COLUMNS, type EventHistoryEntry, type EventRowColumns, type EventViews, type MinuteCounts, searchSql, toEventRow } from '../event-views.ts';

const FROM = 'FROM inbox_events e LEFT JOIN processing p ON p.inbox_id = e.id';

export function createSqliteEventViews(db: Db): EventViews {
  const searches = new Map<string, Statement>();
  const one = db.prepare(`SELECT ${EVENT_ROW_COLUMNS}, e.headers, e.body IS NOT NULL AS body_stored, p.emr_refs ${FROM} WHERE e.event_id = ?`);
  const history = db.prepare('SELECT at, state, attempt, reason FROM event_history WHERE inbox_id = ? ORDER BY id');
  const body = db.prepare('SELECT body FROM inbox_events WHERE event_id = ?');
  const perMinute = db.prepare(`
    SELECT (at / 60000) * 60000 AS minute, sum(state = 'received') AS received, sum(state = 'applied') AS applied
    FROM event_history WHERE state IN ('received', 'applied') AND at >= ? AND at < ?
    GROUP BY minute ORDER BY minute`);
  const dead = db.prepare("SELECT count(*) FROM processing WHERE state = 'dead'").pluck();

  function searchStatement(search: string): Statement {
    const sql = `${search} LIMIT ?`;
    let statement = searches.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      searches.set(sql, statement);
    }
    return statement;
  }

  return {
    async search(q) {
      const { sql, params } = searchSql(q, () => '?');
      return (searchStatement(sql).all(...params, q.limit) as EventRowColumns[]).map(toEventRow);
    },
    async get(eventId) {
      const r = one.get(eventId) as (EventRowColumns & { headers: string; body_stored: number; emr_refs: string | null }) | undefined;
      if (!r) return undefined;
      return {
        ...toEventRow(r),
        headers: JSON.parse(r.headers) as Record<string, string>,
        emrRefs: r.emr_refs ? r.emr_refs.split(' ') : [],
        bodyStored: r.body_stored === 1,
        history: history.all(r.inbox_id) as EventHistoryEntry[],
      };
    },
    async body(eventId) {
      const r = body.get(eventId) as { body: Buffer | null } | undefined;
      return r?.body;
    },
    perMinute: async (since, until) => perMinute.all(since, until) as MinuteCounts[],
    deadCount: async () => dead.get() as number,
  };
}
