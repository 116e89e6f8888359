// The durable inbox: a verified webhook is written here, and only once the transaction holding it has
// committed (WAL + synchronous=FULL: on disk) does the receiver answer 2xx. One row per eventId; a
// duplicate is acknowledged and not stored again. The processor reads the rows; the inbox never updates them.
//
// Writes are group-committed: requests that arrive while a commit (and its fsync) is under way queue up
// and share the next transaction and fsync. Measured against a writer thread (bench/receiver.ts), this
// costs less CPU per request on a small machine: posting batches between threads cost more than the
// event loop loses waiting for the disk.
//
// Readiness follows the outcome of those commits (./write-health.ts): a failed one makes the store not
// writable, with its SQLite code, until a commit (an event's or the probe's) succeeds again.
import type { Clock } from '../clock.ts';
import type { Db } from '../database/open.ts';
import { UnavailableError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { createGroupCommitter } from './group-commit.ts';
import { createBatchWriter, type InboxRow } from './insert-batch.ts';
import { createStoreProbe } from './store-probe.ts';
import { createWriteHealth, type WriteFailure, type WriteHealth } from './write-health.ts';

export type { WriteFailure } from './write-health.ts';

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
  /** Whether a write can be made now (readiness): not from a failed commit until one succeeds again. */
  isWritable(): boolean;
  /** Why not: the SQLite code and since when; undefined while writes commit. */
  writeFailure(): WriteFailure | undefined;
}

export interface InboxDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** How often a store that cannot take writes is probed with a real write (default 2 s). */
  probeIntervalMs?: number;
}

/** The two answers, shared by every request (never mutated). */
const STORED: StoreResult = Object.freeze({ duplicate: false });
const DUPLICATE: StoreResult = Object.freeze({ duplicate: true });

const unavailable = (cause: unknown) => new UnavailableError('the inbox cannot take the event now', cause, 'inbox_unavailable');

export function createInbox(deps: InboxDeps): Inbox {
  const { db, clock, logger } = deps;
  const health = createWriteHealth({ clock, logger, probe: createStoreProbe(db), ...(deps.probeIntervalMs ? { probeIntervalMs: deps.probeIntervalMs } : {}) });
  const write = groupWriter(db, logger, health);
  return {
    // One row object, no spread and no further promise: the commit resolves with the answer itself.
    store: (e) => write.submit({ eventId: e.eventId, eventType: e.eventType, headers: e.headers, body: e.body, receivedAt: clock.now() }),
    async close() {
      await write.close();
      health.stop();
    },
    isWritable: () => !health.failure() && canTakeWriteLock(db, health),
    writeFailure: () => health.failure(),
  };
}

/**
 * While commits succeed, a write lock taken and released finds what no commit has met yet: a read-only
 * file or a lock held elsewhere past busy_timeout. Either counts as a failed write (and so is probed).
 */
function canTakeWriteLock(db: Db, health: WriteHealth): boolean {
  try {
    db.prepare('BEGIN IMMEDIATE').run();
    db.prepare('ROLLBACK').run();
    if (db.readonly) throw Object.assign(new Error('opened read-only'), { code: 'SQLITE_READONLY' });
    return true;
  } catch (err) {
    health.failed(err);
    return false;
  }
}

interface Writer {
  submit(row: InboxRow): Promise<StoreResult>;
  close(): Promise<void>;
}

function groupWriter(db: Db, logger: Logger, health: WriteHealth): Writer {
  let batchWriter: ((rows: InboxRow[]) => boolean[]) | undefined;
  const committer = createGroupCommitter<InboxRow, StoreResult>((rows) => {
    let duplicates: boolean[];
    try {
      batchWriter ??= createBatchWriter(db);
      duplicates = batchWriter(rows);
    } catch (err) {
      // Disk full, read-only file, a lock held past busy_timeout: the event is not on disk, so the
      // answer must not be 2xx. 503 makes the service retry on its ladder; readiness turns 503 too.
      logger.error({ code: (err as { code?: string }).code, batch: rows.length }, 'inbox write failed');
      health.failed(err);
      throw unavailable(err);
    }
    health.committed();
    const results = new Array<StoreResult>(duplicates.length);
    for (let i = 0; i < duplicates.length; i++) results[i] = duplicates[i] ? DUPLICATE : STORED;
    return results;
  });
  return { submit: (row) => committer.submit(row), close: async () => committer.flush() };
}
