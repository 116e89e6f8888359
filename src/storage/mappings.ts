// Which EMR record belongs to each service entity (emr_mappings), engine-neutral: found, recorded once (the
// first record stands, across replicas too: a unique key decides), and, for the pusher's patient links,
// recorded and queued for the service together. Queuing a mapping with an event's applied mark is part of
// ProcessingQueue.commit; posting the queue is ./mapping-outbox.ts.
import type { MappingEntityType } from '../contract/api.ts';

export interface MappingStore {
  find(entityType: MappingEntityType, serviceId: string): Promise<string | undefined>;
  /** Records the EMR id of a service entity (the first record wins); resolves, once committed, to the id that stands. */
  record(entityType: MappingEntityType, serviceId: string, emrId: string): Promise<string>;
  /**
   * Records the mapping and, when it is the one that stands, queues it for the service, in one transaction.
   * Resolves to whether it stands. Idempotent.
   */
  link(entityType: MappingEntityType, serviceId: string, emrId: string): Promise<boolean>;
}

/** Mappings kept in memory, at most (past it, the oldest found is forgotten and read again when needed). */
const FOUND_MAX = 20_000;

/**
 * Mappings found, kept in memory: right on any engine and with any number of replicas, since a mapping, once
 * recorded, never changes (the first record stands) and is never deleted.
 */
export function createFoundMappings() {
  const found = new Map<string, string>();
  const keyOf = (entityType: MappingEntityType, serviceId: string) => `${entityType}:${serviceId}`;
  return {
    get: (entityType: MappingEntityType, serviceId: string) => found.get(keyOf(entityType, serviceId)),
    remember(entityType: MappingEntityType, serviceId: string, emrId: string): void {
      if (found.size >= FOUND_MAX) found.delete(found.keys().next().value as string);
      found.set(keyOf(entityType, serviceId), emrId);
    },
  };
}
