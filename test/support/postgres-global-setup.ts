// vitest globalSetup: one embedded PostgreSQL server per test run (about a second to start), shared by every
// test file through `inject('postgres')`; each file makes databases of its own (./postgres.ts). A server that
// cannot start does not stop the run: one line on standard error says why ("PostgreSQL for the tests could not
// start: <reason>"), the reason is provided instead, and every test that needs PostgreSQL fails with it (never
// skipped in silence), while the SQLite tests run as usual. It starts whoever runs it, from wherever the checkout
// is: as root, from a copy of its binaries that the postgres user can reach (bench/support/embedded-postgres.ts).
import type { TestProject } from 'vitest/node';
import { PostgresStartError } from '../../bench/support/embedded-postgres.ts';
import { startEmbeddedPostgres } from './embedded-postgres.ts';

/** `start` is for the tests of this file; vitest passes only the project. */
export default async function setup(project: Pick<TestProject, 'provide'>, start = startEmbeddedPostgres): Promise<() => Promise<void>> {
  try {
    const server = await start();
    project.provide('postgres', { host: server.host, port: server.port, user: server.user, password: server.password });
    return () => server.stop();
  } catch (err) {
    const reason = err instanceof PostgresStartError ? err.reason : String((err as Error | undefined)?.message ?? err).split('\n')[0]!;
    process.stderr.write(`PostgreSQL for the tests could not start: ${reason}\n`);
    project.provide('postgres', { error: reason });
    return async () => undefined;
  }
}
