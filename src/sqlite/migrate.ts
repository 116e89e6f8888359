// Applies numbered plain-SQL migrations (db/sqlite/NNN_name.sql, read by ../migration-files.ts) in order, each in
// its own transaction, and records each one in schema_migrations, the way graphile-worker does. Applied files
// must never change.
import type Database from 'better-sqlite3';
import { readMigrations, refuseNewerSchema } from '../migration-files.ts';

/** The versions applied to `db` (none when it has no schema_migrations table yet). */
function appliedVersions(db: Database.Database): Set<number> {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  return new Set(table ? (db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]) : []);
}

/** The names of the migrations `migrate` would apply to `db` now; throws SchemaTooNewError like it. Writes nothing. */
export function pendingMigrations(db: Database.Database, dir: string): string[] {
  const applied = appliedVersions(db);
  const known = readMigrations(dir);
  refuseNewerSchema(db.name, applied, known);
  return known.filter((m) => !applied.has(m.version)).map((m) => m.name);
}

/** Returns the names of the migrations it applied. */
export function migrate(db: Database.Database, dir: string): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
  )`);
  const applied = appliedVersions(db);
  const record = db.prepare('INSERT INTO schema_migrations (version, name) VALUES (?, ?)');
  const known = readMigrations(dir);
  refuseNewerSchema(db.name, applied, known);
  const done: string[] = [];
  for (const m of known) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      record.run(m.version, m.name);
    }).immediate();
    done.push(m.name);
  }
  return done;
}
