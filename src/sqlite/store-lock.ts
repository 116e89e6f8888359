// One adapter process per SQLite database. The lock is SQLite's own exclusive lock on a small file beside
// the database, so the operating system releases it when the holder dies, however it dies: a crash never
// leaves a stale lock. A side file names the holder for the message a second process prints.
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Clock } from '../clock.ts';
import { toIso } from '../clock.ts';

export interface StoreLock {
  release(): void;
}

/** Another process holds the database: start-up stops with this message. */
export class StoreLockedError extends Error {
  override name = 'StoreLockedError';
}

interface Holder {
  pid: number;
  host: string;
  since: string;
}

function describeHolder(holderFile: string): string {
  try {
    const h = JSON.parse(readFileSync(holderFile, 'utf8')) as Holder;
    return `pid ${h.pid} on ${h.host}, since ${h.since}`;
  } catch {
    return 'a process that has not said who it is yet';
  }
}

/** Takes the lock for `databasePath` or throws StoreLockedError naming the folder and the holder. */
export function acquireStoreLock(databasePath: string, clock: Clock): StoreLock {
  const lockFile = `${databasePath}.lock`;
  const holderFile = `${databasePath}.holder`;
  mkdirSync(dirname(databasePath), { recursive: true });
  const lock = new Database(lockFile);
  try {
    lock.pragma('busy_timeout = 0');
    // Exclusive locking mode keeps the write lock taken below until this connection closes (or the process dies).
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('CREATE TABLE IF NOT EXISTS held (id INTEGER PRIMARY KEY, at TEXT NOT NULL)');
    lock.prepare('INSERT OR REPLACE INTO held (id, at) VALUES (1, ?)').run(toIso(clock.now()));
  } catch (err) {
    lock.close();
    if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
    throw new StoreLockedError(
      `the data folder ${dirname(databasePath)} is in use by another emr-bridge process (${describeHolder(holderFile)}): one serve per SQLite database (${databasePath})`,
    );
  }
  writeFileSync(holderFile, `${JSON.stringify({ pid: process.pid, host: hostname(), since: toIso(clock.now()) } satisfies Holder)}\n`);
  return {
    release() {
      rmSync(holderFile, { force: true });
      lock.close();
    },
  };
}
