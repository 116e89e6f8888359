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
  const tx = db.transaction((rows: InboxRow[]) => {
    const duplicate = new Array<boolean>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      duplicate[i] = insert.run(r.eventId, r.eventType, JSON.stringify(r.headers), asBuffer(r.body), r.receivedAt).changes === 0;
    }
    return duplicate;
  });
  return (rows) => tx.immediate(rows);
}

/** better-sqlite3 binds a Buffer as a BLOB: the receiver's bodies already are one (no copy, no new view). */
const asBuffer = (body: Uint8Array): Buffer => (Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
