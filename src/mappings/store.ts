// Which EMR record belongs to each service entity (emr_mappings): found, recorded once (the first record
// stands), and queued for the service in the mapping outbox. The processor's claims and the pusher's
// patient links both write here.
import type { Clock } from '../clock.ts';
import type { MappingEntityType } from '../contract/api.ts';
import type { Db } from '../database/open.ts';

export interface MappingStore {
  find(entityType: MappingEntityType, serviceId: string): string | undefined;
  /** Records the EMR id of a service entity; the first record wins. Returns the id that stands. */
  record(entityType: MappingEntityType, serviceId: string, emrId: string): string;
  /** Queues the mapping for the service (inside the caller's transaction). Idempotent. */
  enqueue(entityType: MappingEntityType, serviceId: string, externalId: string): void;
}

export function createMappingStore(db: Db, clock: Clock): MappingStore {
  const find = db.prepare('SELECT emr_id FROM emr_mappings WHERE entity_type = ? AND service_id = ?').pluck();
  const insert = db.prepare('INSERT INTO emr_mappings (entity_type, service_id, emr_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING');
  const enqueue = db.prepare(
    'INSERT INTO mapping_outbox (entity_type, service_id, external_id, updated_at, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  return {
    find: (t, s) => find.get(t, s) as string | undefined,
    record(t, s, emrId) {
      insert.run(t, s, emrId, clock.now());
      return find.get(t, s) as string;
    },
    enqueue: (t, s, externalId) => {
      const now = clock.now();
      enqueue.run(t, s, externalId, now, now);
    },
  };
}
