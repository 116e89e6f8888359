// Group commit: requests queued in one turn of the event loop share one commit; a failed commit rejects
// every item of its batch and no other.
import { describe, expect, it } from 'vitest';
import { createGroupCommitter } from '../../src/work/group-commit.ts';

describe('createGroupCommitter', () => {
  it('commits concurrent submissions in one batch, results in order', async () => {
    const batches: number[][] = [];
    const c = createGroupCommitter<number, number>((batch) => {
      batches.push(batch);
      return batch.map((n) => n * 10);
    });
    const results = await Promise.all([1, 2, 3].map((n) => c.submit(n)));
    expect(results).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('splits at the batch limit', async () => {
    const sizes: number[] = [];
    const c = createGroupCommitter<number, number>((batch) => {
      sizes.push(batch.length);
      return batch;
    }, 2);
    await Promise.all([1, 2, 3, 4, 5].map((n) => c.submit(n)));
    expect(sizes).toEqual([2, 2, 1]);
  });

  it('rejects the whole failed batch, and the next batch still commits', async () => {
    let fail = true;
    const c = createGroupCommitter<number, string>((batch) => {
      if (fail) throw new Error('disk full');
      return batch.map(String);
    });
    const first = await Promise.allSettled([c.submit(1), c.submit(2)]);
    expect(first.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await c.submit(3)).toBe('3');
  });
});

describe('createGroupCommitter, submissions during a commit', () => {
  it('commits what was submitted during a commit in a batch of its own', async () => {
    const batches: number[][] = [];
    let late: Promise<number> | undefined;
    const c = createGroupCommitter<number, number>((batch) => {
      batches.push([...batch]);
      late ??= c.submit(99);
      return batch;
    });
    expect(await Promise.all([c.submit(1), c.submit(2)])).toEqual([1, 2]);
    expect(await late).toBe(99);
    expect(batches).toEqual([[1, 2], [99]]);
  });
});

describe('createGroupCommitter with an asynchronous commit (PostgreSQL)', () => {
  /** A commit that settles only when the test says so, keeping every batch it was given. */
  function heldCommit() {
    const batches: number[][] = [];
    const pending: { resolve: () => void; reject: (e: unknown) => void }[] = [];
    const commit = (batch: number[]) => {
      batches.push([...batch]);
      return new Promise<number[]>((resolve, reject) => {
        pending.push({ resolve: () => resolve(batch.map((n) => n * 10)), reject });
      });
    };
    return { batches, pending, commit };
  }
  const turn = () => new Promise((r) => setImmediate(r));

  it('keeps one commit in flight; what arrives meanwhile forms the next batch', async () => {
    const h = heldCommit();
    const c = createGroupCommitter<number, number>(h.commit);
    const first = [c.submit(1), c.submit(2)];
    await turn();
    const second = [c.submit(3), c.submit(4), c.submit(5)];
    await turn();
    // Nothing new is committed while the first batch is in flight.
    expect(h.batches).toEqual([[1, 2]]);
    expect(c.pending()).toBe(3);
    h.pending[0]!.resolve();
    expect(await Promise.all(first)).toEqual([10, 20]);
    await turn();
    expect(h.batches).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    h.pending[1]!.resolve();
    expect(await Promise.all(second)).toEqual([30, 40, 50]);
  });

  it('answers nobody before the commit resolves', async () => {
    const h = heldCommit();
    const c = createGroupCommitter<number, number>(h.commit);
    let answered = false;
    const p = c.submit(1).then((r) => {
      answered = true;
      return r;
    });
    await turn();
    await turn();
    expect(answered).toBe(false);
    h.pending[0]!.resolve();
    expect(await p).toBe(10);
  });

  it('rejects every item of a failed batch, and the batch queued behind it still commits', async () => {
    const h = heldCommit();
    const c = createGroupCommitter<number, number>(h.commit);
    const failing = [c.submit(1), c.submit(2)];
    await turn();
    const next = c.submit(3);
    h.pending[0]!.reject(new Error('connection terminated'));
    const settled = await Promise.allSettled(failing);
    expect(settled.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await turn();
    h.pending[1]!.resolve();
    expect(await next).toBe(30);
  });

  it('drain waits for the commit in flight and the batches queued behind it', async () => {
    const h = heldCommit();
    const c = createGroupCommitter<number, number>(h.commit, 2);
    const all = [1, 2, 3].map((n) => c.submit(n));
    let drained = false;
    const draining = c.drain().then(() => {
      drained = true;
    });
    await turn();
    expect(drained).toBe(false);
    h.pending[0]!.resolve();
    await turn();
    expect(h.batches).toEqual([[1, 2], [3]]);
    expect(drained).toBe(false);
    h.pending[1]!.resolve();
    await draining;
    expect(await Promise.all(all)).toEqual([10, 20, 30]);
  });
});

describe('createGroupCommitter, held submissions', () => {
  /** A committer whose commit records each batch and answers each item with itself. */
  const recording = () => {
    const batches: string[][] = [];
    const c = createGroupCommitter<string, string>((batch) => {
      batches.push(batch);
      return batch;
    });
    return { batches, c };
  };

  it('holds a submission until the next batch anything else starts, and commits them together', async () => {
    const { batches, c } = recording();
    const held = c.submit('held', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(batches).toEqual([]);
    expect(c.pending()).toBe(1);
    await Promise.all([held, c.submit('at once')]);
    expect(batches).toEqual([['held', 'at once']]);
  });

  it('commits a held submission alone once its hold is up', async () => {
    const { batches, c } = recording();
    const started = performance.now();
    expect(await c.submit('held', 30)).toBe('held');
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    expect(batches).toEqual([['held']]);
  });

  it('keeps the earliest hold of several', async () => {
    const { batches, c } = recording();
    const long = c.submit('long', 60_000);
    await c.submit('short', 10);
    await long;
    expect(batches).toEqual([['long', 'short']]);
  });
});
