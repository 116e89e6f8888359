// PostgreSQL for tests: the server the globalSetup started for this vitest run (./postgres-global-setup.ts),
// and a fresh database per call, so that no two test files (or tests) share state. Use:
//
//   const database = await createTestDatabase();   // { url, drop }
//   ... new pg.Pool({ connectionString: database.url }) ...
//   await database.drop();                          // in afterAll; closes leftover connections too
//
// When the server could not start, createTestDatabase rejects with the reason (the test fails, never skips).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export type ProvidedPostgres = { host: string; port: number; user: string; password: string } | { error: string };

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: ProvidedPostgres;
  }
}

export interface TestDatabase {
  /** postgres://… of a database nobody else uses. */
  url: string;
  /** Drops the database (connections still open to it are ended). */
  drop(): Promise<void>;
}

function server(): Exclude<ProvidedPostgres, { error: string }> {
  const provided = inject('postgres');
  if (!provided) throw new Error('no PostgreSQL server: test/support/postgres-global-setup.ts is not in vitest.config.ts globalSetup');
  if ('error' in provided) throw new Error(`PostgreSQL for the tests could not start: ${provided.error}`);
  return provided;
}

const urlOf = (s: Exclude<ProvidedPostgres, { error: string }>, database: string) =>
  `postgres://${s.user}:${encodeURIComponent(s.password)}@${s.host}:${s.port}/${database}`;

async function onServer<T>(s: Exclude<ProvidedPostgres, { error: string }>, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlOf(s, 'postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const s = server();
  const name = `t_${process.pid}_${randomBytes(6).toString('hex')}`;
  await onServer(s, (c) => c.query(`CREATE DATABASE ${name}`));
  return {
    url: urlOf(s, name),
    async drop() {
      await onServer(s, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
