// The inbox's one write: a batch of events in one transaction (one fsync), duplicates ignored by eventId.
import type Database from 'better-sqlite3';

export interface InboxRow {
  eventId: string;
  eventType: string;
  headers: Record<string, string>;
  body: Uint8Array;
  receivedAt: number;
}

/** Returns, per row, whether it was a duplicate. */
export function createBatchWriter(db: Database.Database): (rows: InboxRow[]) => boolean[] {
  const insert = db.prepare(
    `INSERT INTO inbox_events (event_id, event_type, headers, body, received_at)
     VALUES (?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING`,
  );
  const tx = db.transaction((rows: InboxRow[]) =>
    rows.map(
      (r) =>
        insert.run(r.eventId, r.eventType, JSON.stringify(r.headers), Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength), r.receivedAt)
          .changes === 0,
    ),
  );
  return (rows) => tx.immediate(rows);
}
