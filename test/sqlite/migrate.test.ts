// The migration runner: numbered files in order, each once, each in a transaction, recorded.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/sqlite/migrate.ts';
import { closeDatabase, openDatabase } from '../../src/sqlite/open.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';

const dirs: string[] = [];
function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-migrations-'));
  dirs.push(dir);
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('migrate', () => {
  it('applies files in numeric order, once, and records them', () => {
    const dir = folder({
      '010_b.sql': 'INSERT INTO t VALUES (2);',
      '002_a.sql': 'CREATE TABLE t (v INTEGER);',
      'README.md': 'not a migration',
    });
    const db = new Database(':memory:');
    expect(migrate(db, dir)).toEqual(['002_a.sql', '010_b.sql']);
    expect(migrate(db, dir)).toEqual([]);
    expect(db.prepare('SELECT v FROM t').pluck().all()).toEqual([2]);
    expect(db.prepare('SELECT name FROM schema_migrations ORDER BY version').pluck().all()).toEqual(['002_a.sql', '010_b.sql']);
  });

  it('rolls a failing migration back whole and records nothing for it', () => {
    const dir = folder({ '001_ok.sql': 'CREATE TABLE t (v INTEGER);', '002_bad.sql': 'INSERT INTO t VALUES (1); INSERT INTO nope VALUES (1);' });
    const db = new Database(':memory:');
    expect(() => migrate(db, dir)).toThrow(/nope/);
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0);
    expect(db.prepare('SELECT name FROM schema_migrations').pluck().all()).toEqual(['001_ok.sql']);
  });

  it('opens the adapter database in WAL mode with synchronous=FULL', async () => {
    const dir = folder({});
    const db = openDatabase({ path: join(dir, 'a.db'), migrationsDir: ADAPTER_MIGRATIONS });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    await closeDatabase(db);
  });
});

describe('a database written by a newer emr-bridge', () => {
  it('is refused with a clear message before anything is applied', () => {
    const dir = folder({ '001_a.sql': 'CREATE TABLE t (v INTEGER);', '002_b.sql': 'CREATE TABLE u (v INTEGER);' });
    const newer = folder({});
    const path = join(newer, 'state.db');
    const db = new Database(path);
    migrate(db, dir);
    db.prepare("INSERT INTO schema_migrations (version, name) VALUES (9, '009_from_the_future.sql')").run();
    db.close();
    const older = folder({
      '001_a.sql': 'CREATE TABLE t (v INTEGER);',
      '002_b.sql': 'CREATE TABLE u (v INTEGER);',
      '003_c.sql': 'CREATE TABLE w (v INTEGER);',
    });
    expect(() => openDatabase({ path, migrationsDir: older })).toThrow(/written by a newer version of emr-bridge \(schema 9; this version knows up to 3\)/);
    const after = new Database(path);
    expect(after.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'w'").pluck().get()).toBe(0);
    after.close();
  });
});
