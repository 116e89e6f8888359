// The inbox in SQLite: a batch of events in one immediate transaction (one fsync, WAL + synchronous=FULL),
// duplicates ignored by eventId, with the batch's count per minute of received time added to inbox_minutes in the
// same transaction (what the console calls received: db/sqlite/020_inbox_minutes.sql); the write probe in the
// one-row table store_probe; and a write lock taken and released to find a read-only file or a lock held past
// busy_timeout. Everything answers synchronously.
import type { Db } from '../../sqlite/open.ts';
import type { Coordination } from '../coordination.ts';
import type { InboxRow, InboxStore } from '../inbox.ts';
import { minuteOf, prepareReceivedCount } from './received-count.ts';

/** About one webhook: a page of padding needs fresh room, as an event's row does. */
const PROBE_BYTES = 4096;

export interface SqliteInboxOptions {
  /** Told 'events' after a commit that stored a new event (the processor's wake-up). */
  coordination?: Pick<Coordination, 'notify'>;
}

export function createSqliteInboxStore(db: Db, opts: SqliteInboxOptions = {}): InboxStore {
  // Prepared at the first write: a store that cannot be written may not even prepare (a read-only old
  // file), and that failure must count as a failed write, not stop start-up.
  let writeBatch: ((rows: InboxRow[]) => boolean[]) | undefined;
  let probe: ((nowMs: number) => void) | undefined;
  return {
    insertBatch(rows) {
      writeBatch ??= prepareBatchWriter(db);
      const duplicates = writeBatch(rows);
      if (opts.coordination && duplicates.includes(false)) opts.coordination.notify('events');
      return duplicates;
    },
    probe(nowMs) {
      probe ??= prepareProbe(db);
      probe(nowMs);
    },
    checkWritable() {
      db.prepare('BEGIN IMMEDIATE').run();
      db.prepare('ROLLBACK').run();
      if (db.readonly) throw Object.assign(new Error('opened read-only'), { code: 'SQLITE_READONLY' });
    },
  };
}

/** Returns, per row, whether it was a duplicate. */
function prepareBatchWriter(db: Db): (rows: InboxRow[]) => boolean[] {
  const insert = db.prepare(
    `INSERT INTO inbox_events (event_id, event_type, headers, body, received_at, trace_context)
     VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING`,
  );
  const count = prepareReceivedCount(db);
  const tx = db.transaction((rows: InboxRow[]) => {
    const duplicate = new Array<boolean>(rows.length);
    // A batch's rows are nearly always of one minute: one upsert per batch, a second only across a minute's end.
    let minute = -1;
    let stored = 0;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      duplicate[i] = insert.run(r.eventId, r.eventType, JSON.stringify(r.headers), asBuffer(r.body), r.receivedAt, r.traceContext ?? null).changes === 0;
      if (duplicate[i]) continue;
      const m = minuteOf(r.receivedAt);
      if (m !== minute) {
        if (stored > 0) count(minute, stored);
        minute = m;
        stored = 0;
      }
      stored++;
    }
    if (stored > 0) count(minute, stored);
    return duplicate;
  });
  return (rows) => tx.immediate(rows);
}

/**
 * The probe of a store that could not take writes: one committed write of about an event's size. A rolled-back
 * write would not do: a full disk fails the commit (or the page it needs), and a write that only reuses its own
 * pages would not need the room an event needs. So the new row is written before the old one is deleted, and
 * the transaction commits (fsynced, as the inbox's do).
 */
function prepareProbe(db: Db): (nowMs: number) => void {
  const insert = db.prepare('INSERT INTO store_probe (probed_at, pad) VALUES (?, zeroblob(?))');
  const dropOthers = db.prepare('DELETE FROM store_probe WHERE id <> ?');
  const write = db.transaction((nowMs: number) => {
    const { lastInsertRowid } = insert.run(nowMs, PROBE_BYTES);
    dropOthers.run(lastInsertRowid);
  });
  return (nowMs) => write.immediate(nowMs);
}

/** better-sqlite3 binds a Buffer as a BLOB: the receiver's bodies already are one (no copy, no new view). */
const asBuffer = (body: Uint8Array): Buffer => (Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
