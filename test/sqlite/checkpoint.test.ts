// WAL checkpoints off the event loop (issue 14, src/sqlite/checkpoint.ts): the writer's connection never
// checkpoints inside a commit; a worker thread does, and keeps the WAL within its bound under a writer that
// commits thousands of times while a reader reads; it goes on when idle (the file is emptied), stops on close,
// and a thread that dies is logged and hands checkpoints back to the writer. A read-only or in-memory
// database gets no worker. Whatever the worker was doing, a crash loses no commit.
import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startCheckpointWorker } from '../../src/sqlite/checkpoint.ts';
import { checkpointWorkerOf, type Db, openDatabase } from '../../src/sqlite/open.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { captureLogger } from '../support/log-capture.ts';
import { killedMidStream } from './support/killed-mid-stream.ts';
import { tempDatabases } from './support/temp-databases.ts';
import { waitFor } from '../support/wait.ts';

const { dbPath, opened } = tempDatabases('checkpoint');

const walBytes = (path: string) => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);
const BODY = Buffer.alloc(1500, 0x7b);

/** The inbox's insert, as the receiver's group commit runs it: `rows` webhooks in one transaction. */
function committer(db: Db): (rows: number) => void {
  const insert = db.prepare('INSERT INTO inbox_events (event_id, event_type, headers, body, received_at) VALUES (?, ?, ?, ?, ?)');
  const tx = db.transaction((rows: number) => {
    for (let i = 0; i < rows; i++) insert.run(randomUUID(), 'appointment.created', '{}', BODY, Date.now());
  });
  return (rows) => tx.immediate(rows);
}

describe('checkpoints off the event loop', () => {
  it('turns automatic checkpoints off on the writer connection of a writable file, and runs a worker for it', async () => {
    const db = opened({ path: dbPath(), migrationsDir: ADAPTER_MIGRATIONS });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    // The durability settings are what they were.
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    const worker = checkpointWorkerOf(db)!;
    expect(worker).toBeDefined();
    expect((await worker.stats()).errors).toBe(0);
  });

  it('gives no worker to an in-memory database, a read-only one, or when asked not to', () => {
    const memory = opened({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    expect(checkpointWorkerOf(memory)).toBeUndefined();
    const path = dbPath();
    openDatabase({ path, migrationsDir: ADAPTER_MIGRATIONS, checkpoints: false }).close();
    const readonly = opened({ path, migrationsDir: ADAPTER_MIGRATIONS, readonly: true });
    expect(checkpointWorkerOf(readonly)).toBeUndefined();
    const inline = opened({ path, migrationsDir: ADAPTER_MIGRATIONS, checkpoints: false });
    expect(checkpointWorkerOf(inline)).toBeUndefined();
    expect(inline.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });

  it('keeps the WAL within its bound through thousands of commits while a reader reads', async () => {
    const path = dbPath();
    const maxWalBytes = 4 * 1024 * 1024;
    const db = opened({ path, migrationsDir: ADAPTER_MIGRATIONS, checkpoints: { maxWalBytes, intervalMs: 10 } });
    const commit = committer(db);
    const reader = new Database(path, { readonly: true });
    const count = reader.prepare('SELECT count(*) FROM inbox_events').pluck();
    const scan = reader.prepare('SELECT id FROM inbox_events');
    let held: IterableIterator<unknown> | undefined;
    let maxWal = 0;
    const commits = 2000;
    const rowsPerCommit = 8;
    try {
      for (let i = 1; i <= commits; i++) {
        commit(rowsPerCommit);
        maxWal = Math.max(maxWal, walBytes(path));
        if (i % 10 === 0) expect(count.get()).toBe(i * rowsPerCommit);
        // Now and then the reader keeps a snapshot over a few commits (nothing it can see may be overwritten).
        if (i % 200 === 0) {
          held = scan.iterate();
          held.next();
        } else if (i % 200 === 5) {
          held?.return?.();
        }
        // The event loop turns between commits, as it does between the receiver's group commits.
        await turn();
      }
    } finally {
      held?.return?.();
      reader.close();
    }
    const stats = await checkpointWorkerOf(db)!.stats();
    const written = commits * rowsPerCommit * BODY.length;
    // Without restarts the WAL would hold everything written (five times the bound in rows alone, more in pages)…
    expect(written).toBeGreaterThan(5 * maxWalBytes);
    // …it held at most the bound, give or take what the pace of commits moved between two looks.
    expect(maxWal).toBeLessThan(1.5 * maxWalBytes);
    expect(stats.restartsDone + stats.restartedByCommit).toBeGreaterThan(0);
    expect(stats.errors).toBe(0);
    expect(db.prepare('SELECT count(*) FROM inbox_events').pluck().get()).toBe(commits * rowsPerCommit);
  });

  it('goes on when idle: everything reaches the database file and the WAL is emptied', async () => {
    const path = dbPath();
    const db = opened({ path, migrationsDir: ADAPTER_MIGRATIONS, checkpoints: { intervalMs: 10, idleMs: 100 } });
    const commit = committer(db);
    for (let i = 0; i < 50; i++) commit(10);
    expect(walBytes(path)).toBeGreaterThan(0);
    await waitFor(() => walBytes(path) === 0, 10_000);
    expect((await checkpointWorkerOf(db)!.stats()).truncated).toBeGreaterThan(0);
    // A commit after that starts a new WAL and goes on being checkpointed.
    commit(1);
    expect(walBytes(path)).toBeGreaterThan(0);
    await waitFor(() => walBytes(path) === 0, 10_000);
    expect(db.prepare('SELECT count(*) FROM inbox_events').pluck().get()).toBe(501);
  });

  it('stops the worker on close, which folds the WAL into the database and removes it', async () => {
    const path = dbPath();
    const db = openDatabase({ path, migrationsDir: ADAPTER_MIGRATIONS });
    const worker = checkpointWorkerOf(db)!;
    const commit = committer(db);
    for (let i = 0; i < 20; i++) commit(10);
    db.close();
    expect(await worker.exited).toBe(0);
    expect(existsSync(`${path}-wal`)).toBe(false);
    await expect(worker.stats()).rejects.toThrow(/stopped/);
    const again = new Database(path, { readonly: true });
    expect(again.prepare('SELECT count(*) FROM inbox_events').pluck().get()).toBe(200);
    again.close();
  });

  it('logs a worker that dies (codes only), without ending the process, and hands checkpoints back', async () => {
    const { logger, lines } = captureLogger();
    let handedBack = false;
    const worker = startCheckpointWorker(join(tmpdir(), `emr-bridge-checkpoint-missing-${randomUUID()}.db`), {
      logger,
      restart: () => undefined,
      onDied: () => {
        handedBack = true;
      },
    });
    expect(await worker.exited).not.toBe(0);
    expect(handedBack).toBe(true);
    const logged = lines().filter((l) => l.component === undefined && typeof l.msg === 'string' && String(l.msg).startsWith('WAL checkpoint thread'));
    expect(logged.map((l) => l.msg)).toEqual(['WAL checkpoint thread failed', 'WAL checkpoint thread ended; checkpoints are back inside commits']);
    expect(logged[0]).toMatchObject({ level: 50, code: 'SQLITE_CANTOPEN' });
    expect(Object.keys(logged[0]!).sort()).toEqual(['app', 'code', 'level', 'msg', 'threadId', 'time']);
  });

  it('loses no acknowledged commit when the process is killed while the worker checkpoints', async () => {
    const path = dbPath();
    // A child commits 4-row transactions as fast as it can (its worker checkpointing all the while) and prints
    // each commit's number once it has returned; it is killed (SIGKILL) mid-stream.
    const last = await killedMidStream('commit-forever.ts', path, 1500);
    expect(walBytes(path)).toBeGreaterThan(0);

    const db = opened({ path, migrationsDir: ADAPTER_MIGRATIONS });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const rows = db.prepare('SELECT count(*) FROM inbox_events').pluck().get() as number;
    expect(rows).toBeGreaterThanOrEqual(last * 4);
    expect(rows % 4).toBe(0);
  });
});
