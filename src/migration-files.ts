// The numbered plain-SQL migration files of a folder (NNN_name.sql), read in order, and the refusal of a
// database whose schema a newer emr-bridge wrote: shared by both engines' migrations (src/sqlite/migrate.ts,
// src/storage/postgres/migrate.ts), which record what they applied in their own schema_migrations table.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

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

/** Throws SchemaTooNewError when `applied` holds a version newer than every migration known here. */
export function refuseNewerSchema(where: string, applied: Iterable<number>, known: Migration[]): void {
  const newestKnown = known.at(-1)?.version ?? 0;
  const newestApplied = Math.max(0, ...applied);
  if (newestApplied > newestKnown)
    throw new SchemaTooNewError(
      `${where} was written by a newer version of emr-bridge (schema ${newestApplied}; this version knows up to ${newestKnown}): run that version, or restore a backup made by this one`,
    );
}
