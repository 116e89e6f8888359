// Entity locks across replicas: a section holds a session advisory lock on the key (pg_advisory_lock over
// hashtextextended of a name of its own, so no other advisory lock of the adapter shares its number), on a
// connection of its own held until the section ends; the lock goes with the session if the replica dies.
// Sections of one key inside this replica first wait in memory, so that a waiting section holds no
// connection. The connections come from `pool`: give the locks a pool of their own (src/storage/postgres/
// processor-stores.ts does), so that sections holding locks never starve the queries they run of connections.
import { createMemoryEntityLocks, type EntityLocks } from '../entity-locks.ts';
import type { Pool, PoolClient } from './pool.ts';

const LOCK = 'SELECT pg_advisory_lock(hashtextextended($1, 0))';
const UNLOCK = 'SELECT pg_advisory_unlock(hashtextextended($1, 0))';

/** Ends the hold: unlocks and hands the connection back; a connection that failed is destroyed (its session, and lock, end). */
async function letGo(client: PoolClient, name: string): Promise<void> {
  try {
    await client.query(UNLOCK, [name]);
    client.release();
  } catch (err) {
    client.release(err instanceof Error ? err : true);
  }
}

export function createPostgresEntityLocks(pool: Pool): EntityLocks {
  const local = createMemoryEntityLocks();
  return {
    run(key, fn) {
      return local.run(key, async () => {
        const name = `emr-bridge:entity:${key}`;
        const client = await pool.connect();
        try {
          await client.query(LOCK, [name]);
        } catch (err) {
          // Not held (a timeout, a lost connection): the connection is not trusted again.
          client.release(true);
          throw err;
        }
        try {
          return await fn();
        } finally {
          await letGo(client, name);
        }
      });
    },
  };
}
