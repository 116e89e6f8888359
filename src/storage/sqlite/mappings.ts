// Mappings in SQLite. The rows (emr_mappings, and the mapping_outbox insert that queues one) are plain
// statements run inside the caller's transaction; the MappingStore over them keeps every mapping found in
// memory (../mappings.ts: a mapping, once recorded, never changes) and gives the records asked for
// at the same moment by the events in flight one transaction: a group commit, flushed once the current turn of
// the event loop has run. A record (an event's claim) resolves once it is in the WAL, before its EMR id is used,
// and reaches the disk with the next commit that fsyncs, at the latest its event's applied mark: it pays no fsync
// of its own (src/sqlite/commit-queue.ts, `ordered`). A power cut that takes it takes the applied mark too, and
// the event, run again, finds the EMR's record by its identifier. A link (a mapping the EMR or a document named,
// acknowledged to it once committed) is on disk when it resolves.
import type { Clock } from '../../clock.ts';
import type { MappingEntityType } from '../../contract/api.ts';
import { type CommitQueue, createCommitQueue } from '../../sqlite/commit-queue.ts';
import type { Db } from '../../sqlite/open.ts';
import {
  ANY_ENTITY_TYPE,
  createFoundMappings,
  MAPPING_RECORD_SQL,
  type MappingLookup,
  type MappingRecord,
  type MappingStore,
  type ModuleStateWrite,
  toMappingRecord,
} from '../mappings.ts';
import { createEmrStateRows } from './emr-state.ts';

/** The statements, synchronous, inside the caller's transaction. */
export interface MappingRows {
  find(entityType: MappingEntityType, serviceId: string): string | undefined;
  /** Records the EMR id of a service entity; the first record wins. Returns the id that stands. */
  record(entityType: MappingEntityType, serviceId: string, emrId: string): string;
  /** Queues the mapping for the service (with the trace context its post joins, if any). Idempotent. */
  enqueue(entityType: MappingEntityType, serviceId: string, externalId: string, traceContext?: string): void;
}

export function createMappingRows(db: Db, clock: Clock): MappingRows {
  const find = db.prepare('SELECT emr_id FROM emr_mappings WHERE entity_type = ? AND service_id = ?').pluck();
  const insert = db.prepare('INSERT INTO emr_mappings (entity_type, service_id, emr_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING');
  const enqueue = db.prepare(
    'INSERT INTO mapping_outbox (entity_type, service_id, external_id, updated_at, created_at, trace_context) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  return {
    find: (t, s) => find.get(t, s) as string | undefined,
    record(t, s, emrId) {
      insert.run(t, s, emrId, clock.now());
      return find.get(t, s) as string;
    },
    enqueue: (t, s, externalId, traceContext) => {
      const now = clock.now();
      enqueue.run(t, s, externalId, now, now, traceContext ?? null);
    },
  };
}

export function createSqliteMappingStore(
  db: Db,
  clock: Clock,
  rows: MappingRows = createMappingRows(db, clock),
  commits: CommitQueue = createCommitQueue(db),
  stateRows = createEmrStateRows(db, clock),
): MappingStore {
  const found = createFoundMappings();
  const writeState = (state: ModuleStateWrite | undefined) => {
    if (state?.entries.length) stateRows.write(state.module, state.entries);
  };
  const link = (t: MappingEntityType, s: string, emrId: string, state: ModuleStateWrite | undefined) => {
    const standing = rows.record(t, s, emrId);
    if (standing === emrId) rows.enqueue(t, s, emrId);
    writeState(state);
    return standing;
  };

  function find(entityType: MappingEntityType, serviceId: string): string | undefined {
    const known = found.get(entityType, serviceId);
    if (known !== undefined) return known;
    const stored = rows.find(entityType, serviceId);
    if (stored !== undefined) found.remember(entityType, serviceId, stored);
    return stored;
  }

  return {
    find: async (entityType, serviceId) => find(entityType, serviceId),
    async record(entityType, serviceId, emrId) {
      const standing = await commits.run(() => rows.record(entityType, serviceId, emrId), { durable: 'ordered' });
      found.remember(entityType, serviceId, standing);
      return standing;
    },
    // Once a mapping stands, asking again (every status write-back does) is a read, not a commit, unless state comes with it.
    async link(entityType, serviceId, emrId, state) {
      const known = find(entityType, serviceId);
      if (known !== undefined) {
        if (state?.entries.length) await commits.run(() => writeState(state));
        return known === emrId;
      }
      const standing = await commits.run(() => link(entityType, serviceId, emrId, state));
      found.remember(entityType, serviceId, standing);
      return standing === emrId;
    },
  };
}

/** Mappings looked up both ways (by the primary key, or by emr_mappings_emr). */
export function createSqliteMappingLookup(db: Db): MappingLookup {
  const byService = db.prepare(`${MAPPING_RECORD_SQL} WHERE ${ANY_ENTITY_TYPE} AND m.service_id = ? ORDER BY m.entity_type`);
  const byEmr = db.prepare(
    `${MAPPING_RECORD_SQL} WHERE m.emr_id = @emrId AND (@entityType IS NULL OR m.entity_type = @entityType) ORDER BY m.entity_type, m.service_id`,
  );
  type Row = Parameters<typeof toMappingRecord>[0];
  return {
    byServiceId: async (serviceId): Promise<MappingRecord[]> => (byService.all(serviceId) as Row[]).map(toMappingRecord),
    byEmrId: async (emrId, entityType) => (byEmr.all({ emrId, entityType: entityType ?? null }) as Row[]).map(toMappingRecord),
  };
}
