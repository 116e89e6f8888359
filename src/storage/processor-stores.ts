// Everything the processor keeps, as one set of stores for one engine: built by
// createSqliteProcessorStores (./sqlite/processor-stores.ts) or createPostgresProcessorStores
// (./postgres/processor-stores.ts). The processor, its admin routes and the metrics take these, never a
// database handle.
import type { CrosswalkStore } from './crosswalk.ts';
import type { DeadLetterStores } from './dead-letters.ts';
import type { EntityLocks } from './entity-locks.ts';
import type { EventViews } from './event-views.ts';
import type { MappingOutboxStore } from './mapping-outbox.ts';
import type { MappingLookup, MappingStore } from './mappings.ts';
import type { ProcessingQueue, ProcessorReadings } from './processing.ts';
import type { RetentionStore } from './retention.ts';
import type { EntityVersions } from './versions.ts';

export interface ProcessorStores {
  queue: ProcessingQueue;
  versions: EntityVersions;
  mappings: MappingStore;
  mappingOutbox: MappingOutboxStore;
  deadLetters: DeadLetterStores;
  retention: RetentionStore;
  locks: EntityLocks;
  readings: ProcessorReadings;
  /** What the console and the admin API read of events: searches, one event with its history, per-minute counts. */
  events: EventViews;
  /** Mappings looked up both ways, for a person. */
  mappingLookup: MappingLookup;
  /** The crosswalk's rows and the events waiting for them: written only through src/crosswalk/. */
  crosswalk: CrosswalkStore;
  /** Ends what the stores opened themselves (PostgreSQL: the entity locks' connections); not the database. */
  close(): Promise<void>;
}
