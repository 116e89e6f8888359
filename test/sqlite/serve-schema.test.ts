// The SQLite schema policy: serve migrates a brand-new file by itself (zero configuration needs no step), but
// refuses an existing file whose schema is behind, naming `npx emr-bridge migrate`; migrate applies what is
// pending and is refused while a serve holds the file.
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { migrate } from '../../src/sqlite/migrate.ts';
import { SchemaTooNewError } from '../../src/migration-files.ts';
import { acquireStoreLock, StoreLockedError } from '../../src/sqlite/store-lock.ts';
import { SchemaOutdatedError } from '../../src/storage/schema.ts';
import { silentLogger } from '../../src/logger.ts';
import { migrateSqlite, openSqliteForServe } from '../../src/storage/sqlite/schema.ts';

const clock = createManualClock();
const dirs: string[] = [];
function folder(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-serve-schema-'));
  dirs.push(dir);
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const v1 = { '001_a.sql': 'CREATE TABLE t (v INTEGER);' };
const v2 = { ...v1, '002_b.sql': 'CREATE TABLE u (v INTEGER);' };

/** A database file with the schema of `files`, as an older emr-bridge left it. */
function databaseAt(files: Record<string, string>): string {
  const path = join(folder(), 'emr-bridge.db');
  const db = new Database(path);
  migrate(db, folder(files));
  db.close();
  return path;
}

describe('serve on SQLite', () => {
  it('gives a brand-new file the whole schema', () => {
    const path = join(folder(), 'data', 'emr-bridge.db');
    const db = openSqliteForServe(path, silentLogger(), folder(v2));
    expect(db.prepare('SELECT name FROM schema_migrations ORDER BY version').pluck().all()).toEqual(['001_a.sql', '002_b.sql']);
    db.close();
  });

  it('opens a file whose schema is current', () => {
    const path = databaseAt(v2);
    const db = openSqliteForServe(path, silentLogger(), folder(v2));
    expect(db.prepare('SELECT count(*) FROM u').pluck().get()).toBe(0);
    db.close();
  });

  it('refuses an existing file whose schema is behind, names the command, and leaves the file as it was', () => {
    const path = databaseAt(v1);
    const before = join(folder(), 'before.db');
    copyFileSync(path, before);
    expect(() => openSqliteForServe(path, silentLogger(), folder(v2))).toThrow(SchemaOutdatedError);
    expect(() => openSqliteForServe(path, silentLogger(), folder(v2))).toThrow(
      `the database ${path} has an outdated schema (1 migration to apply: 002_b.sql): run \`npx emr-bridge migrate\` with the same settings, then start serve again`,
    );
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT name FROM schema_migrations').pluck().all()).toEqual(['001_a.sql']);
    expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'u'").pluck().get()).toBe(0);
    db.close();
    expect(statSync(path).size).toBe(statSync(before).size);
  });

  it('refuses a file written by a newer emr-bridge', () => {
    const path = databaseAt(v2);
    expect(() => openSqliteForServe(path, silentLogger(), folder(v1))).toThrow(SchemaTooNewError);
  });
});

describe('migrate on SQLite', () => {
  it('applies what is pending and reports it; a second run has nothing to do', () => {
    const path = databaseAt(v1);
    expect(migrateSqlite(path, clock, folder(v2))).toEqual({ engine: 'sqlite', where: path, applied: ['002_b.sql'] });
    expect(migrateSqlite(path, clock, folder(v2)).applied).toEqual([]);
    openSqliteForServe(path, silentLogger(), folder(v2)).close();
  });

  it('is refused while a serve holds the file', () => {
    const path = databaseAt(v1);
    const serve = acquireStoreLock(path, clock);
    try {
      expect(() => migrateSqlite(path, clock, folder(v2))).toThrow(StoreLockedError);
    } finally {
      serve.release();
    }
  });
});
