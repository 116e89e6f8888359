// One group commit (src/work/group-commit.ts) shared by several stores on one SQLite connection: the writes
// they queue in a turn of the event loop (or while a held one waits) run in one transaction, one fsync. Each
// runs in a savepoint of its own, so one that throws is undone and rejected alone while the others commit.
// Shared, a write that may wait (an EMR port's note that a message was acknowledged) rides in the commit of
// one that may not (the mapping the EMR's next notification brings).
import { createGroupCommitter } from '../work/group-commit.ts';
import type { Db } from './open.ts';

export interface CommitQueue {
  /**
   * Runs `write` (synchronous statements) in the next batch's transaction; resolves with its result once that
   * is committed, or rejects with what it threw. `holdMs`: how long it may wait for company (0: this turn).
   */
  run<R>(write: () => R, holdMs?: number): Promise<R>;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export function createCommitQueue(db: Db): CommitQueue {
  // Called inside the batch's transaction, a better-sqlite3 transaction function is a savepoint.
  const inSavepoint = db.transaction((write: () => unknown) => write());
  const runAll = db.transaction((batch: (() => unknown)[]) =>
    batch.map((write): Outcome => {
      try {
        return { ok: true, value: inSavepoint(write) };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );
  const committer = createGroupCommitter<() => unknown, Outcome>((batch) => runAll.immediate(batch));
  return {
    async run<R>(write: () => R, holdMs = 0): Promise<R> {
      const outcome = await committer.submit(write, holdMs);
      if (!outcome.ok) throw outcome.error;
      return outcome.value as R;
    },
  };
}
