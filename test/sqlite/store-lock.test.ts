// One process per SQLite database: a second holder is refused with the folder and the holder named, the
// lock goes with its holder (released, or its process gone), and a second adapter on the same data folder
// does not start.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { acquireStoreLock, StoreLockedError } from '../../src/sqlite/store-lock.ts';
import { startChild } from '../../bench/support/child.ts';
import { runCli } from '../support/cli.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'emr-bridge-lock-'));
  dirs.push(d);
  return d;
}

describe('the store lock', () => {
  it('refuses a second holder, naming the folder and the holder, until the first releases it', () => {
    const dir = dataDir();
    const path = join(dir, 'emr-bridge.db');
    const first = acquireStoreLock(path, systemClock);
    let refused: unknown;
    try {
      acquireStoreLock(path, systemClock);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(StoreLockedError);
    expect((refused as Error).message).toContain(`the data folder ${dir} is in use by another emr-bridge process (pid ${process.pid}`);
    first.release();
    acquireStoreLock(path, systemClock).release();
  });
});

describe('two serve processes on one data folder', () => {
  const env = (dir: string) => ({ PORT: '0', DATA_DIR: dir, LOG_LEVEL: 'warn', SERVICE_BASE_URL: '', FHIR_BASE_URL: '', ADMIN_TOKEN: '' });

  it('the second refuses to start; once the first is killed outright, a new one starts', async () => {
    const dir = dataDir();
    const first = await startChild(['bin/emr-bridge.js', 'serve'], { env: env(dir), timeoutMs: 30_000 });
    try {
      const second = await runCli(['serve'], env(dir));
      expect(second.code).not.toBe(0);
      expect(second.out).toContain(`the data folder ${dir} is in use by another emr-bridge process (pid ${first.proc.pid}`);
    } finally {
      await first.stop('SIGKILL');
    }
    // SIGKILL leaves no chance to clean up: the operating system released the lock all the same.
    const third = await startChild(['bin/emr-bridge.js', 'serve'], { env: env(dir), timeoutMs: 30_000 });
    const code = await third.stop('SIGTERM');
    expect(code, third.output()).toBe(0);
  }, 90_000);
});
