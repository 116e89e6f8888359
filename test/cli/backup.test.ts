// `emr-bridge backup`: an online copy of a running adapter's database that opens and holds its rows, the
// default place under DATA_DIR, what it refuses (an existing file, a missing database, a PostgreSQL store), and its usage.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKUP_USAGE, backupCommand } from '../../src/cli/backup.ts';
import { captureOutput } from '../support/captured-output.ts';
import { main } from '../../src/cli/main.ts';
import { json } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';
import { startZeroConfigAdapter } from '../support/zero-config-adapter.ts';

let running: Awaited<ReturnType<typeof startZeroConfigAdapter>>;
beforeAll(async () => {
  running = await startZeroConfigAdapter();
});
afterAll(async () => running?.close());

// The command reads its settings from the environment, as at a terminal beside `npm start`.
function useDataDir(dir: string) {
  vi.stubEnv('DATA_DIR', dir);
  vi.stubEnv('DATABASE_PATH', '');
  vi.stubEnv('SERVICE_BASE_URL', '');
  vi.stubEnv('FHIR_BASE_URL', '');
}
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

const capture = captureOutput;
const backup = (argv: string[]) => capture(() => backupCommand(argv));
// Through the CLI's dispatcher, which answers --help and bad arguments for every command.
const run = (argv: string[]) => capture(() => main(argv));

const eventIds = (db: Database.Database) => db.prepare('SELECT event_id FROM inbox_events ORDER BY event_id').pluck().all() as string[];
const migrations = (db: Database.Database) => db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all() as number[];

function readLive<T>(read: (db: Database.Database) => T): T {
  const db = new Database(join(running.dir, 'emr-bridge.db'), { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

describe('emr-bridge backup', () => {
  it('copies the database of a running adapter: the copy opens, passes the integrity check and holds its rows', async () => {
    const { adapter, dir } = running;
    const made = await json('POST', `${adapter.serviceUrl}/_sim/appointments`, { clinicId: adapter.clinicId });
    expect(made.status).toBeLessThan(300);
    const before = await waitFor(() => {
      const ids = readLive(eventIds);
      return ids.length > 0 ? ids : undefined;
    });
    useDataDir(dir);
    const out = join(dir, 'elsewhere', 'copy.db');

    const first = await backup(['--out', out]);
    expect(first.code, first.err).toBe(0);
    expect(first.out.trim()).toBe(out);
    // Zero-configuration mode seals under the key it generated: the backup names it, and it is not in the copy.
    const kid = (JSON.parse(readFileSync(join(dir, 'data-keys.json'), 'utf8')) as { keys: { kid: string; k: string }[] }).keys[0]!;
    expect(first.err).toContain(`sealed under data key ${kid.kid}: a restore needs it`);
    expect(readFileSync(out).includes(kid.k)).toBe(false);
    const after = readLive(eventIds);
    const copy = new Database(out);
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      // Events may keep arriving while it runs: the copy holds every row stored before, none that never was.
      const copied = eventIds(copy);
      expect(copied).toEqual(expect.arrayContaining(before));
      expect(after).toEqual(expect.arrayContaining(copied));
      expect(migrations(copy)).toEqual(readLive(migrations));
      expect(migrations(copy).length).toBeGreaterThan(0);
    } finally {
      copy.close();
    }
    // The adapter never noticed: it still takes writes.
    expect((await json('GET', `${adapter.url}/readyz`)).status).toBe(200);

    const size = statSync(out).size;
    const second = await backup(['--out', out]);
    expect(second.code).toBe(2);
    expect(second.err).toContain('not overwritten');
    expect(statSync(out).size).toBe(size);
    expect(readdirSync(join(dir, 'elsewhere'))).toEqual(['copy.db']);
  });

  it('writes to DATA_DIR/backups under a UTC timestamp by default, making the folder', async () => {
    useDataDir(running.dir);
    const res = await backup([]);
    expect(res.code, res.err).toBe(0);
    const path = res.out.trim();
    expect(path).toMatch(new RegExp(`^${join(running.dir, 'backups').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/emr-bridge-\\d{8}T\\d{6}Z\\.db$`));
    const copy = new Database(path, { readonly: true });
    try {
      expect(migrations(copy)).toEqual(readLive(migrations));
    } finally {
      copy.close();
    }
  });

  it('exits 1 with a message naming the path when there is no database, and makes nothing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'emr-bridge-nodb-'));
    try {
      useDataDir(empty);
      const res = await backup([]);
      expect(res.code).toBe(1);
      expect(res.err).toContain(`no database at ${join(empty, 'emr-bridge.db')}`);
      expect(existsSync(join(empty, 'backups'))).toBe(false);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('refuses with DATABASE_URL set, pointing to pg_dump, and copies nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-pgbackup-'));
    try {
      useDataDir(dir);
      vi.stubEnv('DATABASE_URL', 'postgres://bridge:hunter2-secret@db.internal:5432/emr');
      const res = await backup([]);
      expect(res.code).toBe(1);
      expect(res.err).toContain('emr-bridge backup: DATABASE_URL is set: the state is in PostgreSQL');
      expect(res.err).toContain('pg_dump');
      expect(res.err).not.toContain('hunter2-secret');
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints its usage, with --out and its default, for -h and --help', async () => {
    for (const flag of ['-h', '--help']) {
      const res = await run(['backup', flag]);
      expect(res.code).toBe(0);
      expect(res.out.trim()).toBe(BACKUP_USAGE);
    }
    expect(BACKUP_USAGE).toMatch(/--out FILE .*\(default: <DATA_DIR>\/backups\/emr-bridge-<UTC time>\.db\)/);
  });

  it('refuses an argument it does not take, exit 2', async () => {
    expect((await run(['backup', 'now'])).code).toBe(2);
  });
});
