// The test PostgreSQL server: started for the run, a fresh database per call, gone once dropped.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/postgres.ts';

describe('the test PostgreSQL server', () => {
  it('gives each caller a database of its own, dropped on request', async () => {
    const a = await createTestDatabase();
    const b = await createTestDatabase();
    expect(a.url).not.toBe(b.url);
    const client = new pg.Client({ connectionString: a.url });
    // The server ends this connection when the database is dropped: expected, not an unhandled error.
    client.on('error', () => undefined);
    await client.connect();
    await client.query('CREATE TABLE only_in_a (v INT)');
    const { rows } = await client.query<{ n: number }>('SELECT 1 AS n');
    expect(rows[0]!.n).toBe(1);
    await a.drop();
    // The drop ends connections still open to the database.
    await expect(client.query('SELECT 1')).rejects.toThrow();
    await client.end().catch(() => undefined);
    const other = new pg.Client({ connectionString: b.url });
    await other.connect();
    const { rows: tables } = await other.query("SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'only_in_a'");
    expect(tables[0]!.n).toBe(0);
    await other.end();
    await b.drop();
  });
});
