// `npx emr-bridge migrate` as a person runs it: it applies the configured database's migrations (the SQLite
// file, or PostgreSQL with DATABASE_URL), says what it applied, exits 0, and has nothing to do the second time.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADAPTER_MIGRATIONS, POSTGRES_MIGRATIONS } from '../../src/paths.ts';
import { runCli } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const migrationsIn = (dir: string) => readdirSync(dir).filter((f) => /^\d{3,}_.*\.sql$/.test(f));

describe('emr-bridge migrate', () => {
  it('on SQLite: creates the file with the whole schema, then finds it current', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'emr-bridge-migrate-cli-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env = { DATA_DIR: dataDir, DATABASE_PATH: undefined, DATABASE_URL: undefined };
    const first = await runCli(['migrate'], env);
    expect(first.code).toBe(0);
    const names = migrationsIn(ADAPTER_MIGRATIONS);
    expect(first.out).toContain(`SQLite ${join(dataDir, 'emr-bridge.db')}: applied ${names.length} migrations`);
    for (const name of names) expect(first.out).toContain(`  ${name}`);
    const second = await runCli(['migrate'], env);
    expect(second).toEqual({ code: 0, out: `SQLite ${join(dataDir, 'emr-bridge.db')}: the schema is current, nothing to apply\n` });
  });

  it('on PostgreSQL (DATABASE_URL): applies db/postgres, then finds it current, never printing the password', async () => {
    const database: TestDatabase = await createTestDatabase();
    cleanups.push(() => database.drop());
    const env = { DATABASE_URL: database.url, DATABASE_PATH: undefined };
    const first = await runCli(['migrate'], env);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/^PostgreSQL 127\.0\.0\.1:\d+\/t_\w+: applied \d+ migrations?\n/);
    for (const name of migrationsIn(POSTGRES_MIGRATIONS)) expect(first.out).toContain(`  ${name}`);
    expect(first.out).not.toContain(new URL(database.url).password);
    const second = await runCli(['migrate'], env);
    expect(second.code).toBe(0);
    expect(second.out).toMatch(/: the schema is current, nothing to apply\n$/);
  });

  it('stops at a DATABASE_URL that is not PostgreSQL, exit 2', async () => {
    const res = await runCli(['migrate'], { DATABASE_URL: 'mysql://db/emr', DATABASE_PATH: undefined });
    expect(res.code).toBe(2);
    expect(res.out).toContain('DATABASE_URL: only PostgreSQL is supported');
  });

  it('takes no arguments, exit 2', async () => {
    const res = await runCli(['migrate', 'now'], {});
    expect(res.code).toBe(2);
    expect(res.out).toContain('takes no arguments');
  });
});
