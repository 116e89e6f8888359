// What the console counts as received, in SQLite: inbox rows by the minute of their received time, in
// inbox_minutes (db/sqlite/020_inbox_minutes.sql). Whatever writes inbox_events (the inbox's group commit, a
// quarantined event applied) adds the rows it stored, not the duplicates, in the same transaction: the count is
// then exact, and costs one upsert per transaction rather than an index entry per row.
import type { Db } from '../../sqlite/open.ts';

/** The start of the minute of `ms` (epoch ms): the key of inbox_minutes. */
export const minuteOf = (ms: number): number => Math.floor(ms / 60_000) * 60_000;

/** Adds `n` inbox rows received in the minute of `receivedAt` (epoch ms). */
export function prepareReceivedCount(db: Db): (receivedAt: number, n: number) => void {
  const upsert = db.prepare(
    'INSERT INTO inbox_minutes (minute, received) VALUES (?, ?) ON CONFLICT (minute) DO UPDATE SET received = received + excluded.received',
  );
  return (receivedAt, n) => {
    upsert.run(minuteOf(receivedAt), n);
  };
}
