// EMR modules' own state in PostgreSQL (../emr-state.ts), shared by every replica: putNew is decided by the
// primary key, so two replicas taking the same message agree on which took it first.
import type { Clock } from '../../clock.ts';
import type { EmrStateStores, StateEntries } from '../emr-state.ts';
import type { Pool, PoolClient } from './pool.ts';

/** Writes a module's entries in one statement (replacing what is there), on `client`: in its transaction, or one of its own. */
export async function putEntries(client: Pool | PoolClient, module: string, entries: StateEntries, now: number): Promise<void> {
  if (!entries.length) return;
  await client.query(
    'INSERT INTO emr_state (module, key, value, updated_at) SELECT $1, k, v, $4 FROM unnest($2::text[], $3::text[]) AS e(k, v) ON CONFLICT (module, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
    [module, entries.map(([k]) => k), entries.map(([, v]) => v), now],
  );
}

export function createPostgresEmrState(pool: Pool, clock: Clock): EmrStateStores {
  return (module) => ({
    async get(key) {
      const { rows } = await pool.query<{ value: string }>('SELECT value FROM emr_state WHERE module = $1 AND key = $2', [module, key]);
      return rows[0]?.value;
    },
    async getMany(keys) {
      const { rows } = await pool.query<{ key: string; value: string }>('SELECT key, value FROM emr_state WHERE module = $1 AND key = ANY($2)', [
        module,
        [...keys],
      ]);
      return new Map(rows.map((r) => [r.key, r.value]));
    },
    async put(key, value) {
      await pool.query(
        'INSERT INTO emr_state (module, key, value, updated_at) VALUES ($1, $2, $3, $4) ON CONFLICT (module, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
        [module, key, value, clock.now()],
      );
    },
    // One statement: one commit, whatever the number of keys.
    putMany: (entries) => putEntries(pool, module, entries, clock.now()),
    async pruneBefore(prefix, cutoffMs) {
      // The prefix as a range (the C collation orders by code point), so no LIKE wildcard needs escaping.
      const r = await pool.query('DELETE FROM emr_state WHERE module = $1 AND key >= $2 AND key < $3 AND updated_at < $4', [
        module,
        prefix,
        `${prefix}\uffff`,
        cutoffMs,
      ]);
      return r.rowCount ?? 0;
    },
    async putNew(key, value) {
      const r = await pool.query('INSERT INTO emr_state (module, key, value, updated_at) VALUES ($1, $2, $3, $4) ON CONFLICT (module, key) DO NOTHING', [
        module,
        key,
        value,
        clock.now(),
      ]);
      return r.rowCount === 1;
    },
  });
}
