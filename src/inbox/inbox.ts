// The durable inbox: a verified webhook is written here, and only once the transaction holding it has
// committed (WAL + synchronous=FULL: on disk) does the receiver answer 2xx. One row per eventId; a
// duplicate is acknowledged and not stored again. The processor reads the rows; the inbox never updates them.
//
// Writes are group-committed: concurrent requests share one transaction and one fsync. For a database
// file the commits run on a writer thread (writer-thread.ts), so the event loop keeps serving requests
// while the disk syncs; an in-memory database (tests) is written inline.
import { Worker } from 'node:worker_threads';
import type { Clock } from '../clock.ts';
import type { Db } from '../database/open.ts';
import { UnavailableError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { createGroupCommitter } from './group-commit.ts';
import { createBatchWriter, type InboxRow } from './insert-batch.ts';
import type { WriterBatch, WriterReply } from './writer-thread.ts';

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
  /** Waits for writes in flight, then stops the writer. */
  close(): Promise<void>;
  /** Whether a write can be made now (readiness). */
  isWritable(): boolean;
}

export interface InboxDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** 'thread' (default for files) commits on a writer thread; 'inline' on the calling thread. */
  writer?: 'thread' | 'inline';
}

const unavailable = (cause: unknown) =>
  new UnavailableError('the inbox cannot take the event now', cause, 'inbox_unavailable');

export function createInbox(deps: InboxDeps): Inbox {
  const { db, clock, logger } = deps;
  const threaded = (deps.writer ?? 'thread') === 'thread' && !db.memory && !db.readonly;
  const write = threaded ? threadWriter(db.name, logger) : inlineWriter(db, logger);
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

function inlineWriter(db: Db, logger: Logger): Writer {
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

function threadWriter(path: string, logger: Logger): Writer {
  const worker = new Worker(new URL('./writer-thread-entry.js', import.meta.url), {
    workerData: { path, busyTimeoutMs: 2000 },
  });
  type Waiter = { resolve: (d: boolean) => void; reject: (e: unknown) => void };
  const waiting = new Map<number, Waiter[]>();
  let queue: { row: InboxRow; waiter: Waiter }[] = [];
  let scheduled = false;
  let nextId = 0;
  let exited = false;
  let closed: Promise<void> | undefined;

  const failAll = (cause: unknown) => {
    for (const ws of waiting.values()) for (const w of ws) w.reject(unavailable(cause));
    waiting.clear();
  };
  // One message per event-loop turn, as the inline writer makes one transaction per turn.
  const send = () => {
    scheduled = false;
    const items = queue;
    queue = [];
    const id = nextId++;
    waiting.set(id, items.map((i) => i.waiter));
    worker.postMessage({ id, rows: items.map((i) => i.row) } satisfies WriterBatch);
  };
  worker.on('message', (msg: WriterReply) => {
    const ws = waiting.get(msg.id);
    if (!ws) return;
    waiting.delete(msg.id);
    if ('error' in msg) {
      logger.error({ code: msg.error, batch: ws.length }, 'inbox write failed');
      for (const w of ws) w.reject(unavailable(new Error(msg.error)));
    } else ws.forEach((w, i) => w.resolve(msg.duplicates[i]!));
  });
  worker.on('error', (err) => {
    logger.error({ code: (err as { code?: string }).code }, 'inbox writer thread failed');
    failAll(err);
  });
  worker.on('exit', () => {
    exited = true;
    failAll(new Error('inbox writer thread exited'));
  });
  return {
    submit(row) {
      if (closed || exited) return Promise.reject(unavailable(new Error('inbox closed')));
      return new Promise((resolve, reject) => {
        queue.push({ row, waiter: { resolve, reject } });
        if (!scheduled) {
          scheduled = true;
          setImmediate(send);
        }
      });
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        if (exited) return resolve();
        worker.once('exit', () => resolve());
        if (queue.length) send();
        // Messages are handled in order, so 'close' runs after every batch already sent.
        worker.postMessage('close');
      });
      return closed;
    },
  };
}
