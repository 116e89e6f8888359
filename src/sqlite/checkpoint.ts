// WAL checkpoints off the event loop (issue 14).
//
// By default SQLite checkpoints inside the commit that takes the WAL past 1000 pages: that commit copies the
// WAL's pages into the database file and fsyncs it, and better-sqlite3 being synchronous, the event loop stops
// meanwhile. Under the receiver's load (a 44-row group commit appends about 70 pages) that was one commit in 14
// taking 10-16 ms instead of 1.5, and every webhook waiting on it paid for it: the receiver's p99.
//
// So the adapter's connection never checkpoints by itself (wal_autocheckpoint=0, set by ./open.ts) and a worker
// thread with its own connection to the same file does the copying (./checkpoint-worker.mjs): PASSIVE
// checkpoints, which take no lock the writer waits for. PASSIVE alone cannot keep the WAL bounded under a writer
// that never pauses: the WAL only starts over from its beginning when a commit finds every frame copied, and a
// checkpoint that runs while commits land never finds that. So the worker looks again within milliseconds while
// the WAL moves, to end one in a gap between two commits (which then restarts the WAL), and should the WAL be
// about to pass `maxWalBytes` all the same (at the pace of its last looks), it asks this side for a RESTART on the
// writer's own connection: by then the worker has copied all but the last commit or two, so that costs the event
// loop a short copy and one fsync (rarely: docs/benchmarks.md, "WAL checkpoints off the event loop"), and the writer cannot starve it,
// being the writer. So the WAL file stays at about `maxWalBytes` at most (67 MB seen with the 64 MB default under
// the receiver benchmark; 1.2 times a 4 MB bound in the tests), except while another reader keeps an old snapshot
// (a backup in progress), which no checkpoint may overwrite; it starts over once that reader is done. Idle for
// `idleMs`, the worker empties the file (TRUNCATE).
//
// Durability is unchanged: a commit is still on disk (WAL + synchronous=FULL) before it returns, and a checkpoint
// copies only committed pages into the database file and fsyncs it before the WAL may be reused; a crash at any
// point is recovered from the WAL by the next open, as always.
//
// The worker never holds the process open (unref'd) until it is asked to stop; then it closes its connection,
// which as the last one folds the WAL into the database and removes it, and ends. An error inside it is logged
// (the SQLite code, no data) and the loop goes on; if the thread itself dies, the writer's connection takes
// automatic checkpoints back (onDied), so the WAL stays bounded either way.
import { Worker } from 'node:worker_threads';

export interface CheckpointOptions {
  /** How often the worker checkpoints what is new. */
  intervalMs?: number;
  /** When a checkpoint found new frames: the wait before the next look… */
  catchUpMs?: number;
  /** …and how many such quick looks in a row at most, before waiting intervalMs again. */
  catchUpTries?: number;
  /** The WAL's bound: at this many bytes of frames the writer's connection runs a RESTART. */
  maxWalBytes?: number;
  /** Nothing committed for this long: the worker empties the WAL file (TRUNCATE). */
  idleMs?: number;
  /** How long the worker's TRUNCATE waits for a writer that started meanwhile (the writer waits on it then). */
  busyTimeoutMs?: number;
}

export const CHECKPOINT_DEFAULTS: Required<CheckpointOptions> = {
  intervalMs: 100,
  catchUpMs: 2,
  catchUpTries: 5,
  maxWalBytes: 64 * 1024 * 1024,
  idleMs: 1000,
  busyTimeoutMs: 20,
};

/** What the worker and the RESTARTs asked of the writer's connection have done so far (tests, benchmarks). */
export interface CheckpointStats {
  passive: number;
  /** Times the WAL was found started over by a commit, after a PASSIVE had copied all of it. */
  restartedByCommit: number;
  /** RESTARTs the worker asked for (the WAL at maxWalBytes)… */
  restartsAsked: number;
  /** …and those the writer's connection ran and that succeeded… */
  restartsDone: number;
  /** …the longest of which held the event loop this long (ms). */
  restartMsMax: number;
  truncated: number;
  /** TRUNCATEs and RESTARTs that found a lock taken (tried again later). */
  busy: number;
  /** The most frames the WAL held at one look. */
  maxLogFrames: number;
  maxWalFrames: number;
  frameBytes: number;
  errors: number;
}

export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

export interface CheckpointLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface CheckpointWorker {
  readonly threadId: number;
  /** Settles with the thread's exit code once it has ended (after stop(), or if it died). */
  readonly exited: Promise<number>;
  stats(): Promise<CheckpointStats>;
  /** Asks the thread to close its connection and end; resolves once it has. Safe to call more than once. */
  stop(): Promise<void>;
}

export interface StartCheckpointWorkerOptions extends CheckpointOptions {
  logger: CheckpointLogger;
  /** A RESTART on the writer's connection (undefined when it cannot run one now). */
  restart: () => CheckpointResult | undefined;
  /** The thread ended without being asked to. */
  onDied: () => void;
}

type WorkerMessage = { type: 'error'; op: string; code: string } | { type: 'stats'; stats: CheckpointStats } | { type: 'restart' };

const WORKER_FILE = new URL('./checkpoint-worker.mjs', import.meta.url);

const codeOf = (err: unknown) => {
  const e = err as { code?: unknown; name?: unknown } | undefined;
  return typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : 'unknown';
};

export function startCheckpointWorker(path: string, opts: StartCheckpointWorkerOptions): CheckpointWorker {
  const settings: Required<CheckpointOptions> = { ...CHECKPOINT_DEFAULTS };
  for (const key of Object.keys(CHECKPOINT_DEFAULTS) as (keyof CheckpointOptions)[]) settings[key] = opts[key] ?? CHECKPOINT_DEFAULTS[key];
  const { logger } = opts;
  const worker = new Worker(WORKER_FILE, { workerData: { path, ...settings }, name: 'wal-checkpoint' });
  const threadId = worker.threadId;
  worker.unref();
  let stopping = false;
  let ended = false;
  let restartsDone = 0;
  let restartsBusy = 0;
  let restartMsMax = 0;
  let lastRestartError = -Infinity;
  const statsWaiters: { resolve: (s: CheckpointStats) => void; reject: (e: Error) => void }[] = [];

  const exited = new Promise<number>((resolve) => {
    worker.once('exit', (code) => {
      ended = true;
      for (const w of statsWaiters.splice(0)) w.reject(new Error('the checkpoint thread has ended'));
      if (!stopping) {
        logger.error({ threadId, exitCode: code }, 'WAL checkpoint thread ended; checkpoints are back inside commits');
        opts.onDied();
      }
      resolve(code);
    });
  });
  // An uncaught error ends the thread ('exit' follows); it is never rethrown here. Once stopping (the file may be
  // gone already), not worth a line.
  worker.on('error', (err) => {
    if (!stopping) logger.error({ threadId, code: codeOf(err) }, 'WAL checkpoint thread failed');
  });
  worker.on('message', (msg: WorkerMessage) => {
    if (msg.type === 'restart') {
      const started = performance.now();
      try {
        const r = opts.restart();
        if (r && !r.busy) restartsDone++;
        else restartsBusy++;
        restartMsMax = Math.max(restartMsMax, performance.now() - started);
      } catch (err) {
        // At most a line a minute, on the same monotonic time as the durations above (no wall clock here).
        if (performance.now() - lastRestartError >= 60_000) {
          lastRestartError = performance.now();
          logger.warn({ threadId, op: 'RESTART', code: codeOf(err) }, 'WAL checkpoint failed (tried again later)');
        }
      }
      if (!stopping && !ended) worker.postMessage('restarted');
    } else if (msg.type === 'error') {
      logger.warn({ threadId, op: msg.op, code: msg.code }, 'WAL checkpoint failed (tried again later)');
    } else if (msg.type === 'stats') {
      for (const w of statsWaiters.splice(0)) w.resolve({ ...msg.stats, restartsDone, restartMsMax, busy: msg.stats.busy + restartsBusy });
    }
  });

  return {
    threadId,
    exited,
    stats() {
      return new Promise<CheckpointStats>((resolve, reject) => {
        if (stopping || ended) {
          reject(new Error('the checkpoint thread is stopped'));
          return;
        }
        statsWaiters.push({ resolve, reject });
        worker.postMessage('stats');
      });
    },
    async stop() {
      if (!stopping) {
        stopping = true;
        // Held open until it has closed its connection, so that a process ending now ends after it.
        worker.ref();
        worker.postMessage('stop');
      }
      await exited;
    },
  };
}
