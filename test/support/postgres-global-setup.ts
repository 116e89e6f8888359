// vitest globalSetup: one embedded PostgreSQL server per test run (about a second to start), shared by every
// test file through `inject('postgres')`; each file makes databases of its own (./postgres.ts). A server that
// cannot start does not stop the run: the reason is provided instead, and every test that needs PostgreSQL
// fails with it (never skipped in silence), while the SQLite tests run as usual.
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from './embedded-postgres.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  try {
    const server = await startEmbeddedPostgres();
    project.provide('postgres', { host: server.host, port: server.port, user: server.user, password: server.password });
    return () => server.stop();
  } catch (err) {
    project.provide('postgres', { error: (err as Error).message });
    return async () => undefined;
  }
}
