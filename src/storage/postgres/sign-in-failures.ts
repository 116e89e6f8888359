// Failed sign-ins per address in PostgreSQL (../sign-in-failures.ts), shared by every replica. A failure is
// counted under the row's lock (the row made first if the address has none), so two replicas hearing two
// guesses at once count two; quiet rows are dropped as failures come in.
import type { FailureRecord, SignInFailureStore } from '../sign-in-failures.ts';
import { type Pool, withTransaction } from './pool.ts';

interface Row {
  failures: number;
  last_failure_at: string | number;
  blocked_until: string | number;
}

const toRecord = (r: Row): FailureRecord => ({
  failures: r.failures,
  lastFailureAt: Number(r.last_failure_at),
  blockedUntil: Number(r.blocked_until),
});

export function createPostgresSignInFailures(pool: Pool): SignInFailureStore {
  return {
    async get(address) {
      const { rows } = await pool.query<Row>('SELECT failures, last_failure_at, blocked_until FROM sign_in_failures WHERE address = $1', [address]);
      return rows[0] && rows[0].failures > 0 ? toRecord(rows[0]) : undefined;
    },
    fail: (address, next, at) =>
      withTransaction(pool, async (client) => {
        await client.query('DELETE FROM sign_in_failures WHERE last_failure_at < $1 AND blocked_until <= $2 AND address <> $3', [
          at.forgetBefore,
          at.now,
          address,
        ]);
        // A row with no failure yet stands for "none": the lock below then holds for the first failure too.
        await client.query('INSERT INTO sign_in_failures (address, failures, last_failure_at, blocked_until) VALUES ($1, 0, 0, 0) ON CONFLICT DO NOTHING', [
          address,
        ]);
        const { rows } = await client.query<Row>('SELECT failures, last_failure_at, blocked_until FROM sign_in_failures WHERE address = $1 FOR UPDATE', [
          address,
        ]);
        const current = rows[0]!.failures > 0 ? toRecord(rows[0]!) : undefined;
        const r = next(current);
        await client.query('UPDATE sign_in_failures SET failures = $2, last_failure_at = $3, blocked_until = $4 WHERE address = $1', [
          address,
          r.failures,
          r.lastFailureAt,
          r.blockedUntil,
        ]);
        return r;
      }),
    async clear(address) {
      // Deletes nothing (and so writes nothing) for an address with no failures: the usual case, on every request.
      await pool.query('DELETE FROM sign_in_failures WHERE address = $1', [address]);
    },
  };
}
