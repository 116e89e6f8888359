// Planned EMR downtime set by operators, in SQLite (../emr-downtime.ts): two rows at most, by kind.
import type { Db } from '../../sqlite/open.ts';
import type { EmrDowntimeRows, EmrDowntimeStore } from '../emr-downtime.ts';

interface Row {
  kind: 'operator' | 'ended';
  until_at: number;
  reason: string | null;
  set_at: number;
}

export function createSqliteEmrDowntimeStore(db: Db): EmrDowntimeStore {
  const read = db.prepare('SELECT kind, until_at, reason, set_at FROM emr_downtime');
  const put = db.prepare(
    'INSERT INTO emr_downtime (kind, until_at, reason, set_at) VALUES (?, ?, ?, ?) ON CONFLICT (kind) DO UPDATE SET until_at = excluded.until_at, reason = excluded.reason, set_at = excluded.set_at',
  );
  const forget = db.prepare('DELETE FROM emr_downtime WHERE until_at <= ?');
  const remove = db.prepare('DELETE FROM emr_downtime WHERE kind = ?');
  const start = db.transaction((until: number, reason: string, setAt: number, now: number) => {
    forget.run(now);
    put.run('operator', until, reason, setAt);
  });
  const end = db.transaction((ended: { until: number; setAt: number } | undefined, now: number) => {
    forget.run(now);
    remove.run('operator');
    if (ended) put.run('ended', ended.until, null, ended.setAt);
  });
  return {
    async read() {
      const rows: EmrDowntimeRows = {};
      for (const r of read.all() as Row[]) {
        if (r.kind === 'operator') rows.operator = { until: r.until_at, reason: r.reason ?? '', setAt: r.set_at };
        else rows.ended = { until: r.until_at, setAt: r.set_at };
      }
      return rows;
    },
    start: async (d, now) => void start.immediate(d.until, d.reason, d.setAt, now),
    end: async (ended, now) => void end.immediate(ended, now),
  };
}
