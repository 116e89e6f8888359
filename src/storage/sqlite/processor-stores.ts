// The processor's stores on one SQLite database (one process owns it): built once per database and shared by
// the processor, its admin routes and the metrics, since the versions' and mappings' memories are right only
// while nothing else writes those tables.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../sqlite/open.ts';
import type { ProcessorStores } from '../processor-stores.ts';
import { createSqliteDeadLetterStores } from './dead-letters.ts';
import { createSqliteEntityLocks } from './entity-locks.ts';
import { createSqliteMappingOutboxStore } from './mapping-outbox.ts';
import { createSqliteEventViews } from './event-views.ts';
import { createMappingRows, createSqliteMappingLookup, createSqliteMappingStore } from './mappings.ts';
import { createSqliteProcessingQueue } from './processing.ts';
import { createSqliteProcessorReadings } from './readings.ts';
import { createSqliteRetentionStore } from './retention.ts';
import { createSqliteEntityVersions } from './versions.ts';

export function createSqliteProcessorStores(db: Db, clock: Clock): ProcessorStores {
  const versions = createSqliteEntityVersions(db);
  const rows = createMappingRows(db, clock);
  return {
    queue: createSqliteProcessingQueue(db, clock, { versions, mappings: rows }),
    versions,
    mappings: createSqliteMappingStore(db, clock, rows),
    mappingOutbox: createSqliteMappingOutboxStore(db, clock),
    deadLetters: createSqliteDeadLetterStores(db, clock),
    retention: createSqliteRetentionStore(db),
    locks: createSqliteEntityLocks(),
    readings: createSqliteProcessorReadings(db),
    events: createSqliteEventViews(db),
    mappingLookup: createSqliteMappingLookup(db),
    close: async () => undefined,
  };
}
