// For the SQLite tests that open real files: a fresh folder per database and every database opened, closed (its
// checkpoint worker stopped) and removed after each test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { closeDatabase, type Db, openDatabase } from '../../../src/sqlite/open.ts';

export function tempDatabases(prefix: string) {
  const dirs: string[] = [];
  const open: Db[] = [];
  afterEach(async () => {
    for (const db of open.splice(0)) await closeDatabase(db);
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    /** A path for a database file in a folder of its own. */
    dbPath(): string {
      const dir = mkdtempSync(join(tmpdir(), `emr-bridge-${prefix}-`));
      dirs.push(dir);
      return join(dir, 'emr-bridge.db');
    },
    /** openDatabase, closed after the test. */
    opened(...args: Parameters<typeof openDatabase>): Db {
      const db = openDatabase(...args);
      open.push(db);
      return db;
    },
  };
}
