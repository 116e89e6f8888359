// Applies numbered plain-SQL migrations (db/sqlite/NNN_name.sql) in order, each in its own transaction, and
// records each one in schema_migrations, the way graphile-worker does. Applied files must never change.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';

const FILE = /^(\d{3,})_[\w-]+\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function readMigrations(dir: string): Migration[] {
  const migrations = readdirSync(dir)
    .filter((f) => FILE.test(f))
    .map((name) => ({ version: Number(FILE.exec(name)![1]), name, sql: readFileSync(join(dir, name), 'utf8') }))
    .sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.version === migrations[i - 1]!.version) throw new Error(`two migrations share version ${migrations[i]!.version} in ${dir}`);
  }
  return migrations;
}

/** The database was written by a newer emr-bridge: using it half-understood could lose data, so it is refused. */
export class SchemaTooNewError extends Error {
  override name = 'SchemaTooNewError';
}

/** The versions applied to `db` (none when it has no schema_migrations table yet). */
function appliedVersions(db: Database.Database): Set<number> {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  return new Set(table ? (db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]) : []);
}

/** Throws SchemaTooNewError when `applied` holds a version newer than every migration known here. */
export function refuseNewerSchema(where: string, applied: Iterable<number>, known: Migration[]): void {
  const newestKnown = known.at(-1)?.version ?? 0;
  const newestApplied = Math.max(0, ...applied);
  if (newestApplied > newestKnown)
    throw new SchemaTooNewError(
      `${where} was written by a newer version of emr-bridge (schema ${newestApplied}; this version knows up to ${newestKnown}): run that version, or restore a backup made by this one`,
    );
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
