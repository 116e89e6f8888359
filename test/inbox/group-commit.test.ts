// Group commit: requests queued in one turn of the event loop share one commit; a failed commit rejects
// every item of its batch and no other.
import { describe, expect, it } from 'vitest';
import { createGroupCommitter } from '../../src/inbox/group-commit.ts';

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
