// Which EMR record belongs to each service entity (emr_mappings), engine-neutral: found, recorded once (the
// first record stands, across replicas too: a unique key decides), and, for the pusher's patient links,
// recorded and queued for the service together. Queuing a mapping with an event's applied mark is part of
// ProcessingQueue.commit; posting the queue is ./mapping-outbox.ts.
import type { MappingEntityType } from '../contract/api.ts';
import type { StateEntries } from './emr-state.ts';

/** An EMR module's state (./emr-state.ts) written in the transaction of a mapping: what the message that named it taught the module. */
export interface ModuleStateWrite {
  module: string;
  entries: StateEntries;
}

export interface MappingStore {
  find(entityType: MappingEntityType, serviceId: string): Promise<string | undefined>;
  /**
   * Records the EMR id of a service entity (the first record wins); resolves, once committed, to the id that stands.
   * An event's claim records it: its applied mark, committed after, is what must not reach the disk without it (on
   * SQLite the record pays no fsync of its own and is on disk with the next commit that does).
   */
  record(entityType: MappingEntityType, serviceId: string, emrId: string): Promise<string>;
  /**
   * Records the mapping and, when it is the one that stands, queues it for the service, in one transaction.
   * Resolves to whether it stands. Idempotent. `state`, when given, is written in the same commit (one commit
   * per message a pushed EMR sends, where two cost it half its rate), and also when the mapping already stood.
   */
  link(entityType: MappingEntityType, serviceId: string, emrId: string, state?: ModuleStateWrite): Promise<boolean>;
}

/** A mapping as the console and the admin API show it. */
export interface MappingRecord {
  entityType: MappingEntityType;
  serviceId: string;
  emrId: string;
  /** Whether the service has it: posted by the mapping outbox (or it never needed posting); false while queued, dead or dismissed. */
  posted: boolean;
}

/** Mappings looked up both ways, for a person (the console, GET /admin/mappings): read from the database, never from memory. */
export interface MappingLookup {
  /** The mappings of a serviceId (one per entity type that has it). */
  byServiceId(serviceId: string): Promise<MappingRecord[]>;
  /** The mappings to an EMR id, of one entity type when given. */
  byEmrId(emrId: string, entityType?: MappingEntityType): Promise<MappingRecord[]>;
}

/** The columns both engines read for a MappingRecord. */
export const MAPPING_RECORD_SQL = `SELECT m.entity_type, m.service_id, m.emr_id, o.state AS outbox_state
  FROM emr_mappings m LEFT JOIN mapping_outbox o ON o.entity_type = m.entity_type AND o.service_id = m.service_id`;

/** Written out so that SQLite searches the primary key (entity_type, service_id) by serviceId. */
export const ANY_ENTITY_TYPE = "m.entity_type IN ('appointment', 'patient', 'doctor', 'location')";

export const toMappingRecord = (r: { entity_type: string; service_id: string; emr_id: string; outbox_state: string | null }): MappingRecord => ({
  entityType: r.entity_type as MappingEntityType,
  serviceId: r.service_id,
  emrId: r.emr_id,
  posted: r.outbox_state === null || r.outbox_state === 'sent',
});

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
