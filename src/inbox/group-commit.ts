// Group commit: writes that arrive while the event loop is busy are gathered and committed together in
// one transaction, so concurrent webhook requests share one fsync instead of paying one each.
// better-sqlite3 is synchronous, so a batch is whatever queued up since the last flush; the flush runs
// on setImmediate, after the I/O phase has handed over every request that was ready.
// Per submission: one promise and its entry in the queue; a batch that fits is the queue itself (no copies).

export interface GroupCommitter<T, R> {
  submit(item: T): Promise<R>;
  /** Commits whatever is queued now. */
  flush(): void;
  pending(): number;
}

interface Waiting<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
}

/** `commit` runs the whole batch in one transaction and returns one result per item, in order. */
export function createGroupCommitter<T, R>(commit: (batch: T[]) => R[], maxBatch = 512): GroupCommitter<T, R> {
  let queue: Waiting<T, R>[] = [];
  let scheduled = false;

  function commitBatch(batch: Waiting<T, R>[]): void {
    const items = new Array<T>(batch.length);
    for (let i = 0; i < batch.length; i++) items[i] = batch[i]!.item;
    let results: R[];
    try {
      results = commit(items);
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i]!);
  }

  function flush(): void {
    scheduled = false;
    while (queue.length > 0) {
      let batch: Waiting<T, R>[];
      if (queue.length <= maxBatch) {
        batch = queue;
        queue = [];
      } else {
        batch = queue.slice(0, maxBatch);
        queue = queue.slice(maxBatch);
      }
      commitBatch(batch);
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
