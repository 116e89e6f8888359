// Group commit: writes that arrive while the event loop is busy are gathered and committed together in
// one transaction, so concurrent webhook requests share one fsync instead of paying one each.
// better-sqlite3 is synchronous, so a batch is whatever queued up since the last flush; the flush runs
// on setImmediate, after the I/O phase has handed over every request that was ready.

export interface GroupCommitter<T, R> {
  submit(item: T): Promise<R>;
  /** Commits whatever is queued now. */
  flush(): void;
  pending(): number;
}

/** `commit` runs the whole batch in one transaction and returns one result per item, in order. */
export function createGroupCommitter<T, R>(commit: (batch: T[]) => R[], maxBatch = 512): GroupCommitter<T, R> {
  let queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  let scheduled = false;

  function flush(): void {
    scheduled = false;
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      let results: R[];
      try {
        results = commit(batch.map((b) => b.item));
      } catch (err) {
        for (const b of batch) b.reject(err);
        continue;
      }
      batch.forEach((b, i) => {
        b.resolve(results[i]!);
      });
    }
  }

  return {
    submit(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    flush,
    pending: () => queue.length,
  };
}
