// Planned EMR downtime set by operators, in PostgreSQL (../emr-downtime.ts): two rows at most, by kind, read by
// every replica.
import type { EmrDowntimeRows, EmrDowntimeStore } from '../emr-downtime.ts';
import { type Pool, withTransaction } from './pool.ts';

interface Row {
  kind: 'operator' | 'ended';
  until_at: number;
  reason: string | null;
  set_at: number;
}

const PUT =
  'INSERT INTO emr_downtime (kind, until_at, reason, set_at) VALUES ($1, $2, $3, $4) ON CONFLICT (kind) DO UPDATE SET until_at = excluded.until_at, reason = excluded.reason, set_at = excluded.set_at';
const FORGET = 'DELETE FROM emr_downtime WHERE until_at <= $1';

export function createPostgresEmrDowntimeStore(pool: Pool): EmrDowntimeStore {
  return {
    async read() {
      const rows: EmrDowntimeRows = {};
      for (const r of (await pool.query<Row>('SELECT kind, until_at, reason, set_at FROM emr_downtime')).rows) {
        if (r.kind === 'operator') rows.operator = { until: r.until_at, reason: r.reason ?? '', setAt: r.set_at };
        else rows.ended = { until: r.until_at, setAt: r.set_at };
      }
      return rows;
    },
    start: (d, now) =>
      withTransaction(pool, async (client) => {
        await client.query(FORGET, [now]);
        await client.query(PUT, ['operator', d.until, d.reason, d.setAt]);
      }),
    end: (ended, now) =>
      withTransaction(pool, async (client) => {
        await client.query(FORGET, [now]);
        await client.query("DELETE FROM emr_downtime WHERE kind = 'operator'");
        if (ended) await client.query(PUT, ['ended', ended.until, null, ended.setAt]);
      }),
  };
}
