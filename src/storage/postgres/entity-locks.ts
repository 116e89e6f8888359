// Entity locks across replicas: a section holds a session advisory lock on the key (pg_advisory_lock over
// hashtextextended of a name of its own, so no other advisory lock of the adapter shares its number), on a
// connection of its own held until the section ends; the lock goes with the session if the replica dies.
// Sections of one key inside this replica first wait in memory, so that a waiting section holds no
// connection; a section of several keys (runAll) waits for each in memory, then holds them all on one
// connection; a section inside another (a patient's claim inside its snapshot's section) takes its key on the
// outer one's connection, so an event never holds more than one. The connections come from `pool`: give the locks a pool of their own (src/storage/postgres/
// processor-stores.ts does), so that sections holding locks never starve the queries they run of connections.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createMemoryEntityLocks, type EntityLocks, nestSections } from '../entity-locks.ts';
import type { Pool, PoolClient } from './pool.ts';

const LOCK = 'SELECT pg_advisory_lock(hashtextextended($1, 0))';
const UNLOCK = 'SELECT pg_advisory_unlock(hashtextextended($1, 0))';

/**
 * Ends the hold: unlocks (the last taken first) and hands the connection back; a connection that failed is
 * destroyed (its session, and locks, end).
 */
async function letGo(client: PoolClient, names: readonly string[]): Promise<void> {
  try {
    for (const name of [...names].reverse()) await client.query(UNLOCK, [name]);
    client.release();
  } catch (err) {
    client.release(err instanceof Error ? err : true);
  }
}

/** The connection a section of this async flow holds: a section inside it takes its keys on that one too. */
type Held = AsyncLocalStorage<PoolClient>;

/** `fn` run holding the advisory lock of each key, taken in order on `client`. */
async function holdOn<T>(client: PoolClient, names: readonly string[], fn: () => Promise<T>): Promise<T> {
  const taken: string[] = [];
  try {
    for (const name of names) {
      await client.query(LOCK, [name]);
      taken.push(name);
    }
    return await fn();
  } finally {
    for (const name of taken.reverse()) await client.query(UNLOCK, [name]);
  }
}

/**
 * `fn` run holding the advisory lock of each key: on the connection of the section it runs inside, if any (a
 * patient's section claiming that patient's record), else on one connection of `pool`, held until it ends. So an
 * event holds one connection however deep its sections nest, and the pool cannot be spent by events each holding
 * one and waiting for another.
 */
async function hold<T>(pool: Pool, held: Held, keys: readonly string[], fn: () => Promise<T>): Promise<T> {
  const names = keys.map((key) => `emr-bridge:entity:${key}`);
  const outer = held.getStore();
  if (outer) return holdOn(outer, names, fn);
  const client = await pool.connect();
  try {
    for (const name of names) await client.query(LOCK, [name]);
  } catch (err) {
    // Not all held (a timeout, a lost connection): the connection is not trusted again, and its session's locks end with it.
    client.release(true);
    throw err;
  }
  try {
    return await held.run(client, fn);
  } finally {
    await letGo(client, names);
  }
}

export function createPostgresEntityLocks(pool: Pool): EntityLocks {
  const local = createMemoryEntityLocks();
  const held: Held = new AsyncLocalStorage();
  return {
    run: (key, fn) => local.run(key, () => hold(pool, held, [key], fn)),
    runAll(keys, fn) {
      const distinct = [...new Set(keys)];
      return nestSections(local.run, distinct, () => hold(pool, held, distinct, fn));
    },
  };
}
