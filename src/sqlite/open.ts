// Opens an SQLite database with emr-bridge's durability settings and brings its schema up to date.
//
// Durability is a deliberate choice (docs/operations.md, "Durability"):
// - journal_mode=WAL: readers never block the writer; a commit appends to the WAL file.
// - synchronous=FULL: every commit fsyncs the WAL before it returns, so a 2xx sent after a commit means
//   the event survives a power cut, not just a process crash. (NORMAL would only survive the latter.)
//   The cost of one fsync per commit is shared by the inbox's group commit.
// - busy_timeout: a short wait for a lock held by another process (a backup, the CLI); past it the
//   write fails and the receiver answers 503 so the service retries.
// - Checkpoints (a writable file database): never inside a commit on this connection
//   (wal_autocheckpoint=0); a worker thread with its own connection copies the WAL into the database
//   file and keeps the WAL within CHECKPOINT_DEFAULTS.maxWalBytes (./checkpoint.ts). db.close() stops it;
//   closeDatabase() also waits for it to end. A read-only or in-memory database gets no worker.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { createLogger } from '../logger.ts';
import { type CheckpointLogger, type CheckpointOptions, type CheckpointResult, type CheckpointWorker, startCheckpointWorker } from './checkpoint.ts';
import { migrate } from './migrate.ts';

export type Db = Database.Database;

export interface OpenDatabaseOptions {
  /** File path, or ':memory:' for tests. */
  path: string;
  /** Folder of numbered .sql migrations to apply. */
  migrationsDir: string;
  busyTimeoutMs?: number;
  readonly?: boolean;
  /** Apply the pending migrations (default true); false leaves the schema as it is, for a caller that checks it. */
  migrate?: boolean;
  /** The checkpoint worker's settings; false leaves checkpoints to SQLite, inside commits (its default). */
  checkpoints?: CheckpointOptions | false;
  /** Where the checkpoint worker's failures are logged (codes only); a logger of its own by default. */
  logger?: CheckpointLogger;
}

const workers = new WeakMap<Db, CheckpointWorker>();

export function openDatabase(opts: OpenDatabaseOptions): Db {
  const inMemory = opts.path === ':memory:' || opts.path === '';
  if (!inMemory) mkdirSync(dirname(opts.path), { recursive: true });
  const db = new Database(opts.path, { readonly: opts.readonly ?? false });
  db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 2000}`);
  if (!opts.readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    // A value deleted or replaced (a body pruned by retention, a value re-sealed) is overwritten with zeros,
    // not left readable in the file's free pages (docs/data-at-rest.md).
    db.pragma('secure_delete = ON');
    try {
      if (opts.migrate ?? true) migrate(db, opts.migrationsDir);
    } catch (err) {
      db.close();
      throw err;
    }
    if (!inMemory && opts.checkpoints !== false) checkpointOffTheEventLoop(db, opts.path, opts);
  }
  return db;
}

/**
 * Moves a writable WAL connection's checkpoints to a worker thread (exported for the benchmark's floor receiver,
 * which opens its database by hand but must checkpoint the way the adapter does to stay a like-for-like floor).
 */
export function checkpointOffTheEventLoop(db: Db, path: string, opts: Pick<OpenDatabaseOptions, 'checkpoints' | 'logger'>): void {
  db.pragma('wal_autocheckpoint = 0');
  const logger = opts.logger ?? createLogger().child({ component: 'database' });
  let worker: CheckpointWorker;
  try {
    worker = startCheckpointWorker(path, {
      ...(opts.checkpoints || {}),
      logger,
      restart: () => checkpointWal(db, 'RESTART'),
      // The thread is gone: SQLite's own checkpoints (inside commits) keep the WAL bounded from here on.
      onDied: () => {
        if (db.open) db.pragma('wal_autocheckpoint = 1000');
      },
    });
  } catch (err) {
    logger.error({ code: (err as { code?: string }).code ?? (err as Error).name }, 'WAL checkpoint thread not started; checkpoints stay inside commits');
    db.pragma('wal_autocheckpoint = 1000');
    return;
  }
  workers.set(db, worker);
  const close = db.close.bind(db);
  // The connection first (not the last one open, so no checkpoint here), then the worker, whose connection, the
  // last one, folds the WAL into the database on its way out.
  db.close = () => {
    try {
      return close();
    } finally {
      void worker.stop();
    }
  };
}

/**
 * A checkpoint on the writer's own connection. RESTART: the WAL at its bound (the worker has copied all but the
 * last commit or two), after which the next commit starts the WAL over. TRUNCATE: after retention dropped
 * values, so that neither the WAL nor the file's pages keep them (the zeros of secure_delete reach the file,
 * and the WAL is emptied). It waits for nothing: a lock taken (another process's write, a reader on an old
 * snapshot, the worker mid-checkpoint) and it is skipped, to be asked again.
 */
export function checkpointWal(db: Db, mode: 'RESTART' | 'TRUNCATE'): CheckpointResult | undefined {
  if (!db.open || db.inTransaction) return undefined;
  const busyTimeout = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma('busy_timeout = 0');
  try {
    return (db.pragma(`wal_checkpoint(${mode})`) as CheckpointResult[])[0];
  } finally {
    db.pragma(`busy_timeout = ${busyTimeout}`);
  }
}

/** The checkpoint worker of a database opened here, if it has one. */
export function checkpointWorkerOf(db: Db): CheckpointWorker | undefined {
  return workers.get(db);
}

/** Closes the connection and waits until its checkpoint worker, if any, has ended. */
export async function closeDatabase(db: Db): Promise<void> {
  if (db.open) db.close();
  await workers.get(db)?.stop();
}
