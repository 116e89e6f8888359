// The PostgreSQL pool: a transaction commits whole or not at all, and the failures that mean "the database
// cannot take work now" (503, retry) are told apart from the others (a bug: 500).
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/errors.ts';
import { asUnavailable, createPool, isUnavailable, type Pool, withTransaction } from '../../src/storage/postgres/pool.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isUnavailable', () => {
  it.each([
    ['the server cannot be reached', withCode('ECONNREFUSED')],
    ['a connection reset', withCode('ECONNRESET')],
    ['connection failure (class 08)', withCode('08006')],
    ['the server shutting down', withCode('57P01')],
    ['the server starting up', withCode('57P03')],
    ['a read-only transaction or standby', withCode('25006')],
    ['a full disk', withCode('53100')],
    ['out of memory', withCode('53200')],
    ['too many connections', withCode('53300')],
    ['a statement timeout', withCode('57014')],
    ['a lost connection, in node-postgres words', new Error('Connection terminated unexpectedly')],
    ['no connection in time', new Error('timeout exceeded when trying to connect')],
  ])('is true for %s', (_, err) => {
    expect(isUnavailable(err)).toBe(true);
    const mapped = asUnavailable(err, 'the store cannot take it now');
    expect(mapped).toBeInstanceOf(UnavailableError);
    expect(mapped).toMatchObject({ status: 503, retryable: true, message: 'the store cannot take it now', cause: err });
  });

  it.each([
    ['a unique violation', withCode('23505')],
    ['a syntax error', withCode('42601')],
    ['a plain bug', new TypeError('x is undefined')],
    ['not an error at all', 'a string'],
  ])('is false for %s, which is passed on as it is', (_, err) => {
    expect(isUnavailable(err)).toBe(false);
    expect(asUnavailable(err)).toBe(err);
  });
});

describe('a pool on a real server', () => {
  let database: TestDatabase;
  let pool: Pool;
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = createPool(database.url, { max: 2 });
    await pool.query('CREATE TABLE t (id BIGSERIAL PRIMARY KEY, at BIGINT NOT NULL)');
  });
  afterAll(async () => {
    await pool.end();
    await database.drop();
  });

  it('commits a transaction whole, and rolls a failed one back whole', async () => {
    await withTransaction(pool, async (c) => {
      await c.query('INSERT INTO t (at) VALUES (1), (2)');
    });
    await expect(
      withTransaction(pool, async (c) => {
        await c.query('INSERT INTO t (at) VALUES (3)');
        throw new Error('half-way');
      }),
    ).rejects.toThrow('half-way');
    expect((await pool.query('SELECT at FROM t ORDER BY id')).rows).toEqual([{ at: 1 }, { at: 2 }]);
  });

  it('reads BIGINT as a number', async () => {
    const { rows } = await pool.query('SELECT count(*) AS n, max(at) AS newest, 1763900000123::bigint AS ms FROM t');
    expect(rows[0]).toEqual({ n: 2, newest: 2, ms: 1763900000123 });
  });

  it('cancels a statement past its timeout, as unavailable', async () => {
    const quick = createPool(database.url, { max: 1, statementTimeoutMs: 100 });
    const err = await quick.query('SELECT pg_sleep(2)').catch((e: unknown) => e);
    await quick.end();
    expect((err as { code?: string }).code).toBe('57014');
    expect(isUnavailable(err)).toBe(true);
  });

  it('reports a server that is not there as unavailable', async () => {
    // A port nothing listens on.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const nowhere = createPool(`postgres://u:p@127.0.0.1:${port}/none`, { connectionTimeoutMs: 1_000 });
    const err = await nowhere.query('SELECT 1').catch((e: unknown) => e);
    await nowhere.end();
    expect(isUnavailable(err)).toBe(true);
  });
});
