// The durable inbox: a verified webhook is written here, and only once the transaction holding it has
// committed (WAL + synchronous=FULL: on disk) does the receiver answer 2xx. One row per eventId; a
// duplicate is acknowledged and not stored again. The processor reads the rows; the inbox never updates them.
import type { Clock } from '../clock.ts';
import type { Db } from '../database/open.ts';
import { UnavailableError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { createGroupCommitter } from './group-commit.ts';

export interface IncomingEvent {
  eventId: string;
  eventType: string;
  /** The X-Service-* headers as received. */
  headers: Record<string, string>;
  /** The raw body bytes, exactly as signed. */
  body: Buffer;
}

export interface StoreResult {
  duplicate: boolean;
}

export interface Inbox {
  /** Resolves once the event is committed to disk; rejects with UnavailableError when it cannot be. */
  store(event: IncomingEvent): Promise<StoreResult>;
  /** Commits anything queued (used on shutdown). */
  flush(): void;
  /** Whether a write can be made now (readiness). */
  isWritable(): boolean;
}

export function createInbox(deps: { db: Db; clock: Clock; logger: Logger }): Inbox {
  const { db, clock, logger } = deps;
  const insert = db.prepare(
    `INSERT INTO inbox_events (event_id, event_type, headers, body, received_at)
     VALUES (?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING`,
  );
  const writeBatch = db.transaction((batch: IncomingEvent[]) => {
    const receivedAt = clock.now();
    return batch.map((e) => {
      const info = insert.run(e.eventId, e.eventType, JSON.stringify(e.headers), e.body, receivedAt);
      return { duplicate: info.changes === 0 };
    });
  });

  const committer = createGroupCommitter<IncomingEvent, StoreResult>((batch) => {
    try {
      return writeBatch.immediate(batch);
    } catch (err) {
      // Disk full, read-only file, a lock held past busy_timeout: whatever it is, the event is not on
      // disk, so the answer must not be 2xx. 503 makes the service retry on its ladder.
      logger.error({ code: (err as { code?: string }).code, batch: batch.length }, 'inbox write failed');
      throw new UnavailableError('the inbox cannot take the event now', err, 'inbox_unavailable');
    }
  });

  return {
    store: (event) => committer.submit(event),
    flush: () => committer.flush(),
    isWritable() {
      try {
        // A write lock taken and released: fails on a read-only file, a full disk or a held lock.
        db.prepare('BEGIN IMMEDIATE').run();
        db.prepare('ROLLBACK').run();
        return !db.readonly;
      } catch {
        return false;
      }
    },
  };
}
