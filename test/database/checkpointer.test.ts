// WAL checkpoints on their own thread: the adapter's connection never copies the WAL into the main file
// during a commit; the background thread does, and on close the WAL is folded in and truncated.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openWithCheckpointer } from '../../src/database/open.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { waitFor } from '../support/wait.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fill(db: ReturnType<typeof openWithCheckpointer>['db'], from: number, rows: number) {
  const insert = db.prepare('INSERT INTO inbox_events (event_id, event_type, headers, body, received_at) VALUES (?, ?, ?, ?, ?)');
  const body = Buffer.alloc(2048, 0x7b);
  // Small transactions, as the receiver commits them: each one would be a chance for an inline checkpoint.
  for (let i = from; i < from + rows; i += 10) db.transaction(() => {
    for (let j = i; j < i + 10; j++) insert.run(`e-${j}`, 'appointment.created', '{}', body, 0);
  })();
}

describe('background checkpoints', () => {
  it('keep commits free of checkpoints, fold the WAL into the main file, and truncate it on close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-ckpt-'));
    dirs.push(dir);
    const path = join(dir, 'adapter.db');
    const owned = openWithCheckpointer({ path, migrationsDir: ADAPTER_MIGRATIONS });
    expect(owned.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const mainBefore = statSync(path).size;
    fill(owned.db, 0, 3000); // about 6 MB: past the 1000-page point where SQLite would checkpoint inline
    await waitFor(() => statSync(path).size > mainBefore + 4 * 1024 * 1024, 10_000);
    fill(owned.db, 3000, 100);
    await owned.close();
    expect(!existsSync(`${path}-wal`) || statSync(`${path}-wal`).size === 0).toBe(true);

    const again = openWithCheckpointer({ path, migrationsDir: ADAPTER_MIGRATIONS });
    expect(again.db.prepare('SELECT count(*) FROM inbox_events').pluck().get()).toBe(3100);
    await again.close();
  });

  it('leaves an in-memory database as it is', async () => {
    const owned = openWithCheckpointer({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    expect(owned.db.prepare('SELECT count(*) FROM inbox_events').pluck().get()).toBe(0);
    await owned.close();
    expect(owned.db.open).toBe(false);
  });
});
