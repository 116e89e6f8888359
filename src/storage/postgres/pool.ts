// The PostgreSQL connection pool of one replica (DATABASE_URL), its transactions, and which failures mean
// "the database cannot take work now" (a 503 and a retry, like SQLite's full disk or busy lock) rather than
// a bug. BIGINT columns (ids, epoch-ms times, counts) are read as numbers: every one the adapter keeps is far
// below 2^53, and the stores then share SQLite's row shapes.
import pg from 'pg';
import type { CustomTypesConfig, Pool, PoolClient } from 'pg';
import { UnavailableError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';

export type { Pool, PoolClient } from 'pg';

export interface PoolOptions {
  /** Connections at most (default 10). */
  max?: number;
  /** A statement running longer is cancelled (SQLSTATE 57014) and the work retried (default 10 s; 0: none). */
  statementTimeoutMs?: number;
  /** How long to wait for a connection before failing (default 5 s). */
  connectionTimeoutMs?: number;
  /** Shown in pg_stat_activity (default emr-bridge). */
  applicationName?: string;
  /** Where a failure of an idle connection is reported (otherwise it would crash the process). */
  logger?: Logger;
}

const INT8_OID = 20;

/** BIGINT as a number (node-postgres's default is a string); every other type as node-postgres reads it. */
const adapterTypes: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as CustomTypesConfig['getTypeParser'],
};

export function createPool(url: string, opts: PoolOptions = {}): Pool {
  const statementTimeout = opts.statementTimeoutMs ?? 10_000;
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    connectionTimeoutMillis: opts.connectionTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: opts.applicationName ?? 'emr-bridge',
    ...(statementTimeout > 0 ? { statement_timeout: statementTimeout } : {}),
    // A replica stalled inside a transaction must not hold its row locks (and leases) for ever.
    idle_in_transaction_session_timeout: 60_000,
    types: adapterTypes,
  });
  return guardConnections(pool, opts.logger);
}

/**
 * A connection the server ended (a restart, a failover, pg_terminate_backend) emits 'error', and an 'error'
 * event nobody listens to ends the process: so every connection of `pool` has a listener from its creation on,
 * checked out or not (a query under way rejects with the failure as well; a client that failed is destroyed on
 * release). The pool drops an idle one by itself, and re-emits its error here. Every pool made here takes it.
 */
export function guardConnections(pool: Pool, logger?: Pick<Logger, 'warn'>): Pool {
  pool.on('connect', (client) => {
    client.on('error', (err) => logger?.warn({ code: (err as { code?: string }).code }, 'database connection lost'));
  });
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Runs `fn` in one transaction on one connection: COMMIT when it resolves, ROLLBACK when it throws (the error
 * is rethrown). A connection that failed is destroyed, never handed back to the pool.
 */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackFailure) {
      broken = rollbackFailure as Error;
    }
    throw err;
  } finally {
    client.release(broken);
  }
}

/** Node's socket errors: the server cannot be reached, or the connection broke. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);

/**
 * SQLSTATEs that say the database cannot take work now, whatever the work: the server is shutting down or
 * starting (57P01-57P03), the session was ended (57P05), a read-only standby or a read-only transaction
 * (25006), out of disk, memory or connections (class 53), an I/O error (58030), a statement cancelled by
 * statement_timeout (57014, the lock or the load held it too long).
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '57P05', '25006', '53000', '53100', '53200', '53300', '53400', '58030', '57014']);

/** node-postgres's own messages for a connection that failed or was never made. */
const CONNECTION_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed)/;

/** True when `err` means the database cannot take the work now (a retry later can succeed). */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof UnavailableError) return true;
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
    // Class 08: connection exception (08000, 08003, 08006, 08001 cannot connect, 08004 refused...).
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  return CONNECTION_MESSAGE.test(err.message);
}

/** `err` as an UnavailableError (503, retryable) when it is one of those failures; otherwise `err` itself. */
export function asUnavailable(err: unknown, message = 'the database cannot take the work now', code?: string): unknown {
  if (err instanceof UnavailableError || !isUnavailable(err)) return err;
  return new UnavailableError(message, err, code);
}
