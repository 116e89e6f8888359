// The tests' globalSetup (test/support/postgres-global-setup.ts): a server that cannot start is one line on standard
// error naming why, and that reason is what the tests that need PostgreSQL get; the run goes on.
import { afterEach, expect, it, vi } from 'vitest';
import { type PostgresServer, PostgresStartError } from '../../bench/support/embedded-postgres.ts';
import setup from './postgres-global-setup.ts';

afterEach(() => vi.restoreAllMocks());

function project() {
  const provided: Record<string, unknown> = {};
  const provide = (key: string, value: unknown) => {
    provided[key] = value;
  };
  return { provided, provide };
}

const asProject = (p: ReturnType<typeof project>) => p as unknown as Parameters<typeof setup>[0];

function stderr(): () => string {
  let written = '';
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    written += String(chunk);
    return true;
  });
  return () => written;
}

it('a server that cannot start: one line saying why, and the reason provided to the tests', async () => {
  const written = stderr();
  const p = project();
  const reason = 'cannot run /x/bin/initdb as the postgres user (EACCES, permission denied): it cannot enter /x';
  const teardown = await setup(asProject(p), () => Promise.reject(new PostgresStartError(reason)));
  expect(written()).toBe(`PostgreSQL for the tests could not start: ${reason}\n`);
  expect(p.provided.postgres).toEqual({ error: reason });
  await teardown();
});

it('any other failure: its first line only, never a stack', async () => {
  const written = stderr();
  const p = project();
  await setup(asProject(p), () => Promise.reject(new Error('spawn /x EACCES\n    at ChildProcess._handle.onexit (node:internal/child_process:287:19)')));
  expect(written()).toBe('PostgreSQL for the tests could not start: spawn /x EACCES\n');
  expect(p.provided.postgres).toEqual({ error: 'spawn /x EACCES' });
});

it('a server that starts: its address provided, and stopped at teardown', async () => {
  const written = stderr();
  const p = project();
  const stop = vi.fn(async () => undefined);
  const server = { host: '127.0.0.1', port: 5999, user: 'postgres', password: 'pw', stop } as unknown as PostgresServer;
  const teardown = await setup(asProject(p), async () => server);
  expect(p.provided.postgres).toEqual({ host: '127.0.0.1', port: 5999, user: 'postgres', password: 'pw' });
  expect(written()).toBe('');
  await teardown();
  expect(stop).toHaveBeenCalledOnce();
});
