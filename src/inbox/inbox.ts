// The durable inbox: a verified webhook is written here, and only once the transaction holding it has
// committed (WAL + synchronous=FULL: on disk) does the receiver answer 2xx. One row per eventId; a
// duplicate is acknowledged and not stored again. The processor reads the rows; the inbox never updates them.
//
// Writes are group-committed: requests that arrive while a commit (and its fsync) is under way queue up
// and share the next transaction and fsync. Measured against a writer thread (bench/receiver.ts), this
// costs less CPU per request on a small machine: posting batches between threads cost more than the
// event loop loses waiting for the disk.
import type { Clock } from '../clock.ts';
import type { Db } from '../database/open.ts';
import { UnavailableError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { createGroupCommitter } from './group-commit.ts';
import { createBatchWriter, type InboxRow } from './insert-batch.ts';

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
  /** Commits whatever is queued (on shutdown). */
  close(): Promise<void>;
  /** Whether a write can be made now (readiness). */
  isWritable(): boolean;
}

export interface InboxDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
}

const unavailable = (cause: unknown) =>
  new UnavailableError('the inbox cannot take the event now', cause, 'inbox_unavailable');

export function createInbox(deps: InboxDeps): Inbox {
  const { db, clock, logger } = deps;
  const write = groupWriter(db, logger);
  return {
    store: (e) => write.submit({ ...e, receivedAt: clock.now() }).then((duplicate) => ({ duplicate })),
    close: () => write.close(),
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

interface Writer {
  submit(row: InboxRow): Promise<boolean>;
  close(): Promise<void>;
}

function groupWriter(db: Db, logger: Logger): Writer {
  let batchWriter: ((rows: InboxRow[]) => boolean[]) | undefined;
  const committer = createGroupCommitter<InboxRow, boolean>((rows) => {
    try {
      batchWriter ??= createBatchWriter(db);
      return batchWriter(rows);
    } catch (err) {
      // Disk full, read-only file, a lock held past busy_timeout: the event is not on disk, so the
      // answer must not be 2xx. 503 makes the service retry on its ladder.
      logger.error({ code: (err as { code?: string }).code, batch: rows.length }, 'inbox write failed');
      throw unavailable(err);
    }
  });
  return { submit: (row) => committer.submit(row), close: async () => committer.flush() };
}
