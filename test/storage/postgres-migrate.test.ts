// PostgreSQL migrations: db/postgres/ gives SQLite's final schema (plus the intake queue), files apply in order
// and once, a failing one leaves nothing behind, concurrent runs do not race, a newer schema is refused, and
// the check serve makes names what is pending and the command to run.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SchemaTooNewError } from '../../src/migration-files.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { checkPostgresSchema, describeDatabaseUrl, migratePostgres, pendingPostgresMigrations } from '../../src/storage/postgres/migrate.ts';
import { createPool, type Pool } from '../../src/storage/postgres/pool.ts';
import { SchemaOutdatedError } from '../../src/storage/schema.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';

const open: { pool: Pool; database: TestDatabase }[] = [];
const dirs: string[] = [];

/** A pool on a database of its own (or on `database`, to share one). */
async function freshPool(database?: TestDatabase): Promise<{ pool: Pool; database: TestDatabase }> {
  const db = database ?? (await createTestDatabase());
  const entry = { pool: createPool(db.url, { max: 4 }), database: db };
  open.push(entry);
  return entry;
}

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-pg-migrations-'));
  dirs.push(dir);
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
  return dir;
}

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterAll(async () => {
  for (const { pool } of open) await pool.end();
  for (const database of new Set(open.map((o) => o.database))) await database.drop();
});

describe('migratePostgres', () => {
  it('applies files in numeric order, once, and records them', async () => {
    const { pool } = await freshPool();
    const dir = folder({ '010_b.sql': 'INSERT INTO t VALUES (2);', '002_a.sql': 'CREATE TABLE t (v INTEGER);', 'README.md': 'not a migration' });
    expect((await migratePostgres(pool, 'test', dir)).applied).toEqual(['002_a.sql', '010_b.sql']);
    expect((await migratePostgres(pool, 'test', dir)).applied).toEqual([]);
    expect((await pool.query('SELECT v FROM t')).rows).toEqual([{ v: 2 }]);
    expect((await pool.query('SELECT name FROM schema_migrations ORDER BY version')).rows.map((r) => r.name)).toEqual(['002_a.sql', '010_b.sql']);
  });

  it('rolls a failing migration back whole, records nothing for it, and names it', async () => {
    const { pool } = await freshPool();
    const dir = folder({ '001_ok.sql': 'CREATE TABLE t (v INTEGER);', '002_bad.sql': 'INSERT INTO t VALUES (1); INSERT INTO nope VALUES (1);' });
    await expect(migratePostgres(pool, 'test', dir)).rejects.toThrow(/migration 002_bad\.sql failed.*nope/);
    expect((await pool.query('SELECT count(*) AS n FROM t')).rows[0].n).toBe(0);
    expect((await pool.query('SELECT name FROM schema_migrations')).rows.map((r) => r.name)).toEqual(['001_ok.sql']);
  });

  it('lets two replicas migrate at once: one applies each file, the other waits and finds nothing left', async () => {
    const { pool: a, database } = await freshPool();
    const { pool: b } = await freshPool(database);
    // Slow enough that the second run arrives while the first holds the lock.
    const dir = folder({ '001_a.sql': 'CREATE TABLE t (v INTEGER); SELECT pg_sleep(0.3);', '002_b.sql': 'INSERT INTO t VALUES (1);' });
    const [first, second] = await Promise.all([migratePostgres(a, 'test', dir), migratePostgres(b, 'test', dir)]);
    expect([...first.applied, ...second.applied].sort()).toEqual(['001_a.sql', '002_b.sql']);
    expect([first.applied.length, second.applied.length].sort()).toEqual([0, 2]);
    expect((await a.query('SELECT count(*) AS n FROM t')).rows[0].n).toBe(1);
  });

  it('refuses a schema written by a newer emr-bridge before applying anything', async () => {
    const { pool } = await freshPool();
    await migratePostgres(pool, 'test', folder({ '001_a.sql': 'CREATE TABLE t (v INTEGER);' }));
    await pool.query("INSERT INTO schema_migrations (version, name) VALUES (9, '009_from_the_future.sql')");
    const older = folder({ '001_a.sql': 'CREATE TABLE t (v INTEGER);', '002_b.sql': 'CREATE TABLE w (v INTEGER);' });
    const refusal = migratePostgres(pool, 'db.internal:5432/emr', older);
    await expect(refusal).rejects.toBeInstanceOf(SchemaTooNewError);
    await expect(refusal).rejects.toThrow(/db\.internal:5432\/emr was written by a newer version of emr-bridge \(schema 9; this version knows up to 2\)/);
    expect((await pool.query("SELECT to_regclass('w') IS NULL AS absent")).rows[0].absent).toBe(true);
  });
});

describe("serve's schema check", () => {
  it('names the pending migrations and the command to run, and passes once they are applied', async () => {
    const { pool } = await freshPool();
    const dir = folder({ '001_a.sql': 'CREATE TABLE t (v INTEGER);', '002_b.sql': 'CREATE TABLE u (v INTEGER);' });
    expect(await pendingPostgresMigrations(pool, 'test', dir)).toEqual(['001_a.sql', '002_b.sql']);
    await migratePostgres(pool, 'test', folder({ '001_a.sql': 'CREATE TABLE t (v INTEGER);' }));
    const check = checkPostgresSchema(pool, 'db.internal:5432/emr', dir);
    await expect(check).rejects.toBeInstanceOf(SchemaOutdatedError);
    await expect(check).rejects.toThrow(/db\.internal:5432\/emr has an outdated schema \(1 migration to apply: 002_b\.sql\): run `npx emr-bridge migrate`/);
    await migratePostgres(pool, 'test', dir);
    await expect(checkPostgresSchema(pool, 'test', dir)).resolves.toBeUndefined();
  });

  it('describes a database by host, port and name, never its password', () => {
    expect(describeDatabaseUrl('postgres://bridge:s3cret@db.internal/emr')).toBe('db.internal:5432/emr');
    expect(describeDatabaseUrl('postgresql://bridge:s3cret@10.0.0.5:6543/emr?sslmode=require')).toBe('10.0.0.5:6543/emr');
  });
});

describe('the adapter schema on PostgreSQL', () => {
  let pool: Pool;
  beforeAll(async () => {
    ({ pool } = await freshPool());
    await migratePostgres(pool, 'test');
  });

  it("has SQLite's tables with the same columns, the intake queue instead of SQLite's cursor, and the shared sign-in failures", async () => {
    const sqlite = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    const sqliteTables = new Map<string, string[]>();
    for (const t of sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[])
      sqliteTables.set(t, (sqlite.prepare(`SELECT name FROM pragma_table_info('${t}')`).pluck().all() as string[]).sort());
    sqlite.close();
    const { rows } = await pool.query<{ table_name: string; column_name: string }>(
      "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'",
    );
    const pgTables = new Map<string, string[]>();
    for (const r of rows) pgTables.set(r.table_name, [...(pgTables.get(r.table_name) ?? []), r.column_name].sort());
    for (const name of ['processor_cursor', 'schema_migrations']) sqliteTables.delete(name);
    // What only replicas need: the intake queue, and failed sign-ins counted across replicas (one SQLite process
    // counts them in memory).
    for (const name of ['inbox_intake', 'sign_in_failures', 'schema_migrations']) pgTables.delete(name);
    // Replicas count what they received under their own backend's key, so that they never wait on one row.
    pgTables.set('inbox_minutes', pgTables.get('inbox_minutes')?.filter((c) => c !== 'backend') ?? []);
    expect(Object.fromEntries(pgTables)).toEqual(Object.fromEntries(sqliteTables));
  });

  it("has SQLite's indexes, partial ones included", async () => {
    const sqlite = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    const sqliteIndexes = (sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").pluck().all() as string[]).sort();
    sqlite.close();
    const { rows } = await pool.query<{ indexname: string }>(
      "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_key'",
    );
    expect(rows.map((r) => r.indexname).sort()).toEqual(sqliteIndexes);
  });

  it('reads BIGINT ids and epoch-ms times as numbers', async () => {
    await pool.query("INSERT INTO inbox_events (event_id, event_type, headers, body, received_at) VALUES ('evt_1', 't', '{}', '\\x00', 1763900000000)");
    const { rows } = await pool.query('SELECT id, received_at FROM inbox_events');
    expect(rows).toEqual([{ id: 1, received_at: 1763900000000 }]);
  });
});
