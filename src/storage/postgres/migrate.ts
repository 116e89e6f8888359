// PostgreSQL migrations: the numbered files of db/postgres/ in order, each once, each in its own transaction
// (so a file must hold only transactional statements: no CREATE INDEX CONCURRENTLY), recorded in
// schema_migrations. Several `npx emr-bridge migrate` at once (a deploy started twice) are serialised by a
// session advisory lock: the second waits, then finds nothing left to apply. `serve` never migrates
// PostgreSQL; it asks pendingPostgresMigrations and refuses to start while any is pending.
import { readMigrations, refuseNewerSchema } from '../../migration-files.ts';
import { POSTGRES_MIGRATIONS } from '../../paths.ts';
import { SchemaOutdatedError, type MigrationReport } from '../schema.ts';
import type { Pool, PoolClient } from './pool.ts';

/** The advisory lock that serialises migrations (hashed to a bigint key by PostgreSQL itself). */
const MIGRATE_LOCK = 'emr-bridge:migrate';

const CREATE_SCHEMA_MIGRATIONS = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version     INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  applied_at  TIMESTAMPTZ NOT NULL DEFAULT now()
)`;

/** host:port/database of a postgres:// URL: where, without the credentials. */
export function describeDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}/${decodeURIComponent(u.pathname.replace(/^\//, ''))}`;
  } catch {
    return 'PostgreSQL (DATABASE_URL)';
  }
}

async function appliedVersions(client: Pool | PoolClient): Promise<Set<number>> {
  const { rows } = await client.query<{ exists: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS exists");
  if (!rows[0]!.exists) return new Set();
  const applied = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
  return new Set(applied.rows.map((r) => r.version));
}

/** The migrations not applied yet (oldest first); throws SchemaTooNewError when a newer version wrote the schema. */
export async function pendingPostgresMigrations(pool: Pool, where: string, dir = POSTGRES_MIGRATIONS): Promise<string[]> {
  const known = readMigrations(dir);
  const applied = await appliedVersions(pool);
  refuseNewerSchema(where, applied, known);
  return known.filter((m) => !applied.has(m.version)).map((m) => m.name);
}

/** For serve: resolves when the schema is current; rejects with SchemaOutdatedError (or SchemaTooNewError). */
export async function checkPostgresSchema(pool: Pool, where: string, dir = POSTGRES_MIGRATIONS): Promise<void> {
  const pending = await pendingPostgresMigrations(pool, where, dir);
  if (pending.length) throw new SchemaOutdatedError(where, pending);
}

/** Applies the pending migrations, one transaction each; returns their names. */
export async function migratePostgres(pool: Pool, where: string, dir = POSTGRES_MIGRATIONS): Promise<MigrationReport> {
  const known = readMigrations(dir);
  const client = await pool.connect();
  try {
    // A migration may take long on a big table, and waiting for another migrate is expected.
    await client.query('SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [MIGRATE_LOCK]);
    await client.query(CREATE_SCHEMA_MIGRATIONS);
    const applied = await appliedVersions(client);
    refuseNewerSchema(where, applied, known);
    const done: string[] = [];
    for (const m of known) {
      if (applied.has(m.version)) continue;
      await applyOne(client, m.version, m.name, m.sql);
      done.push(m.name);
    }
    return { engine: 'postgres', where, applied: done };
  } finally {
    // The lock is the session's: ending the connection (never reused, its settings were changed) frees it.
    client.release(true);
  }
}

async function applyOne(client: PoolClient, version: number, name: string, sql: string): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(sql);
    await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version, name]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new Error(`migration ${name} failed (nothing of it applied): ${(err as Error).message}`, { cause: err });
  }
}
