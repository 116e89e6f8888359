// Group commit: writes that arrive while the event loop is busy, or while a commit is under way, are gathered
// and committed together in one transaction, so concurrent webhook requests share one commit (one fsync,
// one round trip) instead of paying one each.
// - A synchronous commit (better-sqlite3): a batch is whatever queued up since the last flush; the flush runs
//   on setImmediate, after the I/O phase has handed over every request that was ready. No promise is made
//   per batch, only the one per submission.
// - An asynchronous commit (PostgreSQL): one commit is in flight at a time; what is submitted meanwhile
//   queues and forms the next batch, committed as soon as the one in flight has settled.
// - A submission may be held (`holdMs`): it waits up to that long for company, and goes at once with the next
//   batch anything else starts. A write nobody waits on at once (an EMR port's note that a message was
//   acknowledged) then rides in the commit of one that is (the EMR's next notification) instead of paying
//   an fsync of its own.
// Per submission: one promise and its entry in the queue; a batch that fits is the queue itself (no copies).

export interface GroupCommitter<T, R> {
  /** Queues `item` for the next batch; resolves once it is committed. `holdMs`: how long it may wait for company (0: this turn). */
  submit(item: T, holdMs?: number): Promise<R>;
  /** Commits whatever is queued now (a synchronous commit is done when this returns; an async one started). */
  flush(): void;
  /** Resolves once everything submitted so far has been committed (or has failed). */
  drain(): Promise<void>;
  pending(): number;
}

interface Waiting<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
}

const isThenable = <X>(value: X | PromiseLike<X>): value is PromiseLike<X> => typeof (value as { then?: unknown } | undefined)?.then === 'function';

/**
 * `commit` runs the whole batch in one transaction and returns (or resolves to) one result per item, in
 * order; when it throws (or rejects), every item of that batch is rejected with the error, and no other.
 */
export function createGroupCommitter<T, R>(commit: (batch: T[]) => R[] | PromiseLike<R[]>, maxBatch = 512): GroupCommitter<T, R> {
  let queue: Waiting<T, R>[] = [];
  let scheduled = false;
  /** The timer of held submissions, and when it fires (performance.now()). */
  let held: { timer: NodeJS.Timeout; at: number } | undefined;
  /** The asynchronous commit under way, if any; settled, it starts the next batch. */
  let inFlight: Promise<void> | undefined;

  function resolveAll(batch: Waiting<T, R>[], results: R[]): void {
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i]!);
  }

  function rejectAll(batch: Waiting<T, R>[], err: unknown): void {
    for (const w of batch) w.reject(err);
  }

  /** Commits one batch; returns the commit's promise when it is asynchronous. */
  function commitBatch(batch: Waiting<T, R>[]): Promise<void> | undefined {
    const items = new Array<T>(batch.length);
    for (let i = 0; i < batch.length; i++) items[i] = batch[i]!.item;
    let results: R[] | PromiseLike<R[]>;
    try {
      results = commit(items);
    } catch (err) {
      rejectAll(batch, err);
      return undefined;
    }
    if (!isThenable(results)) {
      resolveAll(batch, results);
      return undefined;
    }
    return Promise.resolve(results).then(
      (r) => resolveAll(batch, r),
      (err: unknown) => rejectAll(batch, err),
    );
  }

  function nextBatch(): Waiting<T, R>[] {
    if (queue.length <= maxBatch) {
      const batch = queue;
      queue = [];
      return batch;
    }
    const batch = queue.slice(0, maxBatch);
    queue = queue.slice(maxBatch);
    return batch;
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  }

  /** A flush within `ms`, unless one comes sooner. */
  function scheduleWithin(ms: number): void {
    if (scheduled) return;
    const at = performance.now() + ms;
    if (held && held.at <= at) return;
    if (held) clearTimeout(held.timer);
    held = { timer: setTimeout(flush, ms), at };
  }

  function flush(): void {
    scheduled = false;
    if (held) {
      clearTimeout(held.timer);
      held = undefined;
    }
    while (queue.length > 0 && !inFlight) {
      const running = commitBatch(nextBatch());
      if (running)
        inFlight = running.then(() => {
          inFlight = undefined;
          if (queue.length > 0) schedule();
        });
    }
  }

  return {
    submit(item, holdMs = 0) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        // While a commit is in flight, its end schedules the next batch.
        if (inFlight) return;
        if (holdMs > 0) scheduleWithin(holdMs);
        else schedule();
      });
    },
    flush,
    async drain() {
      flush();
      while (inFlight) {
        await inFlight;
        flush();
      }
    },
    pending: () => queue.length,
  };
}
