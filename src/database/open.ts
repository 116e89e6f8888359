// Opens an SQLite database with emr-bridge's durability settings and brings its schema up to date.
//
// Durability is a deliberate choice (see README "Operating it"):
// - journal_mode=WAL: readers never block the writer; a commit appends to the WAL file.
// - synchronous=FULL: every commit fsyncs the WAL before it returns, so a 2xx sent after a commit means
//   the event survives a power cut, not just a process crash. (NORMAL would only survive the latter.)
//   The cost of one fsync per commit is shared by the inbox's group commit.
// - busy_timeout: a short wait for a lock held by another process (a backup, the CLI); past it the
//   write fails and the receiver answers 503 so the service retries.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { migrate } from './migrate.ts';

export type Db = Database.Database;

export interface OpenDatabaseOptions {
  /** File path, or ':memory:' for tests. */
  path: string;
  /** Folder of numbered .sql migrations to apply. */
  migrationsDir: string;
  busyTimeoutMs?: number;
  readonly?: boolean;
}

export function openDatabase(opts: OpenDatabaseOptions): Db {
  if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
  const db = new Database(opts.path, { readonly: opts.readonly ?? false });
  db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 2000}`);
  if (!opts.readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    try {
      migrate(db, opts.migrationsDir);
    } catch (err) {
      db.close();
      throw err;
    }
  }
  return db;
}
