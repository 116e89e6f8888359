// The SQLite schema policy. `serve` migrates a brand-new (empty) file itself, so that `npm start` on a fresh
// machine needs no step before it; an existing file whose schema is behind is refused with the command to run,
// so that an upgrade changes the data only when a person says so (after a backup, say). `migrate` applies the
// pending migrations while holding the one-process lock, so it never runs under a live serve.
import type { Clock } from '../../clock.ts';
import { migrate, pendingMigrations } from '../../sqlite/migrate.ts';
import type { CheckpointLogger } from '../../sqlite/checkpoint.ts';
import { openDatabase, type Db } from '../../sqlite/open.ts';
import { acquireStoreLock } from '../../sqlite/store-lock.ts';
import { ADAPTER_MIGRATIONS } from '../../paths.ts';
import { SchemaOutdatedError, type MigrationReport } from '../schema.ts';

/** True for a database nothing was ever written to (a new file, or ':memory:'). */
function isEmpty(db: Db): boolean {
  return db.prepare('SELECT count(*) FROM sqlite_master').pluck().get() === 0;
}

/**
 * Opens the adapter's SQLite database for `serve`: a new, empty one gets the whole schema; an existing one
 * must be current (SchemaOutdatedError otherwise; SchemaTooNewError when a newer version wrote it).
 */
export function openSqliteForServe(path: string, logger: CheckpointLogger, migrationsDir = ADAPTER_MIGRATIONS): Db {
  const db = openDatabase({ path, migrationsDir, migrate: false, logger });
  try {
    if (isEmpty(db)) {
      migrate(db, migrationsDir);
      return db;
    }
    const pending = pendingMigrations(db, migrationsDir);
    if (pending.length) throw new SchemaOutdatedError(path, pending);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** `emr-bridge migrate` on SQLite: applies what is pending, refused while a serve holds the file. */
export function migrateSqlite(path: string, clock: Clock, migrationsDir = ADAPTER_MIGRATIONS): MigrationReport {
  const lock = acquireStoreLock(path, clock);
  try {
    const db = openDatabase({ path, migrationsDir, migrate: false, checkpoints: false });
    try {
      return { engine: 'sqlite', where: path, applied: migrate(db, migrationsDir) };
    } finally {
      db.close();
    }
  } finally {
    lock.release();
  }
}
