// The durable inbox: a verified webhook is written here, and only once the transaction holding it has
// committed (SQLite: WAL + synchronous=FULL, on disk; PostgreSQL: committed by the server) does the receiver
// answer 2xx. One row per eventId; a duplicate is acknowledged and not stored again. The processor reads the
// rows; the inbox never updates them. The store (src/storage/inbox.ts) is either engine's.
//
// Writes are group-committed: requests that arrive while a commit (and its fsync, or its round trip) is under
// way queue up and share the next transaction. Measured against a writer thread (bench/receiver.ts), this
// costs less CPU per request on a small machine: posting batches between threads cost more than the
// event loop loses waiting for the disk.
//
// Readiness follows the outcome of those commits (./write-health.ts): a failed one makes the store not
// writable, with the engine's code, until a commit (an event's or the probe's) succeeds again.
import type { Clock } from '../clock.ts';
import { UnavailableError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { createClearSealer, type Sealer } from '../sealing/sealer.ts';
import { isPromise, type InboxRow, type InboxStore } from '../storage/inbox.ts';
import { INBOX_BODY, sealContext } from '../storage/sealed-contexts.ts';
import { createGroupCommitter } from '../work/group-commit.ts';
import { createWriteHealth, type WriteFailure, type WriteHealth } from './write-health.ts';

export type { WriteFailure } from './write-health.ts';

export interface IncomingEvent {
  eventId: string;
  eventType: string;
  /** The X-Service-* headers as received. */
  headers: Record<string, string>;
  /** The raw body bytes, exactly as signed. */
  body: Buffer;
  /** The receipt's trace context (src/tracing/spans.ts), stored with the row for the processing to join. */
  traceContext?: string | undefined;
}

export interface StoreResult {
  duplicate: boolean;
}

export interface Inbox {
  /** Resolves once the event is committed; rejects with UnavailableError when it cannot be. */
  store(event: IncomingEvent): Promise<StoreResult>;
  /** Commits whatever is queued, and waits for it (on shutdown). */
  close(): Promise<void>;
  /**
   * Whether a write can be made now (readiness): not from a failed commit until one succeeds again. A store
   * that has to ask its server (PostgreSQL) answers from what it knows and asks again meanwhile, so a
   * read-only switch shows at the next question.
   */
  isWritable(): boolean;
  /** Why not: the engine's code and since when; undefined while writes commit. */
  writeFailure(): WriteFailure | undefined;
}

export interface InboxDeps {
  store: InboxStore;
  clock: Clock;
  logger: Logger;
  /** How often a store that cannot take writes is probed with a real write (default 2 s). */
  probeIntervalMs?: number;
  /** Seals each body before it is written (patient data at rest); without one, or with sealing off, bodies are written in clear. */
  sealer?: Sealer;
}

/** The two answers, shared by every request (never mutated). */
const STORED: StoreResult = Object.freeze({ duplicate: false });
const DUPLICATE: StoreResult = Object.freeze({ duplicate: true });

const unavailable = (cause: unknown) => new UnavailableError('the inbox cannot take the event now', cause, 'inbox_unavailable');

export function createInbox(deps: InboxDeps): Inbox {
  const { store, clock, logger, sealer = createClearSealer() } = deps;
  const health = createWriteHealth({
    clock,
    logger,
    probe: (nowMs) => store.probe(nowMs),
    ...(deps.probeIntervalMs ? { probeIntervalMs: deps.probeIntervalMs } : {}),
  });
  const write = groupWriter(store, logger, health);
  return {
    // One row object, no spread and no further promise: the commit resolves with the answer itself. The body is
    // sealed for its row here, before it joins a batch (in clear, the clear sealer hands it back as it is).
    store: (e) =>
      write.submit({
        eventId: e.eventId,
        eventType: e.eventType,
        headers: e.headers,
        body: sealer.sealBytes(e.body, sealContext(INBOX_BODY, e.eventId)),
        receivedAt: clock.now(),
        traceContext: e.traceContext,
      }),
    async close() {
      await write.close();
      health.stop();
    },
    isWritable: () => !health.failure() && canWrite(store, health),
    writeFailure: () => health.failure(),
  };
}

/**
 * While commits succeed, the store's own check finds what no commit has met yet (SQLite: a read-only file
 * or a lock held elsewhere past busy_timeout; PostgreSQL: a read-only server). Either counts as a failed
 * write (and so is probed).
 */
function canWrite(store: InboxStore, health: WriteHealth): boolean {
  try {
    const checked = store.checkWritable();
    if (isPromise(checked)) checked.catch((err: unknown) => health.failed(err));
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

function groupWriter(store: InboxStore, logger: Logger, health: WriteHealth): Writer {
  // Disk full, read-only, a lock held past busy_timeout, the server gone: the events are not committed, so
  // the answer must not be 2xx. 503 makes the service retry on its ladder; readiness turns 503 too.
  function failed(err: unknown, batch: number): never {
    logger.error({ code: (err as { code?: string }).code, batch }, 'inbox write failed');
    health.failed(err);
    throw unavailable(err);
  }
  function answers(duplicates: boolean[]): StoreResult[] {
    health.committed();
    const results = new Array<StoreResult>(duplicates.length);
    for (let i = 0; i < duplicates.length; i++) results[i] = duplicates[i] ? DUPLICATE : STORED;
    return results;
  }
  const committer = createGroupCommitter<InboxRow, StoreResult>((rows) => {
    let duplicates: boolean[] | Promise<boolean[]>;
    try {
      duplicates = store.insertBatch(rows);
    } catch (err) {
      return failed(err, rows.length);
    }
    if (!isPromise(duplicates)) return answers(duplicates);
    return duplicates.then(answers, (err: unknown) => failed(err, rows.length));
  });
  return { submit: (row) => committer.submit(row), close: () => committer.drain() };
}
