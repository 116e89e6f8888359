// Whether the database's schema is the one this version of emr-bridge was written for, on either engine.
// `npx emr-bridge migrate` brings it there; `serve` only checks (PostgreSQL replicas never race to migrate)
// and refuses an outdated schema with this error, naming the command. The one exception is a brand-new
// SQLite file, which serve migrates itself (./sqlite/schema.ts): nothing can race on a file one process holds.

/** The command that brings a database's schema up to date (the message of every refusal names it). */
export const MIGRATE_COMMAND = 'npx emr-bridge migrate';

/** The schema is older than this version: serve stops with this message, migrate is what to run. */
export class SchemaOutdatedError extends Error {
  override name = 'SchemaOutdatedError';
  constructor(
    /** Where: the SQLite file, or PostgreSQL's host:port/database (never the password). */
    readonly where: string,
    /** The migrations not applied yet, oldest first. */
    readonly pending: string[],
  ) {
    super(
      `the database ${where} has an outdated schema (${pending.length} migration${pending.length === 1 ? '' : 's'} to apply: ${pending.join(', ')}): run \`${MIGRATE_COMMAND}\` with the same settings, then start serve again`,
    );
  }
}

/** What `migrate` did, for the command to print. */
export interface MigrationReport {
  engine: 'sqlite' | 'postgres';
  /** The SQLite file, or PostgreSQL's host:port/database. */
  where: string;
  /** The migrations applied now, oldest first (empty: the schema was current). */
  applied: string[];
}
