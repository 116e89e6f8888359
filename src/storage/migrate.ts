// `npx emr-bridge migrate`: brings the configured database's schema up to date, on whichever engine the
// settings name (DATABASE_URL: PostgreSQL; unset: the SQLite file at DATABASE_PATH).
import type { Clock } from '../clock.ts';
import { migratePostgres, describeDatabaseUrl } from './postgres/migrate.ts';
import { createPool } from './postgres/pool.ts';
import type { StorageSettings } from './index.ts';
import type { MigrationReport } from './schema.ts';
import { migrateSqlite } from './sqlite/schema.ts';

export async function migrateConfiguredDatabase(config: StorageSettings, clock: Clock): Promise<MigrationReport> {
  if (!config.databaseUrl) return migrateSqlite(config.databasePath, clock);
  // One connection, no statement timeout: a migration may take a while, and nothing else uses this pool.
  const pool = createPool(config.databaseUrl, { max: 1, statementTimeoutMs: 0, applicationName: 'emr-bridge migrate' });
  try {
    return await migratePostgres(pool, describeDatabaseUrl(config.databaseUrl));
  } finally {
    await pool.end();
  }
}
