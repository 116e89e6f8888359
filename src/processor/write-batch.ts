// The outcomes of a claimed batch of events, committed together: each event's writes (its applied mark with
// its versions and mapping claims, a stale discard, a retry, a dead letter) are collected while the batch
// runs and written in one transaction at its end, so a batch costs one commit (one fsync) instead of one
// per event. The same transaction claims the next batch. Until then an outcome is only in memory: a crash
// repeats the batch's events, whose EMR steps are idempotent, and an event's lease holds it meanwhile.
import type { Db } from '../database/open.ts';

export interface WriteBatch {
  /**
   * Adds one event's writes to the batch; `committed` runs once they are on disk (counters, logs, what
   * memory may now forget). A write must not throw: if one does, the whole batch is rolled back.
   */
  add(write: () => void, committed?: () => void): void;
  /** Events whose writes were added. */
  size(): number;
}

export interface BatchCommit {
  /** A batch to collect writes into. */
  start(): WriteBatch;
  /** Writes the batch, then runs `next` (the next claim), in one immediate transaction; then its `committed` hooks. */
  commit<T>(batch: WriteBatch, next: () => T): T;
}

interface Collected extends WriteBatch {
  writes: (() => void)[];
  hooks: (() => void)[];
}

export function createBatchCommit(db: Db): BatchCommit {
  const write = db.transaction((batch: Collected, next: () => unknown) => {
    for (const w of batch.writes) w();
    return next();
  });
  return {
    start() {
      const writes: (() => void)[] = [];
      const hooks: (() => void)[] = [];
      return {
        writes,
        hooks,
        add(w, committed) {
          writes.push(w);
          if (committed) hooks.push(committed);
        },
        size: () => writes.length,
      } satisfies Collected;
    },
    commit(batch, next) {
      const collected = batch as Collected;
      const result = write.immediate(collected, next) as ReturnType<typeof next>;
      for (const hook of collected.hooks) hook();
      return result;
    },
  };
}
