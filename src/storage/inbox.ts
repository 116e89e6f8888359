// The inbox's store, engine-neutral: the receiver's one write (a batch of verified webhooks in one
// transaction, one row per eventId), the probe that tells when a store that failed takes writes again, and
// a check that a write could be made now. src/inbox/ group-commits and keeps readiness on top of it.
//
// SQLite (./sqlite/inbox.ts) answers synchronously: better-sqlite3 commits before it returns, and the group
// commit then needs no promise of its own per batch. PostgreSQL (./postgres/inbox.ts) answers with promises.

export interface InboxRow {
  eventId: string;
  eventType: string;
  /** The X-Service-* headers as received. */
  headers: Record<string, string>;
  /** The raw body bytes, exactly as signed. */
  body: Uint8Array;
  /** Epoch ms, from the injected clock. */
  receivedAt: number;
  /** The W3C traceparent of the receipt's span (src/tracing/), for the processing to join; undefined while tracing is off. */
  traceContext?: string | undefined;
}

export type MaybePromise<T> = T | Promise<T>;

export interface InboxStore {
  /**
   * Stores the rows in one transaction; once it returns (or resolves) they are committed. Returns, per row in
   * order, whether it was a duplicate (its eventId stored already, or earlier in the same batch). Throws (or
   * rejects) with the engine's error when the store cannot take the write: nothing of the batch is stored.
   */
  insertBatch(rows: InboxRow[]): MaybePromise<boolean[]>;
  /** Commits one small write of about an event's size; throws (rejects) the engine's error when it cannot. */
  probe(nowMs: number): MaybePromise<void>;
  /**
   * Finds what no commit has met yet (a read-only database, a lock held elsewhere): throws (rejects) the
   * failure, with the engine's code. SQLite answers at once; PostgreSQL asks the server.
   */
  checkWritable(): MaybePromise<void>;
}

/** True when `value` is a promise (an async store's answer) rather than the answer itself. */
export const isPromise = <T>(value: MaybePromise<T>): value is Promise<T> => typeof (value as { then?: unknown } | undefined)?.then === 'function';
