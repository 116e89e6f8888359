// What the console and the admin API read of events in SQLite. A search's statement is built from the filters
// given (so the planner sees only those, and the state is a literal its partial indexes match) and kept per
// shape (a few hundred at most); the per-minute counts read the inbox's counts per minute and a processing index.
import type { Statement } from 'better-sqlite3';
import { createClearSealer, type Sealer } from '../../sealing/sealer.ts';
import type { Db } from '../../sqlite/open.ts';
import { openInboxBody } from '../inbox-bodies.ts';
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

export function createSqliteEventViews(db: Db, sealer: Sealer = createClearSealer()): EventViews {
  const searches = new Map<string, Statement>();
  const one = db.prepare(`SELECT ${EVENT_RECORD_COLUMNS} ${FROM} WHERE e.event_id = ?`);
  const history = db.prepare('SELECT at, state, attempt, reason, emr_refs FROM event_history WHERE inbox_id = ? ORDER BY id');
  const body = db.prepare('SELECT body FROM inbox_events WHERE event_id = ?');
  const perMinute = db.prepare(perMinuteSql('@since', '@until'));
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
      const r = one.get(eventId) as (EventRowColumns & { headers: string; body_stored: number }) | undefined;
      return r && toEventRecord(r, history.all(r.inbox_id) as HistoryRowColumns[]);
    },
    async body(eventId) {
      const r = body.get(eventId) as { body: Buffer | null } | undefined;
      return r && openInboxBody(sealer, { eventId, body: r.body });
    },
    perMinute: async (since, until) => perMinute.all({ since, until }) as MinuteCounts[],
    deadCount: async () => dead.get() as number,
  };
}
