// One group commit (src/work/group-commit.ts) shared by several stores on one SQLite connection: the writes
// they queue in a turn of the event loop (or while a held one waits) run in one transaction, one fsync. Each
// runs in a savepoint of its own, so one that throws is undone and rejected alone while the others commit.
// Shared, a write that may wait (an EMR port's note that a message was acknowledged) rides in the commit of
// one that may not (the mapping the EMR's next notification brings).
// A write whose durability a later commit carries (`durable: 'ordered'`) needs no fsync of its own: a batch of
// only such writes commits with synchronous=NORMAL, which in WAL mode appends to the WAL and returns. A process
// that dies keeps it (the OS has the bytes); a power cut may roll it back, but only together with every commit
// after it, since recovery replays the WAL as a prefix and the next fsync of the WAL covers every frame before.
import { createGroupCommitter } from '../work/group-commit.ts';
import type { Db } from './open.ts';

/**
 * When a write must be on disk: `now` (the default), before its promise resolves (the commit fsyncs the WAL);
 * `ordered`, in the WAL before it resolves and on disk with the next commit that fsyncs, which anything that
 * depends on it must be (an event's applied mark, after the mapping its claim recorded).
 */
export type Durability = 'now' | 'ordered';

export interface CommitOptions {
  /** How long it may wait for company (0: this turn). */
  holdMs?: number;
  durable?: Durability;
}

export interface CommitQueue {
  /** Runs `write` (synchronous statements) in the next batch's transaction; resolves with its result once committed, or rejects with what it threw. */
  run<R>(write: () => R, opts?: CommitOptions): Promise<R>;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Queued {
  write: () => unknown;
  durable: Durability;
}

/** SQLite's synchronous level (PRAGMA synchronous): 1 is NORMAL. */
const NORMAL = 1;

export function createCommitQueue(db: Db): CommitQueue {
  // Called inside the batch's transaction, a better-sqlite3 transaction function is a savepoint.
  const inSavepoint = db.transaction((write: () => unknown) => write());
  const runAll = db.transaction((batch: Queued[]) =>
    batch.map((q): Outcome => {
      try {
        return { ok: true, value: inSavepoint(q.write) };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );
  const lazily = withoutFsync(db);
  const commitBatch = (batch: Queued[]): Outcome[] => {
    if (batch.some((q) => q.durable === 'now')) return runAll.immediate(batch);
    return lazily(() => runAll.immediate(batch));
  };
  const committer = createGroupCommitter<Queued, Outcome>(commitBatch);
  return {
    async run<R>(write: () => R, opts: CommitOptions = {}): Promise<R> {
      const outcome = await committer.submit({ write, durable: opts.durable ?? 'now' }, opts.holdMs ?? 0);
      if (!outcome.ok) throw outcome.error;
      return outcome.value as R;
    },
  };
}

/**
 * Runs work with the connection at synchronous=NORMAL, then puts back the level it was opened with, whatever
 * happens. SQLite applies a pragma when it compiles it, so each change is an exec: 2 µs, where db.pragma() took 15.
 */
function withoutFsync(db: Db): <R>(work: () => R) => R {
  const opened = db.pragma('synchronous', { simple: true }) as number;
  if (opened <= NORMAL) return (work) => work();
  const lower = `PRAGMA synchronous = ${NORMAL}`;
  const restore = `PRAGMA synchronous = ${opened}`;
  return (work) => {
    db.exec(lower);
    try {
      return work();
    } finally {
      db.exec(restore);
    }
  };
}
