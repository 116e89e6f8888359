// The processor's stores on one SQLite database (one process owns it): built once per database and shared by
// the processor, its admin routes and the metrics, since the versions' and mappings' memories are right only
// while nothing else writes those tables.
import type { Clock } from '../../clock.ts';
import { createClearSealer, type Sealer } from '../../sealing/sealer.ts';
import { type CommitQueue, createCommitQueue } from '../../sqlite/commit-queue.ts';
import type { Db } from '../../sqlite/open.ts';
import type { ProcessorStores } from '../processor-stores.ts';
import { createSqliteCrosswalkStore } from './crosswalk.ts';
import { createSqliteDeadLetterStores } from './dead-letters.ts';
import { createSqliteEntityLocks } from './entity-locks.ts';
import { createSqliteMappingOutboxStore } from './mapping-outbox.ts';
import { createSqliteEventViews } from './event-views.ts';
import { createMappingRows, createSqliteMappingLookup, createSqliteMappingStore } from './mappings.ts';
import { createSqliteProcessingQueue } from './processing.ts';
import { createSqliteProcessorReadings } from './readings.ts';
import { createSqliteRetentionStore } from './retention.ts';
import { createSqliteEntityVersions } from './versions.ts';

/**
 * `sealer` opens the inbox's stored bodies (sealed at rest); by default only clear ones open. `commits`: the
 * connection's commit queue, shared with the other stores that group their writes (the EMR modules' state).
 */
export function createSqliteProcessorStores(
  db: Db,
  clock: Clock,
  sealer: Sealer = createClearSealer(),
  commits: CommitQueue = createCommitQueue(db),
): ProcessorStores {
  const versions = createSqliteEntityVersions(db);
  const rows = createMappingRows(db, clock);
  return {
    queue: createSqliteProcessingQueue(db, clock, { versions, mappings: rows, sealer }),
    versions,
    mappings: createSqliteMappingStore(db, clock, rows, commits),
    mappingOutbox: createSqliteMappingOutboxStore(db, clock),
    deadLetters: createSqliteDeadLetterStores(db, clock),
    retention: createSqliteRetentionStore(db),
    locks: createSqliteEntityLocks(),
    readings: createSqliteProcessorReadings(db),
    events: createSqliteEventViews(db, sealer),
    mappingLookup: createSqliteMappingLookup(db),
    crosswalk: createSqliteCrosswalkStore(db, clock),
    close: async () => undefined,
  };
}
