// The throwaway PostgreSQL server's starter (bench/support/embedded-postgres.ts): it starts whoever runs it (as root,
// as the postgres user, from a shared copy of the binaries) and, when it cannot, says why in one line.
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { closedFolderOnTheWay, PostgresStartError, sharedCopy, startEmbeddedPostgres } from '../../bench/support/embedded-postgres.ts';

const isRoot = process.getuid?.() === 0;
const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A fresh folder every user can enter (mkdtemp makes it 0700). */
function folder(mode = 0o755): string {
  const made = mkdtempSync(join(tmpdir(), 'emr-bridge-pg-test-'));
  chmodSync(made, mode);
  folders.push(made);
  return made;
}

/** A binaries folder whose bin/initdb is `script`, with `mode`. */
function binaries(script: string, mode: number, folderMode = 0o755): string {
  const root = folder(folderMode);
  mkdirSync(join(root, 'bin'));
  chmodSync(join(root, 'bin'), 0o755);
  writeFileSync(join(root, 'bin', 'initdb'), `#!/bin/sh\n${script}\n`);
  chmodSync(join(root, 'bin', 'initdb'), mode);
  return root;
}

async function failure(start: Promise<unknown>): Promise<PostgresStartError> {
  const err = await start.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PostgresStartError);
  expect((err as Error).message).not.toContain('\n');
  return err as PostgresStartError;
}

describe('a server that cannot start', () => {
  it('says in one line which program could not run, and why', async () => {
    const bin = binaries('exit 0', 0o644);
    const err = await failure(startEmbeddedPostgres({ binaries: bin }));
    const as = isRoot ? ' as the postgres user' : '';
    expect(err.message).toBe(`PostgreSQL could not start: cannot run ${bin}/bin/initdb${as} (EACCES, permission denied)`);
    expect(err.retry).toBe(false);
  });

  it("gives a failing program's own last error line", async () => {
    const bin = binaries('echo "the files belonging to this database system will be owned by postgres"\necho "initdb: error: disk on fire" >&2\nexit 1', 0o755);
    const err = await failure(startEmbeddedPostgres({ binaries: bin }));
    expect(err.reason).toBe('initdb exited with code 1: initdb: error: disk on fire');
  });

  it.runIf(isRoot)('run as root, names the folder the postgres user cannot enter', async () => {
    const bin = binaries('exit 0', 0o755, 0o700);
    const err = await failure(startEmbeddedPostgres({ binaries: bin }));
    expect(err.reason).toBe(`cannot run ${bin}/bin/initdb as the postgres user (EACCES, permission denied): it cannot enter ${bin}`);
  });
});

describe('the folder another user cannot enter', () => {
  const stranger = { uid: 2_000_000_001, gid: 2_000_000_001 };

  it('is the first one on the way that is closed to others', () => {
    const open = folder(0o755);
    const closed = join(open, 'closed');
    mkdirSync(join(closed, 'inner'), { recursive: true });
    chmodSync(closed, 0o700);
    expect(closedFolderOnTheWay(join(closed, 'inner', 'initdb'), stranger)).toBe(closed);
    expect(closedFolderOnTheWay(join(open, 'initdb'), stranger)).toBeUndefined();
  });

  it("is none when the closed folder is the user's own", () => {
    const own = folder(0o700);
    const { uid, gid } = statSync(own);
    expect(closedFolderOnTheWay(join(own, 'initdb'), { uid, gid })).toBeUndefined();
  });
});

describe('the shared copy of the binaries', () => {
  function source(): string {
    const root = folder(0o700);
    mkdirSync(join(root, 'bin'));
    mkdirSync(join(root, 'lib'));
    writeFileSync(join(root, 'bin', 'initdb'), 'v1');
    chmodSync(join(root, 'bin', 'initdb'), 0o600);
    writeFileSync(join(root, 'lib', 'libpq.so.5.18'), 'lib');
    chmodSync(join(root, 'lib', 'libpq.so.5.18'), 0o600);
    symlinkSync('libpq.so.5.18', join(root, 'lib', 'libpq.so.5'));
    return root;
  }

  it('is readable and runnable by every user, its links kept', () => {
    const copy = sharedCopy(source(), folder(0o755), 'pg-1');
    expect(lstatSync(copy).mode & 0o777).toBe(0o755);
    expect(lstatSync(join(copy, 'lib')).mode & 0o777).toBe(0o755);
    expect(lstatSync(join(copy, 'bin', 'initdb')).mode & 0o777).toBe(0o755);
    expect(lstatSync(join(copy, 'lib', 'libpq.so.5.18')).mode & 0o777).toBe(0o644);
    expect(readlinkSync(join(copy, 'lib', 'libpq.so.5'))).toBe('libpq.so.5.18');
  });

  it('is made once per key and then reused', () => {
    const from = source();
    const base = folder(0o755);
    const copy = sharedCopy(from, base, 'pg-1');
    writeFileSync(join(from, 'bin', 'initdb'), 'v2');
    expect(sharedCopy(from, base, 'pg-1')).toBe(copy);
    expect(readFileSync(join(copy, 'bin', 'initdb'), 'utf8')).toBe('v1');
    expect(readFileSync(join(sharedCopy(from, base, 'pg-2'), 'bin', 'initdb'), 'utf8')).toBe('v2');
  });

  it('is refused, in one line, when another user could have written it', () => {
    const base = folder(0o755);
    const planted = join(base, 'emr-bridge-pg-1');
    mkdirSync(planted);
    chmodSync(planted, 0o777);
    expect(() => sharedCopy(source(), base, 'pg-1')).toThrow(
      new PostgresStartError(`${planted} is not a folder of this user's that only it can write: remove it`),
    );
  });
});

describe('a server that starts', () => {
  it(`runs as ${isRoot ? 'the postgres user (run as root)' : 'this user'}, answers, and is gone once stopped`, async () => {
    const server = await startEmbeddedPostgres();
    const pid = Number(readFileSync(join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    try {
      const client = new pg.Client({ connectionString: server.url('postgres') });
      await client.connect();
      const { rows } = await client.query<{ n: number }>('SELECT 1 AS n');
      await client.end();
      expect(rows[0]!.n).toBe(1);
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      if (isRoot) expect(uid).not.toBe(0);
      else expect(uid).toBe(process.getuid?.());
    } finally {
      await server.stop();
    }
    expect(() => process.kill(pid, 0)).toThrow();
    expect(() => statSync(server.dataDir)).toThrow();
  });
});
