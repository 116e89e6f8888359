// The processor's stores on PostgreSQL, for one replica among several sharing the database. The entity locks
// hold a connection per held key, so they get a small pool of their own (same server and settings as `pool`):
// sections holding locks can then never take every connection the queries inside them need.
import pg from 'pg';
import type { Clock } from '../../clock.ts';
import type { Sealer } from '../../sealing/sealer.ts';
import type { ProcessorStores } from '../processor-stores.ts';
import { createPostgresCrosswalkStore } from './crosswalk.ts';
import { createPostgresDeadLetterStores } from './dead-letters.ts';
import { createPostgresEntityLocks } from './entity-locks.ts';
import { createPostgresMappingOutboxStore } from './mapping-outbox.ts';
import { createPostgresEventViews } from './event-views.ts';
import { createPostgresMappingLookup, createPostgresMappingStore } from './mappings.ts';
import { guardConnections, type Pool } from './pool.ts';
import { createPostgresProcessingQueue } from './processing.ts';
import { createPostgresProcessorReadings } from './readings.ts';
import { createPostgresRetentionStore } from './retention.ts';
import { createPostgresEntityVersions } from './versions.ts';

export interface PostgresProcessorStoresOptions {
  /**
   * Connections for entity locks, at most (default 16): an event in flight holds at most one, however many keys
   * (a section inside another, and a claim of several records at once, take theirs on the same connection), so
   * no event waits for a second while holding a first; past 16 events in sections at once, the others wait.
   */
  lockConnections?: number;
  /** Opens the inbox's stored bodies (sealed at rest); by default only clear ones open. */
  sealer?: Sealer;
}

export function createPostgresProcessorStores(pool: Pool, clock: Clock, opts: PostgresProcessorStoresOptions = {}): ProcessorStores {
  // A lock connection the server ended while a section held it must not end the process (seen with PostgreSQL
  // stopped under a running replica): the same guard as every other connection.
  const lockPool = guardConnections(new pg.Pool({ ...pool.options, max: opts.lockConnections ?? 16 }));
  return {
    queue: createPostgresProcessingQueue(pool, clock, opts.sealer),
    versions: createPostgresEntityVersions(pool),
    mappings: createPostgresMappingStore(pool, clock),
    mappingOutbox: createPostgresMappingOutboxStore(pool, clock),
    deadLetters: createPostgresDeadLetterStores(pool, clock),
    retention: createPostgresRetentionStore(pool),
    locks: createPostgresEntityLocks(lockPool),
    readings: createPostgresProcessorReadings(pool),
    events: createPostgresEventViews(pool, opts.sealer),
    mappingLookup: createPostgresMappingLookup(pool),
    crosswalk: createPostgresCrosswalkStore(pool, clock),
    close: () => lockPool.end(),
  };
}
